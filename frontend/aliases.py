"""In-place writes through aliases. The IR threads `x[i] = v` as a new value `x2 = setitem(x, v)`,
but at run time `x2` is `x`'s buffer: after the write, every name that may see that memory (the
same value under another name, a view of it, the array a view was taken from, an instance
parameter, a caller's variable) is rebound to a version ordered after the write, so no pass
reuses or moves a read from before it. A name bound to another value that may share memory gets
`depend(value, x2)`: the same object, read only once the write happened."""
from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol

import numpy as np

from ..graph import ListType, NoneType, Scalar, StrType, Tensor, Value
from ..graph.types import same_tuple_kind
from ..ops import indexing
from ..ops.types import keeps_class
from ..ops import python as pyops
from . import names
from .values import MISSING, Instance, PyList, has_runtime


class Frame(Protocol):
    """What this module needs of a frame (`context.Frame`, which imports this module)."""
    compiler: Any
    scope: Any

    def op(self, op: Any, *inputs: Value, name: str = "", **attrs: Any) -> Value: ...

    def writable(self, container: Any) -> None: ...

    def error(self, message: str, hint: str = "") -> Exception: ...

NO_MEMORY = (Scalar, NoneType, StrType)
"""Types of values that never share memory with anything (immutable Python objects)."""


@dataclass
class Memory:
    """What one build knows about aliasing (shared by every frame)."""
    roots: dict[Value, frozenset[Value]] = field(default_factory=dict)
    """Memo of `roots`."""
    extra: dict[Value, frozenset[Value]] = field(default_factory=dict)
    """Block parameter -> what else it may alias (a loop variable: its initial value's roots)."""
    states: dict[Value, str] = field(default_factory=dict)
    """Graph input of an instance array -> the scope name holding its current version."""
    defaults: dict[str, Any] = field(default_factory=dict)
    """State name -> the graph input (its version until the first write); `Scope.fallback`."""
    zero_d: dict[Value, Any] = field(default_factory=dict)
    """0-d value -> ARRAY, TENSOR, SCALAR, MIXED, ANY or BOTTOM (see `zero_d_kind`); inputs and
    loop parameters are entered by whoever makes them. Arrays of rank >= 1 are entered only
    once a class-keeping array (TENSOR) has been seen."""
    tensor_class: type | None = None
    """The class-keeping ndarray subclass (amber's `Tensor`) met in this build, if any: from
    then on every value's kind is followed as it is made (see `note_result`)."""


def roots(f: Frame, v: Value) -> frozenset[Value]:
    """The allocations `v` may share memory with: the fresh arrays, graph inputs and block
    parameters it is, views or holds (empty for Python scalars, None and strings)."""
    memo = f.compiler.memory.roots
    if v in memo:
        return memo[v]
    stack = [v]  # NOTE: iterative, so long chains of writes never hit the recursion limit
    while stack:
        top = stack[-1]
        if top in memo:
            stack.pop()
            continue
        sources = _sources(top)
        missing = [s for s in sources if s not in memo]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        memo[top] = _combine(f, top, sources)
    return memo[v]


def _sources(v: Value) -> tuple[Value, ...]:
    """The values whose memory `v` may share (empty: `v` is an allocation of its own)."""
    node = v.producer
    if node is None or isinstance(v.type, NO_MEMORY):
        return ()
    if node.is_region:
        return tuple(node.incoming(v.index))
    if node.op.fresh or _scalar_item(node):
        return ()
    if node.op.same_object and isinstance(v.type, Tensor):  # NOTE: other ops may view any input
        return (node.inputs[0],)
    return node.inputs


def _scalar_item(node: Any) -> bool:
    """`x[i, j]` giving one element: NumPy returns a copy (a scalar), not a view."""
    if node.op is not indexing.getitem or not isinstance(node.output.type, Tensor):
        return False
    parts = node.attrs["index"]
    return node.output.type.rank == 0 and not any(
        p is None or p is Ellipsis or isinstance(p, slice) for p in parts)


def _combine(f: Frame, v: Value, sources: tuple[Value, ...]) -> frozenset[Value]:
    if isinstance(v.type, NO_MEMORY):
        return frozenset()
    memo = f.compiler.memory.roots
    found = frozenset().union(*(memo[s] for s in sources))
    if v.producer is None:
        return found | {v} | f.compiler.memory.extra.get(v, frozenset())
    return found or frozenset([v])


def share(f: Frame, param: Value, init: Any, others: list[Value]) -> None:
    """Loop parameter `param` starts as `init`, so it may alias whatever `init` does, and
    `others` (arrays from outside the loop and other parameters of its block)."""
    found = roots(f, init) if isinstance(init, Value) else frozenset()
    for other in others:
        found |= {other} if other.owner is param.owner else roots(f, other)
    f.compiler.memory.extra[param] = found


# -- 0-d values: arrays or NumPy scalars --------------------------------------------------------

ARRAY, SCALAR, MIXED = "array", "scalar", "mixed"
"""What a 0-d value is at run time: an ndarray (a write through any name reaches it, as
`b = np.array(3); t = b; t -= 1` changes b), an immutable NumPy scalar (`x.sum()`, `x[0]`,
`a + 1`; `t -= 1` rebinds t), or one or the other depending on the path taken."""
TENSOR, ANY = "tensor", "any"
"""An array of a class-keeping ndarray subclass (amber's `Tensor`): NumPy gives results of its
class, so `t + 1`, `t.sum()`, `t < 3` are 0-d arrays where a plain array gives NumPy scalars.
Generated code holds plain arrays, so such a 0-d result is made an array there too (see
`note_result`). ANY: a Tensor on some paths, a plain array or a NumPy scalar on others."""
BOTTOM = "bottom"
"""No value (an unbound name): the identity of `join_kinds`."""
SAMPLE_LIMIT = 100_000
"""Inputs with more elements than this are sampled with each dimension cut to 2."""


def note_input(memory: Memory, v: Value, obj: Any) -> Value:
    """Graph input `v` carries `obj`: an array (of a class-keeping subclass or not), or a
    NumPy scalar (immutable)."""
    memory.zero_d[v] = kind_of_object(memory, obj)
    return v


def kind_of_object(memory: Memory, obj: Any) -> str:
    """The kind of a compile-time object (noting a class-keeping array's class)."""
    if not isinstance(obj, np.ndarray):
        return SCALAR
    if keeps_class(obj):
        memory.tensor_class = memory.tensor_class or type(obj)
        return TENSOR
    return ARRAY


def note_tensor(memory: Memory, v: Value, tensor_class: type) -> Value:
    """`v` is a new array of the class-keeping `tensor_class` in eager code (`Tensor(x)`)."""
    memory.tensor_class = memory.tensor_class or tensor_class
    memory.zero_d[v] = TENSOR
    return v


def is_array_kind(kind: str) -> bool:
    """True if a 0-d value of this kind is an array on every path."""
    return kind in (ARRAY, TENSOR)


def is_mixed_kind(kind: str) -> bool:
    """True if a 0-d value of this kind is an array on some paths and a scalar on others."""
    return kind in (MIXED, ANY)


def join_kinds(a: str, b: str) -> str:
    """The kind of a value that is `a` on one path and `b` on another."""
    if a == BOTTOM or b in (BOTTOM, a):
        return b if a == BOTTOM else a
    return ANY if TENSOR in (a, b) or ANY in (a, b) else MIXED


def note_result(f: Frame, value: Value) -> Value:
    """Follow the kind of the array `value` just made, once a class-keeping array has been
    seen: an op on a Tensor gives a Tensor (a view, a write: the input's kind). A 0-d result
    that is a Tensor in eager code is a NumPy scalar in generated code (which holds plain
    arrays): it is made a 0-d array, so a write through another name reaches it as in eager
    code. Returns the value to use."""
    memory = f.compiler.memory
    node = value.producer
    if node is None or value in memory.zero_d:
        return value
    if node.op is pyops.constant:
        memory.zero_d[value] = kind_of_object(memory, node.attrs["value"])
        return value
    if memory.tensor_class is None:
        return value
    kinds = {zero_d_kind(f, x) for x in node.inputs if isinstance(x.type, Tensor)}
    if not kinds & {TENSOR, ANY}:
        return value
    if node.op.same_object or node.op.writes is not None:
        memory.zero_d[value] = zero_d_kind(f, node.inputs[0])
        return value
    if value.type.rank:
        memory.zero_d[value] = TENSOR if TENSOR in kinds else ANY
        return value
    kind = _sampled(f, node)
    memory.zero_d[value] = kind
    if kind != TENSOR:
        return value
    made = f.op("array", value)
    memory.zero_d[made] = TENSOR
    return made


def zero_d_kind(f: Frame, v: Value) -> str:
    """What the 0-d value `v` is at run time (ARRAY, SCALAR, MIXED; BOTTOM if unbound);
    Python scalars, strings and None count as SCALAR (immutable), arrays of rank >= 1 as
    ARRAY. Decided like NumPy by running the producing op's kernel on sample inputs."""
    memo = f.compiler.memory.zero_d
    found = memo.get(v)
    if found is not None:
        return found
    t = v.type
    if isinstance(t, NO_MEMORY):
        kind = SCALAR
    elif isinstance(t, ListType):
        kind = _list_kind(f, v)
    elif not isinstance(t, Tensor):
        kind = BOTTOM if _is_undefined(v) else MIXED
    elif t.rank and f.compiler.memory.tensor_class is None:
        kind = ARRAY
    else:
        kind = _zero_d_kind(f, v)
        if t.rank and kind == MIXED:
            kind = ANY  # NOTE: an array of rank >= 1 is an array: only its class is unknown
    memo[v] = kind
    return kind


def _is_undefined(v: Value) -> bool:
    return v.producer is not None and v.producer.op is pyops.undefined


def _zero_d_kind(f: Frame, v: Value) -> str:
    node = v.producer
    if node is None:  # NOTE: inputs and loop parameters are entered when made; else unknown
        region = getattr(v.owner, "owner_node", None)
        slot = region.slot_of(v) if region is not None else None
        if slot is None:
            return MIXED
        return _join_all(f, region.incoming(slot))
    if node.is_region:
        return _join_all(f, node.incoming(v.index))
    if node.op is pyops.constant:
        return kind_of_object(f.compiler.memory, node.attrs["value"])
    if node.op.same_object or node.op.writes is not None:
        return zero_d_kind(f, _viewed(f, node.inputs[0]))
    if v.type.rank:  # NOTE: made before a Tensor was seen, or outside `Frame.op`
        inputs = {_input_kind(f, x) for x in node.inputs if isinstance(x.type, Tensor)}
        return TENSOR if TENSOR in inputs else ANY if ANY in inputs else ARRAY
    if node.op is pyops.tuple_getitem:
        source = node.inputs[0].producer
        if source is not None and source.op is pyops.make_tuple:
            return zero_d_kind(f, source.inputs[node.attrs["index"]])
        return MIXED
    if node.op is indexing.getitem and isinstance(node.inputs[0].type, ListType):
        return zero_d_kind(f, node.inputs[0])  # NOTE: an item: the kind of the list's items
    return _sampled(f, node)


def _viewed(f: Frame, v: Value) -> Value:
    """Where a chain of views and in-place writes of `v` starts (followed iteratively: the
    writes of an unrolled loop make long chains)."""
    memo, node = f.compiler.memory.zero_d, v.producer
    while node is not None and v not in memo and not node.is_region and (
            node.op.same_object or node.op.writes is not None):
        v = node.inputs[0]
        node = v.producer
    return v


def _input_kind(f: Frame, x: Value) -> str:
    """The kind of an input of an array op made before a Tensor was seen. An array made by an
    op since then without a Tensor input is plain (`note_result` enters the others)."""
    memo, node = f.compiler.memory.zero_d, x.producer
    if x in memo:
        return memo[x]
    views = node is not None and (node.op.same_object or node.op.writes is not None)
    if x.type.rank and node is not None and not node.is_region and \
            node.op is not pyops.constant and not views:
        return ARRAY
    return zero_d_kind(f, x)


LIST_ITEMS = {"list_new": slice(None), "list_append": slice(0, 2), "list_insert": slice(0, 3, 2),
              "setitem": slice(0, 2), "list_extend": slice(0, 2), "list_concat": slice(0, 2),
              "list_copy": slice(0, 1), "list_delete": slice(0, 1)}
"""List op -> the inputs whose items it holds (lists by their item kind, items by theirs)."""


def _list_kind(f: Frame, v: Value) -> str:
    """The kind of a run-time list's 0-d items (an append of an array keeps it an array)."""
    node = v.producer
    if node is None or node.is_region:
        return _zero_d_kind(f, v)
    if node.op is pyops.constant:
        return _join_all_kinds(kind_of_object(f.compiler.memory, x)
                               for x in node.attrs["value"])
    if node.op.same_object:
        return zero_d_kind(f, node.inputs[0])
    held = LIST_ITEMS.get(node.op.name)
    if held is None:
        return MIXED
    return _join_all(f, node.inputs[held])


def _join_all_kinds(kinds: Any) -> str:
    kind = BOTTOM
    for k in kinds:
        kind = join_kinds(kind, k)
    return kind


def _join_all(f: Frame, values: Any) -> str:
    kind = BOTTOM
    for value in values:
        kind = join_kinds(kind, zero_d_kind(f, value))
    return kind


def _sampled(f: Frame, node: Any) -> str:
    """Run the op's kernel on sample inputs of the right types and kinds: ARRAY or SCALAR when
    every choice for MIXED inputs gives the same answer, else MIXED."""
    if node.effectful:
        return MIXED
    choices = []
    for x in node.inputs:
        options = _samples(f, x)
        if not options:
            return MIXED
        choices.append(options)
    attrs = {k: a for k, a in node.attrs.items() if not k.startswith("__")}
    found = set()
    for combo in itertools.product(*choices):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out = node.op.kernel(*combo, **attrs)
        except Exception:  # NOTE: any failure on made-up data: nothing is known
            return MIXED
        found.add(TENSOR if keeps_class(out) else ARRAY if isinstance(out, np.ndarray)
                  else SCALAR)
    return _join_all_kinds(found)


def _samples(f: Frame, x: Value) -> list[Any]:
    """Values standing for `x` when sampling a kernel (both kinds for a MIXED 0-d value)."""
    t = x.type
    if isinstance(t, Scalar):
        return [t.kind(0)]  # NOTE: zeros: always a valid index
    if isinstance(t, NoneType):
        return [None]
    if isinstance(t, StrType):
        return [""]
    if not isinstance(t, Tensor):
        return []
    kind = zero_d_kind(f, x)
    if t.rank:
        shape = tuple(d if isinstance(d, int) else 1 for d in t.shape)
        if math.prod(shape) > SAMPLE_LIMIT:
            shape = tuple(min(d, 2) for d in shape)
        array = np.zeros(shape, t.dtype)
        tensor = [] if kind == ARRAY else [array.view(f.compiler.memory.tensor_class)]
        return tensor if kind == TENSOR else [array, *tensor]
    array, scalar = np.zeros((), t.dtype), t.dtype.type(0)
    tensor = [array.view(f.compiler.memory.tensor_class)] if kind in (TENSOR, ANY) else []
    return {ARRAY: [array], SCALAR: [scalar], TENSOR: tensor}.get(kind, [array, scalar, *tensor])


# -- writes -------------------------------------------------------------------------------------

def writes_in(block: Any) -> bool:
    """True if `block` (or a region in it) writes an array or list in place."""
    return any(any(writes_in(b) for b in n.blocks) if n.is_region else n.op.writes is not None
               for n in block.nodes)


def after_write(f: Frame, node: Any) -> None:
    """`node` wrote one of its inputs in place: rebind every name that may see that memory
    (in this frame's scope, which carries the caller's names and instance arrays along: see
    `enter`) to a version after the write."""
    written, new = node.inputs[node.op.writes], node.output
    if isinstance(written.type, Tensor):
        hit = roots(f, written)

        def touched(v: Value) -> bool:
            return not hit.isdisjoint(roots(f, v))
    else:  # a run-time list: the names holding this very list see the change
        hit = frozenset()

        def touched(v: Value) -> bool:
            return False
    versions: dict[Value, Value] = {written: new}

    def version(v: Value) -> Value:
        out = versions.get(v)
        if out is None:
            out = versions[v] = f.op("depend", v, new, name=v.name) if touched(v) else v
        return out
    scope = f.scope
    made: dict[int, Any] = {}
    for name, value in list(scope.vars.items()):
        if name == names.RETURN_VALUE:
            # NOTE: a path that set the return value runs no more code, so no write reaches
            # what it returns; on the other paths the slot is unbound (reading it to make a
            # version after the write would read an unbound variable)
            continue
        changed = _rebuild(value, made, version)
        if changed is not value:
            scope.vars[name] = changed
    for root, state in f.compiler.memory.states.items():  # NOTE: in a deterministic order
        if root in hit and state not in scope.vars:
            scope.vars[state] = version(root)


# -- compile-time containers ------------------------------------------------------------------

def holds_container(v: Any) -> bool:
    """True if `v` is or holds a compile-time list or dict (which a write may replace)."""
    if isinstance(v, PyList | dict | Instance):
        return True
    return isinstance(v, tuple) and any(holds_container(x) for x in v)


def replace_object(f: Frame, old: Any, new: Any) -> None:
    """A compile-time dict is updated functionally (a branch or loop body never changes the one
    bound outside it): after `d[k] = v` built `new` from `old`, every name holding `old`, also
    inside tuples, lists and dicts, holds `new`, as every name of one Python dict sees a write."""
    if any(_holds(item, old) for item in _items(new)):
        kind = "a list" if isinstance(old, PyList) else "a dict" if isinstance(old, dict) \
            else f"a {type(old).__name__}" if not isinstance(old, Instance) \
            else f"a {old.cls.__name__} object"
        raise f.error(f"this puts {kind} into itself, which compiled code cannot express (it "
                      "would hold a copy made before the write)",
                      "keep what you need from it instead (e.g. `items.append(list(items))`)")
    memo: dict[int, Any] = {id(old): new}
    for name, value in list(f.scope.vars.items()):
        changed = _replace(value, memo)
        if changed is not value:
            f.scope.vars[name] = changed
    f.compiler.rules.replaced(f, old, new)  # NOTE: the caller's object, if it is one


def own_array(f: Frame, array: np.ndarray) -> Value:
    """An array built while compiling (`np.array([1.0, 2.0])`) that is about to be written in
    place: a fresh run-time copy of it, which every name holding the array now holds."""
    f.writable(array)
    for value in f.scope.vars.values():
        for other in _arrays_in(value):
            if other is not array and np.may_share_memory(other, array):
                raise f.error("this writes into an array built while compiling that another "
                              "name views (e.g. `v = a[1:]`)",
                              "copy it first (`a = a.copy()`), or build it from run-time values")
    copy = f.op("copy", f.op("constant", value=array))
    replace_object(f, array, copy)
    return copy


def _arrays_in(v: Any) -> list[np.ndarray]:
    if isinstance(v, np.ndarray):
        return [v]
    return [a for x in _items(v) for a in _arrays_in(x)]


def _items(v: Any) -> Iterable[Any]:
    """What compile-time container `v` holds (nothing for other values)."""
    return v.items if isinstance(v, PyList) else v.values() if isinstance(v, dict) else \
        v.fields.values() if isinstance(v, Instance) else \
        v if isinstance(v, tuple) else ()


def _holds(v: Any, target: Any) -> bool:
    """True if `v` is `target` or holds it, however deep."""
    return v is target or any(_holds(x, target) for x in _items(v))


def _replace(v: Any, memo: dict[int, Any]) -> Any:
    """`v` with the objects keyed (by id) in `memo` replaced, rebuilding what holds them."""
    return _rebuild(v, memo)


def _rebuild(v: Any, memo: dict[int, Any], version: Callable[[Value], Value] | None = None
             ) -> Any:
    """`v` with the objects keyed (by id) in `memo` replaced and each run-time value by its
    `version`, rebuilding what holds them. A rebuilt container is made once (remembered in
    `memo`), so every name holding one list, dict, object or tuple holds one new one, as every
    name of a Python object sees a write into it."""
    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, Value):
        return v if version is None else version(v)
    if isinstance(v, tuple) and v:
        items = same_tuple_kind(v, [_rebuild(x, memo, version) for x in v])
        out = v if all(a is b for a, b in zip(items, v)) else items
    elif isinstance(v, dict) and v:
        items = {k: _rebuild(x, memo, version) for k, x in v.items()}
        out = v if all(items[k] is x for k, x in v.items()) else items
    elif isinstance(v, Instance) and v.fields:
        items = {k: _rebuild(x, memo, version) for k, x in v.fields.items()}
        out = v if all(items[k] is x for k, x in v.fields.items()) else v.with_fields(items)
    elif isinstance(v, PyList) and v.items:
        items = [_rebuild(x, memo, version) for x in v.items]
        out = v if all(a is b for a, b in zip(items, v.items)) else PyList(items)
    else:
        return v
    memo[id(v)] = out
    return out


# -- instance arrays and inlined calls ----------------------------------------------------------

def current(f: Frame, key: str, value: Value) -> Value:
    """The current version of graph input `value` (an instance array at path `key`)."""
    memory = f.compiler.memory
    state = memory.states.get(value)
    if state is None:
        state = memory.states[value] = names.STATE.format(key)
        memory.defaults[state] = value
    found = f.scope.get(state)
    return found if isinstance(found, Value) else value


def enter(f: Frame, callee: Frame) -> dict[str, tuple[str, Any]]:
    """Give an inlined callee the caller's run-time names and containers (as `names.OUTER`
    names) and the instance arrays' versions, so its writes reach them; returns what `leave`
    needs."""
    passed: dict[str, tuple[str, Any]] = {}
    for name, value in f.scope.vars.items():
        if value is MISSING or not (has_runtime(value) or holds_container(value)
                                    or names.is_state(name)):
            continue
        inner = name if names.is_state(name) else names.OUTER.format(name)
        callee.scope.vars[inner] = value
        passed[inner] = (name, value)
    return passed


def leave(f: Frame, callee: Frame, passed: dict[str, tuple[str, Any]]) -> None:
    """After the callee: the caller's names take the versions the callee left them with."""
    for inner, value in callee.scope.vars.items():
        name, before = passed.get(inner, (inner, MISSING))
        if value is before or value is MISSING:
            continue
        if inner in passed or names.is_state(inner):
            f.scope.vars[name] = value

