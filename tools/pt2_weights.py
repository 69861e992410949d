#!/usr/bin/env python3
"""Strips the large weight payloads out of a .pt2 archive, and fills them back with seeded random values.

Large models (BERT-base: 440 MB of fp32 weights) are exported where torch runs (the GPU machine) but benchmarked
elsewhere; only the program needs to travel when the weight *values* do not matter (timing). `strip` writes the
archive with every weight/constant payload larger than --min-bytes emptied and a sidecar JSON listing the
emptied entries and their byte sizes; `fill` writes them back with random values from a fixed seed (float
payloads: normal(0, --std); others: zero bytes — integer buffers are small and kept by strip).

Only the Python standard library and numpy are needed (Debian's /usr/bin/python3 has both). Usage:
  python3 tools/pt2_weights.py strip model.pt2 -o model.stripped.pt2        # writes model.stripped.pt2.sizes.json
  python3 tools/pt2_weights.py fill model.stripped.pt2 -o model.pt2 [--seed 0] [--std 0.02]
The filled archive computes a model of the same architecture with other weights: outputs recorded with the
original weights no longer apply (compare Kiln with `kiln run --reference` instead).
"""

import argparse
import json
import os
import sys
import tempfile
import zipfile

DTYPE_BY_CODE = {7: "float32", 6: "float16", 13: "bfloat16", 8: "float64"}  # torch serde ScalarType codes


def payload_dtypes(archive: zipfile.ZipFile) -> dict:
    """Entry name -> numpy-ish dtype name, from the weights/constants payload configs."""
    dtypes = {}
    for info in archive.infolist():
        if not info.filename.endswith(("_weights_config.json", "_constants_config.json")):
            continue
        folder = os.path.dirname(info.filename)
        config = json.loads(archive.read(info.filename))
        for meta in config.get("config", {}).values():
            path = meta.get("path_name")
            code = meta.get("tensor_meta", {}).get("dtype")
            if path is not None:
                dtypes[os.path.join(folder, path)] = DTYPE_BY_CODE.get(code, "other")
    return dtypes


def rewrite(src: str, dst: str, replace) -> None:
    """Copies archive `src` to `dst` entry by entry (stored, as torch writes them), with replace(info, data)
    giving each entry's new bytes; writes a temporary file and renames it, so a failure leaves nothing."""
    folder = os.path.dirname(os.path.abspath(dst))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".pt2_weights.")
    os.close(fd)
    try:
        with zipfile.ZipFile(src) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as zout:
            for info in zin.infolist():
                zout.writestr(info, replace(zin, info))
        os.replace(tmp, dst)
    except BaseException:
        os.unlink(tmp)
        raise


def strip(args: argparse.Namespace) -> int:
    sizes = {}
    with zipfile.ZipFile(args.model) as archive:
        dtypes = payload_dtypes(archive)

    def replace(zin: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
        if info.filename in dtypes and dtypes[info.filename] != "other" and info.file_size >= args.min_bytes:
            sizes[info.filename] = {"bytes": info.file_size, "dtype": dtypes[info.filename]}
            return b""
        return zin.read(info.filename)

    rewrite(args.model, args.output, replace)
    with open(args.output + ".sizes.json", "w") as f:
        json.dump(sizes, f, indent=1)
    print(f"stripped {len(sizes)} payloads ({sum(s['bytes'] for s in sizes.values())} bytes) -> {args.output}")
    return 0


def fill(args: argparse.Namespace) -> int:
    import numpy as np

    with open(args.model + ".sizes.json") as f:
        sizes = json.load(f)
    rng = np.random.default_rng(args.seed)

    def replace(zin: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
        data = zin.read(info.filename)
        entry = sizes.get(info.filename)
        if entry is None:
            return data
        if data:
            sys.exit(f"pt2_weights: entry {info.filename} of {args.model} is not empty: not a stripped archive")
        count = entry["bytes"] // {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}[entry["dtype"]]
        values = rng.normal(0.0, args.std, count)
        if entry["dtype"] == "bfloat16":
            return (values.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
        return values.astype({"float32": "<f4", "float16": "<f2", "float64": "<f8"}[entry["dtype"]]).tobytes()

    rewrite(args.model, args.output, replace)
    print(f"filled {len(sizes)} payloads (seed {args.seed}, std {args.std}) -> {args.output}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("strip", help="empty the large float payloads")
    s.add_argument("model")
    s.add_argument("-o", "--output", required=True)
    s.add_argument("--min-bytes", type=int, default=1 << 16, help="payloads smaller than this are kept")
    f = sub.add_parser("fill", help="fill stripped payloads with seeded random values")
    f.add_argument("model")
    f.add_argument("-o", "--output", required=True)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--std", type=float, default=0.02)
    args = parser.parse_args()
    return strip(args) if args.command == "strip" else fill(args)


if __name__ == "__main__":
    sys.exit(main())
