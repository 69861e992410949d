"""kiln.compile and kiln.inspect: an nn.Module, ExportedProgram or .pt2 path compiled by Kiln in this process."""

import json
import logging
import math
import os
import tempfile
from typing import Any, Iterable, Optional, Sequence

import torch

from ._input import Input, dtype_name
from ._library import KilnError, call, ops
from ._module import CompiledModule

logger = logging.getLogger("kiln")

_PRECISIONS = {"fp32": "f32", "float32": "f32", "f32": "f32", "float": "f32",
               "fp16": "f16", "float16": "f16", "f16": "f16", "half": "f16",
               "bf16": "bf16", "bfloat16": "bf16", "int8": "i8", "i8": "i8",
               "fp8": "f8", "f8": "f8", "float8_e4m3fn": "f8"}


def torch_version() -> tuple:
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def has_export() -> bool:
    """Whether this torch exports nn.Modules the way Kiln reads them (torch.export, torch >= 2.5)."""
    return torch_version() >= (2, 5) and hasattr(torch, "export")


class Record:
    """A JSON object from Kiln with attribute access (nested objects are Records too); `to_dict()` gives it back."""

    def __init__(self, data: dict):
        self._data = data

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not a field (and _data itself while unpickling)
            raise AttributeError(name)
        try:
            return _wrap(self._data[name])
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return _wrap(self._data[name])

    def __contains__(self, name: str) -> bool:
        return name in self._data

    def keys(self):
        return self._data.keys()

    def to_dict(self) -> dict:
        return self._data

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, json.dumps(self._data)[:400])


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Record(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class CompileReport(Record):
    """What kiln.compile did: `phases` ([name, ms]), `engines` (segment, nodes, network_layers, plan_layers,
    plan_bytes, build_ms, cache_hit), `fallbacks` (segments given back to PyTorch, with the reason),
    `engine_nodes`, `torch_nodes`; str() is the text `kiln compile --verbose` prints."""

    def __str__(self) -> str:
        return self._data.get("text", "")


def _precision_name(p: Any) -> str:
    if isinstance(p, torch.dtype):
        if str(p) == "torch.float8_e4m3fn":  # (torch >= 2.1; Kiln's tensors have no FP8 dtype)
            return "f8"
        return dtype_name(p)
    if isinstance(p, str) and p.lower() in _PRECISIONS:
        return _PRECISIONS[p.lower()]
    raise KilnError("[InvalidInput] unknown precision %r (fp32, fp16, bf16, int8, fp8 or a torch dtype)" % (p,))


def _precisions(value: Any) -> list:
    items = [value] if isinstance(value, (str, torch.dtype)) else list(value)
    return sorted({"f32"} | {_precision_name(p) for p in items})


def _json_value(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(_json_value(v) for v in value)
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, (os.PathLike,)):
        return os.fspath(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    # Operators for torch_executed_ops: torch.ops.aten.add.Tensor prints as aten.add.Tensor.
    return str(value)


def settings_json(precision: Any = None, backend: Optional[str] = None, **settings: Any) -> dict:
    """The settings Kiln receives for kiln.compile's keyword arguments (unknown names fail there, with Kiln's
    message)."""
    out = {name: _json_value(value) for name, value in settings.items()}
    for name, value in out.items():
        # JSON has no NaN or infinity: json.dumps would write a token Kiln refuses without naming the setting.
        if isinstance(value, float) and not math.isfinite(value):
            raise KilnError("[InvalidInput] settings: '%s' expects a finite number, got %r" % (name, value))
    if "enabled_precisions" in settings:
        out["enabled_precisions"] = _precisions(settings["enabled_precisions"])
    if precision is not None:
        out["enabled_precisions"] = _precisions(precision)
    if backend is not None:
        out["backend"] = backend
    return out


def _default_backend(model: Any, inputs: Sequence[Any]) -> str:
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    if isinstance(model, torch.nn.Module):
        tensors += list(model.parameters())[:1]
    return "cuda" if any(t.is_cuda for t in tensors) else "cpu"


def _export(model: torch.nn.Module, inputs: Sequence[Any], kwarg_inputs: Optional[dict]) -> Any:
    if not has_export():
        raise KilnError("[Unsupported] kiln.compile of an nn.Module needs torch >= 2.5 (torch.export); this is torch "
                        "%s: export the model where torch >= 2.5 is installed and pass the .pt2 path" %
                        torch.__version__)
    params = list(model.parameters())
    device = params[0].device if params else torch.device("cpu")
    args, dynamic, any_dynamic = [], [], False
    for i, x in enumerate(inputs):
        if isinstance(x, Input):
            args.append(x.example(device))
            dims = {d: torch.export.Dim("input%d_dim%d" % (i, d), min=lo, max=hi)
                    for d, (lo, hi) in enumerate(zip(x.min_shape, x.max_shape)) if lo != hi}
            dynamic.append(dims or None)
            any_dynamic = any_dynamic or bool(dims)
        else:
            args.append(x)
            dynamic.append(None)
    kwargs = dict(kwarg_inputs or {})
    dynamic_shapes = None
    if any_dynamic:
        dynamic_shapes = tuple(dynamic) if not kwargs else {**dict(zip(_arg_names(model, len(args)), dynamic)),
                                                             **{k: None for k in kwargs}}
    # Non-strict export (tracing with torch's own ops rather than TorchDynamo) with grad mode on, as bench/zoo
    # exports: it takes more of the models users have (transformers' among them), in the training-IR form Kiln is
    # tested on most.
    with torch.enable_grad():
        return torch.export.export(model, tuple(args), kwargs=kwargs or None, dynamic_shapes=dynamic_shapes,
                                   strict=False)


def _arg_names(model: torch.nn.Module, n: int) -> list:
    import inspect
    names = [p for p in inspect.signature(model.forward).parameters]
    return names[:n]


def _input_specs(inputs: Sequence[Any]) -> Optional[list]:
    if not inputs:
        return None
    specs = []
    for i, x in enumerate(inputs):
        if isinstance(x, Input):
            specs.append(x.to_json())
        elif isinstance(x, torch.Tensor):
            specs.append(Input.from_tensor(x).to_json())
        elif x is None:
            specs.append(None)
        else:
            raise KilnError("[InvalidInput] inputs[%d]: expected a tensor or kiln.Input, got %s" %
                            (i, type(x).__name__))
    return specs


def _program_path(model: Any, inputs: Sequence[Any], kwarg_inputs: Optional[dict], workdir: str) -> str:
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    if isinstance(model, torch.nn.Module) and not _is_exported_program(model):
        model = _export(model, inputs, kwarg_inputs)
    if _is_exported_program(model):
        path = os.path.join(workdir, "program.pt2")
        torch.export.save(model, path)
        return path
    raise TypeError("kiln.compile: expected an nn.Module, a torch.export.ExportedProgram or a .pt2 path, got %s" %
                    type(model).__name__)


def _samples(inputs: Sequence[Any], kwarg_inputs: Optional[dict]) -> list:
    """The example tensors as the sample inputs of an fp16/bf16 build's overflow check (docs/python.md), when they
    are plain tensors, one per program input (no kwarg_inputs, no kiln.Input, no pytree); else none."""
    if kwarg_inputs or not all(type(x) is torch.Tensor and x.device.type != "meta" for x in inputs):
        return []  # (fake and meta tensors hold no values)
    return [x.detach() for x in inputs]


def _is_exported_program(model: Any) -> bool:
    export = getattr(torch, "export", None)
    return export is not None and isinstance(model, getattr(export, "ExportedProgram", ()))


def compile(model: Any, inputs: Optional[Iterable[Any]] = None, *, precision: Any = None,
            backend: Optional[str] = None, kwarg_inputs: Optional[dict] = None, **settings: Any) -> CompiledModule:
    """Compiles `model` (an nn.Module, exported with torch.export; an ExportedProgram; or the path of a .pt2
    archive) with Kiln and returns a CompiledModule that takes and returns what the model did.

    inputs: per positional input, an example tensor (a fixed shape) or a kiln.Input (a shape range); for an
        nn.Module also the export's example arguments (kwarg_inputs: its keyword arguments). Default: the program's
        own shape ranges.
    precision: "fp32", "fp16", "bf16", "int8" (with calibration="DATA.npz"), "fp8" (FP8 E4M3 matmuls on cuda
        GPUs of compute capability 8.9 and up, with "fp16" or "bf16" and calibration="DATA.npz"), a torch dtype (torch.float8_e4m3fn for
        fp8), or several (the engines' enabled_precisions).
    backend: "cpu" or "cuda" (default: where the inputs or the model's parameters are).
    settings: any Kiln compilation setting by name (min_block_size=3, torch_executed_ops={"aten.add.Tensor"},
        use_cuda_graphs=True, ...: docs/python.md lists them); an unknown name or a value of the wrong type is a
        KilnError.
    The compile report is logged to the "kiln" logger (INFO) and kept in the result's `compile_report`.
    """
    inputs = list(inputs or [])
    if backend is None and "backend" not in settings:
        backend = _default_backend(model, inputs)
    options = {"settings": settings_json(precision, backend, **settings)}
    with tempfile.TemporaryDirectory(prefix="kiln-") as workdir:
        path = _program_path(model, inputs, kwarg_inputs, workdir)
        # An nn.Module was exported with the inputs' shapes: the program states them itself.
        if isinstance(model, (str, os.PathLike)) or _is_exported_program(model):
            options["inputs"] = _input_specs(inputs)
        else:
            options["inputs"] = _input_specs(inputs) if any(isinstance(x, Input) for x in inputs) else None
        engine, report_text = call(ops().compile, path, json.dumps(options), _samples(inputs, kwarg_inputs))
    report = CompileReport(json.loads(report_text))
    for line in str(report).splitlines():
        logger.info(line)
    for fallback in report.fallbacks:
        logger.warning("engine segment given back to PyTorch: %s", fallback)
    return CompiledModule(engine, report)


def inspect(model: Any, inputs: Optional[Iterable[Any]] = None, *, kwarg_inputs: Optional[dict] = None,
            precision: Any = None, backend: Optional[str] = None, **settings: Any) -> Record:
    """What Kiln makes of `model` (as kiln.compile takes it) under these settings, without building engines: the
    lowered program's `inputs`, `outputs`, `parameters`, `symbols`, `ops` and `coverage` (`ops_total`,
    `ops_supported`, `unsupported` [{node, op, reason}], `segments` [{name, kind, backend, nodes, ...}],
    `per_op`), as `kiln inspect --coverage --json` prints it."""
    inputs = list(inputs or [])
    options = {"settings": settings_json(precision, backend, **settings)}
    with tempfile.TemporaryDirectory(prefix="kiln-") as workdir:
        path = _program_path(model, inputs, kwarg_inputs, workdir)
        info = Record(json.loads(call(ops().inspect, path, json.dumps(options))))
    coverage = info.coverage
    logger.info("coverage: %d/%d ops supported, %d segments", coverage.ops_supported, coverage.ops_total,
                len(coverage.segments))
    return info
