#!/usr/bin/env python3
"""Exports programs that carry quantize/dequantize (Q/DQ) nodes, as quantization tools leave them (needs torch >= 2.9).

Three forms of the same idea, each a fixture folder like tools/export_fixtures.py writes (model.pt2, io_N.npz,
meta.json), with io_N.npz holding input_K, output_K (the Q/DQ program's own outputs, computed by eager PyTorch) and
fp32_output_K (the unquantized model's outputs, for the quantization error):

  qdq_*   PT2E's converted form written by hand: batch norm folded into the convolutions, every convolution and
          linear input quantized per tensor and dequantized (`quantized_decomposed.quantize_per_tensor` /
          `dequantize_per_tensor`, zero point 0: int8 [-128, 127], or uint8 [0, 255] where the input is never
          negative), weights stored int8 per output channel (symmetric, [-127, 127]) behind
          `dequantize_per_channel`. Scales from the largest |x| over calibration batches.
  fq_*    fake quantization as ModelOpt-style tools leave it for TensorRT: `torch.fake_quantize_per_tensor_affine`
          on convolution and linear inputs (int8, zero point 0), `torch.fake_quantize_per_channel_affine` on their
          fp32 weights, batch norm kept.
PyTorch's own PT2E flow (prepare_pt2e / convert_pt2e) left torch for torchao, which the GPU machine lacks: qdq_*
writes the graph convert_pt2e leaves, with TensorRT's symmetric activation quantization instead of its affine one.
fq_* programs are exported with static shapes (torch 2.11 has no symbolic-shape rule for the fake quantization's
cachemask op, which a dynamic export needs).

Usage:
  python3 tools/export_qdq.py --out tests/data/qdq qdq_tiny_resnet qdq_tiny_mlp fq_tiny_resnet fq_tiny_mlp
  python3 tools/export_qdq.py --out /tmp/qdq qdq_resnet18
"""

import argparse
import copy
import json
import os
import sys
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn
from torch.export import Dim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_fixtures import TinyMlp, TinyResNet, calibrate_batch_norm_stats, flatten_outputs, op_names  # noqa: E402

SEED = 0


def quantized_decomposed():
    import torch.ao.quantization.fx._decomposed  # noqa: F401 (registers torch.ops.quantized_decomposed)

    return torch.ops.quantized_decomposed


class InputQuant(nn.Module):
    """Quantizes and dequantizes its input per tensor, zero point 0, in the form given."""

    def __init__(self, amax: float, non_negative: bool, form: str) -> None:
        super().__init__()
        self.form = form
        if form == "qdq" and non_negative:
            self.qmin, self.qmax, self.dtype = 0, 255, torch.uint8
        else:
            self.qmin, self.qmax, self.dtype = -128, 127, torch.int8
        self.scale = max(amax, 1e-8) / self.qmax

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.form == "fq":
            return torch.fake_quantize_per_tensor_affine(x, self.scale, 0, self.qmin, self.qmax)
        q = quantized_decomposed().quantize_per_tensor(x, self.scale, 0, self.qmin, self.qmax, self.dtype)
        return quantized_decomposed().dequantize_per_tensor(q, self.scale, 0, self.qmin, self.qmax, self.dtype)


class QuantWeight(nn.Module):
    """A weight quantized per output channel, symmetric [-127, 127]: int8 behind a dequantize (qdq) or fp32 behind
    a fake quantization (fq)."""

    def __init__(self, weight: torch.Tensor, form: str) -> None:
        super().__init__()
        self.form = form
        amax = weight.detach().abs().flatten(1).amax(dim=1).clamp_min(1e-8)
        scales = (amax / 127).to(torch.float32)
        self.register_buffer("scales", scales)
        self.register_buffer("zero_points", torch.zeros_like(scales, dtype=torch.int32 if form == "fq" else torch.int64))
        shape = (-1,) + (1,) * (weight.dim() - 1)
        if form == "fq":
            self.weight = nn.Parameter(weight.detach().clone())
        else:
            q = torch.clamp(torch.round(weight.detach() / scales.reshape(shape)), -127, 127).to(torch.int8)
            self.register_buffer("weight_int8", q)

    def forward(self) -> torch.Tensor:
        if self.form == "fq":
            return torch.fake_quantize_per_channel_affine(self.weight, self.scales, self.zero_points, 0, -127, 127)
        return quantized_decomposed().dequantize_per_channel(self.weight_int8, self.scales, self.zero_points, 0,
                                                             -127, 127, torch.int8)


class QuantConv2d(nn.Module):
    def __init__(self, conv: nn.Conv2d, amax: float, non_negative: bool, form: str) -> None:
        super().__init__()
        self.input_quant = InputQuant(amax, non_negative, form)
        self.weight_quant = QuantWeight(conv.weight, form)
        conv.weight = None  # the quantized weight replaces it (an unused parameter would still be exported)
        self.conv = conv

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv
        return nn.functional.conv2d(self.input_quant(x), self.weight_quant(), c.bias, c.stride, c.padding,
                                    c.dilation, c.groups)


class QuantLinear(nn.Module):
    def __init__(self, linear: nn.Linear, amax: float, non_negative: bool, form: str) -> None:
        super().__init__()
        self.input_quant = InputQuant(amax, non_negative, form)
        self.weight_quant = QuantWeight(linear.weight, form)
        linear.weight = None
        self.linear = linear

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(self.input_quant(x), self.weight_quant(), self.linear.bias)


def fold_batch_norms(module: nn.Module) -> nn.Module:
    """Folds each batch norm that follows a convolution into it, as PT2E's prepare does before quantizing: in a
    Sequential, a BatchNorm2d right after a Conv2d; among attributes, `bnN` after `convN` (torchvision's and
    TinyResNet's naming)."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    for child in module.children():
        fold_batch_norms(child)
    names = [name for name, _ in module.named_children()]
    pairs = []
    if isinstance(module, nn.Sequential):
        pairs = [(a, b) for a, b in zip(names, names[1:])]
    else:
        pairs = [(name.replace("bn", "conv", 1), name) for name in names if name.startswith("bn")]
    for conv_name, bn_name in pairs:
        conv, bn = getattr(module, conv_name, None), getattr(module, bn_name, None)
        if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d):
            setattr(module, conv_name, fuse_conv_bn_eval(conv, bn))
            setattr(module, bn_name, nn.Identity())
    return module


def observe_input_ranges(module: nn.Module, batches: List[Tuple[torch.Tensor, ...]]) -> Dict[str, Tuple[float, bool]]:
    """Per convolution and linear: the largest |input| over the batches, and whether the input was never negative."""
    seen: Dict[str, Tuple[float, bool]] = {}
    hooks = []
    for name, child in module.named_modules():
        if isinstance(child, (nn.Conv2d, nn.Linear)):
            def hook(_m, args, name=name):
                x = args[0].detach()
                amax, non_negative = seen.get(name, (0.0, True))
                seen[name] = (max(amax, float(x.abs().max())), non_negative and bool((x >= 0).all()))
            hooks.append(child.register_forward_pre_hook(hook))
    with torch.no_grad():
        for inputs in batches:
            module(*inputs)
    for h in hooks:
        h.remove()
    return seen


def quantize_modules(module: nn.Module, ranges: Dict[str, Tuple[float, bool]], form: str, prefix: str = "") -> None:
    for name, child in list(module.named_children()):
        full = f"{prefix}{name}"
        if isinstance(child, nn.Conv2d) and full in ranges:
            setattr(module, name, QuantConv2d(child, *ranges[full], form))
        elif isinstance(child, nn.Linear) and full in ranges:
            setattr(module, name, QuantLinear(child, *ranges[full], form))
        else:
            quantize_modules(child, ranges, form, full + ".")


def randn(gen: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=torch.float32)


class Model:
    def __init__(self, build: Callable[[], nn.Module], case: Callable[[torch.Generator], Tuple[torch.Tensor, ...]],
                 torchvision: bool = False, dynamic: Optional[Callable[[], object]] = None) -> None:
        self.build, self.case, self.torchvision, self.dynamic = build, case, torchvision, dynamic


def resnet18() -> nn.Module:
    import torchvision

    return torchvision.models.resnet18()


MODELS = {
    "tiny_resnet": Model(TinyResNet, lambda g: (randn(g, 2, 3, 32, 32),), torchvision=True),
    "tiny_mlp": Model(TinyMlp, lambda g: (randn(g, 5, 32),), dynamic=lambda: ({0: Dim("rows", min=2, max=1024)},)),
    "resnet18": Model(resnet18, lambda g: (randn(g, 1, 3, 224, 224),), torchvision=True),
}
FORMS = ("qdq", "fq")


def export(name: str, out_dir: str) -> None:
    form, model_name = name.split("_", 1)
    if form not in FORMS or model_name not in MODELS:
        raise ValueError(f"unknown fixture {name}: FORM_MODEL with FORM in {FORMS} and MODEL in {sorted(MODELS)}")
    spec = MODELS[model_name]
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    fp32 = spec.build().eval()
    if spec.torchvision:  # batch norm statistics as training leaves them (tools/export_fixtures.py)
        calibrate_batch_norm_stats(fp32, spec.case(torch.Generator().manual_seed(SEED + 2)), gen)
    calibration = [spec.case(torch.Generator().manual_seed(SEED + 10 + k)) for k in range(8)]
    example = spec.case(torch.Generator().manual_seed(SEED + 1))
    quantized = copy.deepcopy(fp32)
    if form == "qdq":
        fold_batch_norms(quantized)
    quantize_modules(quantized, observe_input_ranges(quantized, calibration), form)
    quantized.eval()
    with torch.no_grad():
        reference = flatten_outputs(quantized(*example))
        unquantized = flatten_outputs(fp32(*example))
    dynamic = spec.dynamic() if spec.dynamic and form != "fq" else None
    ep = torch.export.export(quantized, example, dynamic_shapes=dynamic, strict=False)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    torch.export.save(ep, os.path.join(folder, "model.pt2"))
    arrays = {f"input_{k}": t.contiguous().numpy() for k, t in enumerate(example)}
    arrays.update({f"output_{k}": t.detach().contiguous().numpy() for k, t in enumerate(reference)})
    arrays.update({f"fp32_output_{k}": t.detach().contiguous().numpy() for k, t in enumerate(unquantized)})
    np.savez(os.path.join(folder, "io_0.npz"), **arrays)
    sqnr = [float(10 * torch.log10(u.pow(2).sum() / (u - r).pow(2).sum().clamp_min(1e-30)))
            for u, r in zip(unquantized, reference)]
    meta = {"name": name, "torch": torch.__version__, "form": form, "ops": op_names(ep),
            "cases": [{"inputs": [list(t.shape) for t in example], "outputs": [list(t.shape) for t in reference]}],
            "sqnr_db_vs_fp32": sqnr}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"{name}: SQNR vs fp32 {', '.join(f'{s:.1f}' for s in sqnr)} dB; ops {meta['ops']} -> {folder}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="+", help="fixtures: FORM_MODEL, FORM in qdq/fq, MODEL in "
                        + "/".join(MODELS))
    parser.add_argument("--out", default="tests/data/qdq", help="output folder (one subfolder per fixture)")
    args = parser.parse_args(argv)
    failed = []
    for name in args.names:
        try:
            export(name, args.out)
        except Exception as error:  # report and go on with the others
            print(f"{name}: FAILED: {type(error).__name__}: {error}", file=sys.stderr)
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
