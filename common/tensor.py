"""`Tensor`: MindSpore's `mindspore.common.tensor.Tensor`, as an ndarray.

`Tensor(data, dtype)` builds a new array (Python floats become float32, as in MindSpore) of the
`Tensor` ndarray subclass, which adds MindSpore's methods (`asnumpy`, `view` as a reshape,
`dim`, `numpy`, `expand_as`, `expand_dims`, the `keep_dims` keyword of `sum`/`mean`/`max`/
`min`/`argmax`/`argmin`); NumPy operations on it give Tensors too. `isinstance(x, Tensor)` holds for
every ndarray, so code checking for tensors accepts plain arrays (what compiled code returns).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .dtype import to_array
from .initializer import initializer

__all__ = ["Tensor", "TensorSpec", "as_tensors"]


def _with_keep_dims(method: Any) -> Any:
    """`method` that also takes MindSpore's spelling `keep_dims` of NumPy's `keepdims`."""
    def reduce(self: np.ndarray, *args: Any, keep_dims: bool | None = None, **kwargs: Any) -> Any:
        if keep_dims is not None:
            kwargs["keepdims"] = keep_dims
        return method(self, *args, **kwargs)
    reduce.__name__ = reduce.__qualname__ = method.__name__
    reduce.__doc__ = f"NumPy's `{method.__name__}`, also with MindSpore's `keep_dims` keyword."
    return reduce


class _TensorMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, np.ndarray)


class Tensor(np.ndarray, metaclass=_TensorMeta):
    """`Tensor(input_data, dtype=None)` or `Tensor(shape=s, dtype=d, init=i)` (drawn from an
    initializer): a new array holding the data. `Tensor(shape=[None, 1, 32, 32], dtype=d)` (no
    data, no init) is a `TensorSpec`: the shape an input takes, None for an axis of any size
    (see `Cell.set_inputs`)."""

    def __new__(cls, input_data: Any = None, dtype: Any = None, shape: Any = None,
                init: Any = None, **mindspore_options: Any) -> Tensor:
        unknown = set(mindspore_options) - {"internal", "const_arg", "device"}
        if unknown:
            raise TypeError(f"Tensor: unexpected argument(s) {', '.join(sorted(unknown))}")
        if input_data is not None:
            if shape is not None or init is not None:
                raise TypeError("Tensor: give either input_data or (shape, init), not both")
            return to_array(input_data, dtype).view(cls)
        if shape is not None and init is None and dtype is not None:
            return TensorSpec(shape, dtype)  # type: ignore[return-value]
        if shape is None or init is None:
            raise TypeError("Tensor: needs input_data, shape and init, or (for an input spec) "
                            "shape and dtype")
        return initializer(init, shape, np.float32 if dtype is None else dtype).view(cls)

    def asnumpy(self) -> np.ndarray:
        """A plain ndarray copy of the values."""
        return np.array(self.view(np.ndarray))

    numpy = asnumpy

    def view(self, *args: Any, **kwargs: Any) -> Any:
        """MindSpore's `t.view(*shape)`: the data reshaped (`t.view(-1)`, `t.view(2, 3)`,
        `t.view((2, 3))`). A dtype or an array type keeps NumPy's meaning."""
        dims = args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else args
        if not kwargs and dims and all(isinstance(d, int | np.integer) for d in dims):
            return self.reshape(tuple(int(d) for d in dims))
        return super().view(*args, **kwargs)

    def dim(self) -> int:
        """The number of dimensions (MindSpore's `Tensor.dim()`)."""
        return self.ndim

    def expand_as(self, other: Any) -> Any:
        """MindSpore's `t.expand_as(other)`: broadcast to `other`'s shape."""
        return np.broadcast_to(self, np.shape(other)).view(type(self))

    def expand_dims(self, axis: int) -> Any:
        """MindSpore's `t.expand_dims(axis)`: a new axis of size 1 at `axis`."""
        return np.expand_dims(self, axis)

    sum = _with_keep_dims(np.ndarray.sum)
    mean = _with_keep_dims(np.ndarray.mean)
    max = _with_keep_dims(np.ndarray.max)
    min = _with_keep_dims(np.ndarray.min)
    argmax = _with_keep_dims(np.ndarray.argmax)
    argmin = _with_keep_dims(np.ndarray.argmin)

    def __repr__(self) -> str:
        return "Tensor(" + np.array2string(self.view(np.ndarray), separator=", ") + \
            f", dtype={self.dtype})"


_numbers_as_tensors = False
"""True under the MindSpore alias (`compat.alias_mindspore`): see `numbers_as_tensors`."""


def numbers_as_tensors() -> None:
    """From here on, in this process, results are Tensors as MindSpore's are, NumPy numbers
    included (a loss comes back as a 0-d Tensor, so a script's `loss.asnumpy()` works): what a
    Cell call, eager or compiled, a jit function and a gradient function return. The MindSpore
    alias turns this on; amber's own API keeps NumPy's kinds, which its tests compare exactly."""
    global _numbers_as_tensors
    _numbers_as_tensors = True


def as_tensors(value: Any) -> Any:
    """What a Cell call returns, as MindSpore's does: each plain ndarray in `value` (itself, or
    in a tuple or list) as a `Tensor` sharing its data; anything else (a Parameter, a Tensor, a
    NumPy number, a Python value) unchanged, except NumPy numbers under `numbers_as_tensors`.

    NOTE: a NumPy number stays one: amber keeps NumPy's kinds exactly (compiled code returns a
    number where NumPy does), and the eager oracle's result must equal the compiled one's."""
    kind = type(value)
    if kind is np.ndarray:
        return value.view(Tensor)
    if kind is tuple or kind is list:
        return kind(as_tensors(v) for v in value)
    if _numbers_as_tensors and isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return np.asarray(value).view(Tensor)
    return value


def as_results(value: Any) -> Any:
    """What a jit or gradient function returns: `value` itself, or under
    `numbers_as_tensors` (the MindSpore alias) its arrays and numbers as Tensors."""
    return as_tensors(value) if _numbers_as_tensors else value


def cell_result(value: Any) -> Any:
    """What an eager Cell call returns: as `construct` gave it, or under `numbers_as_tensors`
    as Tensors (inside an eager construct too, as MindSpore's values are)."""
    return as_tensors(value) if _numbers_as_tensors else value


class TensorSpec:
    """The shape and dtype of an array input, without data: an int per axis of fixed size,
    None for an axis whose size may change from call to call (compiled once for all of them;
    MindSpore's `Tensor(shape=[None, 3], dtype=...)`). A symbol name (`"N"`) instead of None
    ties axes of several inputs to one size."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Any, dtype: Any) -> None:
        if shape is None or isinstance(shape, int | str):
            raise TypeError(f"TensorSpec: shape must be a list or tuple of axis sizes (ints, "
                            f"None or symbol names), got {shape!r} (a spec of any rank is not "
                            "supported)")
        items = tuple(shape)
        for d in items:
            if not (d is None or isinstance(d, str) or
                    isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0):
                raise TypeError(f"TensorSpec: an axis size is an int >= 0, None or a symbol "
                                f"name, got {d!r} in {list(items)}")
        self.shape = tuple(int(d) if isinstance(d, int | np.integer) else d for d in items)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSpec) and (self.shape, self.dtype) == (other.shape,
                                                                             other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        dims = ", ".join("None" if d is None else repr(d) for d in self.shape)
        return f"Tensor(shape=[{dims}], dtype={self.dtype.name})"
