#!/usr/bin/env python3
"""The model-zoo conformance run: every zoo model (bench/zoo/models.py) exported as users export it, compiled by
Kiln for each target, run and compared with eager PyTorch fp32.

Per model (once): random weights (fixed seed; batch norm statistics calibrated on random batches as training
leaves them; all-zero linear weights, such as torchvision ViT's head, re-drawn), eager fp32 outputs on the CPU,
torch.export.export(model, inputs, dynamic_shapes=...) with grad mode on (no torch.no_grad around it: training
IR, higher-order ops included), ep.run_decompositions() for the models marked core_aten; a model whose dynamic
export fails is exported with static shapes (recorded).
Per model and target (cpu = cpu fp32, cuda = cuda fp32, cuda-fp16 = cuda with --precision fp16):
  kiln compile (timed, with a timeout) -> nodes in engines / all nodes, engines, PyTorch runs;
  kiln run -> outputs; max abs error, its ratio to the output's largest magnitude, cosine (nan when non-finite);
  kiln bench --json -> Kiln's median latency and libtorch eager's running the same program on the same device.
Results go, one JSON line per entry, to --results; entries already there are skipped (resume), so the table fills
across device calls. Subsets: model names as arguments, --targets. Prints a short table last and writes the
markdown table to --table.

Pass: cpu / cuda fp32: cosine >= 0.9999 and max abs <= 1e-3 x the output's largest magnitude; cuda fp16:
cosine >= 0.999 (issue 16).
"""
import argparse
import concurrent.futures as futures
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
FP16_COSINE = 0.999  # the cuda-fp16 bar
TARGETS = {"cpu": ("cpu", None), "cuda": ("cuda", None), "cuda-fp16": ("cuda", "fp16")}


# --- export (child processes; imports torch there) ------------------------------------------------------------


def export_one(name: str, work: str) -> dict:
    import numpy as np
    import torch
    from torch import nn

    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
    import models
    from export_fixtures import calibrate_batch_norm_stats, flatten_outputs

    torch.set_num_threads(2)
    entry = models.ZOO[name]
    row = {"key": f"{name}/export", "model": name, "family": entry.family}
    t0 = time.time()
    try:
        torch.manual_seed(0)
        gen = torch.Generator().manual_seed(0)
        module = models.build(name)
        inputs = entry.inputs(torch.Generator().manual_seed(1))
        calibrate_batch_norm_stats(module, inputs, gen)
        with torch.no_grad():
            for m in module.modules():
                if isinstance(m, nn.Linear) and not m.weight.any():
                    m.weight.normal_(0.0, 0.02)
            reference = flatten_outputs(module(*inputs))
        folder = os.path.join(work, name)
        os.makedirs(folder, exist_ok=True)
        ep = None
        row["shapes"] = "static"
        if entry.dynamic is not None:
            try:
                ep = torch.export.export(module, inputs, dynamic_shapes=entry.dynamic(), strict=False)
                row["shapes"] = "dynamic"
            except Exception as error:  # fall back to static shapes, and say why
                row["dynamic_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
        if ep is None:
            ep = torch.export.export(module, inputs, strict=False)
        row["hops"] = sorted({str(n.target) for n in ep.graph.nodes
                              if n.op == "call_function" and isinstance(n.target, torch._ops.HigherOrderOperator)})
        row["form"] = "training IR"
        if entry.core_aten:
            ep = ep.run_decompositions()
            row["form"] = "core ATen"
        torch.export.save(ep, os.path.join(folder, "model.pt2"))
        arrays = {f"input_{k}": t.contiguous().numpy() for k, t in enumerate(inputs)}
        arrays.update({f"output_{k}": t.detach().contiguous().numpy() for k, t in enumerate(reference)})
        np.savez(os.path.join(folder, "io.npz"), **arrays)
        # Sample inputs for the fp16 build's precision check (docs/engine.md, step 6): another draw, not io.npz's.
        sample = entry.inputs(torch.Generator().manual_seed(2))
        np.savez(os.path.join(folder, "sample.npz"), **{f"input_{k}": t.contiguous().numpy()
                                                        for k, t in enumerate(sample)})
        row["ok"] = True
        row.update(eager_fp16_cosines(module, inputs, reference))
    except Exception as error:
        row["ok"] = False
        row["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
        row["trace"] = traceback.format_exc()[-1500:]
    row["export_s"] = round(time.time() - t0, 1)
    return row


def cosine_to(reference, outputs) -> float:
    """The worst cosine of outputs against the fp32 reference (nan where an output is not finite)."""
    import torch

    worst = 1.0
    for out, ref in zip(outputs, reference):
        out, ref = out.detach().double().cpu().flatten(), ref.detach().double().flatten()
        if not torch.isfinite(out).all():
            return float("nan")
        denom = float(out.norm() * ref.norm())
        # (an all-zero output matches only an all-zero reference)
        same = 1.0 if float(out.norm()) == float(ref.norm()) else 0.0
        worst = min(worst, float((out * ref).sum()) / denom if denom > 0 else same)
    return worst


def fp16_weights_cosine(module, inputs, reference) -> float:
    """The floor of any fp16 engine: the model in fp32 (CPU) with its weights and buffers rounded to fp16, against
    eager fp32. A random-weight deep network can amplify that rounding alone past the cuda-fp16 bar."""
    import copy

    import torch

    rounded = copy.deepcopy(module)
    with torch.no_grad():
        for t in list(rounded.parameters()) + list(rounded.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().float())
        return cosine_to(reference, flatten_outputs_of(rounded(*inputs)))


def eager_fp16_cosines(module, inputs, reference) -> dict:
    """What eager PyTorch itself keeps in fp16 on the GPU, the yardstick of the cuda-fp16 target: the model cast to
    fp16 (`.half()`, as an fp16 engine runs) and under autocast, each against eager fp32. Empty without CUDA."""
    import copy

    import torch

    row = {"fp16_weights_cosine": fp16_weights_cosine(module, inputs, reference)}
    if not torch.cuda.is_available():
        return row
    try:
        gpu = copy.deepcopy(module).cuda()
        xs = [x.cuda() for x in inputs]
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            row["autocast_fp16_cosine"] = cosine_to(reference, flatten_outputs_of(gpu(*xs)))
        gpu = gpu.half()
        xs = [x.half() if x.is_floating_point() else x for x in xs]
        with torch.no_grad():
            row["eager_fp16_cosine"] = cosine_to(reference, flatten_outputs_of(gpu(*xs)))
        del gpu, xs
        torch.cuda.empty_cache()
    except Exception as error:  # a model eager fp16 cannot run: say so, the Kiln targets still run
        row["eager_fp16_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
    return row


def flatten_outputs_of(result):
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
    from export_fixtures import flatten_outputs

    return flatten_outputs(result)


# --- kiln (subprocesses) --------------------------------------------------------------------------------------

COMPILED = re.compile(r"(\d+) engines \((\d+) nodes, \d+ plan bytes\), (\d+) PyTorch runs \((\d+) nodes\)")


KEPT_FP32 = re.compile(r"precision: (\d+) layers kept in fp32")


def sh(cmd, timeout, log):
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (
            e.stdout or ""), f"timed out after {timeout} s"
    log.write(f"$ {' '.join(cmd)}\nrc {rc} in {time.time() - t0:.1f} s\n{out[-4000:]}{err[-4000:]}\n")
    return rc, out, err, time.time() - t0


def last_line(text: str) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""


def compare(reference, got, fp16: bool) -> dict:
    import numpy as np

    worst = {"max_abs": 0.0, "rel": 0.0, "cosine": 1.0, "ok": True}
    for k in sorted(f for f in reference.files if f.startswith("output_")):
        ref = reference[k].astype(np.float64)
        if k not in got.files:
            return {"ok": False, "why": f"no {k} in Kiln's outputs"}
        out = got[k].astype(np.float64)
        if out.shape != ref.shape:
            return {"ok": False, "why": f"{k} has shape {out.shape}, eager {ref.shape}"}
        if not np.isfinite(out).all():
            worst.update(ok=False, cosine=float("nan"), why=f"{k} has non-finite values")
            worst["max_abs"] = float("inf")
            continue
        max_abs = float(np.abs(out - ref).max()) if ref.size else 0.0
        scale = float(np.abs(ref).max()) if ref.size else 0.0
        rel = max_abs / scale if scale > 0 else max_abs
        denom = float(np.linalg.norm(out) * np.linalg.norm(ref))
        cos = float(np.dot(out.ravel(), ref.ravel()) / denom) if denom > 0 else (1.0 if max_abs == 0 else 0.0)
        worst["max_abs"] = max(worst["max_abs"], max_abs)
        worst["rel"] = max(worst["rel"], rel)
        if not math.isnan(worst["cosine"]):
            worst["cosine"] = min(worst["cosine"], cos)
        good = cos >= FP16_COSINE if fp16 else (cos >= 0.9999 and rel <= 1e-3)
        if not good:
            worst["ok"] = False
            worst.setdefault("why", f"{k}: cosine {cos:.6f}, max abs {max_abs:.3g} ({rel:.2g} of max |eager|)")
    return worst


def run_target(name: str, target: str, args) -> dict:
    import numpy as np

    backend, precision = TARGETS[target]
    folder = os.path.join(args.work, name)
    pt2, io = os.path.join(folder, "model.pt2"), os.path.join(folder, "io.npz")
    kiln_path = os.path.join(folder, f"{target}.kiln")
    out_npz = os.path.join(folder, f"{target}_out.npz")
    row = {"key": f"{name}/{target}", "model": name, "target": target, "load": False, "ok": False}
    with open(os.path.join(folder, f"{target}.log"), "w") as log:
        cmd = [args.kiln, "compile", pt2, "-o", kiln_path, "--backend", backend]
        if precision:
            cmd += ["--precision", precision, "--sample-inputs", os.path.join(folder, "sample.npz")]
        rc, out, err, secs = sh(cmd, args.compile_timeout, log)
        row["compile_s"] = round(secs, 1)
        if rc != 0:
            row["load"] = None  # the coverage entry says whether the program loads
            row["error"] = f"compile: {last_line(err) or last_line(out)}"
            if rc == "timeout":
                row["error"] = f"compile: timed out after {args.compile_timeout} s"
            return row
        row["load"] = True
        kept = KEPT_FP32.search(out)
        if kept:
            row["fp32_layers"] = int(kept.group(1))  # reduced-precision builds: layers the policy kept in fp32
        m = COMPILED.search(out)
        if m:
            engines, engine_nodes, torch_runs, torch_nodes = map(int, m.groups())
            row.update(engines=engines, torch_runs=torch_runs, engine_nodes=engine_nodes, torch_nodes=torch_nodes)
        rc, out, err, _ = sh([args.kiln, "run", kiln_path, "--inputs", io, "--outputs", out_npz], args.run_timeout, log)
        if rc != 0:
            row["error"] = f"run: {last_line(err) or last_line(out)}"
            return row
        row.update(compare(np.load(io), np.load(out_npz), precision == "fp16"))
        if not args.no_latency:
            cmd = [args.kiln, "bench", kiln_path, "--inputs", io, "--iters", str(args.iters), "--warmup", "3", "--json"]
            if backend == "cpu":
                cmd += ["--threads", str(args.threads)]
            rc, out, err, _ = sh(cmd, args.run_timeout, log)
            if rc == 0:
                timing = json.loads(out.strip().splitlines()[-1])
                row["kiln_ms"] = round(timing["kiln_ms_median"], 3)
                row["eager_ms"] = round(timing["reference_ms_median"], 3)
    return row


def coverage(name: str, args) -> dict:
    """Whether the program loads, and the ops that stay in PyTorch with the reason (kiln inspect --coverage)."""
    pt2 = os.path.join(args.work, name, "model.pt2")
    row = {"key": f"{name}/coverage", "model": name}
    proc = subprocess.run([args.kiln, "inspect", pt2, "--coverage", "--json"], capture_output=True, text=True,
                          timeout=args.run_timeout)
    row["load"] = proc.returncode == 0
    if proc.returncode != 0:
        row["error"] = last_line(proc.stderr) or last_line(proc.stdout)
        return row
    report = json.loads(proc.stdout)["coverage"]
    ops = {}
    for u in report["unsupported"]:
        ops.setdefault(u["op"], f"{u['status']}: {u['reason']}"[:200])
    row["torch_ops"] = ops
    row["ops_total"], row["ops_supported"] = report["ops_total"], report["ops_supported"]
    return row


# --- results and the table ------------------------------------------------------------------------------------


def load_results(path: str) -> dict:
    rows = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    rows[row["key"]] = row
    return rows


def fmt(v, spec=".3g"):
    if v is None:
        return "-"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return format(v, spec)


def table(rows: dict, names, targets) -> str:
    from models import ZOO

    lines = ["| model | family | form | shapes | target | loads | nodes in engines | engines / PyTorch runs | "
             "max abs (rel) | cosine | compile s | Kiln ms | eager ms | result |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        ex = rows.get(f"{name}/export")
        if ex is None:
            continue
        if not ex.get("ok"):
            lines.append(f"| {name} | {ZOO[name].family} | - | - | - | - | - | - | - | - | - | - | - | "
                         f"export failed: {ex.get('error', '')[:120]} |")
            continue
        for t in targets:
            r = rows.get(f"{name}/{t}")
            if r is None:
                continue
            total = (r.get("engine_nodes") or 0) + (r.get("torch_nodes") or 0)
            share = f"{r['engine_nodes']}/{total} ({100.0 * r['engine_nodes'] / total:.0f}%)" if total else "-"
            runs = f"{r['engines']} / {r['torch_runs']}" if "engines" in r else "-"
            err = f"{fmt(r.get('max_abs'))} ({fmt(r.get('rel'), '.1e')})" if "max_abs" in r else "-"
            result = "pass" if r.get("ok") else (r.get("why") or r.get("error") or "fail")[:140].replace("|", "/")
            cosine = fmt(r.get('cosine'), '.6f')
            if t == "cuda-fp16" and ex.get("eager_fp16_cosine") is not None:
                cosine += f" (eager fp16 {fmt(ex['eager_fp16_cosine'], '.6f')})"
            loads = r.get("load")
            if loads is None:
                loads = rows.get(f"{name}/coverage", {}).get("load")
            lines.append(f"| {name} | {ex['family']} | {ex['form']} | {ex['shapes']} | {t} | "
                         f"{'yes' if loads else 'no'} | {share} | {runs} | {err} | "
                         f"{cosine} | {fmt(r.get('compile_s'), '.1f')} | "
                         f"{fmt(r.get('kiln_ms'), '.3f')} | {fmt(r.get('eager_ms'), '.3f')} | {result} |")
    return "\n".join(lines)


def summary(rows: dict, names, targets) -> str:
    out = []
    exported = [n for n in names if rows.get(f"{n}/export", {}).get("ok")]
    out.append(f"models: {len(names)} selected, {len(exported)} exported")
    for t in targets:
        rs = [rows[f"{n}/{t}"] for n in exported if f"{n}/{t}" in rows]
        if not rs:
            continue
        loads = sum(1 for r in rs if r.get("load") or
                    (r.get("load") is None and rows.get(f"{r['model']}/coverage", {}).get("load")))
        ok = sum(1 for r in rs if r.get("ok"))
        shares = [r["engine_nodes"] / (r["engine_nodes"] + r["torch_nodes"]) for r in rs
                  if r.get("engine_nodes") is not None and (r["engine_nodes"] + r["torch_nodes"]) > 0]
        secs = sorted(r["compile_s"] for r in rs if r.get("load") and "compile_s" in r)
        p95 = secs[min(len(secs) - 1, int(math.ceil(0.95 * len(secs))) - 1)] if secs else None
        as_eager = ""
        if t == "cuda-fp16":
            pairs = [(r.get("cosine"), rows[f"{r['model']}/export"].get("eager_fp16_cosine")) for r in rs]
            pairs = [(k, e) for k, e in pairs if k is not None and e is not None and not math.isnan(e)]
            close = sum(1 for k, e in pairs if not math.isnan(k) and k >= e - 1e-4)
            as_eager = f", {close} of {len(pairs)} at least as close to fp32 as eager fp16 (within 1e-4)"
            kept = {r["model"]: r["fp32_layers"] for r in rs if r.get("fp32_layers")}
            if kept:
                as_eager += "; layers kept in fp32: " + ", ".join(f"{m} {n}" for m, n in sorted(kept.items()))
            floors = {r["model"]: rows[f"{r['model']}/export"].get("fp16_weights_cosine") for r in rs}
            beyond = sorted(m for m, f in floors.items() if f is not None and f < FP16_COSINE)
            if beyond:
                as_eager += (f"; fp16 weights alone fall below {FP16_COSINE} (in fp32, on the CPU) on "
                             f"{', '.join(beyond)}")
        out.append(f"{t:>9}: {len(rs)} run, {loads} load ({100.0 * loads / len(rs):.0f}%), {ok} match eager "
                   f"({100.0 * ok / len(rs):.0f}%), median nodes in engines "
                   f"{100.0 * statistics.median(shares) if shares else 0:.1f}%, compile s p50 "
                   f"{fmt(statistics.median(secs) if secs else None, '.1f')} p95 {fmt(p95, '.1f')}{as_eager}")
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", help="zoo models (default: all); see --list")
    p.add_argument("--targets", default="cpu,cuda,cuda-fp16", help="comma-separated: cpu, cuda, cuda-fp16")
    p.add_argument("--backends", dest="targets", help="alias of --targets")
    p.add_argument("--kiln", default="build-device/tools/kiln/kiln")
    p.add_argument("--work", default="/tmp/kiln-zoo", help="exported programs, compiled modules, logs")
    p.add_argument("--results", default="bench/zoo/results.jsonl", help="one JSON line per entry; resumes from it")
    p.add_argument("--table", default=None, help="write the markdown table here")
    p.add_argument("--jobs", type=int, default=4, help="targets compiled and run at the same time")
    p.add_argument("--export-jobs", type=int, default=8, help="models exported at the same time")
    p.add_argument("--threads", type=int, default=4, help="CPU threads of kiln bench on the cpu target")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--compile-timeout", type=int, default=120)
    p.add_argument("--run-timeout", type=int, default=120)
    p.add_argument("--deadline", type=float, default=0, help="start no job after this many seconds (0: none)")
    p.add_argument("--no-latency", action="store_true")
    p.add_argument("--export-only", action="store_true", help="export the models, compile nothing (needs no kiln)")
    p.add_argument("--redo", action="store_true", help="run entries already in the results again")
    p.add_argument("--list", action="store_true")
    args = p.parse_args()
    sys.path.insert(0, HERE)
    from models import ZOO

    if args.list:
        for name, m in ZOO.items():
            print(f"{name:<30} {m.family:<22} {'core ATen' if m.core_aten else 'training IR'}")
        return 0
    names = args.models or list(ZOO)
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        p.error(f"unknown model(s): {', '.join(unknown)}")
    targets = [t for t in args.targets.split(",") if t]
    for t in targets:
        if t not in TARGETS:
            p.error(f"unknown target '{t}' (cpu, cuda, cuda-fp16)")
    start = time.time()
    rows = load_results(args.results)
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    results = open(args.results, "a")

    def record(row):
        rows[row["key"]] = row
        results.write(json.dumps(row) + "\n")
        results.flush()

    def late():
        return args.deadline and time.time() - start > args.deadline

    # Exports: what is neither in the results nor on disk (a fresh machine has the results but not the files).
    def exported(n):
        return os.path.exists(os.path.join(args.work, n, "model.pt2")) and rows.get(f"{n}/export", {}).get("ok")

    pending_targets = {n: [t for t in targets if args.redo or f"{n}/{t}" not in rows] for n in names}
    # A failed export is tried again on every run (the zoo's configs may have been fixed since).
    to_export = [n for n in names if (args.redo or not rows.get(f"{n}/export", {}).get("ok") or
                                      (pending_targets[n] and not exported(n)))]
    if to_export:
        import multiprocessing

        with futures.ProcessPoolExecutor(args.export_jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            for row in pool.map(export_one, to_export, [args.work] * len(to_export)):
                record(row)
                print(f"export {row['model']}: {'ok' if row['ok'] else row['error']} ({row['export_s']} s)",
                      flush=True)
    if args.export_only:
        results.close()
        return 0
    # Order: every model's coverage (does it load) first, then target by target in --targets order, so that a
    # run cut short by --deadline has every model on the first target rather than some models on all.
    jobs = [(n, t) for t in targets for n in names if rows.get(f"{n}/export", {}).get("ok") and t in pending_targets[n]]
    with futures.ThreadPoolExecutor(args.jobs) as pool:
        pending = {}
        for n in names:
            if rows.get(f"{n}/export", {}).get("ok") and (args.redo or f"{n}/coverage" not in rows):
                pending[pool.submit(lambda n=n: None if late() else coverage(n, args))] = (n, "coverage")
        for n, t in jobs:
            pending[pool.submit(lambda n=n, t=t: None if late() else run_target(n, t, args))] = (n, t)
        for done in futures.as_completed(pending):
            n, t = pending[done]
            try:
                row = done.result()
            except Exception as error:
                row = {"key": f"{n}/{t}", "model": n, "target": t, "ok": False, "error": f"runner: {error}"}
            if row is None:
                continue
            record(row)
            if t != "coverage":
                print(f"{n:<28} {t:<9} {'pass' if row.get('ok') else (row.get('why') or row.get('error'))}",
                      flush=True)
    results.close()
    if args.table:
        with open(args.table, "w") as f:
            f.write(table(rows, names, targets) + "\n")
    print(summary(rows, names, targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
