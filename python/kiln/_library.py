"""Loads libkiln_torch.so (Kiln's compiler and runtime as torch ops and a TorchScript class) and turns its errors
into KilnError."""

import functools
import os

import torch


class KilnError(RuntimeError):
    """A Kiln error: its message is Kiln's one line, "[Kind] what (where)"."""


def _candidates():
    explicit = os.environ.get("KILN_TORCH_LIBRARY")
    if explicit:
        return [explicit]
    return [os.path.join(os.path.dirname(os.path.abspath(__file__)), "libkiln_torch.so")]


@functools.lru_cache(maxsize=None)
def load_library() -> None:
    """Loads the library once per process: torch.classes.kiln.CompiledModule and torch.ops.kiln.* exist after."""
    for path in _candidates():
        if os.path.exists(path):
            torch.classes.load_library(path)
            return
    raise ImportError("kiln: libkiln_torch.so not found (looked for " + ", ".join(_candidates()) +
                      "); build it (cmake target kiln_torch) or set KILN_TORCH_LIBRARY")


def kiln_message(error: BaseException) -> str:
    """The Kiln line inside a RuntimeError that torch raised for a kiln::Error (torch may add lines of its own)."""
    lines = str(error).splitlines()
    for line in lines:
        if line.startswith("["):
            return line
    return lines[0] if lines else str(error)


def call(fn, *args):
    """Calls a torch op or CompiledModule method of the library; a kiln::Error becomes KilnError."""
    load_library()
    try:
        return fn(*args)
    except RuntimeError as e:
        if isinstance(e, KilnError):
            raise
        raise KilnError(kiln_message(e)) from None


def ops():
    load_library()
    return torch.ops.kiln


def engine_class():
    load_library()
    return torch.classes.kiln.CompiledModule
