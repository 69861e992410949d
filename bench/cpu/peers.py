#!/usr/bin/env python3
"""Kiln's CPU engines against the stronger CPU peers, in one process per model, on the same inputs.

For each exported program (a folder with model.pt2 and io_0.npz, as tools/export_fixtures.py writes them) and each
thread count: libtorch eager (the exported program's module), torch.compile with Inductor (default mode), ONNX
Runtime's CPU execution provider (the same program exported with torch.onnx.export(dynamo=True)) and Kiln
(`kiln compile --threads T`, then `kiln bench --threads T`, whose own libtorch figure is kept as a cross-check). Each figure
is the median of --iters timed calls after --warmup untimed ones. Prints a markdown table and appends one JSON
line per (model, threads) to --results.

    python3 bench/cpu/peers.py --models /tmp/models --kiln build/tools/kiln/kiln --threads 1,16
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch


def median_ms(fn, warmup: int, iters: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def load_inputs(folder: str):
    with np.load(os.path.join(folder, "io_0.npz")) as data:
        names = sorted((k for k in data.files if k.startswith("input_")), key=lambda k: int(k.split("_")[1]))
        return [torch.from_numpy(data[k].copy()) for k in names]


def onnx_session(ep, inputs, path: str, threads: int):
    import onnxruntime as ort
    if not os.path.exists(path):
        torch.onnx.export(ep, tuple(inputs), path, dynamo=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feeds = {arg.name: t.numpy() for arg, t in zip(session.get_inputs(), inputs)}
    return lambda: session.run(None, feeds)


def kiln_figures(kiln: str, folder: str, work: str, threads, iters: int) -> dict:
    """Per thread count: a module compiled for that count (`kiln compile --threads T`: its tactics are timed on T
    threads, as a user deploying on T threads builds it), then `kiln bench --threads T`."""
    figures = {}
    for t in threads:
        module = os.path.join(work, f"model.t{t}.kiln")
        if not os.path.exists(module):
            subprocess.run([kiln, "compile", os.path.join(folder, "model.pt2"), "-o", module, "--threads", str(t)],
                           check=True, stdout=subprocess.DEVNULL)
        result = subprocess.run([kiln, "bench", module, "--inputs", os.path.join(folder, "io_0.npz"), "--threads",
                                 str(t), "--iters", str(iters), "--json"], check=True, capture_output=True, text=True)
        run = json.loads(result.stdout)["runs"][0]
        figures[run["threads"]] = (run["kiln"]["median"], run["reference"]["median"])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", required=True, help="folder of exported programs (one subfolder each)")
    parser.add_argument("--kiln", required=True, help="the kiln binary")
    parser.add_argument("--threads", default="1,16", help="thread counts, comma-separated")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--work", default=tempfile.gettempdir() + "/kiln-peers")
    parser.add_argument("--results", default="peers.jsonl")
    parser.add_argument("--deadline", type=float, default=0, help="start no model after this many seconds")
    parser.add_argument("names", nargs="*", help="models (default: every subfolder)")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    names = args.names or sorted(os.listdir(args.models))
    start = time.time()
    rows = []
    for name in names:
        if args.deadline and time.time() - start > args.deadline:
            print(f"{name}: skipped (deadline)", file=sys.stderr)
            continue
        folder = os.path.join(args.models, name)
        work = os.path.join(args.work, name)
        os.makedirs(work, exist_ok=True)
        inputs = load_inputs(folder)
        ep = torch.export.load(os.path.join(folder, "model.pt2"))
        module = ep.module()
        figures = {t: {} for t in threads}
        try:
            for t, (kiln_ms, libtorch_ms) in kiln_figures(args.kiln, folder, work, threads, args.iters).items():
                figures[t].update(kiln=kiln_ms, kiln_libtorch=libtorch_ms)
        except (subprocess.CalledProcessError, KeyError, ValueError) as error:
            print(f"{name}: kiln failed: {error}", file=sys.stderr)
        compiled = torch.compile(module)
        for t in threads:
            torch.set_num_threads(t)
            with torch.no_grad():
                figures[t]["eager"] = median_ms(lambda: module(*inputs), args.warmup, args.iters)
                try:
                    figures[t]["inductor"] = median_ms(lambda: compiled(*inputs), args.warmup, args.iters)
                except Exception as error:  # a peer that fails is reported, not fatal
                    print(f"{name}: inductor failed: {type(error).__name__}: {error}", file=sys.stderr)
            try:
                run = onnx_session(ep, inputs, os.path.join(work, "model.onnx"), t)
                figures[t]["onnxruntime"] = median_ms(run, args.warmup, args.iters)
            except Exception as error:
                print(f"{name}: onnxruntime failed: {type(error).__name__}: {error}", file=sys.stderr)
        for t in threads:
            row = {"model": name, "threads": t, **figures[t]}
            rows.append(row)
            with open(args.results, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)

    def cell(row, key):
        return f"{row[key]:.2f}" if key in row else "-"

    print("\n| model | threads | Kiln ms | eager ms | Inductor ms | ONNX Runtime ms | best peer / Kiln |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        peers = [row[k] for k in ("inductor", "onnxruntime") if k in row]
        ratio = f"{min(peers) / row['kiln']:.2f}x" if peers and "kiln" in row else "-"
        print(f"| {row['model']} | {row['threads']} | {cell(row, 'kiln')} | {cell(row, 'eager')} | "
              f"{cell(row, 'inductor')} | {cell(row, 'onnxruntime')} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
