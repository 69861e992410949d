"""torch >= 2.5 only (skipped on Debian's torch 1.13): kiln.compile of nn.Modules through torch.export with
pytrees, keyword arguments and shape ranges, and torch.compile(backend="kiln")."""

import os

import pytest
import torch

import kiln
from conftest import assert_matches, requires_export

pytestmark = requires_export


class Structured(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 4)

    def forward(self, pair, *, scale):
        x, y = pair
        h = torch.relu(self.a(x)) + y["bias"]
        return {"out": self.b(h) * scale, "extra": [h.sum(dim=1), x]}


def test_nn_module_with_pytrees_and_keywords(workdir):
    torch.manual_seed(0)
    model = Structured().eval()
    x, bias, scale = torch.randn(3, 8), torch.randn(3, 8), torch.randn(3, 4)
    km = kiln.compile(model, inputs=[(x, {"bias": bias})], kwarg_inputs={"scale": scale}, min_block_size=1)
    got, want = km((x, {"bias": bias}), scale=scale), model((x, {"bias": bias}), scale=scale)
    assert list(got) == ["out", "extra"] and len(got["extra"]) == 2
    assert_matches(got["out"], want["out"])
    assert_matches(got["extra"][0], want["extra"][0])
    path = os.path.join(workdir, "structured.kiln")
    kiln.save(km, path)
    again = kiln.load(path)((x, {"bias": bias}), scale=scale)
    assert torch.equal(again["out"], got["out"])


def test_nn_module_with_a_shape_range():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).eval()
    km = kiln.compile(model, inputs=[kiln.Input(min_shape=(1, 16), opt_shape=(8, 16), max_shape=(32, 16))])
    for batch in (1, 5, 32):
        x = torch.randn(batch, 16)
        assert_matches(km(x), model(x))


def test_exported_program_is_compiled_as_it_is():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU()).eval()
    x = torch.randn(2, 3, 16, 16)
    program = torch.export.export(model, (x,))
    assert_matches(kiln.compile(program)(x), model(x))


def test_torch_compile_backend():
    from kiln import _dynamo
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
    x = torch.randn(4, 16)
    before = _dynamo.stats["compiled"]
    compiled = torch.compile(model, backend="kiln", dynamic=False)
    with torch.no_grad():
        assert_matches(compiled(x), model(x))
        y = torch.randn(6, 16)  # a guard fails: captured and compiled again
        assert_matches(compiled(y), model(y))
    assert _dynamo.stats["compiled"] >= before + 2


def test_torch_compile_with_a_graph_break():
    from kiln import _dynamo
    torch._dynamo.reset()

    class Broken(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = torch.nn.Linear(8, 8)
            self.l2 = torch.nn.Linear(8, 8)

        def forward(self, x):
            h = self.l1(x)
            print("graph break")  # TorchDynamo splits the graph here
            return self.l2(torch.relu(h))

    model = Broken().eval()
    x = torch.randn(2, 8)
    compiled = torch.compile(model, backend="kiln", dynamic=False, options={"min_block_size": 1})
    with torch.no_grad():
        assert_matches(compiled(x), model(x))
