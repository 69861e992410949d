#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/<target>/seeds/) from the fixtures in tests/data and small
generated inputs. Deterministic: running it again gives the same files. Needs numpy (Debian: /usr/bin/python3 with
python3-numpy).

  /usr/bin/python3 fuzz/make_seeds.py [--kiln build/tools/kiln/kiln]

With --kiln (a built `kiln` command), the tiny fixtures are compiled for the CPU to make the seeds of the targets
that read compiled modules: kiln_archive (the .kiln as a bundle), plan (each engine plan's payload) and ir_text
(each graph.kir). Without it those seed folders are left as they are.
"""

import argparse
import hashlib
import io
import os
import re
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "fuzz")
DATA = os.path.join(ROOT, "tests", "data")
# Fixtures small enough to be seeds (the others are tens of kilobytes of weights).
SMALL_MODELS = ["tiny_convnet", "tiny_mlp"]
# Entries of a .pt2 no loader reads (torch's pickled sample inputs): left out of the bundles.
SKIPPED_ENTRIES = ("data/sample_inputs/",)
PLAN_HEADER = 8 + 4 + 8  # magic, version, payload size
PLAN_DIGEST = 32


def write_seed(target, name, data):
    folder = os.path.join(FUZZ, target, "seeds")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def fixed_zip(entries, compression=zipfile.ZIP_STORED, force_zip64=False, comment=b""):
    """A zip of (name, bytes) with fixed timestamps."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = compression
            with z.open(info, "w", force_zip64=force_zip64) as f:
                f.write(data)
        z.comment = comment
    return out.getvalue()


def streamed_zip(entries):
    """A zip written to an unseekable stream: sizes and CRC in data descriptors (flag bit 3)."""

    class Unseekable(io.RawIOBase):
        def __init__(self):
            self.buf = bytearray()

        def writable(self):
            return True

        def write(self, b):
            self.buf += b
            return len(b)

    out = Unseekable()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with z.open(info, "w") as f:
                f.write(data)
    return bytes(out.buf)


def bundle(entries):
    """The bundle form (fuzz/common/bundle.h): "--- NAME\\n" + bytes per entry, joined by newlines."""
    return b"\n".join(b"--- " + name.encode() + b"\n" + data for name, data in entries)


def archive_entries(path):
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist() if not any(s in i.filename for s in SKIPPED_ENTRIES)]


def zip_seeds():
    text = [("a.txt", b"hello kiln\n"), ("dir/b.bin", bytes(range(64)))]
    write_seed("zip", "stored.zip", fixed_zip(text))
    write_seed("zip", "deflated.zip", fixed_zip(text, zipfile.ZIP_DEFLATED))
    write_seed("zip", "zip64.zip", fixed_zip(text, force_zip64=True))
    write_seed("zip", "comment.zip", fixed_zip(text[:1], comment=b"a comment"))
    write_seed("zip", "streamed.zip", streamed_zip(text))
    write_seed("zip", "empty.zip", fixed_zip([]))


def npz_seeds():
    rng = np.random.default_rng(23)
    arrays = {
        "f32": rng.standard_normal((2, 3)).astype(np.float32),
        "f64": rng.standard_normal(3),
        "f16": rng.standard_normal(4).astype(np.float16),
        "i64": rng.integers(-9, 9, (2, 2)),
        "i32": rng.integers(-9, 9, 3).astype(np.int32),
        "i8": rng.integers(-9, 9, 3).astype(np.int8),
        "u8": rng.integers(0, 9, 3).astype(np.uint8),
        "b": np.array([True, False]),
        "scalar": np.float32(1.5),
        "empty": np.zeros((0, 3), np.float32),
    }
    for compressed in (False, True):
        out = io.BytesIO()
        (np.savez_compressed if compressed else np.savez)(out, **arrays)
        # numpy stamps the current time into the zip: re-pack with fixed timestamps.
        with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
            entries = [(i.filename, z.read(i)) for i in z.infolist()]
        method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
        write_seed("npz", "savez_compressed.npz" if compressed else "savez.npz", fixed_zip(entries, method))
    bf16 = rng.standard_normal(4).astype(np.float32).view(np.uint32) >> 16
    npy = io.BytesIO()
    np.save(npy, bf16.astype(np.uint16).view("V2"))
    write_seed("npz", "bf16_void.npz", fixed_zip([("x.npy", npy.getvalue())]))


def sym_expr_seeds():
    exprs = set()
    for model in sorted(os.listdir(DATA)):
        for root, _, files in os.walk(os.path.join(DATA, model)):
            for f in files:
                if f.endswith(".pt2"):
                    for name, data in archive_entries(os.path.join(root, f)):
                        if name.endswith("models/model.json"):
                            exprs.update(re.findall(r'"expr_str": ?"([^"]*)"', data.decode()))
    exprs.update([
        "Integer(-3)", "Rational(1, 2)", "Half()", "One()", "NegativeOne()", "Zero()", "oo", "-oo", "int_oo",
        "IntInfinity()", "Infinity()",
        "Add(Symbol('s0', positive=True, integer=True), Integer(-1))",
        "FloorDiv(Symbol('s0', positive=True, integer=True), Integer(2))",
        "CeilDiv(Symbol('s0'), Integer(4))", "CleanDiv(Mul(Integer(4), Symbol('s0')), Integer(2))",
        "ModularIndexing(Symbol('s0'), Integer(2), Integer(3))", "PythonMod(Symbol('s0'), Integer(7))",
        "Mod(Symbol('s0'), Symbol('s1'))", "Max(Integer(1), Symbol('s0'))", "Min(Symbol('s0'), Symbol('s1'))",
        "Pow(Symbol('s0'), Integer(-1))", "PowByNatural(Symbol('s0'), Integer(3))", "CeilToInt(TrueDiv(Symbol('s0'), Integer(3)))",
        "FloorToInt(IntTrueDiv(Symbol('s0'), Integer(2)))", "ceiling(FloatTrueDiv(Symbol('s0'), Integer(5)))",
        "floor(Mul(Rational(1, 3), Symbol('s0')))", "Identity(Symbol('s0'))",
        "2*s0 + 1", "floordiv(s0, 2)", "ceil(s0/2)", "max(1, s0)", "min(s0, s1)", "mod(s0, 3)", "s0**2", "-s0",
    ])
    for i, e in enumerate(sorted(exprs)):
        write_seed("sym_expr", "expr_%02d" % i, e)


def pt2_seeds():
    for model in SMALL_MODELS:
        write_seed("pt2", model + ".bundle", bundle(archive_entries(os.path.join(DATA, model, "model.pt2"))))
    entries = archive_entries(os.path.join(DATA, "tiny_convnet", "model.pt2"))
    write_seed("pt2", "tiny_convnet_deflated.pt2", fixed_zip(entries, zipfile.ZIP_DEFLATED))


def compiled_seeds(kiln):
    with tempfile.TemporaryDirectory() as tmp:
        for model in SMALL_MODELS:
            out = os.path.join(tmp, model + ".kiln")
            subprocess.run([kiln, "-q", "compile", os.path.join(DATA, model, "model.pt2"), "-o", out,
                            "--cache-dir", os.path.join(tmp, "cache")], check=True, stdout=subprocess.DEVNULL)
            entries = archive_entries(out)
            write_seed("kiln_archive", model + ".bundle", bundle(entries))
            for name, data in entries:
                if name.endswith(".plan"):
                    payload = data[PLAN_HEADER:len(data) - PLAN_DIGEST]
                    write_seed("plan", model + "_" + os.path.basename(name)[:-len(".plan")], payload)
                elif name.endswith("graph.kir"):
                    write_seed("ir_text", model + ".kir", data)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", help="a built kiln command: also write the seeds of compiled modules")
    args = parser.parse_args()
    zip_seeds()
    npz_seeds()
    sym_expr_seeds()
    pt2_seeds()
    if args.kiln:
        compiled_seeds(args.kiln)
    return 0


if __name__ == "__main__":
    sys.exit(main())
