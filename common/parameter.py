"""`Parameter` (a named, trainable ndarray) and `ParameterTuple`: MindSpore's
`mindspore.common.parameter`. Cells register the Parameters assigned to their attributes."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import numpy as np

from .dtype import to_array
from .initializer import initializer

_NUMPY_1 = int(np.__version__.split(".")[0]) < 2


def _plain(value: Any) -> Any:
    """`value` with every Parameter replaced by a plain ndarray view of the same memory."""
    if isinstance(value, Parameter):
        return value.view(np.ndarray)
    if isinstance(value, tuple | list):
        return type(value)(_plain(v) for v in value)
    return value


def _plain_method(name: str) -> Callable[..., Any]:
    method = getattr(np.ndarray, name)

    def plain(self: Parameter, *args: Any, **kwargs: Any) -> Any:
        return _plain(method(self, *args, **kwargs))
    plain.__name__ = name
    plain.__doc__ = f"`ndarray.{name}`, returning a plain ndarray."
    return plain


class Parameter(np.ndarray):
    """A trainable array owned by a Cell: an `np.ndarray` with a `name` and `requires_grad`.

    Arithmetic, NumPy functions, indexing and reshaping give plain ndarrays; in-place updates
    (`p[...] = v`, `p -= lr * g`, `set_data`) keep the Parameter's identity.
    """
    name: str | None
    requires_grad: bool

    def __new__(cls, default_input: Any, name: str | None = None,
                requires_grad: bool = True) -> Parameter:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Parameter: name must be a str or None, got {type(name).__name__}")
        obj = to_array(default_input).view(cls)
        obj.name = name
        obj.requires_grad = bool(requires_grad)
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        self.name = getattr(obj, "name", None)
        self.requires_grad = getattr(obj, "requires_grad", True)

    def __array_wrap__(self, array: np.ndarray, context: Any = None,
                       return_scalar: bool = False) -> Any:
        if array is self or (context is not None and any(array is a for a in context[1])):
            return array  # an in-place update (`p -= g`, out=p) keeps the Parameter
        # NOTE: fresh ufunc results (`p + 1`, `x @ p`, `p.sum()`) are values, not parameters;
        # NumPy 1 allocates them as the subclass and never says `return_scalar`, so a 0-d
        # result becomes the scalar NumPy gives for a plain array.
        plain = array.view(np.ndarray) if isinstance(array, Parameter) else array
        return plain[()] if return_scalar or (_NUMPY_1 and plain.ndim == 0) else plain

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        result = super().__array_function__(func, types, args, kwargs)
        out = kwargs.get("out")
        if result is out or (isinstance(out, tuple) and any(result is o for o in out)):
            return result  # an explicit out= target keeps its identity
        return _plain(result)

    __getitem__ = _plain_method("__getitem__")
    reshape = _plain_method("reshape")
    transpose = _plain_method("transpose")
    swapaxes = _plain_method("swapaxes")
    squeeze = _plain_method("squeeze")
    ravel = _plain_method("ravel")
    flatten = _plain_method("flatten")
    astype = _plain_method("astype")
    copy = _plain_method("copy")

    @property
    def T(self) -> np.ndarray:  # noqa: N802 (NumPy's name)
        """The transpose, as a plain ndarray."""
        return self.view(np.ndarray).T

    def __iter__(self) -> Iterator[Any]:
        return iter(self.view(np.ndarray))

    __hash__ = object.__hash__  # NOTE: by identity, so parameters can key dicts and sets

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_parameter, (np.array(self.view(np.ndarray)), self.name,
                                     self.requires_grad))

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        return Parameter(np.array(self.view(np.ndarray)), self.name, self.requires_grad)

    def __repr__(self) -> str:
        return (f"Parameter(name={self.name}, shape={self.shape}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    def set_data(self, data: Any) -> Parameter:
        """Overwrite the values in place (same shape; cast to this dtype); returns self."""
        value = np.asarray(data)
        if value.shape != self.shape:
            raise ValueError(f"Parameter {self.name!r}: set_data got shape {value.shape}, "
                             f"expected {self.shape}")
        if not np.can_cast(value.dtype, self.dtype, casting="same_kind"):
            raise TypeError(f"Parameter {self.name!r}: set_data cannot cast {value.dtype} to "
                            f"{self.dtype}")
        np.copyto(self.view(np.ndarray), value, casting="same_kind")
        return self

    def asnumpy(self) -> np.ndarray:
        """A plain ndarray copy of the values."""
        return np.array(self.view(np.ndarray))

    def value(self) -> np.ndarray:
        """The current values as a plain ndarray sharing this Parameter's memory (MindSpore's
        `Parameter.value()`; inside `construct` it is the parameter itself)."""
        return self.view(np.ndarray)

    @property
    def data(self) -> Parameter:  # type: ignore[override]
        """The Parameter itself, as MindSpore's `Parameter.data` (`p.data.shape`,
        `p.data.set_data(...)`); the raw buffer is `memoryview(p)`."""
        return self

    def init_data(self) -> Parameter:
        """MindSpore initializes parameters lazily; amber's hold their values already."""
        return self

    def clone(self, init: Any = "same") -> Parameter:
        """A new Parameter of the same name and shape: a copy, or freshly initialized by `init`."""
        data = self.asnumpy() if init == "same" else initializer(init, self.shape, self.dtype)
        return Parameter(data, self.name, self.requires_grad)


def _rebuild_parameter(data: np.ndarray, name: str | None, requires_grad: bool) -> Parameter:
    return Parameter(data, name, requires_grad)


class ParameterTuple(tuple):
    """An immutable tuple of Parameters (what optimizers hold)."""

    def __new__(cls, iterable: Iterable[Parameter]) -> ParameterTuple:
        items = tuple(iterable)
        for i, item in enumerate(items):
            if not isinstance(item, Parameter):
                raise TypeError(f"ParameterTuple: item {i} is a {type(item).__name__}, "
                                f"not a Parameter")
        return super().__new__(cls, items)

    def clone(self, prefix: str, init: Any = "same") -> ParameterTuple:
        """New Parameters named `prefix.<name>`, copied or initialized by `init`."""
        clones = []
        for p in self:
            c = p.clone(init)
            c.name = f"{prefix}.{p.name}"
            clones.append(c)
        return ParameterTuple(clones)
