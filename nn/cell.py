"""`Cell` (the model base class), `Parameter` (a named, trainable ndarray) and `ParameterTuple`.

A Cell registers the Parameters and sub-Cells assigned to its attributes, in order, and names
every Parameter by its dotted attribute path (`fc1.weight`). `construct` holds the computation.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..common.dtype import to_array
from ..common.initializer import initializer

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


class Cell:
    """Base class of every layer and model: subclasses build sub-cells and Parameters in
    `__init__` and describe the computation in `construct`."""
    training: bool

    def __init__(self, auto_prefix: bool = True, flags: dict[str, Any] | None = None) -> None:
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_param_tuples", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "requires_grad", False)
        object.__setattr__(self, "auto_prefix", auto_prefix)
        object.__setattr__(self, "flags", dict(flags or {}))

    # -- running ----------------------------------------------------------------------------

    def construct(self, *inputs: Any, **kwargs: Any) -> Any:
        """The computation; subclasses override it."""
        raise NotImplementedError(f"{self.cls_name} does not define construct()")

    def check_inputs(self, *inputs: Any, **kwargs: Any) -> None:
        """Raise a clear error if the inputs cannot fit this layer (no-op by default).

        Reads only `.shape`/`.dtype` of array inputs, so it also accepts compile-time tensor
        types; dims that are not ints are skipped."""

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        self.check_inputs(*inputs, **kwargs)
        return self.construct(*inputs, **kwargs)

    def set_inputs(self, *inputs: Any) -> None:
        """Declare the shapes of `construct`'s array arguments, MindSpore's way: one
        `Tensor(shape=[None, 1, 32, 32], dtype=float32)` per argument, None for an axis of any
        size (None for an argument leaves it unconstrained). Compiled with jit, the None axes
        are symbolic sizes: one compile serves every batch size; a call whose fixed axes or
        dtype differ is a ValueError."""
        for i, spec in enumerate(inputs):
            if spec is not None and not (hasattr(spec, "shape") and hasattr(spec, "dtype")):
                raise TypeError(f"{self.cls_name}.set_inputs: input {i} must be a "
                                f"Tensor(shape=..., dtype=...) or None, got {spec!r}")
        object.__setattr__(self, "_input_specs", tuple(inputs))

    def get_inputs(self) -> tuple[Any, ...] | None:
        """What `set_inputs` declared (None if it was never called)."""
        return self.__dict__.get("_input_specs")

    # -- registration ------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_params")
        cells = self.__dict__.get("_cells")
        if params is None and isinstance(value, Parameter | Cell | ParameterTuple):
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before "
                                 f"assigning {name!r}")
        if not isinstance(value, ParameterTuple) and name in self.__dict__.get("_param_tuples", ()):
            del self._param_tuples[name]
        if isinstance(value, Parameter):
            self.insert_param_to_cell(name, value, check_name_contain_dot=False)
        elif isinstance(value, ParameterTuple):
            self._set_parameter_tuple(name, value)
        elif isinstance(value, Cell):
            self.insert_child_to_cell(name, value)
        elif params is not None and name in params:
            self._assign_to_param(name, value)
        elif cells is not None and name in cells:
            if value is not None:
                raise TypeError(f"{self.cls_name}: {name!r} is a sub-cell; assign a Cell or "
                                f"None, not {type(value).__name__}")
            del cells[name]
            object.__setattr__(self, name, None)
        else:
            object.__setattr__(self, name, value)

    def _set_parameter_tuple(self, name: str, value: ParameterTuple) -> None:
        """A ParameterTuple attribute (an optimizer's parameters and state): its Parameters
        belong to this cell's `parameters_and_names` (as `name.<index>`) and keep their own
        names, as in MindSpore; each name may appear once."""
        names: dict[str, Parameter] = {}
        for param in value:
            other = names.setdefault(param.name, param)
            if other is not param and param.name is not None:
                raise ValueError(f"{self.cls_name}: ParameterTuple {name!r} holds two different "
                                 f"Parameters named {param.name!r}; give each a unique name")
        self._params.pop(name, None)
        self._cells.pop(name, None)
        self._param_tuples[name] = value
        object.__setattr__(self, name, value)

    def _assign_to_param(self, name: str, value: Any) -> None:
        """MindSpore's rule: an array (or a number, a NumPy scalar) assigned to a Parameter
        attribute overwrites its data, cast to its dtype (`self.step = self.step + 1` on a 0-d
        Parameter, whose sum is a NumPy scalar)."""
        if isinstance(value, np.ndarray | np.generic | int | float):
            self._params[name].set_data(value)
        elif value is None:
            del self._params[name]
            object.__setattr__(self, name, None)
        else:
            raise TypeError(f"{self.cls_name}: {name!r} is a Parameter; assign a Parameter, an "
                            f"array, a number or None, not {type(value).__name__}")

    def __delattr__(self, name: str) -> None:
        self._params.pop(name, None)
        self._param_tuples.pop(name, None)
        self._cells.pop(name, None)
        object.__delattr__(self, name)

    def insert_param_to_cell(self, param_name: str, param: Parameter,
                             check_name_contain_dot: bool = True) -> None:
        """Register `param` as attribute `param_name`; its name becomes `param_name`."""
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"{self.cls_name}: parameter name {param_name!r} contains a '.'")
        if not isinstance(param, Parameter):
            raise TypeError(f"{self.cls_name}: {param_name!r} must be a Parameter, got "
                            f"{type(param).__name__}")
        self._cells.pop(param_name, None)
        self._params[param_name] = param
        param.name = param_name
        object.__setattr__(self, param_name, param)

    def insert_child_to_cell(self, child_name: str, child_cell: Cell) -> None:
        """Register `child_cell` as attribute `child_name`; its Parameters are renamed
        `child_name.<path>`."""
        if not isinstance(child_cell, Cell):
            raise TypeError(f"{self.cls_name}: {child_name!r} must be a Cell, got "
                            f"{type(child_cell).__name__}")
        self._params.pop(child_name, None)
        self._cells[child_name] = child_cell
        if self.auto_prefix:
            # NOTE: only Parameters the child's cells own; those a ParameterTuple refers to
            # (an optimizer's view of the network's weights, its moments) keep their names.
            for path, param in child_cell._walk_parameters("", True, tuples=False):
                param.name = f"{child_name}.{path}"
        object.__setattr__(self, child_name, child_cell)

    # -- walking -----------------------------------------------------------------------------

    def cells_and_names(self, cells: set[int] | None = None,
                        name_prefix: str = "") -> Iterator[tuple[str, Cell]]:
        """(dotted name, cell) for this cell ('' or `name_prefix`) and every descendant, once."""
        seen = set() if cells is None else cells
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            yield from cell.cells_and_names(seen, f"{name_prefix}.{name}" if name_prefix else name)

    def parameters_and_names(self, name_prefix: str = "",
                             expand: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted attribute path, Parameter) in registration order, each Parameter once: the
        cells' own Parameters, then those only a ParameterTuple attribute holds
        (`optimizer.moments.0`)."""
        yield from self._walk_parameters(name_prefix, expand, tuples=True)

    def _walk_parameters(self, name_prefix: str, expand: bool,
                         tuples: bool) -> Iterator[tuple[str, Parameter]]:
        seen: set[int] = set()
        cells = list(self.cells_and_names(name_prefix=name_prefix)) if expand else \
            [(name_prefix, self)]
        owned = [(cell_name, name, param) for cell_name, cell in cells
                 for name, param in cell._params.items()]
        if tuples:  # NOTE: after every owned one, so a Parameter goes by its owner's path
            owned += [(cell_name, f"{name}.{i}", param) for cell_name, cell in cells
                      for name, group in cell._param_tuples.items()
                      for i, param in enumerate(group)]
        for cell_name, name, param in owned:
            if id(param) not in seen:
                seen.add(id(param))
                yield (f"{cell_name}.{name}" if cell_name else name), param

    def get_parameters(self, expand: bool = True) -> Iterator[Parameter]:
        """Every Parameter, in registration order."""
        for _, param in self.parameters_and_names(expand=expand):
            yield param

    def trainable_params(self, recurse: bool = True) -> list[Parameter]:
        """The Parameters with `requires_grad`."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse: bool = True) -> list[Parameter]:
        """The Parameters without `requires_grad` (e.g. BatchNorm's moving statistics)."""
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse: bool = True) -> OrderedDict[str, Parameter]:
        """Dotted name -> Parameter."""
        return OrderedDict(self.parameters_and_names(expand=recurse))

    def name_cells(self) -> OrderedDict[str, Cell]:
        """The direct sub-cells by attribute name."""
        return OrderedDict(self._cells)

    def cells(self) -> list[Cell]:
        """The direct sub-cells."""
        return list(self._cells.values())

    # -- modes -------------------------------------------------------------------------------

    def set_train(self, mode: bool = True) -> Cell:
        """Set `training` on this cell and every descendant; returns self."""
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        return self

    def set_grad(self, requires_grad: bool = True) -> Cell:
        """Record that gradients will be taken through this cell; returns self."""
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    # -- printing ----------------------------------------------------------------------------

    @property
    def cls_name(self) -> str:
        """The class name, as error messages use it."""
        return type(self).__name__

    def extend_repr(self) -> str:
        """The layer's configuration, shown in `repr` and in error messages."""
        return ""

    def __repr__(self) -> str:
        head = f"{self.cls_name}<{self.extend_repr()}"
        if not self._cells:
            return head + ">"
        lines = [head]
        for name, cell in self._cells.items():
            lines.append(f"  ({name}): " + repr(cell).replace("\n", "\n  "))
        return "\n".join(lines) + "\n  >"
