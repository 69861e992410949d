"""kiln.compile of .pt2 paths on the cpu: results against the fixtures' references, shape ranges, settings as
keyword arguments, the compile report, kiln.inspect."""

import logging

import pytest
import torch

import kiln
from conftest import assert_all_match, assert_matches, case, data_path


def test_compiled_pt2_matches_the_reference_at_every_recorded_shape(mlp):
    for k in (0, 1):  # io_0 and io_1 have different batch sizes: one module, the program's dynamic range
        inputs, outputs = case("tiny_mlp", k)
        assert_matches(mlp(*inputs), outputs[0])


def test_module_with_a_pytorch_segment_matches(convnet):
    inputs, outputs = case("tiny_convnet")
    assert_all_match(convnet(*inputs), outputs)
    assert "PyTorch runs" in convnet.summary()


def test_input_ranges_narrow_the_program_and_are_checked_at_run_time():
    inputs, outputs = case("tiny_mlp")
    batch, features = inputs[0].shape
    km = kiln.compile(data_path("tiny_mlp", "model.pt2"),
                      inputs=[kiln.Input(min_shape=(1, features), opt_shape=(batch, features),
                                         max_shape=(batch, features))])
    assert_matches(km(*inputs), outputs[0])
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\]"):
        km(torch.randn(batch + 1, features))


def test_example_tensors_fix_the_shapes():
    inputs, outputs = case("tiny_mlp")
    km = kiln.compile(data_path("tiny_mlp", "model.pt2"), inputs=inputs)
    assert_matches(km(*inputs), outputs[0])
    with pytest.raises(kiln.KilnError):
        km(torch.randn(inputs[0].shape[0] + 1, inputs[0].shape[1]))


def test_settings_are_keyword_arguments():
    inputs, outputs = case("tiny_convnet")
    km = kiln.compile(data_path("tiny_convnet", "model.pt2"), min_block_size=1000, optimization_level=1)
    assert km.compile_report.engines == []  # every segment below the block size: all in PyTorch
    assert_all_match(km(*inputs), outputs)


def test_unknown_or_mistyped_settings_fail_with_kiln_message():
    path = data_path("tiny_mlp", "model.pt2")
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\].*unknown.*'min_blok_size'"):
        kiln.compile(path, min_blok_size=3)
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\].*'min_block_size'.*int"):
        kiln.compile(path, min_block_size="3")
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\].*'calibration_percentile' expects a number in"):
        kiln.compile(path, calibration_percentile=0)
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\].*'reduced_precision_min_cosine' expects a finite"):
        kiln.compile(path, reduced_precision_min_cosine=float("nan"))
    with pytest.raises(kiln.KilnError, match=r"unknown precision"):
        kiln.compile(path, precision="int4")
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\] fp8 needs calibration data"):
        kiln.compile(path, precision="fp8")
    with pytest.raises(kiln.KilnError, match=r"backend"):
        kiln.compile(path, backend="tpu")


def test_fp16_precision_stays_close():
    inputs, outputs = case("tiny_mlp")
    km = kiln.compile(data_path("tiny_mlp", "model.pt2"), precision=torch.float16)
    # fp16 engines against the fp32 reference: rtol/atol 1e-2, the suite's fp16 tolerance (docs/testing).
    assert_matches(km(*inputs), outputs[0], rtol=1e-2, atol=1e-2)


def test_compile_report_is_returned_and_logged(convnet, caplog):
    report = convnet.compile_report
    assert isinstance(report, kiln.CompileReport)
    assert [name for name, _ in report.phases][0] == "lowering"
    assert len(report.engines) >= 1 and report.engines[0].plan_bytes > 0
    assert report.engine_nodes > 0 and report.torch_nodes > 0
    assert "lowering" in str(report)
    with caplog.at_level(logging.INFO, logger="kiln"):
        kiln.compile(data_path("tiny_mlp", "model.pt2"), optimization_level=0)
    assert any("lowering" in r.getMessage() for r in caplog.records if r.name == "kiln")


def test_inspect_reports_coverage_and_the_program():
    info = kiln.inspect(data_path("tiny_convnet", "model.pt2"))
    assert info.inputs[0].dtype == "f32"
    cov = info.coverage
    assert 0 < cov.ops_supported == cov.ops_total and not cov.unsupported
    assert {s.kind for s in cov.segments} == {"engine"}
    forced = kiln.inspect(data_path("tiny_convnet", "model.pt2"), torch_executed_ops={"aten.lgamma.default"}).coverage
    assert 0 < forced.ops_supported < forced.ops_total
    assert [u.op for u in forced.unsupported] == ["aten.lgamma.default"]
    assert "torch_executed_ops" in forced.unsupported[0].reason
    assert {s.kind for s in forced.segments} == {"engine", "torch"}


def test_bad_programs_fail_with_kiln_message(workdir):
    with pytest.raises(kiln.KilnError, match=r"^\[Io\].*no_such\.pt2"):
        kiln.compile(data_path("no_such.pt2"))
    bad = workdir + "/garbage.pt2"
    with open(bad, "wb") as f:
        f.write(b"not a zip at all")
    with pytest.raises(kiln.KilnError, match=r"garbage\.pt2"):
        kiln.compile(bad)
    with pytest.raises(kiln.KilnError, match=r"2 inputs given but the program takes 1"):
        kiln.compile(data_path("tiny_mlp", "model.pt2"), inputs=[torch.randn(2, 32), torch.randn(2, 32)])


def test_nn_module_needs_torch_export_or_compiles():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    x = torch.randn(2, 4)
    if not kiln.has_export():
        with pytest.raises(kiln.KilnError, match=r"needs torch >= 2.5"):
            kiln.compile(model, inputs=[x])
    else:
        km = kiln.compile(model, inputs=[x])
        assert_matches(km(x), model(x))


def test_input_dtype_and_shape_errors():
    path = data_path("tiny_mlp", "model.pt2")
    with pytest.raises(kiln.KilnError, match=r"input 'x': dtype f16 given but the program takes f32"):
        kiln.compile(path, inputs=[kiln.Input(shape=(4, 32), dtype=torch.float16)])
    with pytest.raises(kiln.KilnError, match=r"no input named 'y'"):
        kiln.compile(path, inputs=[kiln.Input(shape=(4, 32), name="y")])
    with pytest.raises(kiln.KilnError, match=r"min <= opt <= max"):
        kiln.Input(min_shape=(4, 32), opt_shape=(2, 32), max_shape=(8, 32))
    with pytest.raises(kiln.KilnError, match=r"different ranks"):
        kiln.Input(min_shape=(4,), max_shape=(8, 32))
