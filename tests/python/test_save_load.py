"""kiln.save / kiln.load, pickling (torch.save of a model that contains a compiled module), and the saved file in the
`kiln` command line."""

import copy
import io
import os
import pickle
import subprocess

import pytest
import torch

import kiln
from conftest import assert_all_match, assert_matches, case, data_path


def torch_load(f):
    # torch >= 2.6 loads weights only unless told otherwise; a compiled module is code, not weights.
    try:
        return torch.load(f, weights_only=False)
    except TypeError:
        return torch.load(f)


def test_save_load_round_trip(convnet, workdir):
    path = os.path.join(workdir, "convnet.kiln")
    kiln.save(convnet, path)
    loaded = kiln.load(path)
    inputs, outputs = case("tiny_convnet")
    for a, b in zip(loaded(*inputs), convnet(*inputs)):
        assert torch.equal(a, b)
    assert_all_match(loaded(*inputs), outputs)
    assert loaded.summary() == convnet.summary()


def test_call_spec_survives_save_and_load(workdir):
    from test_call import LEAF, node
    from conftest import rewrite_call_spec
    path = workdir + "/mlp_dict.pt2"
    in_spec = [1, node("builtins.tuple", [node("builtins.tuple", []), node("builtins.dict", [LEAF], '["x"]')])]
    out_spec = [1, node("builtins.dict", [LEAF], '["y"]')]
    rewrite_call_spec(data_path("tiny_mlp", "model.pt2"), path, in_spec, out_spec)
    kiln.save(kiln.compile(path), workdir + "/mlp_dict.kiln")
    loaded = kiln.load(workdir + "/mlp_dict.kiln")
    (x,), (expected,) = case("tiny_mlp")
    assert_matches(loaded(x=x)["y"], expected)


def test_pickling_a_model_that_contains_the_module(mlp):
    model = torch.nn.Sequential(mlp, torch.nn.ReLU())
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    restored = torch_load(buffer)
    (x,), _ = case("tiny_mlp")
    assert isinstance(restored[0], kiln.CompiledModule)
    assert torch.equal(restored(x), model(x))
    assert torch.equal(pickle.loads(pickle.dumps(mlp))(x), mlp(x))
    assert torch.equal(copy.deepcopy(mlp)(x), mlp(x))


def test_saved_module_runs_in_the_command_line(mlp, workdir):
    cli = os.environ.get("KILN_CLI")
    if not cli:
        pytest.skip("KILN_CLI (the kiln binary) not set: run through ctest")
    path = os.path.join(workdir, "mlp.kiln")
    mlp.save(path)
    io0 = data_path("tiny_mlp", "io_0.npz")
    result = subprocess.run([cli, "run", path, "--inputs", io0, "--compare", io0], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_module_compiled_by_the_command_line_loads(workdir):
    cli = os.environ.get("KILN_CLI")
    if not cli:
        pytest.skip("KILN_CLI (the kiln binary) not set: run through ctest")
    path = os.path.join(workdir, "cli_mlp.kiln")
    result = subprocess.run([cli, "compile", data_path("tiny_mlp", "model.pt2"), "-o", path], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    km = kiln.load(path)
    for k in (0, 1):
        (x,), (expected,) = case("tiny_mlp", k)
        assert_matches(km(x), expected)


def test_loading_bad_files_fails_with_kiln_message(workdir):
    with pytest.raises(kiln.KilnError, match=r"missing\.kiln"):
        kiln.load(os.path.join(workdir, "missing.kiln"))
    bad = os.path.join(workdir, "bad.kiln")
    with open(bad, "wb") as f:
        f.write(b"PK\x03\x04 truncated")
    with pytest.raises(kiln.KilnError, match=r"not a valid \.kiln archive"):
        kiln.load(bad)
    with pytest.raises(kiln.KilnError, match=r"not a valid \.kiln archive"):
        kiln.CompiledModule.from_bytes(b"garbage")
    with pytest.raises(TypeError):
        kiln.save(torch.nn.ReLU(), os.path.join(workdir, "relu.kiln"))
    assert not os.path.exists(os.path.join(workdir, "relu.kiln"))
