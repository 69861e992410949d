"""Shared fixtures of the kiln Python tests (docs/python.md): the .pt2 fixtures of tests/data, their io_N.npz
reference inputs and outputs, and modules compiled once per session."""

import io
import json
import os
import tempfile
import zipfile

import numpy as np
import pytest
import torch

import kiln

DATA = os.environ.get("KILN_TEST_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "data"))

requires_export = pytest.mark.skipif(not kiln.has_export(),
                                     reason="needs torch >= 2.5 (torch.export); this is torch " + torch.__version__)
requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def data_path(*parts: str) -> str:
    return os.path.join(DATA, *parts)


def case(model: str, k: int = 0):
    """(inputs, outputs) of tests/data/<model>/io_<k>.npz as torch tensors."""
    arrays = np.load(data_path(model, "io_%d.npz" % k))
    count = lambda prefix: sum(1 for name in arrays.files if name.startswith(prefix))
    inputs = [torch.from_numpy(arrays["input_%d" % i]) for i in range(count("input_"))]
    outputs = [torch.from_numpy(arrays["output_%d" % i]) for i in range(count("output_"))]
    return inputs, outputs


def assert_matches(actual: torch.Tensor, expected: torch.Tensor, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """fp32 engines against torch 2.11's eager reference: the same math in another summation order (and oneDNN's
    kernels), so rtol 1e-4 / atol 1e-4 rather than bit equality."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol)


def assert_all_match(actual, expected: list, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """Every output of a call (one tensor or a tuple) against the reference outputs, as assert_matches."""
    actual = list(actual) if isinstance(actual, (tuple, list)) else [actual]
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_matches(a, e, rtol, atol)


def rewrite_call_spec(src: str, dst: str, in_spec: list, out_spec: list) -> None:
    """Copies the .pt2 at `src` to `dst` with another call spec (as torch.export would write it for a model called
    with other containers): how pytree calls are tested where torch cannot export."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("models/model.json"):
                doc = json.loads(data)
                for call in doc["graph_module"]["module_call_graph"]:
                    if call["fqn"] == "":
                        call["signature"]["in_spec"] = json.dumps(in_spec)
                        call["signature"]["out_spec"] = json.dumps(out_spec)
                data = json.dumps(doc).encode()
            zout.writestr(info.filename, data)


@pytest.fixture(scope="session")
def workdir():
    base = os.environ.get("KILN_TEST_TMP")
    if base:
        os.makedirs(base, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kiln-pytest-", dir=base) as d:
        yield d


@pytest.fixture(scope="session")
def mlp():
    """tiny_mlp compiled for the cpu with its own (dynamic) shape ranges."""
    return kiln.compile(data_path("tiny_mlp", "model.pt2"))


@pytest.fixture(scope="session")
def convnet():
    """tiny_convnet: engines and a PyTorch run (lgamma, forced there by torch_executed_ops), cpu."""
    return kiln.compile(data_path("tiny_convnet", "model.pt2"), torch_executed_ops={"aten.lgamma.default"})
