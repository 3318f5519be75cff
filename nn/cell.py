"""`Cell`, the model base class (`Parameter` and `ParameterTuple` live in common/parameter.py).

A Cell registers the Parameters and sub-Cells assigned to its attributes, in order, and names
every Parameter by its dotted attribute path (`fc1.weight`). `construct` holds the computation.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, ClassVar, Iterator

import numpy as np

from ..common.parameter import Parameter, ParameterTuple
from ..common.tensor import cell_result

__all__ = ["Cell", "Parameter", "ParameterTuple"]


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

    graph_mode_call: ClassVar[Callable[[Cell, tuple, dict], Any] | None] = None
    """How a call compiles under GRAPH_MODE (the runtime's `cellcall.call_compiled`, installed
    by `set_context`; nn sits below the runtime); None under PYNATIVE_MODE: plain Python."""

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        compiled_call = Cell.graph_mode_call
        if compiled_call is not None:
            return compiled_call(self, inputs, kwargs)
        self.check_inputs(*inputs, **kwargs)
        # NOTE: the result as construct gave it: Tensor results would change what NumPy
        # returns downstream (a subclass's reduction is a 0-d array, not a NumPy number), which
        # only the MindSpore alias asks for (common/tensor.py: numbers_as_tensors)
        return cell_result(self.construct(*inputs, **kwargs))

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

    # -- MindSpore's configuration calls ------------------------------------------------------

    def add_flags(self, **flags: Any) -> Cell:
        """Record compiler hints (`loop_can_unroll=True`, ...) in `flags`; amber's compiler
        needs none of them. Returns self."""
        self.flags.update(flags)
        return self

    def add_flags_recursive(self, **flags: Any) -> Cell:
        """`add_flags` on this cell and every descendant; returns self."""
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self) -> dict[str, Any]:
        """The flags recorded by `add_flags`."""
        return self.flags

    def to_float(self, dst_type: Any) -> Cell:
        """MindSpore's mixed-precision switch. amber computes in the dtype of the values given,
        so float32 (what amber's layers hold) is accepted as a no-op; another dtype is refused
        rather than silently ignored. Returns self."""
        if np.dtype(dst_type) != np.float32:
            raise NotImplementedError(f"{self.cls_name}.to_float({np.dtype(dst_type)}): amber "
                                      f"computes in the inputs' dtype; cast inputs and "
                                      f"parameters yourself (only to_float(float32) is "
                                      f"accepted, as a no-op)")
        return self

    def init_parameters_data(self, auto_parallel_mode: bool = False) -> dict[Parameter,
                                                                              Parameter]:
        """MindSpore initializes parameters lazily; amber's hold their values from the start.
        Returns {parameter: parameter}, as MindSpore's does for initialized ones."""
        return {p: p for p in self.get_parameters()}

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
