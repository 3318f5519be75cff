"""In-place writes through aliases. The IR threads `x[i] = v` as a new value `x2 = setitem(x, v)`,
but at run time `x2` is `x`'s buffer: after the write, every name that may see that memory (the
same value under another name, a view of it, the array a view was taken from, an instance
parameter, a caller's variable) is rebound to a version ordered after the write, so no pass
reuses or moves a read from before it. A name bound to another value that may share memory gets
`depend(value, x2)`: the same object, read only once the write happened."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ..graph import NoneType, Scalar, StrType, Tensor, Value
from ..ops import indexing
from . import names
from .values import MISSING, PyList, has_runtime


class Frame(Protocol):
    """What this module needs of a frame (`context.Frame`, which imports this module)."""
    compiler: Any
    scope: Any

    def op(self, op: Any, *inputs: Value, name: str = "", **attrs: Any) -> Value: ...

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
    lists: dict[int, PyList] = {}
    for name, value in list(scope.vars.items()):
        changed = _substitute(value, version, lists)
        if changed is not value:
            scope.vars[name] = changed
    for root, state in f.compiler.memory.states.items():  # NOTE: in a deterministic order
        if root in hit and state not in scope.vars:
            scope.vars[state] = version(root)


def _substitute(v: Any, version: Callable[[Value], Value], lists: dict[int, PyList]) -> Any:
    """`v` with each run-time value replaced by its version (the same object if none changed;
    a compile-time list changes into a new list, the same for every name holding it)."""
    if isinstance(v, Value):
        return version(v)
    if isinstance(v, tuple) and v:
        items = tuple(_substitute(x, version, lists) for x in v)
        return v if all(a is b for a, b in zip(items, v)) else items
    if isinstance(v, dict) and v:
        items = {k: _substitute(x, version, lists) for k, x in v.items()}
        return v if all(items[k] is x for k, x in v.items()) else items
    if isinstance(v, PyList) and v.items:
        if id(v) not in lists:
            items = [_substitute(x, version, lists) for x in v.items]
            same = all(a is b for a, b in zip(items, v.items))
            lists[id(v)] = v if same else PyList(items)
        return lists[id(v)]
    return v


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
    """Give an inlined callee the caller's run-time names (as `names.OUTER` names) and the
    instance arrays' versions, so its writes reach them; returns what `leave` needs."""
    passed: dict[str, tuple[str, Any]] = {}
    for name, value in f.scope.vars.items():
        if value is MISSING or not (has_runtime(value) or isinstance(value, PyList)):
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

