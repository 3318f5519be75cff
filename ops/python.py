"""Python-level ops: constants, tuples, run-time lists, conversions, print, assert, raise.

These are what a `construct` body does besides tensor math; the frontend makes them, codegen
spells them as plain Python.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import onnx as ox
from . import native
from .batch_rules import LOOP_EFFECT, LOOP_INPUTLESS, LOOP_PYTHON, first_input_batch, whole_batch
from .opdef import NO_GRAD, REQUIRED, Dyn, GradContext, OpDef, OpFunction, Primitive
from .types import (AnyType, ListType, NoneType, Scalar, StrType, Tensor, TupleType, Type,
                    join_types, type_of)


def _tensor_or_scalar(op: str, t: Type) -> None:
    if not isinstance(t, Tensor | Scalar):
        raise TypeError(f"{op}: expected a tensor or a Python scalar, got {t}")


def _to_python(kind: type):
    def infer(x: Type) -> Type:
        _tensor_or_scalar(kind.__name__, x)
        if isinstance(x, Tensor) and x.is_static and 1 not in (x.shape or (1,)) and x.shape:
            # NOTE: int()/float() of an array with more than one element fails eagerly too.
            raise TypeError(f"{kind.__name__}(): only size-1 arrays convert, got {x}")
        return Scalar(kind)
    return infer


def _list_append_infer(items: Type, x: Type) -> Type:
    if not isinstance(items, ListType):
        raise TypeError(f"list_append: expected a list, got {items}")
    return ListType(x if isinstance(items.element, AnyType) else join_types([items.element, x]))


def list_append_kernel(items: list, x: object) -> list:
    """Append in place and hand the same list on (the IR threads lists as values)."""
    items.append(x)
    return items


def list_extend_kernel(items: list, more: list) -> list:
    """Extend in place and hand the same list on."""
    items.extend(more)
    return items


def list_delete_kernel(items: list, i: int) -> list:
    """Delete item `i` in place and hand the same list on."""
    del items[i]
    return items


def list_insert_kernel(items: list, i: int, x: object) -> list:
    """Insert `x` before item `i` in place and hand the same list on."""
    items.insert(i, x)
    return items


def _list_extend_infer(items: Type, more: Type) -> Type:
    if not isinstance(items, ListType) or not isinstance(more, ListType):
        raise TypeError(f"expected two lists, got {items} and {more}")
    if isinstance(items.element, AnyType):
        return more
    return items if isinstance(more.element, AnyType) else ListType(
        join_types([items.element, more.element]))


def _list_delete_infer(items: Type, i: Type) -> Type:
    if not isinstance(items, ListType) or i not in (Scalar(int), Scalar(bool)) and not (
            isinstance(i, Tensor) and i.rank == 0 and i.dtype.kind in "iu"):
        raise TypeError(f"expected a list and an integer index, got {items} and {i}")
    return items


def _list_insert_infer(items: Type, i: Type, x: Type) -> Type:
    _list_delete_infer(items, i)
    return _list_append_infer(items, x)


def _split_at(ad: GradContext, n: Any) -> tuple[Any, Any]:
    """The adjoint list cut in two at run-time length `n`."""
    return (ad.op("getitem", ad.g, n, index=(slice(None, Dyn(0)),)),
            ad.op("getitem", ad.g, n, index=(slice(Dyn(0), None),)))


def _list_extend_grad(ad: GradContext) -> tuple[Any, ...]:
    return _split_at(ad, ad.op("len", ad.g) - ad.op("len", ad.input(1)))


def _list_concat_grad(ad: GradContext) -> tuple[Any, ...]:
    return _split_at(ad, ad.op("len", ad.input(0)))


def _list_delete_grad(ad: GradContext) -> tuple[Any, ...]:
    item = ad.types[0].element
    if not (isinstance(item, Tensor) and item.is_symbolic):
        raise NotImplementedError("the gradient of deleting from a list whose items' shapes "
                                  "are not known")
    zero = ad.op("zeros", shape=item.shape, dtype=item.dtype)
    where = ad.op("mod", ad.input(1), ad.op("len", ad.g) + 1)  # NOTE: `del l[-1]` undone
    return ad.op("list_insert", ad.op("list_copy", ad.g), where, zero), None


def _list_insert_grad(ad: GradContext) -> tuple[Any, ...]:
    last, i = ad.op("len", ad.g) - 1, ad.input(1)
    # NOTE: where `insert(i, x)` put x: i clipped to [0, n] (n + i for a negative i)
    where = ad.op("select", i >= 0, ad.op("min", i, last), ad.op("max", last + i, 0))
    rest = ad.op("list_delete", ad.op("list_copy", ad.g), where)
    return rest, None, ad.op("getitem", ad.g, where, index=(Dyn(0),))


def assert_that(cond: object, message: object) -> None:
    """A run-time `assert` that survives `python -O`."""
    if not cond:
        raise AssertionError(message) if message is not None else AssertionError()


def raise_error(exc_type: type, *args: object) -> None:
    """A run-time `raise exc_type(*args)`."""
    raise exc_type(*args)


def enter_errstate(settings: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """`with np.errstate(**dict(settings))` entered: the handling it replaced, as pairs."""
    return tuple(sorted(np.seterr(**dict(settings)).items()))


def leave_errstate(old: tuple[tuple[str, str], ...]) -> None:
    """`with np.errstate(...)` left: NumPy's floating-point error handling put back."""
    np.seterr(**dict(old))


def reraise(exc: BaseException) -> None:
    """A run-time bare `raise` in an except block: the caught exception, its traceback kept."""
    raise exc


def _list_sum_infer(items: Type, start: Type) -> Type:
    """The type of `sum(items, start)`: `start + items[0] + ...`, which is `start` itself when
    the list is empty, so a sum of another type than `start` has no one static type (a Python
    number `start` is the exception: the frontend keeps such sums as maybe-numbers)."""
    from .binary import add  # NOTE: the element ops import nothing from here
    if not isinstance(items, ListType):
        raise TypeError(f"sum(): expected a list, got {items}")
    if isinstance(items.element, AnyType):
        return start
    total = add.infer(items.element, start)
    if isinstance(start, Scalar):
        return total
    if isinstance(start, Tensor) and isinstance(total, Tensor) and (
            total.dtype, total.rank) == (start.dtype, start.rank):
        return join_types([total, start])
    raise TypeError(f"sum() of a list built at run time is its start ({start}) when the list is "
                    f"empty, and {total} otherwise: a value of two types")


def _list_sum_grad(ad: GradContext) -> tuple[Any, ...]:
    return ad.op("sum_to_items", ad.g, ad.input(0)), ad.g


def _len_infer(x: Type) -> Type:
    if not isinstance(x, Tensor | ListType | TupleType):
        raise TypeError(f"len(): expected a sized value, got {x}")
    if isinstance(x, Tensor) and x.rank == 0:
        raise TypeError("len() of a 0-d array")
    return Scalar(int)


def _list_new_grad(ad: GradContext) -> tuple[Any, ...]:
    return tuple(ad.op("getitem", ad.g, index=(i,)) for i in range(len(ad.types)))


def _list_append_grad(ad: GradContext) -> tuple[Any, ...]:
    return ad.op("getitem", ad.g, index=(slice(None, -1),)), ad.op("getitem", ad.g, index=(-1,))


def _extreme_item_grad(ad: GradContext, name: str) -> Any:
    """`min(items)` of a run-time list of 0-d arrays: the adjoint goes to the item chosen, the
    first of equal ones, as NumPy's argmin picks it."""
    if not isinstance(ad.types[0].element, Tensor):
        raise NotImplementedError(f"the gradient of {name}() over a run-time list of Python "
                                  "numbers (append 0-d arrays instead)")
    where = ad.op(f"arg{name}", ad.op("stack", ad.input(0), axis=0))
    return ad.op("index_add", ad.input(0), ad.g, where, index=(Dyn(0),))


def _extreme_grad(name: str) -> Callable[[GradContext], tuple[Any, ...]]:
    """Python's min/max of two numbers: the adjoint goes to the one chosen (the first on ties)."""
    def grad(ad: GradContext) -> tuple[Any, ...]:
        if len(ad.types) == 1 and isinstance(ad.types[0], ListType):
            return (_extreme_item_grad(ad, name),)
        if len(ad.types) != 2:
            raise NotImplementedError(f"the gradient of {name}() over {len(ad.types)} values")
        first = ad.input(0) <= ad.input(1) if name == "min" else ad.input(0) >= ad.input(1)
        return ad.op("select", first, ad.g, 0), ad.op("select", first, 0, ad.g)
    return grad


placeholder = OpDef("placeholder", (), kernel=lambda: None, infer=lambda: AnyType(), emit="None",
                    grad=NO_GRAD, batch=LOOP_INPUTLESS)
"""`None` standing for a value only the other arm of an If computes: autodiff exports values
from one arm this way, and reads them only where that arm ran."""
stop_gradient = OpDef("stop_gradient", ("x",), kernel=lambda x: x, infer=lambda x: x, emit="x",
                      grad=NO_GRAD, numba="x", onnx=ox.identity, batch=whole_batch)
"""`x` itself, through which no gradient flows (MindSpore's `ops.stop_gradient`)."""
constant = OpDef(
    "constant", (), kernel=lambda value: value, infer=lambda value: type_of(value),
    emit="value", attrs={"value": REQUIRED}, grad=NO_GRAD, batch=LOOP_INPUTLESS)
undefined = OpDef(
    "undefined", (), kernel=lambda name: None, infer=lambda name: AnyType(),
    emit="None", attrs={"name": REQUIRED}, grad=NO_GRAD, batch=LOOP_INPUTLESS)
"""The value of a variable on a path that never bound it; codegen leaves the name unassigned, so
reading it raises UnboundLocalError exactly as Python would."""
make_tuple = OpDef(
    "make_tuple", ("*xs",), kernel=lambda *xs: tuple(xs),
    infer=lambda *xs: TupleType(xs), emit="(*xs,)", grad=lambda ad: tuple(ad.gs), batch=LOOP_PYTHON)
make_namedtuple = OpDef(
    "make_namedtuple", ("*xs",), kernel=lambda *xs, cls: cls._make(xs),
    infer=lambda *xs, cls: TupleType(xs, cls), emit="cls._make((*xs,))",
    attrs={"cls": REQUIRED}, grad=lambda ad: tuple(ad.gs), batch=LOOP_PYTHON)
"""`cls(*xs)` for a namedtuple class `cls` (the field values in order): a tuple result that
keeps its class."""
tuple_getitem = OpDef(
    "tuple_getitem", ("t",), kernel=lambda t, index: t[index],
    infer=lambda t, index: t.elements[index], emit="t[index]", attrs={"index": REQUIRED},
    grad=lambda ad: (ad.tuple_part(ad.attrs["index"], ad.g),), batch=LOOP_PYTHON)


def _make_dict_emit(attrs: dict[str, Any]) -> str:
    """A dict display `{'y': xs_0, 'n': xs_1}` (keys are compile-time constants)."""
    return "{" + ", ".join(f"{k!r}: xs_{i}" for i, k in enumerate(attrs["keys"])) + "}"


make_dict = OpDef(
    "make_dict", ("*xs",), kernel=lambda *xs, keys: dict(zip(keys, xs)),
    infer=lambda *xs, keys: AnyType(), emit=_make_dict_emit, attrs={"keys": REQUIRED},
    effects=True, grad=NO_GRAD,
    batch=LOOP_PYTHON)  # NOTE: effectful so CSE never merges two fresh dicts
"""`{keys[0]: xs[0], ...}`: a dict result (IR type any; its items are the inputs)."""
def _depend_grad(ad: GradContext) -> tuple[Any, ...]:
    if len(ad.types) > 1:
        raise NotImplementedError("this array may have been changed in place through another "
                                  "name or a view (e.g. `v = x[0]; v[:] = 0`); amber cannot "
                                  "differentiate through such a write: copy the array first "
                                  "(`x = x.copy()`) or write to it directly (`x[0] = 0`)")
    return (ad.g,)


depend = OpDef(
    "depend", ("x", "*after"), kernel=lambda x, *after: x, infer=lambda x, *after: x,
    emit="x", same_object=True, grad=_depend_grad, numba="x", onnx=ox.identity,
    batch=first_input_batch)
"""`x` itself, read after the `after` values exist: the frontend's new version of an array that
an in-place write through an alias or a view (`after`) may have changed, so no pass moves or
merges a read of it with a read from before the write."""
list_new = OpDef(
    "list_new", ("*xs",), kernel=lambda *xs: list(xs),
    infer=lambda *xs: ListType(join_types(list(xs)) if xs else AnyType()), emit="[*xs]",
    effects=True, grad=_list_new_grad,
    batch=LOOP_PYTHON)  # NOTE: effectful so CSE never merges two fresh lists
list_append = OpDef(
    "list_append", ("items", "x"), kernel=list_append_kernel, infer=_list_append_infer,
    emit="list_append_kernel(items, x)", helpers=(list_append_kernel,), effects=True,
    writes=0, grad=_list_append_grad, inplace="out.append(x)", batch=LOOP_PYTHON)
list_extend = OpDef(
    "list_extend", ("items", "more"), kernel=list_extend_kernel, infer=_list_extend_infer,
    emit="list_extend_kernel(items, more)", helpers=(list_extend_kernel,), effects=True,
    writes=0, grad=_list_extend_grad, batch=LOOP_PYTHON)
"""`items.extend(more)` / `items += more` on a run-time list, in place."""
list_concat = OpDef(
    "list_concat", ("a", "b"), kernel=lambda a, b: a + b, infer=_list_extend_infer,
    emit="a + b", effects=True, grad=_list_concat_grad,
    batch=LOOP_PYTHON)  # NOTE: effectful: a fresh list
"""`a + b` for run-time lists: a new list."""
list_delete = OpDef(
    "list_delete", ("items", "i"), kernel=list_delete_kernel, infer=_list_delete_infer,
    emit="list_delete_kernel(items, i)", helpers=(list_delete_kernel,), effects=True,
    can_raise=True, writes=0, grad=_list_delete_grad, batch=LOOP_PYTHON)
"""`del items[i]` on a run-time list, in place (`items.pop(i)` reads the item first)."""
list_insert = OpDef(
    "list_insert", ("items", "i", "x"), kernel=list_insert_kernel, infer=_list_insert_infer,
    emit="list_insert_kernel(items, i, x)", helpers=(list_insert_kernel,), effects=True,
    writes=0, grad=_list_insert_grad, batch=LOOP_PYTHON)
"""`items.insert(i, x)` on a run-time list, in place."""
list_sum = OpDef(
    "list_sum", ("items", "start"), kernel=lambda items, start: sum(items, start),
    infer=_list_sum_infer, emit="sum(items, start)", can_raise=True,
    grad=_list_sum_grad, batch=LOOP_PYTHON)
"""`sum(items, start)` over a run-time list: `start` plus the items, in order (`start` itself
when the list is empty)."""
check_bound = OpDef(
    "check_bound", ("x",), kernel=lambda x: None, infer=lambda x: NoneType(), emit="x",
    effects=True, reads_only=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""A read of `x` for Python's check alone: the variable is unbound on some paths, and reading
it there raises UnboundLocalError even where nothing uses what was read."""
length = OpDef("len", ("x",), kernel=len, infer=_len_infer, emit="len(x)", grad=NO_GRAD,
               batch=LOOP_PYTHON)
to_int = OpDef("int", ("x",), kernel=int, infer=_to_python(int), emit="int(x)", can_raise=True,
               grad=NO_GRAD, numba=native.to_int_spelling, onnx=ox.to_python, batch=LOOP_PYTHON)
to_float = OpDef(
    "float", ("x",), kernel=float, infer=_to_python(float), emit="float(x)", can_raise=True,
    grad=lambda ad: (ad.g,), numba=native.numbers_only("float(x)"), onnx=ox.to_python,
    batch=LOOP_PYTHON)
to_bool = OpDef("bool", ("x",), kernel=bool, infer=_to_python(bool), emit="bool(x)",
                can_raise=True, grad=NO_GRAD, numba=native.numbers_only("bool(x)"),
                onnx=ox.to_python, batch=LOOP_PYTHON)
not_ = OpDef("not", ("x",), kernel=lambda x: not x, infer=_to_python(bool), emit="not x",
             operator="Not", can_raise=True, grad=NO_GRAD, numba=native.numbers_only("not x"),
             onnx=ox.logical_not_python, batch=LOOP_PYTHON)
def _builtin_minmax(name: str):
    def infer(*xs: Type) -> Type:
        if len(xs) == 1 and isinstance(xs[0], ListType):  # min(items) of a run-time list
            return _extreme_item(name, xs[0].element)
        for x in xs:
            _tensor_or_scalar(name, x)
        if len(xs) == 1:  # min(seq): the smallest item of a sequence
            x = xs[0]
            return Tensor(x.shape[1:], x.dtype) if isinstance(x, Tensor) else x
        return join_types(list(xs))
    return infer


def _extreme_item(name: str, item: Type) -> Type:
    """The type of `min(items)` for a run-time list: its item's, for numbers (Python's
    comparison of two arrays of several elements has no truth value)."""
    if isinstance(item, AnyType):
        raise ValueError(f"{name}() arg is an empty sequence")
    if not (isinstance(item, Scalar) or isinstance(item, Tensor) and item.rank == 0):
        raise TypeError(f"{name}() of a run-time list of {item} compares whole arrays; "
                        f"reduce them instead (np.{name}imum.reduce(items) or np.{name}(np.stack("
                        "items), axis=0))")
    return item


def _format_infer(*xs: Type, template: str) -> Type:
    return StrType()


format_ = OpDef(
    "format", ("*xs",), kernel=lambda *xs, template: template.format(*xs), infer=_format_infer,
    emit="template.format(*xs)", attrs={"template": REQUIRED}, can_raise=True, grad=NO_GRAD,
    batch=LOOP_PYTHON)
"""`template.format(*xs)`: f-strings and `str.format` of run-time values."""
percent_format = OpDef(
    "percent_format", ("*xs",), kernel=lambda *xs, template: template % xs,
    infer=_format_infer, emit="template % xs", attrs={"template": REQUIRED}, can_raise=True,
    grad=NO_GRAD, batch=LOOP_PYTHON)
"""`template % (x, ...)`: printf-style formatting of run-time values."""


def _print_emit(attrs: dict[str, Any]) -> str:
    """`print(*xs)`, spelling `sep`/`end` only where they differ from Python's defaults."""
    extra = "".join(f", {k}={k}" for k, default in (("sep", " "), ("end", "\n"))
                    if attrs[k] != default)
    return f"print(*xs{extra})"


builtin_min = OpDef("min", ("*xs",), kernel=min, infer=_builtin_minmax("min"), emit="min(*xs)",
                    can_raise=True, grad=_extreme_grad("min"),
                    numba=native.extreme_spelling(native.py_min), onnx=ox.python_minmax("Min"),
                    batch=LOOP_PYTHON)
builtin_max = OpDef("max", ("*xs",), kernel=max, infer=_builtin_minmax("max"), emit="max(*xs)",
                    can_raise=True, grad=_extreme_grad("max"),
                    numba=native.extreme_spelling(native.py_max), onnx=ox.python_minmax("Max"),
                    batch=LOOP_PYTHON)
"""Python's `min`/`max` builtins (scalars, or the items of a 1-d sequence), not NumPy's."""
print_ = OpDef(
    "print", ("*xs",), kernel=lambda *xs, sep, end: print(*xs, sep=sep, end=end),
    infer=lambda *xs, sep, end: NoneType(), emit=_print_emit,
    attrs={"sep": " ", "end": "\n"}, effects=True, reads_only=True, grad=NO_GRAD, batch=LOOP_EFFECT)
assert_ = OpDef(
    "assert", ("cond", "message"), kernel=assert_that, infer=lambda cond, message: NoneType(),
    emit="assert_that(cond, message)", helpers=(assert_that,), effects=True, can_raise=True,
    reads_only=True, grad=NO_GRAD, batch=LOOP_EFFECT)
raise_ = OpDef(
    "raise", ("*args",), kernel=lambda *args, exc_type: raise_error(exc_type, *args),
    infer=lambda *args, exc_type: NoneType(), emit="raise_error(exc_type, *args)",
    attrs={"exc_type": REQUIRED}, helpers=(raise_error,), effects=True, can_raise=True,
    grad=NO_GRAD, batch=LOOP_EFFECT)
exc_matches = OpDef(
    "exc_matches", ("exc",), kernel=lambda exc, types: isinstance(exc, types),
    infer=lambda exc, types: Scalar(bool), emit="isinstance(exc, types)",
    attrs={"types": REQUIRED}, grad=NO_GRAD, batch=LOOP_PYTHON)
"""Whether the exception an except block caught is one of `types` (its `except` clauses)."""
reraise_ = OpDef(
    "reraise", ("exc",), kernel=reraise, infer=lambda exc: NoneType(), emit="reraise(exc)",
    helpers=(reraise,), effects=True, can_raise=True, grad=NO_GRAD, batch=LOOP_EFFECT)
seterr = OpDef(
    "seterr", (), kernel=enter_errstate, infer=lambda settings: AnyType(),
    emit="enter_errstate(settings)", helpers=(enter_errstate,), attrs={"settings": REQUIRED},
    effects=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""Entering `with np.errstate(...)` (settings: sorted (key, value) pairs): NumPy's
floating-point error handling set; the result is the handling it replaced."""
restore_err = OpDef(
    "restore_err", ("old",), kernel=leave_errstate, infer=lambda old: NoneType(),
    emit="leave_errstate(old)", helpers=(leave_errstate,), effects=True, grad=NO_GRAD,
    batch=LOOP_EFFECT)
"""Leaving `with np.errstate(...)`: the handling `seterr` replaced, back."""

OPS = (constant, undefined, placeholder, stop_gradient, make_tuple, make_namedtuple,
       tuple_getitem, make_dict, percent_format,
       depend,
       list_new, list_append, list_extend, list_concat, list_delete, list_insert, list_sum,
       check_bound, length, to_int, to_float, to_bool, not_, builtin_min, builtin_max,
       format_, print_, assert_, raise_, exc_matches, reraise_, seterr, restore_err)


class StopGradient(Primitive):
    """MindSpore's `ops.StopGradient()(x)`."""
    op = stop_gradient

    def binder(self, x: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (x,), {}


FUNCTIONS = (OpFunction("stop_gradient", stop_gradient, lambda x: ((x,), {})),)
PRIMITIVES = (StopGradient,)
