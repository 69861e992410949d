#!/usr/bin/env python3
"""Regenerates the zip/npy/npz fixtures of tests/support (tests/support/data/).

Run with a Python that has numpy (Debian: /usr/bin/python3 with python3-numpy) and with Info-ZIP's `zip`
on PATH:  /usr/bin/python3 scripts/make_support_test_data.py

The contents are deterministic formulas that tests/support/*_test.cpp recomputes; keep the two in step.
Every file comes out byte-identical on a rerun except infozip_stream.zip (zip stamps a streamed entry
with the current time).
"""
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support", "data")
FIXED_TIME = (2024, 1, 2, 3, 4, 6)


def lcg_bytes(n, seed=12345):
    """n pseudo-random bytes: x = (x * 1103515245 + 12345) mod 2^31, byte = (x >> 16) & 0xff."""
    out = bytearray()
    x = seed
    for _ in range(n):
        x = (x * 1103515245 + 12345) % (1 << 31)
        out.append((x >> 16) & 0xFF)
    return bytes(out)


HELLO = b"hello, kiln\n"
NUMBERS = "".join(f"{i}\n" for i in range(5000)).encode()
RANDOM = lcg_bytes(2000)


def write_py_zip(path, compression, comment=b""):
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for name, data in [("hello.txt", HELLO), ("empty.bin", b""), ("dir/numbers.txt", NUMBERS),
                           ("random.bin", RANDOM)]:
            z.writestr(zipfile.ZipInfo(name, FIXED_TIME), data, compress_type=compression)
        z.writestr(zipfile.ZipInfo("dir/", FIXED_TIME), b"")
        z.comment = comment


def write_py_zip64(path):
    """Every size and offset as zip64 (central extra fields, zip64 end records) by lowering zipfile's limits."""
    saved = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 0, 1
    try:
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, data, method in [("hello.txt", HELLO, zipfile.ZIP_STORED),
                                       ("dir/numbers.txt", NUMBERS, zipfile.ZIP_DEFLATED),
                                       ("random.bin", RANDOM, zipfile.ZIP_DEFLATED)]:
                info = zipfile.ZipInfo(name, FIXED_TIME)
                info.compress_type = method
                with z.open(info, "w", force_zip64=True) as f:
                    f.write(data)
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = saved


def write_infozip(out_dir):
    """Info-ZIP archives: zip64 forced (-fz), and a streamed one (data descriptors, entry named '-')."""
    zip_tool = shutil.which("zip")
    if zip_tool is None:
        sys.exit("Info-ZIP `zip` not found")
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in [("hello.txt", HELLO), ("numbers.txt", NUMBERS)]:
            p = os.path.join(tmp, name)
            with open(p, "wb") as f:
                f.write(data)
            os.utime(p, (1704164646, 1704164646))
        target = os.path.abspath(os.path.join(out_dir, "infozip_zip64.zip"))
        if os.path.exists(target):
            os.remove(target)
        subprocess.run([zip_tool, "-q", "-X", "-fz", target, "hello.txt", "numbers.txt"], cwd=tmp, check=True,
                       env={**os.environ, "TZ": "UTC"})
        # Writing to a pipe makes zip stream: local headers without sizes, data descriptors after the data.
        streamed = subprocess.run([zip_tool, "-q", "-X", "-", "-"], input=NUMBERS, stdout=subprocess.PIPE,
                                  check=True, env={**os.environ, "TZ": "UTC"}).stdout
        with open(os.path.join(out_dir, "infozip_stream.zip"), "wb") as f:
            f.write(streamed)


def npz_arrays():
    return {
        "f32": (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7) * np.float32(0.375),
        "f64": np.arange(6, dtype=np.float64).reshape(3, 2) / 7.0,
        "f16": ((np.arange(10) - 5) * 0.25).astype(np.float16),
        "i64": np.array([-(2**62), -1, 0, 1, 2**62 + 5], dtype=np.int64),
        "i32": (np.arange(-3, 3, dtype=np.int32) * 1000003).astype(np.int32),
        "i16": np.array([-32768, -1, 0, 32767], dtype=np.int16),
        "i8": np.array([-128, -1, 0, 127], dtype=np.int8),
        "u8": np.arange(0, 256, 17, dtype=np.uint8),
        "bool": np.array([True, False, False, True, True]),
        "scalar": np.array(3.5, dtype=np.float32),
        "int_scalar": np.array(-42, dtype=np.int64),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }


def npy_with_header(descr, shape, data, fortran=False, version=(1, 0)):
    """A .npy written by hand (for descrs numpy without ml_dtypes cannot produce)."""
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_text)
    prefix = 10 if version[0] == 1 else 12
    total = prefix + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    length = struct.pack("<H", len(header)) if prefix == 10 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes(version) + length + header.encode("latin1") + data


BF16_VALUES = np.array([1.0, -2.5, 0.15625, 65536.0, 3.140625, 0.0], dtype=np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    write_py_zip(os.path.join(OUT, "py_deflated.zip"), zipfile.ZIP_DEFLATED, comment=b"kiln test comment")
    write_py_zip(os.path.join(OUT, "py_stored.zip"), zipfile.ZIP_STORED)
    write_py_zip64(os.path.join(OUT, "py_zip64.zip"))
    write_infozip(OUT)

    arrays = npz_arrays()
    np.savez(os.path.join(OUT, "numpy_savez.npz"), **arrays)
    np.savez_compressed(os.path.join(OUT, "numpy_savez_compressed.npz"), **arrays)

    def save(name, data):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)

    def np_bytes(array, version=None):
        buf = io.BytesIO()
        np.lib.format.write_array(buf, array, version=version)
        return buf.getvalue()

    save("be_f4.npy", np_bytes(np.arange(6, dtype=">f4").reshape(2, 3) * np.float32(1.5)))
    save("be_i8.npy", np_bytes(np.array([1, -2, 2**40], dtype=">i8")))
    save("fortran.npy", np_bytes(np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))))
    save("v2.npy", np_bytes(np.arange(5, dtype=np.float32), version=(2, 0)))
    save("v3.npy", np_bytes(np.arange(5, dtype=np.float32), version=(3, 0)))
    bf16_bits = (BF16_VALUES.view(np.uint32) >> 16).astype("<u2")
    # numpy writes a plain 2-byte void array as '|V2'; numpy with ml_dtypes writes bfloat16 as '<V2'.
    save("bf16_void.npy", np_bytes(bf16_bits.view("V2")))
    save("bf16_ml_dtypes.npy", npy_with_header("<V2", (6,), bf16_bits.tobytes()))
    save("bf16_named.npy", npy_with_header("bfloat16", (2, 3), bf16_bits.tobytes()))
    save("fortran_row.npy", npy_with_header("<f4", (1, 4), np.arange(4, dtype="<f4").tobytes(), fortran=True))

    # Check that numpy and Python read back what was written.
    for name in ["py_deflated.zip", "py_stored.zip", "py_zip64.zip", "infozip_zip64.zip", "infozip_stream.zip"]:
        with zipfile.ZipFile(os.path.join(OUT, name)) as z:
            assert z.testzip() is None, name
    loaded = np.load(os.path.join(OUT, "numpy_savez_compressed.npz"))
    for key, value in arrays.items():
        assert loaded[key].dtype == value.dtype and np.array_equal(loaded[key], value), key
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
