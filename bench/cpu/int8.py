#!/usr/bin/env python3
"""Kiln INT8 (calibrated by Kiln, CPU backend) against Kiln fp32: accuracy and speed, in one run.

Writes --calib random-normal calibration images (one .npz, `input_0` stacking them along dim 0: the calibration
format of docs/quantization.md) and --held-out other random-normal images, compiles the program twice
(`kiln compile` fp32, and `kiln compile --precision int8 --calibration ...` for each --calibrator), runs both
modules on the held-out images (`kiln run`) and reports the SQNR of the int8 logits against the fp32 ones (dB,
over all held-out outputs) and the top-1 agreement; then times both modules side by side with `kiln bench`,
interleaved (fp32, int8, fp32, int8, ... per thread count, --rounds times) so that a noisy shared machine loads
both alike, and prints the median of the rounds' medians. Standard library only (no numpy).

    python3 bench/cpu/int8.py --model /work/models/resnet18_224/model.pt2 --kiln build/tools/kiln/kiln
"""
import argparse
import array
import json
import math
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import zipfile


def npy_bytes(values: array.array, shape) -> bytes:
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + values.tobytes()


def write_npz(path: str, arrays: dict) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, (values, shape) in arrays.items():
            z.writestr(name + ".npy", npy_bytes(values, shape))


def read_npz_floats(path: str, name: str) -> list:
    with zipfile.ZipFile(path) as z:
        data = z.read(name + ".npy")
    header_len = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + header_len].decode()
    assert "'<f4'" in header, header
    return array.array("f", data[10 + header_len:]).tolist()


def normal_images(rng: random.Random, count: int, shape) -> array.array:
    n = count * math.prod(shape)
    return array.array("f", (rng.gauss(0.0, 1.0) for _ in range(n)))


def run(cmd) -> str:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--kiln", default="build/tools/kiln/kiln")
    ap.add_argument("--shape", default="1x3x224x224", help="the program input's shape")
    ap.add_argument("--calib", type=int, default=32, help="calibration images")
    ap.add_argument("--held-out", type=int, default=32, help="held-out images for SQNR and top-1")
    ap.add_argument("--calibrators", default="percentile,entropy,max", help="the first is timed")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--work", default="", help="folder for the files (default: a temporary one)")
    a = ap.parse_args()
    shape = [int(d) for d in a.shape.split("x")]
    work = a.work or tempfile.mkdtemp(prefix="kiln-int8-")
    os.makedirs(work, exist_ok=True)
    env_flags = ["--cache-dir", os.path.join(work, "cache"), "--timing-cache", os.path.join(work, "timing.bin")]

    rng = random.Random(20)
    calib = os.path.join(work, "calibration.npz")
    write_npz(calib, {"input_0": (normal_images(rng, a.calib, shape), [a.calib * shape[0]] + shape[1:])})
    held = []
    for k in range(a.held_out):
        p = os.path.join(work, f"held_{k}.npz")
        write_npz(p, {"input_0": (normal_images(rng, 1, shape), shape)})
        held.append(p)

    modules = {"fp32": os.path.join(work, "fp32.kiln")}
    print(run([a.kiln, "compile", a.model, "-o", modules["fp32"]] + env_flags).strip())
    for cal in a.calibrators.split(","):
        modules[f"int8 {cal}"] = os.path.join(work, f"int8_{cal}.kiln")
        print(run([a.kiln, "compile", a.model, "-o", modules[f"int8 {cal}"], "--precision", "int8", "--calibration",
                   calib, "--calibrator", cal] + env_flags).strip())

    def outputs(module: str, tag: str) -> list:
        out = []
        for k, p in enumerate(held):
            o = os.path.join(work, f"out_{tag}_{k}.npz")
            run([a.kiln, "run", module, "--inputs", p, "--outputs", o])
            out.append(read_npz_floats(o, "output_0"))
        return out

    reference = outputs(modules["fp32"], "fp32")
    print("\n| module | SQNR vs fp32 (dB) | top-1 agreement |\n|---|---|---|")
    for name, module in modules.items():
        if name == "fp32":
            continue
        got = outputs(module, name.replace(" ", "_"))
        signal = sum(x * x for r in reference for x in r)
        noise = sum((x - y) ** 2 for r, g in zip(reference, got) for x, y in zip(r, g))
        agree = sum(max(range(len(r)), key=r.__getitem__) == max(range(len(g)), key=g.__getitem__)
                    for r, g in zip(reference, got))
        print(f"| {name} | {10 * math.log10(signal / max(noise, 1e-30)):.1f} | {agree}/{len(held)} "
              f"({100.0 * agree / len(held):.0f}%) |")

    int8 = modules["int8 " + a.calibrators.split(",")[0]]
    times = {}
    for _ in range(a.rounds):
        for t in a.threads.split(","):
            for name, module in (("fp32", modules["fp32"]), ("int8", int8)):
                j = json.loads(run([a.kiln, "bench", module, "--threads", t, "--iters", str(a.iters), "--json"]))
                times.setdefault((name, t), []).append(j["kiln_ms_median"])
    print(f"\n| threads | fp32 ms | int8 ms | speedup |\n|---|---|---|---|")
    for t in a.threads.split(","):
        f, i = statistics.median(times[("fp32", t)]), statistics.median(times[("int8", t)])
        print(f"| {t} | {f:.2f} | {i:.2f} | {f / i:.2f}x |")
    print(f"\n(rounds: {a.rounds}, medians of {a.iters} iterations each; files in {work})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
