#!/usr/bin/env python3
"""Regenerates Kiln's .pt2 test fixtures (needs torch >= 2.9; torchvision / transformers for those models).

Each fixture is a folder:
  model.pt2            torch.export.export(...) then torch.export.save (training IR, high-level ops)
  model_core_aten.pt2  the same after ep.run_decompositions() (with --core-aten, or for models that ask for it)
The export runs as users run it: grad mode on, so regions under torch.no_grad() / torch.autocast stay
higher-order ops (wrap_with_set_grad_enabled, wrap_with_autocast) as they do in users' programs; --no-grad
exports under torch.no_grad() instead (how the fixtures before the zoo were made).
  io_N.npz             input_K (user-input order) and output_K (output order), computed by eager PyTorch
  meta.json            {"name", "torch", "cases": [{"inputs": [shapes], "outputs": [shapes]}], "ops": [...]}

Weights are random from fixed seeds, float32, CPU. Batch norm statistics are random too, except for the torchvision
models, whose statistics are calibrated on random images (as training leaves them: each batch norm sees activations
of the mean and variance it records), so that activations keep the scale of a trained network's instead of growing
block by block (uncalibrated random statistics take resnet50's outputs to ~700). Usage:
  python3 tools/export_fixtures.py --out tests/data tiny_convnet tiny_mlp
  python3 tools/export_fixtures.py --out /tmp/models --core-aten resnet50 bert
  python3 tools/export_fixtures.py --out tests/data/hops hop_cond hop_while hop_map hop_wrappers hop_invoke
  python3 tools/export_fixtures.py --list
"""

import argparse
import contextlib
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

try:
    import numpy as np
    import torch
    from torch import nn
    from torch.export import Dim
except ImportError as error:  # pragma: no cover - the script needs torch
    sys.exit(f"export_fixtures: {error}; run this where torch >= 2.9 and numpy are installed")

SEED = 0


@dataclass
class Fixture:
    """How to build one fixture: the module, its example inputs per case, and dynamic shapes."""

    build: Callable[[], nn.Module]
    cases: List[Callable[[torch.Generator], Tuple[torch.Tensor, ...]]]
    dynamic_shapes: Optional[Callable[[], object]] = None
    core_aten: bool = False
    description: str = ""
    needs: List[str] = field(default_factory=list)


def randn(gen: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=torch.float32)


def randint(gen: torch.Generator, high: int, *shape: int) -> torch.Tensor:
    return torch.randint(0, high, shape, generator=gen, dtype=torch.int64)


# --- the tiny fixtures (as in fixtures/public/README.md) -------------------------------------------------------


class TinyConvNet(nn.Module):
    """conv3x3(3->8)+bias, batch norm with non-trivial running stats, relu, mean over H,W, linear(8->4),
    log_softmax; second output lgamma(mean)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=True)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor):
        y = torch.relu(self.bn(self.conv(x)))
        pooled = y.mean(dim=(2, 3))
        return torch.log_softmax(self.fc(pooled), dim=1), torch.lgamma(pooled + 1.0)


class BasicBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


class TinyResNet(nn.Module):
    """Stem conv(3->16, s2)+bn+relu+maxpool(3,2,1); basic block at 16; 1x1 conv s2 to 32; basic block at 32;
    adaptive avg pool; flatten; linear(32->10)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.block1 = BasicBlock(16)
        self.down = nn.Conv2d(16, 32, 1, stride=2)
        self.block2 = BasicBlock(32)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.block2(self.down(self.block1(self.stem(x))))
        return self.fc(torch.flatten(self.pool(y), 1))


class TinyMlp(nn.Module):
    """linear(32->64), gelu, linear(64->64), gelu(tanh), layer norm, linear(64->8)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.norm = nn.LayerNorm(64)
        self.fc3 = nn.Linear(64, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.gelu(self.fc1(x))
        y = nn.functional.gelu(self.fc2(y), approximate="tanh")
        return self.fc3(self.norm(y))


def tiny_encoder() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)


def randomize_batch_norm_stats(module: nn.Module, gen: torch.Generator) -> None:
    """Gives every batch norm non-trivial running statistics and affine parameters."""
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.copy_(randn(gen, m.num_features) * 0.5)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                    m.bias.copy_(randn(gen, m.num_features) * 0.1)


def calibrate_batch_norm_stats(module: nn.Module, example: Tuple[torch.Tensor, ...], gen: torch.Generator,
                               batches: int = 4) -> None:
    """Replaces every batch norm's running statistics by the mean and variance of the activations it sees on
    `batches` random batches shaped like `example` (a cumulative average, as the end of training leaves them)."""
    norms = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative moving average over the calibration batches
    module.train()
    with torch.no_grad():
        for _ in range(batches):
            module(*[randn(gen, *t.shape) if t.is_floating_point() else t for t in example])
    for m in norms:
        m.momentum = 0.1
    module.eval()


# --- higher-order ops (tests/data/hops) ---------------------------------------------------------------------------


class HopCond(nn.Module):
    """torch.cond on a data-dependent predicate; the two io cases take one branch each."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def positive(x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.a(x)) + 1.0

        def negative(x: torch.Tensor) -> torch.Tensor:
            return torch.tanh(self.b(x)) - 1.0

        return torch.cond(x.sum() > 0, positive, negative, (x,))


class HopWhile(nn.Module):
    """A while_loop whose trip count is an input (3 and 1 in the io cases)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        from torch._higher_order_ops.while_loop import while_loop

        def cond_fn(i: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return i < n

        def body_fn(i: torch.Tensor, y: torch.Tensor):
            return i + 1, torch.tanh(self.lin(y))

        _, y = while_loop(cond_fn, body_fn, (torch.zeros_like(n), x))
        return y


class HopMap(nn.Module):
    """map over the first dimension (map_impl)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, xs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        from torch._higher_order_ops.map import map as hop_map

        def body(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.lin(x)) + y

        return hop_map(body, xs, y)


class HopWrappers(nn.Module):
    """A torch.no_grad() region (a rotary-style table, as HF decoders compute it) and an autocast-disabled region:
    wrap_with_set_grad_enabled and wrap_with_autocast when exported with grad mode on."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, 16, 2, dtype=torch.float32) / 16)),
                             persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            positions = torch.arange(x.shape[1], dtype=torch.float32)
            freqs = torch.outer(positions, self.inv_freq)
            table = torch.cat((freqs, freqs), dim=-1)
            cos, sin = table.cos(), table.sin()
        y = self.a(x)
        rotated = torch.cat((-y[..., 8:], y[..., :8]), dim=-1)
        y = y * cos + rotated * sin
        with torch.autocast("cpu", enabled=False):
            y = torch.softmax(y.float(), dim=-1) * 4.0
        return self.b(y)


class HopInvoke(nn.Module):
    """The same block twice through torch.compiler.nested_compile_region (invoke_subgraph)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        @torch.compiler.nested_compile_region
        def block(x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.lin(x)) + x

        return block(block(x))


def signed_cases(*shape: int) -> List[Callable[[torch.Generator], Tuple[torch.Tensor, ...]]]:
    return [lambda g: (randn(g, *shape).abs(),), lambda g: (-randn(g, *shape).abs(),)]


# --- torchvision and transformers models (small inputs) --------------------------------------------------------


def torchvision_model(name: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import torchvision

        return getattr(torchvision.models, name)(weights=None)

    return build


def image_cases(size: int, batches: Sequence[int]) -> List[Callable[[torch.Generator], Tuple[torch.Tensor, ...]]]:
    return [(lambda gen, b=b: (randn(gen, b, 3, size, size),)) for b in batches]


def batch_dynamic(max_batch: int = 16) -> Callable[[], object]:
    return lambda: ({0: Dim("batch", min=1, max=max_batch)},)


class HiddenState(nn.Module):
    """Wraps a transformers model so that the exported program returns plain tensors."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def transformers_model(kind: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers

        small = dict(num_hidden_layers=2, hidden_size=128, num_attention_heads=4, intermediate_size=256)
        if kind == "bert":
            config = transformers.BertConfig(vocab_size=1000, max_position_embeddings=128, **small)
            model = transformers.BertModel(config, add_pooling_layer=False)
        elif kind == "bert_base":  # BERT-base's shape (12 layers, 768 hidden, 12 heads, 3072 intermediate)
            config = transformers.BertConfig()
            model = transformers.BertModel(config, add_pooling_layer=False)
        elif kind == "gpt2":
            config = transformers.GPT2Config(vocab_size=1000, n_positions=128, n_embd=128, n_layer=2, n_head=4)
            # The plain-matmul attention: transformers 5.17's sdpa path for GPT-2 fails in eager PyTorch itself
            # (Conv1D views a non-contiguous attention output).
            config._attn_implementation = "eager"
            model = transformers.GPT2Model(config)
        elif kind == "gpt2_small":  # GPT-2 small's shape (12 layers, 768 hidden, 12 heads)
            config = transformers.GPT2Config()
            config._attn_implementation = "eager"
            model = transformers.GPT2Model(config)
        elif kind == "llama_small":  # a Llama at GPT-2 small's scale (12 layers, 768 hidden, grouped kv heads)
            config = transformers.LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=2048,
                                              num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=4,
                                              max_position_embeddings=1024)
            model = transformers.LlamaModel(config)
        elif kind == "t5_encoder":
            config = transformers.T5Config(vocab_size=1000, d_model=128, d_kv=32, d_ff=256, num_layers=2,
                                           num_heads=4)
            model = transformers.T5EncoderModel(config)
        else:
            raise ValueError(kind)
        model.config.use_cache = False
        return HiddenState(model)

    return build


def token_cases(shapes: Sequence[Tuple[int, int]],
                vocab: int = 1000) -> List[Callable[[torch.Generator], Tuple[torch.Tensor, ...]]]:
    def case(gen: torch.Generator, b: int, s: int) -> Tuple[torch.Tensor, ...]:
        ids = randint(gen, vocab, b, s)
        mask = torch.ones(b, s, dtype=torch.int64)
        mask[0, s - 2:] = 0  # some padding, so the mask path is exercised
        return ids, mask

    return [(lambda gen, b=b, s=s: case(gen, b, s)) for b, s in shapes]


def token_dynamic() -> object:
    batch = Dim("batch", min=1, max=8)
    seq = Dim("seq", min=4, max=64)
    return ({0: batch, 1: seq}, {0: batch, 1: seq})


FIXTURES: Dict[str, Fixture] = {
    "tiny_convnet": Fixture(TinyConvNet, [lambda g: (randn(g, 2, 3, 16, 16),), lambda g: (randn(g, 7, 3, 16, 16),)],
                            lambda: ({0: Dim("batch", min=1, max=64)},), core_aten=True),
    "tiny_resnet": Fixture(TinyResNet, image_cases(32, [2]), None, core_aten=True),
    "tiny_encoder": Fixture(tiny_encoder, [lambda g: (randn(g, 2, 10, 64),), lambda g: (randn(g, 3, 23, 64),)],
                            lambda: ({0: Dim("batch", min=1, max=16), 1: Dim("seq", min=2, max=64)},)),
    "tiny_mlp": Fixture(TinyMlp, [lambda g: (randn(g, 5, 32),), lambda g: (randn(g, 100, 32),)],
                        lambda: ({0: Dim("rows", min=1, max=1024)},)),
    "resnet18": Fixture(torchvision_model("resnet18"), image_cases(64, [2, 3]), batch_dynamic(), needs=["torchvision"]),
    "resnet50": Fixture(torchvision_model("resnet50"), image_cases(64, [2, 3]), batch_dynamic(), needs=["torchvision"]),
    "mobilenet_v3_large": Fixture(torchvision_model("mobilenet_v3_large"), image_cases(64, [2, 3]), batch_dynamic(),
                                  needs=["torchvision"]),
    "efficientnet_b0": Fixture(torchvision_model("efficientnet_b0"), image_cases(64, [2, 3]), batch_dynamic(),
                               needs=["torchvision"]),
    "vit_b_16": Fixture(torchvision_model("vit_b_16"), image_cases(224, [1]), None, needs=["torchvision"]),
    "swin_t": Fixture(torchvision_model("swin_t"), image_cases(224, [1]), None, needs=["torchvision"]),
    "convnext_tiny": Fixture(torchvision_model("convnext_tiny"), image_cases(64, [2, 3]), batch_dynamic(),
                             needs=["torchvision"]),
    "bert": Fixture(transformers_model("bert"), token_cases([(2, 16), (3, 37)]), token_dynamic,
                    needs=["transformers"]),
    # GPT-2's Conv1D views its input with strides torch.export cannot prove contiguous under a dynamic batch
    # and sequence, so it is exported with static shapes.
    "gpt2": Fixture(transformers_model("gpt2"), token_cases([(2, 16)]), None, needs=["transformers"]),
    # Benchmark shapes (issue: resnet18 at batch 1, 224x224; a BERT-base encoder at sequence 128), static.
    "resnet18_224": Fixture(torchvision_model("resnet18"), image_cases(224, [1]), None, needs=["torchvision"]),
    "bert_base": Fixture(transformers_model("bert_base"), token_cases([(1, 128)], vocab=30522), None,
                         needs=["transformers"]),
    # The CPU benchmark set (bench/cpu): batch 1, 224x224 images or 1x128 tokens, static.
    "resnet50_224": Fixture(torchvision_model("resnet50"), image_cases(224, [1]), None, needs=["torchvision"]),
    "mobilenet_v3_large_224": Fixture(torchvision_model("mobilenet_v3_large"), image_cases(224, [1]), None,
                                      needs=["torchvision"]),
    "efficientnet_b0_224": Fixture(torchvision_model("efficientnet_b0"), image_cases(224, [1]), None,
                                   needs=["torchvision"]),
    "gpt2_small": Fixture(transformers_model("gpt2_small"), token_cases([(1, 128)], vocab=50257), None,
                          needs=["transformers"]),
    "t5_encoder": Fixture(transformers_model("t5_encoder"), token_cases([(2, 16), (3, 37)]), token_dynamic,
                          needs=["transformers"]),
    # Higher-order ops, exported with grad mode on (tests/data/hops).
    "hop_cond": Fixture(HopCond, signed_cases(4, 8)),
    "hop_while": Fixture(HopWhile, [lambda g: (randn(g, 4, 8), torch.tensor(3)),
                                    lambda g: (randn(g, 4, 8), torch.tensor(1))]),
    "hop_map": Fixture(HopMap, [lambda g: (randn(g, 3, 4, 8), randn(g, 8))]),
    "hop_wrappers": Fixture(HopWrappers, [lambda g: (randn(g, 2, 6, 16),)]),
    "hop_invoke": Fixture(HopInvoke, [lambda g: (randn(g, 4, 8),)]),
}


def op_names(ep: "torch.export.ExportedProgram") -> List[str]:
    """The distinct call targets, as str() prints them ("aten.conv2d.default", "<built-in function mul>")."""
    return sorted({str(node.target) for node in ep.graph.nodes if node.op == "call_function"})


def flatten_outputs(result) -> List[torch.Tensor]:
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        out: List[torch.Tensor] = []
        for item in result:
            out.extend(flatten_outputs(item))
        return out
    raise TypeError(f"unsupported output type {type(result).__name__}")


def export_fixture(name: str, fixture: Fixture, out_dir: str, core_aten: bool, no_grad: bool = False) -> None:
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    module = fixture.build().eval()
    randomize_batch_norm_stats(module, gen)
    if "torchvision" in fixture.needs:
        calibrate_batch_norm_stats(module, fixture.cases[0](torch.Generator().manual_seed(SEED + 2)), gen)
    input_gen = torch.Generator().manual_seed(SEED + 1)
    cases = [case(input_gen) for case in fixture.cases]

    # Reference outputs first: export may leave the module traced into a state its eager forward rejects
    # (transformers' GPT-2 under torch 2.11).
    with torch.no_grad():
        references = [flatten_outputs(module(*inputs)) for inputs in cases]
    dynamic = fixture.dynamic_shapes() if fixture.dynamic_shapes else None
    # Export with the first case as the example: keep it at batch >= 2, or export specializes a dynamic batch of 1
    # to a constant. Grad mode stays on unless --no-grad (see the file comment).
    with torch.no_grad() if no_grad else contextlib.nullcontext():
        ep = torch.export.export(module, cases[0], dynamic_shapes=dynamic, strict=False)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    torch.export.save(ep, os.path.join(folder, "model.pt2"))
    if core_aten or fixture.core_aten:
        torch.export.save(ep.run_decompositions(), os.path.join(folder, "model_core_aten.pt2"))

    meta = {"name": name, "torch": torch.__version__, "cases": [], "ops": op_names(ep)}
    for index, (inputs, outputs) in enumerate(zip(cases, references)):
        arrays = {f"input_{k}": t.detach().contiguous().numpy() for k, t in enumerate(inputs)}
        arrays.update({f"output_{k}": t.detach().contiguous().numpy() for k, t in enumerate(outputs)})
        np.savez(os.path.join(folder, f"io_{index}.npz"), **arrays)
        meta["cases"].append({"inputs": [list(t.shape) for t in inputs], "outputs": [list(t.shape) for t in outputs]})
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"{name}: {len(cases)} cases, {len(meta['ops'])} distinct ops -> {folder}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="fixtures to export (default: the four tiny ones)")
    parser.add_argument("--out", default="tests/data", help="output folder (one subfolder per fixture)")
    parser.add_argument("--core-aten", action="store_true", help="also write model_core_aten.pt2 for every fixture")
    parser.add_argument("--no-grad", action="store_true", help="export under torch.no_grad() (the old fixtures)")
    parser.add_argument("--list", action="store_true", help="list the fixtures and exit")
    args = parser.parse_args(argv)

    if args.list:
        for name, fixture in FIXTURES.items():
            needs = f" (needs {', '.join(fixture.needs)})" if fixture.needs else ""
            print(f"{name}{needs}")
        return 0
    names = args.names or ["tiny_convnet", "tiny_resnet", "tiny_encoder", "tiny_mlp"]
    unknown = [n for n in names if n not in FIXTURES]
    if unknown:
        parser.error(f"unknown fixture(s) {', '.join(unknown)}; see --list")
    failed = []
    for name in names:
        try:
            export_fixture(name, FIXTURES[name], args.out, args.core_aten, args.no_grad)
        except Exception as error:  # report and go on with the others
            print(f"{name}: FAILED: {type(error).__name__}: {error}", file=sys.stderr)
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
