"""Expressions: a gast expression node -> an IR value (run time) or a Python object (compile
time). Dispatch is one table from node class to handler."""
from __future__ import annotations

import copy
import difflib
import inspect
import math
import types
from typing import Any, Callable

import gast

from ..graph import ListType, Scalar, Tensor, TupleType, Value
from ..graph.types import UNKNOWN, Sym
from ..ops.types import dim_mul
from ..ops import METHODS
from . import instances, namedtuples
from .context import DeadPath, Frame, tuple_items
from .control import choose, short_circuit
from .errors import CompileError
from .operators import (binary, compare, condition_value, format_at_run_time, from_python,
                        to_python, unary)
from .names import SYNTHETIC_PREFIX, target_names
from .scope import lookup, ref_attribute
from .sequences import as_sequence, getitem
from .containers import DICT_METHODS, LIST_METHODS
from .values import (MISSING, BoundMethod, DictMethod, IndexedIter, Instance, ListMethod, PyList,
                     Ref, RuntimeRange, SuperRef, TensorMethod, describe, has_runtime,
                     python_name, truth)



def evaluate(f: Frame, node: gast.expr) -> Any:
    """The value of expression `node` in frame `f`."""
    handler = f.compiler.rules.expressions.get(type(node))
    if handler is None:
        raise f.error(f"{type(node).__name__} expressions are not supported in compiled code",
                      node=node)
    saved, f.at = f.at, node
    try:
        return handler(f, node)
    except (CompileError, DeadPath):
        raise
    except Exception:
        if f.compiler.failure is None:  # NOTE: where an internal error happened, for its report
            f.compiler.failure = (f, node)
        raise
    finally:
        f.at = saved


def _constant(f: Frame, node: gast.Constant) -> Any:
    return node.value


def _name(f: Frame, node: gast.Name) -> Any:
    return lookup(f, node.id)


def _attribute(f: Frame, node: gast.Attribute) -> Any:
    return attribute(f, evaluate(f, node.value), node.attr)


def attribute(f: Frame, base: Any, name: str) -> Any:
    """`base.<name>`."""
    if isinstance(base, Ref):
        return ref_attribute(f, base, name)
    if isinstance(base, SuperRef):
        return super_attribute(f, base, name)
    if isinstance(base, Value):
        return value_attribute(f, base, name)
    if isinstance(base, PyList):
        if name in LIST_METHODS:
            return ListMethod(base, name)
        raise f.error(f"lists have no supported method '{name}'")
    if isinstance(base, dict) and name in DICT_METHODS:
        return DictMethod(base, name)
    if namedtuples.is_namedtuple(base):
        return namedtuples.attribute(f, base, name)
    if isinstance(base, Instance):
        return instances.attribute(f, base, name)
    if isinstance(base, BoundMethod | TensorMethod | ListMethod | DictMethod):
        raise f.error(f"attributes of {describe(base)} are not supported")
    try:
        return from_python(getattr(to_python(base), name))
    except AttributeError:
        raise f.error(f"{describe(base)} has no attribute '{name}'",
                      _attribute_hint(to_python(base), name)) from None


def _attribute_hint(obj: Any, name: str) -> str:
    """Names close to a misspelt one; for a module, where to look it up."""
    close = difflib.get_close_matches(name, [n for n in dir(obj) if not n.startswith("_")], 3)
    where = f"dir({python_name(obj)})" if isinstance(obj, types.ModuleType) else ""
    if close:
        return "did you mean " + " or ".join(f"'{c}'" for c in close) + "?" + (
            f" (all names: {where})" if where else "")
    if python_name(obj) == "amber.ops":
        return "amber.ops has no op of that name: see dir(amber.ops) and amber.ops.NUMPY"
    return f"see {where} for what it has" if where else ""


def super_attribute(f: Frame, base: SuperRef, name: str) -> Any:
    """`super().<name>`: a parent class's method bound to the same receiver."""
    obj = base.receiver.obj if isinstance(base.receiver, Ref) else base.receiver
    try:
        value = getattr(super(base.cls, obj), name)
    except (AttributeError, TypeError):
        raise f.error(f"the parents of {base.cls.__name__} have no attribute '{name}'") from None
    if inspect.ismethod(value) and value.__self__ is obj:
        return BoundMethod(value.__func__, base.receiver)
    return value


def value_attribute(f: Frame, v: Value, name: str) -> Any:
    """An attribute of a run-time value: array facts known from its type, or a method."""
    t = v.type
    if isinstance(t, Tensor):
        if name in ("shape", "ndim", "dtype", "size"):
            f.number_facts(v, f"`.{name}`")
        if name == "shape":
            return shape_of(f, v)
        if name == "ndim":
            return t.rank
        if name == "dtype":
            return t.dtype
        if name == "size":
            if all(isinstance(d, int) for d in t.shape):
                return math.prod(t.shape)
            size = dim_mul(*t.shape)
            return f.op("size", v) if size == UNKNOWN else f.op("dim", value=size)
        if name == "T":
            return f.op("transpose", v, perm=None)
        if name in METHODS:
            return TensorMethod(v, METHODS[name])
        if name in ("item", *TENSOR_ONLY_METHODS, *NUMPY_FUNCTION_METHODS):
            return TensorMethod(v, name)
        raise f.error(f"arrays have no supported attribute or method '{name}'",
                      f"supported methods: {', '.join(sorted(METHODS))}")
    if isinstance(t, ListType) and name in LIST_METHODS:
        return ListMethod(v, name)
    if isinstance(t, TupleType):
        return attribute(f, tuple_items(f, v), name)
    raise f.error(f"{describe(v)} has no supported attribute '{name}'")


TENSOR_ONLY_METHODS = ("value", "view", "dim", "tolist", "expand_as", "expand_dims", "asnumpy")
"""Array methods the frontend writes itself (MindSpore's value/view/dim, NumPy's tolist)."""
NUMPY_FUNCTION_METHODS = ("var", "std", "ravel", "swapaxes")
"""Array methods that are the NumPy function of the same name called on the array."""
"""MindSpore Tensor methods ndarrays lack: `p.value()` (the parameter itself), `x.view(*shape)`
(a reshape), `x.dim()` (the rank), `x.expand_as(y)`, `x.expand_dims(axis)`, `x.asnumpy()`."""


def shape_of(f: Frame, v: Value) -> tuple[Any, ...]:
    """x.shape: ints where the type knows the size, run-time values elsewhere: a symbolic size
    is a `dim` node (its value at run time, which shape arguments turn back into the symbol),
    an unknown one is read from the array."""
    dims = v.type.shape
    if all(isinstance(d, int) for d in dims):
        return tuple(dims)
    shape = f.op("shape", v) if UNKNOWN in dims else None
    return tuple(d if isinstance(d, int) else f.op("dim", value=d) if isinstance(d, Sym) else
                 f.op("tuple_getitem", shape, index=i) for i, d in enumerate(dims))


def _binop(f: Frame, node: gast.BinOp) -> Any:
    left = evaluate(f, node.left)
    right = evaluate(f, node.right)
    if isinstance(node.op, gast.Mod) and isinstance(left, str) and has_runtime(right):
        return _percent_format(f, left, right)
    return binary(f, type(node.op).__name__, left, right)


def _percent_format(f: Frame, template: str, right: Any) -> Any:
    """`"loss %.3f at %d" % (loss, i)` with run-time values: a `percent_format` node."""
    if isinstance(right, dict):
        raise f.error("%-formatting with a dict of run-time values is not supported",
                      "use an f-string: f\"{d['key']}\"")
    values = list(right) if isinstance(right, tuple) else [right]
    return f.op("percent_format", *(f.materialise(v) for v in values), template=template)


def _unaryop(f: Frame, node: gast.UnaryOp) -> Any:
    if isinstance(node.op, gast.Not):
        return unary(f, "Not", condition(f, node.operand))
    return unary(f, type(node.op).__name__, evaluate(f, node.operand))


def condition(f: Frame, node: gast.expr) -> Any:
    """The truth of `node` used as a test. `a and b` / `a or b` give truth values instead of
    operands there (Python only asks for the truth of what they give), so operands of
    different kinds combine (`x is not None and x.sum() > 0`, a tensor and None); an array
    whose truth is ambiguous raises where Python would, at run time."""
    if isinstance(node, gast.BoolOp):
        saved, f.at = f.at, node
        try:
            kind = type(node.op).__name__

            def rest(values: list[gast.expr]) -> Callable[[], Any]:
                def build() -> Any:
                    value = truth_value(f, condition(f, values[0]))
                    if len(values) == 1:
                        return value
                    return short_circuit(f, kind, value, rest(values[1:]))
                return build
            return rest(list(node.values))()
        finally:
            f.at = saved
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        return unary(f, "Not", condition(f, node.operand))
    return evaluate(f, node)


def truth_value(f: Frame, v: Any) -> Any:
    """Python's `bool(v)`: a Python bool when known now, else a run-time bool."""
    known = truth(v)
    if known is not None:
        return known
    cond = condition_value(f, v, at_run_time=True)
    return cond if cond.type == Scalar(bool) else f.op("bool", cond)


def _compare(f: Frame, node: gast.Compare) -> Any:
    left = evaluate(f, node.left)
    return _chain(f, left, list(node.ops), list(node.comparators))


def _chain(f: Frame, left: Any, ops: list, rights: list) -> Any:
    """`a < b < c` is `a < b and b < c` with b evaluated once, short-circuiting."""
    right = evaluate(f, rights[0])
    opname = type(ops[0]).__name__
    if opname in ("In", "NotIn") and isinstance(right, tuple | PyList) and (
            has_runtime(left) or has_runtime(right)):
        found = _contains(f, left, list(right if isinstance(right, tuple) else right.items))
        result = found if opname == "In" else unary(f, "Not", found)
    else:
        result = compare(f, opname, left, right)
    if len(ops) == 1:
        return result
    return short_circuit(f, "And", result, lambda: _chain(f, right, ops[1:], rights[1:]))


def _contains(f: Frame, needle: Any, items: list[Any]) -> Any:
    """`needle in items` for a compile-time tuple or list: Python tests item by item (the same
    object, else `item == needle` made a bool, so an array item compares by value and an
    ambiguous comparison raises), stopping at the first match."""
    if not items:
        return False
    item = items[0]
    found = True if item is needle else truth_value(f, compare(f, "Eq", item, needle))
    return short_circuit(f, "Or", found, lambda: _contains(f, needle, items[1:]))


def _boolop(f: Frame, node: gast.BoolOp) -> Any:
    kind = type(node.op).__name__

    def rest(values: list[gast.expr]) -> Callable[[], Any]:
        def build() -> Any:
            value = evaluate(f, values[0])
            if len(values) == 1:
                return value
            return short_circuit(f, kind, value, rest(values[1:]))
        return build
    return rest(list(node.values))()


def _named_expr(f: Frame, node: gast.NamedExpr) -> Any:
    """`(name := value)`: binds the name in the function's scope; its value is the result."""
    value = evaluate(f, node.value)
    f.scope.bind(node.target.id, value, getattr(node, "lineno", 0) or 0)
    return value


def _ifexp(f: Frame, node: gast.IfExp) -> Any:
    test = condition(f, node.test)
    known = truth(test)
    if known is not None:
        return evaluate(f, node.body if known else node.orelse)
    return choose(f, test, lambda: evaluate(f, node.body), lambda: evaluate(f, node.orelse))


def elements(f: Frame, nodes: list[gast.expr]) -> list[Any]:
    """The items of a tuple/list display or call arguments, `*seq` expanded."""
    out: list[Any] = []
    for node in nodes:
        if isinstance(node, gast.Starred):
            saved, f.at = f.at, node
            try:
                out.extend(as_sequence(f, evaluate(f, node.value)))
            finally:
                f.at = saved
        else:
            out.append(evaluate(f, node))
    return out


def _tuple(f: Frame, node: gast.Tuple) -> tuple[Any, ...]:
    return tuple(elements(f, node.elts))


def _list(f: Frame, node: gast.List) -> PyList:
    return PyList(elements(f, node.elts))


def _dict(f: Frame, node: gast.Dict) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, value in zip(node.keys, node.values):
        if key is None:
            extra = evaluate(f, value)
            if not isinstance(extra, dict):
                raise f.error(f"`**` needs a dict, got {describe(extra)}", node=value)
            out.update(extra)
            continue
        k = evaluate(f, key)
        if has_runtime(k):
            raise f.error("dict keys must be compile-time values", node=key)
        out[to_python(k)] = evaluate(f, value)
    return out


def _subscript(f: Frame, node: gast.Subscript) -> Any:
    base = evaluate(f, node.value)
    return getitem(f, base, evaluate(f, node.slice))


def _slice(f: Frame, node: gast.Slice) -> slice:
    def part(n: gast.expr | None) -> Any:
        return None if n is None else evaluate(f, n)
    return slice(part(node.lower), part(node.upper), part(node.step))


def _listcomp(f: Frame, node: gast.ListComp) -> Any:
    """A list comprehension: unrolled over a compile-time sequence (and an array's rows); over
    a range of run-time length, a run-time list, or an array's rows kept by `if`s, the loop it
    stands for, appending to a run-time list (its `if`s may then be run-time)."""
    first = evaluate(f, node.generators[0].iter)
    rows = isinstance(first, Value) and isinstance(first.type, Tensor)
    if isinstance(first, RuntimeRange | IndexedIter) or isinstance(first, Value) and isinstance(
            first.type, ListType) or rows and any(g.ifs for g in node.generators):
        return _comprehension_loop(f, node, first)
    return PyList(_comprehension(f, node, lambda: evaluate(f, node.elt), first))


def _comprehension_loop(f: Frame, node: gast.ListComp, first: Any) -> Value:
    """`[elt for t in it if c ...]` as `items = []; for t' in it: if c': items.append(elt')`,
    its targets renamed to names of its own (they do not leak, as in Python 3)."""
    f.compiler.comprehensions += 1
    number = f.compiler.comprehensions
    prefix = f"{SYNTHETIC_PREFIX}comp{number}_"
    items, iterable = prefix + "items", prefix + "iter"
    own = {name: prefix + name for g in node.generators for name in target_names(g.target)}

    def mine(tree: gast.AST) -> Any:
        tree = copy.deepcopy(tree)
        for n in gast.walk(tree):
            if isinstance(n, gast.Name) and n.id in own:
                n.id = own[n.id]
        return tree
    append = gast.Call(func=gast.Attribute(value=gast.Name(id=items, ctx=gast.Load(),
                                                           annotation=None, type_comment=None),
                                           attr="append", ctx=gast.Load()),
                       args=[mine(node.elt)], keywords=[])
    body: list[gast.stmt] = [gast.Expr(value=append)]
    for k in range(len(node.generators) - 1, -1, -1):
        gen = node.generators[k]
        for cond in reversed(gen.ifs):
            body = [gast.If(test=mine(cond), body=body, orelse=[])]
        source = gast.Name(id=iterable, ctx=gast.Load(), annotation=None,
                           type_comment=None) if k == 0 else mine(gen.iter)
        body = [gast.For(target=mine(gen.target), iter=source, body=body, orelse=[],
                         type_comment=None)]
    loop = body[0]
    for n in gast.walk(loop):  # NOTE: errors inside point at the comprehension
        if "lineno" in n._attributes:
            for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(n, attr, getattr(node, attr, None))
    f.scope.bind(iterable, first, node.lineno)
    f.scope.bind(items, PyList([]), node.lineno)
    read = frozenset(n.id for n in gast.walk(f.stmt) if isinstance(n, gast.Name)) \
        if f.stmt is not None else frozenset()
    saved_live, saved_stmt = f.live, f.stmt
    f.live = ([loop], 0, f.live_after() | read | {items})
    try:
        f.set_stmt(loop)
        f.compiler.rules.statements[gast.For](f, loop)
    finally:
        f.live = saved_live
        if saved_stmt is not None:
            f.set_stmt(saved_stmt)
    result = f.scope.get(items)
    for name in (items, iterable, *own.values()):
        if f.scope.get(name) is not MISSING:
            f.scope.unbind(name)
    return f.materialise(result)


def _genexp(f: Frame, node: gast.GeneratorExp) -> tuple[Any, ...]:
    """A generator expression, built into the items it generates (what `sum(...)`,
    `any(...)`, `tuple(...)` or a `for` consume), in order."""
    return tuple(_comprehension(f, node, lambda: evaluate(f, node.elt)))


def _dictcomp(f: Frame, node: gast.DictComp) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, value in _comprehension(f, node, lambda: (evaluate(f, node.key),
                                                        evaluate(f, node.value))):
        if has_runtime(key):
            raise f.error("dict keys must be compile-time values", node=node.key)
        out[to_python(key)] = value
    return out


def _comprehension(f: Frame, node: Any, element: Callable[[], Any], first: Any = MISSING
                   ) -> list[Any]:
    """The elements of a comprehension over compile-time sequences (unrolled while building);
    its loop variables are its own, as in Python 3. `first`: its first iterable, already
    evaluated."""
    bound = set().union(*(target_names(g.target) for g in node.generators))
    saved = {name: f.scope.get(name) for name in bound}
    out: list[Any] = []

    def generate(i: int) -> None:
        if i == len(node.generators):
            out.append(element())
            return
        gen = node.generators[i]
        iterable = first if i == 0 and first is not MISSING else evaluate(f, gen.iter)
        for item in as_sequence(f, iterable):
            f.assign(gen.target, item)
            if all(_filter(f, cond) for cond in gen.ifs):
                generate(i + 1)
    try:
        generate(0)
    finally:
        for name, value in saved.items():
            if value is MISSING:
                f.scope.unbind(name)
            else:
                f.scope.vars[name] = value
    return out


def _filter(f: Frame, cond: gast.expr) -> bool:
    known = truth(evaluate(f, cond))
    if known is None:
        raise f.error("a comprehension's `if` must be decidable when compiling",
                      "filter with a compile-time condition, or use np.where on arrays",
                      node=cond)
    return known


_CONVERSIONS = {-1: lambda v: v, 115: str, 114: repr, 97: ascii}


def _joinedstr(f: Frame, node: gast.JoinedStr) -> Any:
    """An f-string: text when every part is known now, else a `format` node (when the op
    registry has one) over a `str.format` template."""
    template, values = [], []
    for value in node.values:
        if isinstance(value, gast.Constant):
            template.append(str(value.value).replace("{", "{{").replace("}", "}}"))
            continue
        inner = evaluate(f, value.value)
        spec = _joinedstr(f, value.format_spec) if value.format_spec is not None else ""
        if has_runtime(spec):
            raise f.error("a format spec must be known when compiling", node=value)
        if not has_runtime(inner):
            text = format(_CONVERSIONS[value.conversion](to_python(inner)), spec)
            template.append(text.replace("{", "{{").replace("}", "}}"))
            continue
        conversion = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[value.conversion]
        template.append("{" + conversion + (":" + spec if spec else "") + "}")
        values.append(inner)
    text = "".join(template)
    if not values:
        return text.replace("{{", "{").replace("}}", "}")
    return format_at_run_time(f, text, values)


HANDLERS: dict[type, Callable[[Frame, Any], Any]] = {
    gast.Constant: _constant, gast.Name: _name, gast.Attribute: _attribute,
    gast.BinOp: _binop, gast.UnaryOp: _unaryop, gast.Compare: _compare, gast.BoolOp: _boolop,
    gast.NamedExpr: _named_expr, gast.IfExp: _ifexp, gast.Tuple: _tuple, gast.List: _list, gast.Dict: _dict,
    gast.Subscript: _subscript, gast.Slice: _slice, gast.ListComp: _listcomp,
    gast.GeneratorExp: _genexp, gast.DictComp: _dictcomp,
    gast.JoinedStr: _joinedstr,
}
"""Expression handlers by node class; `builder.py` adds calls (`calls.HANDLERS`)."""
