"""Kiln from Python: compile PyTorch models ahead of time with Kiln, run, save and load them (docs/python.md).

    import kiln
    km = kiln.compile(model, inputs=[x], precision="fp16", backend="cuda")
    y = km(x)
    kiln.save(km, "model.kiln"); km = kiln.load("model.kiln")
    opt = torch.compile(model, backend="kiln")
"""

from ._compile import CompileReport, Record, compile, has_export, inspect
from ._input import Input
from ._library import KilnError
from ._module import CompiledModule, load, save

__all__ = ["compile", "inspect", "Input", "CompiledModule", "CompileReport", "Record", "KilnError", "load", "save"]
__version__ = "0.1.0"

if has_export():
    try:
        from ._dynamo import register as _register_dynamo_backend
        _register_dynamo_backend()
    except ImportError:  # a torch without TorchDynamo
        pass
