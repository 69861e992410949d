#!/usr/bin/env python3
"""Task accuracy of Kiln INT8 or FP8 (calibrated by Kiln) against Kiln fp32 on trained models with a known answer.

Reads the folders tools/train_synthetic.py writes (model.pt2, calib.npz, test.npz, labels.npz, meta.json), compiles
each model in fp32 and quantized for each --calibrator (`--precision int8 --calibration calib.npz`; with
`--quantize fp8`, `--precision fp16 fp8`, beside an fp16 module), runs every module on the held-out inputs
(`kiln run`, one call over the whole held-out batch), and prints per module: task accuracy (argmax against the
known labels), agreement with Kiln fp32's predictions, the SQNR of its logits against Kiln fp32's (dB) and, for
fp32, agreement with eager PyTorch's predictions (labels.npz). Needs numpy.

    python3 bench/cpu/int8_task.py --models /work/models/synthetic --kiln build/tools/kiln/kiln
    python3 bench/cpu/int8_task.py --models DIR --backend cuda --quantize fp8 --calibrators max,percentile
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(cmd) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"int8_task: {' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
    return proc.stdout + proc.stderr


def summary_line(text: str) -> str:
    """The compile's summary and, when it quantized, its count of quantized layers ("fp8: N of M ...")."""
    lines = [line for line in text.splitlines() if "engines (" in line]
    counts = [line.split(" (")[0] for line in text.splitlines() if line.startswith(("int8: ", "fp8: "))]
    return "; ".join(([lines[-1].split(": ", 1)[-1]] if lines else []) + counts[-1:])


def sqnr_db(reference: np.ndarray, got: np.ndarray) -> float:
    noise = float(np.sum((reference.astype(np.float64) - got) ** 2))
    return 10.0 * np.log10(float(np.sum(reference.astype(np.float64) ** 2)) / max(noise, 1e-30))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="the --out folder of tools/train_synthetic.py")
    ap.add_argument("--kiln", default="build/tools/kiln/kiln")
    ap.add_argument("--calibrators", default="percentile,max,entropy")
    ap.add_argument("--backend", default="cpu", help="the engines' backend (kiln compile --backend)")
    ap.add_argument("--quantize", choices=["int8", "fp8"], default="int8",
                    help="int8, or fp8 (FP8 matmuls beside fp16: --precision fp16 fp8; cuda)")
    ap.add_argument("--work", default="", help="folder for the modules and outputs (default: a temporary one)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="kiln-int8-task-")
    os.makedirs(work, exist_ok=True)
    flags = ["--cache-dir", os.path.join(work, "cache"), "--timing-cache", os.path.join(work, "timing.bin"),
             "--backend", a.backend]
    quantized = ["int8"] if a.quantize == "int8" else ["fp16", "fp8"]
    print("| model | module | task accuracy | agreement with Kiln fp32 | SQNR vs Kiln fp32 (dB) | compile |")
    print("|---|---|---|---|---|---|")
    for name in sorted(os.listdir(a.models)):
        folder = os.path.join(a.models, name)
        if not os.path.isfile(os.path.join(folder, "model.pt2")):
            continue
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
        labels = np.load(os.path.join(folder, "labels.npz"))
        truth, eager = labels["labels"], labels["eager_fp32"]
        test = os.path.join(folder, "test.npz")
        reference = None
        modules = [("fp32", [])] + ([("fp16", ["--precision", "fp16"])] if a.quantize == "fp8" else [])
        modules += [(f"{'+'.join(quantized)} {c}", ["--precision", *quantized, "--calibration",
                                                    os.path.join(folder, "calib.npz"), "--calibrator", c])
                    for c in a.calibrators.split(",")]
        print(f"| {name} | eager PyTorch fp32 | {100.0 * meta['eager_fp32_accuracy']:.2f}% | | | |")
        for tag, extra in modules:
            module = os.path.join(work, f"{name}_{tag.replace(' ', '_')}.kiln")
            out = os.path.join(work, f"{name}_{tag.replace(' ', '_')}_out.npz")
            compiled = run([a.kiln, "compile", os.path.join(folder, "model.pt2"), "-o", module] + extra + flags)
            run([a.kiln, "run", module, "--inputs", test, "--outputs", out])
            logits = np.load(out)["output_0"]
            predicted = logits.argmax(axis=1)
            accuracy = 100.0 * float(np.mean(predicted == truth))
            if reference is None:
                reference = logits
                agreement = f"{100.0 * float(np.mean(predicted == eager)):.2f}% with eager"
                sqnr = ""
            else:
                agreement = f"{100.0 * float(np.mean(predicted == reference.argmax(axis=1))):.2f}%"
                sqnr = f"{sqnr_db(reference, logits):.1f}"
            print(f"| {name} | Kiln {tag} | {accuracy:.2f}% | {agreement} | {sqnr} | {summary_line(compiled)} |")
    print(f"\n(held-out inputs per model: {len(truth)}; files in {work})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
