#!/usr/bin/env python3
"""Where a zoo model's fp16 error comes from (GPU machine): cosine against eager fp32 (CPU) of variants that round
one thing to fp16 at a time, computing in fp32 otherwise (TF32 off unless said).

  tf32         fp32 on the GPU with TF32 convolutions and matmuls (torch's cuDNN default)
  fp32         fp32 on the GPU, TF32 off
  weights      weights (and buffers) rounded to fp16
  input        the model's input rounded to fp16
  acts         every leaf module's output rounded to fp16 (fp16 storage between layers)
  all          weights + input + acts: an fp16 engine that computes in fp32
  all-skipN    all, but the input and the first N leaf outputs (execution order) kept fp32
  all-lastN    all, but the last N leaf outputs kept fp32
  half         the model in fp16 (`.half()`), as eager fp16 runs

Usage: python3 bench/zoo/fp16_sensitivity.py resnet50 inception_v3 ... [--json OUT.jsonl]
"""

import argparse
import copy
import json
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import models  # noqa: E402
from export_fixtures import calibrate_batch_norm_stats, flatten_outputs  # noqa: E402
from zoo import cosine_to as cosine  # noqa: E402  (the zoo's yardstick: worst output, nan when not finite)


def max_abs_rel(reference, outputs) -> float:
    """The largest |out - ref| over the output's largest |ref| (the zoo's fp32 bar: 1e-3), worst output."""
    return max(float((o.detach().cpu().double() - r.double()).abs().max() / r.double().abs().max().clamp_min(1e-30))
               for o, r in zip(outputs, reference))


def leaves_in_order(module, inputs):
    order = []
    hooks = [m.register_forward_hook(lambda m, a, o: order.append(m)) for m in module.modules()
             if not list(m.children())]
    with torch.no_grad():
        module(*inputs)
    for h in hooks:
        h.remove()
    seen, unique = set(), []
    for m in order:
        if id(m) not in seen:
            seen.add(id(m))
            unique.append(m)
    return unique


def below_fp16_normal(module, inputs, leaves, limit: int = 5):
    """The first leaf outputs (index, module type, largest |x|) whose largest |x| is below fp16's smallest normal."""
    found = []

    def hook(m, _a, o):
        if isinstance(o, torch.Tensor) and o.is_floating_point() and len(found) < limit:
            amax = float(o.abs().max()) if o.numel() else 0.0
            if amax < 2.0 ** -14:
                found.append([leaves.index(m), type(m).__name__, amax])

    hooks = [m.register_forward_hook(hook) for m in leaves]
    with torch.no_grad():
        module(*inputs)
    for h in hooks:
        h.remove()
    return found


def rounded(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.half().float()
    if isinstance(x, (tuple, list)):
        return type(x)(rounded(v) for v in x)
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    return x


def run(module, inputs, round_weights=False, round_input=False, round_leaves=()):
    m = copy.deepcopy(module)
    if round_weights:
        with torch.no_grad():
            for t in list(m.parameters()) + list(m.buffers()):
                if t.is_floating_point():
                    t.copy_(t.half().float())
    names = {id(x): k for k, x in enumerate(module.modules())}
    targets = {names[id(x)] for x in round_leaves}
    hooks = [x.register_forward_hook(lambda _m, _a, o: rounded(o)) for k, x in enumerate(m.modules())
             if k in targets]
    xs = [rounded(x) if round_input else x for x in inputs]
    with torch.no_grad():
        out = flatten_outputs(m(*xs))
    for h in hooks:
        h.remove()
    return out


def study(name: str) -> dict:
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    module = models.build(name)
    inputs = models.ZOO[name].inputs(torch.Generator().manual_seed(1))
    calibrate_batch_norm_stats(module, inputs, gen)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.Linear) and not m.weight.any():
                m.weight.normal_(0.0, 0.02)
        reference = flatten_outputs(module(*inputs))
    row = {"model": name, "output_absmax": [float(r.abs().max()) for r in reference]}
    gpu = module.cuda()
    xs = [x.cuda() for x in inputs]
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    out = run(gpu, xs)
    row["tf32"], row["tf32_maxabs_rel"] = cosine(reference, out), max_abs_rel(reference, out)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    leaves = leaves_in_order(gpu, xs)
    row["leaves"] = len(leaves)
    row["below_fp16_normal"] = below_fp16_normal(gpu, xs, leaves)
    out = run(gpu, xs)
    row["fp32"], row["fp32_maxabs_rel"] = cosine(reference, out), max_abs_rel(reference, out)
    row["weights"] = cosine(reference, run(gpu, xs, round_weights=True))
    row["input"] = cosine(reference, run(gpu, xs, round_input=True))
    row["acts"] = cosine(reference, run(gpu, xs, round_leaves=leaves))
    row["all"] = cosine(reference, run(gpu, xs, True, True, leaves))
    for n in (1, 4, 10, 25):
        row[f"all-skip{n}"] = cosine(reference, run(gpu, xs, True, False, leaves[n:]))
    for n in (1, 4):
        row[f"all-last{n}"] = cosine(reference, run(gpu, xs, True, True, leaves[:-n]))
    half = copy.deepcopy(gpu).half()
    with torch.no_grad():
        out = flatten_outputs(half(*[x.half() if x.is_floating_point() else x for x in xs]))
    row["half"] = cosine(reference, out)
    row["half_output_absmax"] = [float(o.float().abs().max()) for o in out]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="+")
    parser.add_argument("--json", help="append one JSON line per model")
    args = parser.parse_args()
    for name in args.names:
        try:
            row = study(name)
        except Exception as error:
            row = {"model": name, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(row), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
