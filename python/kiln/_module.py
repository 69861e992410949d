"""kiln.CompiledModule: a compiled Kiln module as an nn.Module that takes and returns what the original did; kiln.save
and kiln.load."""

import os
from typing import Any, Optional

import torch

from . import _pytree
from ._library import KilnError, call, engine_class, ops


def _torch_unflatten(leaves: list, spec_text: str) -> Any:
    """torch's own pytree for node types Kiln does not rebuild itself (registered classes), where torch has it."""
    try:
        from torch.utils import _pytree as torch_pytree
        spec = torch_pytree.treespec_loads(spec_text)
    except (ImportError, AttributeError):
        return None
    except Exception as e:  # a type torch cannot name (its module is not imported)
        raise KilnError("[Unsupported] the program's output structure cannot be rebuilt: %s" % e) from None
    return torch_pytree.tree_unflatten(leaves, spec)


class CompiledModule(torch.nn.Module):
    """A Kiln module (runtime::CompiledModule behind torch.classes.kiln.CompiledModule).

    Called as the original module was: positional and keyword arguments in the structure the program was exported
    with (nested tuples, lists and dicts of tensors); returns the original output structure. Tensors run on the
    module's device (`device`): those already there and contiguous reach the engines without copies; others are
    moved there and the outputs moved back to the first input's device. Picklable (the .kiln bytes travel inside),
    so torch.save / torch.load of a model containing it work; kiln.save writes the .kiln file that `kiln run` and
    C++ load.
    """

    def __init__(self, engine: Any, compile_report: Optional[Any] = None):
        super().__init__()
        self._engine = engine
        self.compile_report = compile_report
        self._read_specs()

    def _read_specs(self) -> None:
        self._in_spec_text = call(self._engine.in_spec)
        self._out_spec_text = call(self._engine.out_spec)
        self._in_spec = _pytree.parse(self._in_spec_text)
        self._out_spec = _pytree.parse(self._out_spec_text)
        self._device = torch.device(call(self._engine.device))

    @property
    def device(self) -> torch.device:
        """Where the module takes and returns tensors: cpu, or cuda:N for the cuda backend."""
        return self._device

    def summary(self) -> str:
        """One line: engines, PyTorch runs and node counts, backend."""
        return call(self._engine.summary)

    @property
    def use_cuda_graphs(self) -> bool:
        return call(self._engine.use_cuda_graphs)

    @use_cuda_graphs.setter
    def use_cuda_graphs(self, enabled: bool) -> None:
        call(self._engine.set_use_cuda_graphs, bool(enabled))

    @property
    def static_shape_cuda_graphs(self) -> bool:
        """Whether engines with static input shapes replay CUDA graphs without use_cuda_graphs (default True)."""
        return call(self._engine.static_shape_cuda_graphs)

    @static_shape_cuda_graphs.setter
    def static_shape_cuda_graphs(self, enabled: bool) -> None:
        call(self._engine.set_static_shape_cuda_graphs, bool(enabled))

    def _flat_inputs(self, args: tuple, kwargs: dict) -> list:
        if self._in_spec is None:
            if kwargs:
                raise KilnError("[InvalidInput] this module has no call spec: pass its inputs positionally")
            return list(args)
        return _pytree.flatten((tuple(args), dict(kwargs)), self._in_spec, "inputs")

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        flat = self._flat_inputs(args, kwargs)
        home = None
        for i, x in enumerate(flat):
            if isinstance(x, torch.Tensor):
                if home is None:
                    home = x.device
                if x.device != self._device:
                    flat[i] = x.to(self._device)
            elif isinstance(x, (int, bool)):  # a symbolic int input: a 0-d tensor, as the runtime takes it
                flat[i] = torch.tensor(x, dtype=torch.int64, device=self._device)
            else:
                raise KilnError("[InvalidInput] input %d: expected a tensor or int, got %s" % (i, type(x).__name__))
        outputs = call(self._engine.forward, flat)
        if home is not None and home != self._device:
            outputs = [o.to(home) for o in outputs]
        if self._out_spec is None:
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        try:
            return _pytree.unflatten(outputs, self._out_spec)
        except KilnError:
            rebuilt = _torch_unflatten(outputs, self._out_spec_text)
            if rebuilt is None:
                raise
            return rebuilt

    def save(self, path: str) -> None:
        """Writes the module as a .kiln archive (atomically)."""
        call(self._engine.save, os.fspath(path))

    def to_bytes(self) -> bytes:
        """The .kiln archive's bytes."""
        return call(self._engine.to_bytes).numpy().tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> "CompiledModule":
        tensor = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        return cls(call(ops().load_module_bytes, tensor))

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_engine"] = self.to_bytes()
        state["_use_cuda_graphs"] = self.use_cuda_graphs
        for key in ("_in_spec", "_out_spec", "_device"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        data = state.pop("_engine")
        use_cuda_graphs = state.pop("_use_cuda_graphs", False)
        self.__dict__.update(state)
        tensor = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        self._engine = call(ops().load_module_bytes, tensor)
        self._read_specs()
        if use_cuda_graphs != self.use_cuda_graphs:
            self.use_cuda_graphs = use_cuda_graphs

    def extra_repr(self) -> str:
        return self.summary()


def save(module: CompiledModule, path: str) -> None:
    """Writes `module` (from kiln.compile or kiln.load) to `path` as a .kiln archive, which kiln.load, `kiln run`
    and C++ (kiln::runtime::load) read back."""
    if not isinstance(module, CompiledModule):
        raise TypeError("kiln.save: expected a kiln.CompiledModule, got %s" % type(module).__name__)
    module.save(path)


def load(path: str) -> CompiledModule:
    """Loads a .kiln archive (written by kiln.save or `kiln compile`)."""
    return CompiledModule(call(engine_class(), os.fspath(path)))
