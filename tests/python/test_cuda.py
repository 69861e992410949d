"""GPU only (skipped without CUDA): the cuda backend from Python, CUDA tensors in and out with no host copies, CUDA
graphs, fp16, and torch.compile on CUDA."""

import pytest
import torch

import kiln
from conftest import assert_all_match, assert_matches, case, data_path, requires_cuda, requires_export

pytestmark = requires_cuda


@pytest.fixture(scope="module")
def convnet_cuda():
    return kiln.compile(data_path("tiny_convnet", "model.pt2"), backend="cuda")


def test_cuda_module_matches_and_stays_on_the_gpu(convnet_cuda):
    (x,), expected = case("tiny_convnet")
    out = convnet_cuda(x.cuda())
    assert all(o.is_cuda for o in out) and convnet_cuda.device.type == "cuda"
    # cuda fp32 kernels (TF32 off) against the cpu reference: rtol/atol 1e-3 for another summation order.
    assert_all_match([o.cpu() for o in out], expected, rtol=1e-3, atol=1e-3)
    # A cpu input is moved to the module and the outputs back to the cpu.
    assert all(o.device.type == "cpu" for o in convnet_cuda(x))


def test_no_host_copies_for_cuda_tensors(convnet_cuda):
    (x,), _ = case("tiny_convnet")
    x = x.cuda()
    convnet_cuda(x)
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        convnet_cuda(x)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()]
    copies = [n for n in names if "Memcpy DtoH" in n or "Memcpy HtoD" in n]
    assert not copies, copies


def test_cuda_graphs_replay_the_same_results(convnet_cuda):
    (x,), _ = case("tiny_convnet")
    x = x.cuda()
    assert convnet_cuda.static_shape_cuda_graphs  # the default; tiny_convnet's batch is dynamic: plain here
    plain = convnet_cuda(x)
    convnet_cuda.use_cuda_graphs = True
    try:
        for _ in range(3):
            assert all(torch.equal(a, b) for a, b in zip(convnet_cuda(x), plain))
    finally:
        convnet_cuda.use_cuda_graphs = False


def test_fp16_cuda_and_pickled_round_trip():
    (x,), (expected,) = case("tiny_mlp")
    km = kiln.compile(data_path("tiny_mlp", "model.pt2"), backend="cuda", precision="fp16")
    out = km(x.cuda())
    assert_matches(out.cpu(), expected, rtol=1e-2, atol=1e-2)  # fp16 against fp32: the suite's 1e-2
    import pickle
    assert torch.equal(pickle.loads(pickle.dumps(km))(x.cuda()), out)


@requires_export
def test_nn_module_on_cuda_fp16():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10))
    model = model.eval().cuda()
    x = torch.randn(4, 3, 32, 32, device="cuda")
    km = kiln.compile(model, inputs=[x], precision="fp16", backend="cuda")
    with torch.no_grad():
        assert_matches(km(x), model(x), rtol=1e-2, atol=1e-2)


@requires_export
def test_torch_compile_on_cuda():
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).eval().cuda()
    x = torch.randn(8, 64, device="cuda")
    compiled = torch.compile(model, backend="kiln", dynamic=False)
    with torch.no_grad():
        assert_matches(compiled(x), model(x), rtol=1e-3, atol=1e-3)
