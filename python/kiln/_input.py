"""kiln.Input: the shape range of one program input (Torch-TensorRT's Input(min_shape, opt_shape, max_shape))."""

from typing import Optional, Sequence

import torch

from ._library import KilnError

# Kiln's dtype names (kiln/support/dtype.h) for torch dtypes.
DTYPE_NAMES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8",
    torch.bool: "bool",
}


def dtype_name(dtype: torch.dtype) -> str:
    if dtype not in DTYPE_NAMES:
        raise KilnError("[Unsupported] dtype %s (Kiln takes %s)" % (dtype, ", ".join(map(str, DTYPE_NAMES))))
    return DTYPE_NAMES[dtype]


class Input:
    """The shapes one input may take: `Input(min_shape, opt_shape, max_shape, dtype, name)`, or
    `Input(shape=...)` for one fixed shape. Engines are tuned for opt_shape and run anything in [min, max] per dim.
    `name` picks the program input by name (default: the input at this position)."""

    def __init__(self, min_shape: Optional[Sequence[int]] = None, opt_shape: Optional[Sequence[int]] = None,
                 max_shape: Optional[Sequence[int]] = None, dtype: torch.dtype = torch.float32,
                 name: Optional[str] = None, *, shape: Optional[Sequence[int]] = None):
        if shape is not None:
            if min_shape is not None or opt_shape is not None or max_shape is not None:
                raise KilnError("[InvalidInput] kiln.Input: give shape or min/opt/max shapes, not both")
            min_shape = opt_shape = max_shape = shape
        if min_shape is None or max_shape is None:
            raise KilnError("[InvalidInput] kiln.Input: min_shape and max_shape (or shape) are required")
        if opt_shape is None:
            opt_shape = max_shape
        self.min_shape = tuple(int(d) for d in min_shape)
        self.opt_shape = tuple(int(d) for d in opt_shape)
        self.max_shape = tuple(int(d) for d in max_shape)
        if not len(self.min_shape) == len(self.opt_shape) == len(self.max_shape):
            raise KilnError("[InvalidInput] kiln.Input: min, opt and max shapes have different ranks")
        for lo, opt, hi in zip(self.min_shape, self.opt_shape, self.max_shape):
            if not 0 <= lo <= opt <= hi:
                raise KilnError("[InvalidInput] kiln.Input: need 0 <= min <= opt <= max per dim, got %s, %s, %s" %
                                (self.min_shape, self.opt_shape, self.max_shape))
        self.dtype = dtype
        self.name = name

    @classmethod
    def from_tensor(cls, tensor: torch.Tensor, name: Optional[str] = None) -> "Input":
        return cls(shape=tuple(tensor.shape), dtype=tensor.dtype, name=name)

    def is_dynamic(self) -> bool:
        return self.min_shape != self.max_shape

    def example(self, device: torch.device) -> torch.Tensor:
        """A tensor of opt_shape for exporting (random; integers in [0, 2))."""
        if self.dtype.is_floating_point:
            return torch.randn(self.opt_shape, dtype=self.dtype, device=device)
        return torch.randint(0, 2, self.opt_shape, device=device).to(self.dtype)

    def to_json(self) -> dict:
        return {"name": self.name, "min": list(self.min_shape), "opt": list(self.opt_shape),
                "max": list(self.max_shape), "dtype": dtype_name(self.dtype)}

    def __repr__(self) -> str:
        name = "" if self.name is None else ", name=%r" % self.name
        return "kiln.Input(min_shape=%s, opt_shape=%s, max_shape=%s, dtype=%s%s)" % (
            self.min_shape, self.opt_shape, self.max_shape, self.dtype, name)
