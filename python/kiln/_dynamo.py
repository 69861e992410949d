"""torch.compile(model, backend="kiln"): each FX graph TorchDynamo captures is exported and compiled by Kiln (torch
>= 2.5). Graph breaks are TorchDynamo's: the code between graphs runs in Python as usual; a guard failure captures
the graph again and calls this backend again. A graph Kiln cannot take (an export or compile error, a symbolic
size among its inputs) runs as TorchDynamo captured it, with a warning on the "kiln" logger; `stats` counts both."""

import contextlib
import logging
from typing import Any, Callable, List, Optional

import torch

from ._compile import compile as kiln_compile

logger = logging.getLogger("kiln")

#: Graphs this process compiled with Kiln / left to PyTorch (reasons in the log).
stats = {"compiled": 0, "fallback": 0}


class _WithFrozenWeights(torch.nn.Module):
    """The captured graph with the weights TorchDynamo passes as graph inputs (it lifts nn.Module parameters and
    buffers into inputs) held as parameters and buffers again, so that the export sees weights and Kiln builds them
    into its engines."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: List[Any], weight_positions: List[int]):
        super().__init__()
        self.gm = gm
        self.count = len(example_inputs)
        self.positions = weight_positions
        for k, i in enumerate(weight_positions):
            w = example_inputs[i]
            if isinstance(w, torch.nn.Parameter):
                self.register_parameter("w%d" % k, w)
            else:
                self.register_buffer("w%d" % k, w)

    def forward(self, *user_inputs: Any) -> Any:
        args, it = [], iter(user_inputs)
        weights = {i: getattr(self, "w%d" % k) for k, i in enumerate(self.positions)}
        for i in range(self.count):
            args.append(weights[i] if i in weights else next(it))
        return self.gm(*args)


def _weight_positions(gm: torch.fx.GraphModule, example_inputs: List[Any]) -> List[int]:
    """The graph inputs that are the model's parameters or buffers: nn.Parameters, and inputs whose TorchDynamo
    source is a module's _parameters / _buffers entry."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    positions = []
    for i, x in enumerate(example_inputs):
        source = ""
        if i < len(placeholders):
            grapharg = placeholders[i].meta.get("grapharg")
            try:
                source = grapharg.source.name() if grapharg is not None else ""
            except Exception:  # a source without a name
                source = ""
        if isinstance(x, torch.nn.Parameter) or "._buffers[" in source or "._parameters[" in source:
            positions.append(i)
    return positions


def _outside_dynamo():
    """A context in which torch.export runs as at top level: no tracing context or fake mode of the capture."""
    stack = contextlib.ExitStack()
    guards = getattr(torch, "_guards", None)
    if guards is not None and hasattr(guards, "tracing"):
        stack.enter_context(guards.tracing(None))
    try:
        from torch._subclasses.fake_tensor import unset_fake_temporarily
        stack.enter_context(unset_fake_temporarily())
    except ImportError:
        pass
    return stack


def backend(gm: torch.fx.GraphModule, example_inputs: List[Any], options: Optional[dict] = None) -> Callable:
    """The dynamo backend. options (torch.compile(..., options={...})): kiln.compile's keyword arguments (precision,
    backend, any setting)."""
    options = dict(options or {})
    if not all(isinstance(x, torch.Tensor) for x in example_inputs):
        return _fallback(gm, "symbolic sizes among the graph's inputs (compile with dynamic=False)")
    positions = _weight_positions(gm, example_inputs)
    user_positions = [i for i in range(len(example_inputs)) if i not in positions]
    user_examples = [example_inputs[i] for i in user_positions]
    try:
        # Grad mode on, as bench/zoo exports (the training-IR form Kiln is tested on most), whatever mode the
        # model is called in.
        with _outside_dynamo(), torch.enable_grad():
            program = torch.export.export(_WithFrozenWeights(gm, list(example_inputs), positions),
                                          tuple(user_examples), strict=False)
            module = kiln_compile(program, user_examples, **options)
    except Exception as e:  # export or Kiln: the graph runs as captured
        return _fallback(gm, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    stats["compiled"] += 1
    logger.info("torch.compile: graph of %d nodes compiled by Kiln: %s", len(gm.graph.nodes), module.summary())

    def run(*args: Any) -> Any:
        return module(*[args[i] for i in user_positions])

    run.kiln_module = module
    return run


def _fallback(gm: torch.fx.GraphModule, reason: str) -> Callable:
    stats["fallback"] += 1
    logger.warning("torch.compile: graph of %d nodes left to PyTorch: %s", len(gm.graph.nodes), reason)
    return gm.forward


def register() -> None:
    """Registers "kiln" with TorchDynamo (also reachable without importing kiln through the package's
    torch_dynamo_backends entry point)."""
    from torch._dynamo import list_backends, register_backend
    if "kiln" not in list_backends(exclude_tags=()):
        register_backend(name="kiln")(backend)
