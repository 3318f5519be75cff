"""Loop-carried variables while a loop region is built: each `Carry` starts as what the
variable is before the loop and is widened, round by round, until the body yields what it
takes (see loops). Tuples, lists and dicts are carried item by item; one list or dict held by
several names (or inside another) is one carry, so a write through one name is seen through
every other inside the loop as well."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from ..graph import AnyType, Block, InsertPoint, Node, Tensor, TupleType, Type, Value
from ..graph.analysis import writes_an_array
from ..graph.types import tuple_class, tuple_of_class
from . import aliases, names
from .context import Frame, KindChanges, NeedsUnrolling, Scope, tuple_items
from .control import Branch, changed_names, defined_in, same_constant
from .seeds import CarryState, Seeding
from .values import (MISSING, Instance, PyList, Unusable, absent, describe, has_runtime,
                     holds_instance, is_undefined, kind_name, static_type, widen)


@dataclass(eq=False)
class Carry:
    """A loop-carried variable: a compile-time constant while the body leaves it unchanged
    ("const"), unbound before the loop ("unbound"), a block parameter of `type` ("var"), or a
    tuple whose items are carried one by one ("tuple"; tuples never become run-time values, so
    no node reads an item that is unbound on some path)."""
    name: str
    init: Any
    state: CarryState
    type: Type | None = None
    items: list[Carry] = field(default_factory=list)
    keys: tuple[Any, ...] | None = None
    """For a dict carried item by item: its keys (None for a tuple or list)."""
    tuple_cls: type = tuple
    """For a tuple carried item by item: its class (`tuple` or a namedtuple class)."""
    instance: Instance | None = None
    """For an object made in compiled code, carried attribute by attribute (`keys`): a version
    of it (its class and identity)."""
    is_list: bool = False
    """A compile-time list carried item by item (its length stays the same)."""
    same_as: Carry | None = None
    """For a name holding the same list or dict as another carried name: that carry (the two
    are one in every round: one entry value, one end, one value after the loop)."""
    param: Value | None = None
    """This round's block parameter (state "var")."""
    kind: str = aliases.BOTTOM
    """For a 0-d array variable (state "var"): whether it is an array or a NumPy scalar on
    entry and at the end of every iteration (see `aliases.zero_d_kind`)."""
    owner: str = ""
    """For a list or dict the caller owns (an argument, a global): whose it is. The containers
    standing for it in the loop are the caller's too, so writes into them stay refused."""
    caller: Any = None
    """For the caller's list or dict compiled code writes through: its `effects.Owner`, which
    the containers standing for it in the loop get too (writes into them reach the caller)."""
    shares: frozenset[Any] = frozenset()
    """What the variable was found to alias at the end of an iteration besides what it started
    as: other carries (as `Carry`s) and arrays from outside the loop (see `_shared`)."""

    @property
    def key(self) -> int:
        """What identifies the carried object (the same for names holding one list or dict)."""
        return id(self.same_as) if self.same_as is not None else id(self)

    def container(self, f: Frame, items: list[Any]) -> tuple | dict | PyList:
        if self.is_list:
            made: Any = PyList(list(items))
        elif self.instance is not None:
            made = self.instance.with_fields(dict(zip(self.keys, items)))
        else:
            made = dict(zip(self.keys, items)) if self.keys is not None else tuple_of_class(
                self.tuple_cls, items)
        if self.caller is not None:
            f.compiler.owners[id(made)] = (made, self.caller)
        return f.compiler.mark_foreign(made, self.owner) if self.owner else made

    def parts(self, end: Any) -> list[Any] | None:
        """The items of `end` in this carry's order, if it has this carry's structure."""
        if self.is_list:
            fits = isinstance(end, PyList) and len(end.items) == len(self.items)
            return list(end.items) if fits else None
        if self.instance is not None:
            fits = isinstance(end, Instance) and end.ident is self.instance.ident and \
                end.fields.keys() == set(self.keys)
            return [end.fields[k] for k in self.keys] if fits else None
        if self.keys is None:
            fits = isinstance(end, tuple) and len(end) == len(self.items) and tuple_class(
                end) is self.tuple_cls
            return list(end) if fits else None
        if isinstance(end, dict) and end.keys() == set(self.keys):
            return [end[k] for k in self.keys]
        return None

    def leaves(self, seen: set[int] | None = None) -> list[Carry]:
        """The block parameters this variable needs, in order (a carry reached twice, a list
        or dict held by two names, once)."""
        seen = set() if seen is None else seen
        if self.key in seen:
            return []
        seen.add(self.key)
        if self.same_as is not None:
            seen.discard(self.key)
            return self.same_as.leaves(seen)
        if self.state == CarryState.TUPLE:
            return [leaf for item in self.items for leaf in item.leaves(seen)]
        return [self] if self.state == CarryState.VAR else []


def _nothing_to_carry(f: Frame, v: Any) -> bool:
    """No value enters the loop: absent, undefined on some path, or unusable."""
    return absent(v, f.pending_is_none) or is_undefined(v) or isinstance(v, Unusable)


def _carry(f: Frame, name: str, init: Any, seen: dict[int, Carry]) -> Carry:
    """The carry of `init`; `seen` (id -> carry) makes one list or dict one carry, however many
    names and containers hold it."""
    if isinstance(init, dict | PyList | Instance) and id(init) in seen:
        first = seen[id(init)]
        return Carry(name, init, first.state, same_as=first.same_as or first)
    if isinstance(init, Instance):
        c = seen[id(init)] = Carry(name, init, CarryState.TUPLE, keys=tuple(init.fields),
                                   instance=init)
        c.items = [_carry(f, name, x, seen) for x in init.fields.values()]
        return c
    if _nothing_to_carry(f, init):
        return Carry(name, init, CarryState.UNBOUND)
    if isinstance(init, Value) and isinstance(init.type, TupleType):
        init = tuple_items(f, init)
    if isinstance(init, tuple):
        return Carry(name, init, CarryState.TUPLE,
                     items=[_carry(f, name, x, seen) for x in init], tuple_cls=tuple_class(init))
    if isinstance(init, dict | PyList):
        found = f.compiler.foreign.get(id(init))
        c = seen[id(init)] = Carry(name, init, CarryState.TUPLE,
                                   keys=tuple(init) if isinstance(init, dict) else None,
                                   is_list=isinstance(init, PyList),
                                   owner=found[1] if found and found[0] is init else "")
        caller = f.compiler.owners.get(id(init))
        c.caller = caller[1] if caller is not None and caller[0] is init else None
        values = init.values() if isinstance(init, dict) else init.items
        c.items = [_carry(f, name, x, seen) for x in values]
        return c
    if isinstance(init, Value):
        return Carry(name, init, CarryState.VAR, init.type, kind=_kind_of(f, init))
    return Carry(name, init, CarryState.CONST)


def _seen(carries: list[Carry]) -> dict[int, Carry]:
    """id of each list or dict the carries hold -> its carry."""
    found: dict[int, Carry] = {}
    todo = list(carries)
    while todo:
        c = todo.pop()
        if c.state == CarryState.TUPLE:
            if isinstance(c.init, dict | PyList | Instance) and id(c.init) not in found:
                found[id(c.init)] = c
            todo.extend(c.items)
    return found


def make_carries(f: Frame, candidates: set[str], existing: list[Carry] = ()) -> list[Carry]:
    """Carries for the names `candidates`, sharing the lists and dicts `existing` carry, plus
    the other names holding one of the lists and dicts they carry (`e = d` before a loop
    that writes `d[k]`: e sees the writes)."""
    seen = _seen(list(existing))
    done = {c.name for c in existing}
    out: list[Carry] = []
    todo = sorted(set(candidates) - done)
    while todo:
        for name in todo:
            out.append(_carry(f, name, f.scope.get(name), seen))
            done.add(name)
        # NOTE: an object made in compiled code is always carried: a method may write it
        todo = sorted(name for name, value in f.scope.vars.items()
                      if name not in done and (_holds(value, seen) or holds_instance(value)))
    return out


def _holds(v: Any, seen: dict[int, Carry]) -> bool:
    """`v` is or holds one of the lists or dicts in `seen`."""
    if isinstance(v, dict | PyList | Instance) and id(v) in seen:
        return True
    items = v.values() if isinstance(v, dict) else v.items if isinstance(v, PyList) else \
        v.fields.values() if isinstance(v, Instance) else \
        v if isinstance(v, tuple) else ()
    return any(_holds(x, seen) for x in items)


def make_seeding(f: Frame, node: gast.stmt, carries: list[Carry]) -> Seeding:
    """Start `carries` from what this loop settled on when the enclosing loop's last round
    built it (see seeds)."""
    return Seeding(f.compiler.loop_seeds, node, carries,
                   lambda name: _carry(f, name, f.scope.get(name), _seen(carries)))


def entry_scope(f: Frame, carries: list[Carry], block: Block) -> Scope:
    """The symbol table at the top of a loop block: carried variables bound to its params."""
    scope = f.scope.copy()
    memo: dict[int, Any] = {}
    with f.builder.at(InsertPoint.at_end(block)):
        for c in carries:
            value = _entry(f, c, block, memo)
            if value is MISSING:
                scope.unbind(c.name)
            else:
                scope.vars[c.name] = value
    _share_roots(f, carries)
    return scope


def _share_roots(f: Frame, carries: list[Carry]) -> None:
    """Each loop parameter may alias what its variable started as and what it was found to
    alias at the end of an iteration (see aliases)."""
    for leaf in leaves(carries):
        if leaf.param is not None:
            others = [x.param if isinstance(x, Carry) else x for x in leaf.shares]
            aliases.share(f, leaf.param, leaf.init, [x for x in others if x is not None])


def _shared(f: Frame, carries: list[Carry], body: Branch) -> bool:
    """Record what each parameter's value at the end of the body may alias that the parameter
    was not known to (a view of another carried array, of one from outside the loop, or an
    array made in the body that another variable also holds); True if that grew."""
    if not aliases.writes_in(body.block):
        return False  # NOTE: what the parameters alias matters only to writes in the body
    by_param = {leaf.param: leaf for leaf in leaves(carries) if leaf.param is not None}
    made: dict[Value, list[Carry]] = {}
    found: dict[Carry, set[Any]] = {}
    seen: set[int] = set()
    for c in carries:
        for leaf, end in _leaf_ends(f, c, body.scope.get(c.name), seen):
            if leaf.param is None or not isinstance(end, Value):
                continue
            known, tokens = aliases.roots(f, leaf.param), found.setdefault(leaf, set())
            for root in aliases.roots(f, end) - known:
                if root in by_param:
                    tokens.add(by_param[root])
                elif defined_in(root, body.block):
                    made.setdefault(root, []).append(leaf)
                else:
                    tokens.add(root)
    for group in made.values():
        for leaf in group:
            found[leaf].update(x for x in group if x is not leaf)
    grew = [leaf for leaf, tokens in found.items() if not tokens <= leaf.shares]
    for leaf in grew:
        leaf.shares = leaf.shares | found[leaf]
    return bool(grew)


def _entry(f: Frame, c: Carry, block: Block, memo: dict[int, Any]) -> Any:
    if c.key in memo:
        return memo[c.key]
    memo[c.key] = value = _entry_value(f, c.same_as or c, block, memo)
    return value


def _entry_value(f: Frame, c: Carry, block: Block, memo: dict[int, Any]) -> Any:
    c.param = None
    if c.state == CarryState.VAR:
        c.param = block.add_param(c.type, hint(c.name))
        f.compiler.memory.zero_d[c.param] = c.kind
        others = f.number_types([c.init], c.type)
        if others is not None:
            f.compiler.numbers[c.param] = others
        return c.param
    if c.state == CarryState.CONST:
        return c.init
    if c.state == CarryState.UNBOUND:
        return c.init if isinstance(c.init, Unusable) else MISSING
    items = [_entry(f, item, block, memo) for item in c.items]
    if items and all(x is MISSING for x in items):  # NOTE: `()` and `{}` are bound values
        return MISSING
    return c.container(f, [f.undefined(c.name) if x is MISSING else x for x in items])


def settle(f: Frame, carries: list[Carry], body: Branch, header: frozenset[str],
            own: frozenset[str] = frozenset()) -> bool:
    """Update carried states from the body's end; True if nothing changed (a fixpoint)."""
    if body.dead:
        return True
    with f.builder.at(InsertPoint.at_end(body.block)):
        shared = _shared(f, carries, body)
        ends: dict[int, Any] = {}
        stable = [_settle_one(f, c, body.scope.get(c.name), ends) for c in carries]
    return all(stable) and not shared and not _written(f, carries, body, header, own)


def _written(f: Frame, carries: list[Carry], body: Branch, header: frozenset[str],
             own: frozenset[str]) -> bool:
    """Carry the names the body changed without assigning them (an in-place write through
    another name, see aliases) that are read later; True if there were any. `own`: the
    loop's targets, bound by the loop itself."""
    carried = {c.name for c in carries} | own
    more = {name for name in changed_names(f.scope, body.scope) if name not in carried
            and (name in header or names.is_memory(name))}
    carries.extend(make_carries(f, more, carries))
    return bool(more)


def _settle_one(f: Frame, c: Carry, end: Any, ends: dict[int, Any]) -> bool:
    """Update `c` from the value the body ends with; `ends` (id of carry -> end) checks that
    a list or dict held by several names is still one object at the end of the body."""
    if c.key in ends:
        if ends[c.key] is not end and not (end is MISSING or is_undefined(end)):
            raise f.error(f"`{c.name}` held the same {describe(c.init)} as another variable "
                          "before the loop, but not after an iteration",
                          "copy it before the loop (`list(x)`, `dict(x)`) if the names should "
                          "part ways", kind=NeedsUnrolling)
        return True
    ends[c.key] = end
    c = c.same_as or c
    if isinstance(end, Unusable):
        raise f.read_unusable(end)
    if isinstance(end, Value) and isinstance(end.type, TupleType) and c.state in (
            CarryState.TUPLE, CarryState.UNBOUND):
        end = tuple_items(f, end)
    if c.state == CarryState.TUPLE:
        if end is MISSING or is_undefined(end):
            return True
        parts = c.parts(end)
        if parts is not None:
            return all([_settle_one(f, item, e, ends) for item, e in zip(c.items, parts)])
        if c.instance is not None and isinstance(end, Instance) and \
                end.ident is c.instance.ident:
            raise f.error(f"`{c.name}` has attributes {list(c.keys)} before the loop but "
                          f"{list(end.fields)} after an iteration, and the number of iterations "
                          "is known only at run time",
                          "set every attribute before the loop (e.g. in __init__)",
                          kind=KindChanges)
        if c.keys is not None and isinstance(end, dict):
            raise f.error(f"the dict `{c.name}` has keys {list(c.keys)} before the loop but "
                          f"{list(end)} after an iteration, and the number of iterations is "
                          "known only at run time",
                          "create every key before the loop (e.g. with a zeros array)",
                          kind=KindChanges)
        c.state, c.type, c.items = CarryState.VAR, _widen(f, c, _static(f, c.name, c.init), end), []
        c.is_list = False
        c.kind = aliases.join_kinds(_kind_of(f, c.init), _kind_of(f, end))
        return False
    if c.state == CarryState.CONST:
        if end is c.init or not has_runtime(end) and same_constant(end, c.init):
            return True
        c.state, c.type = CarryState.VAR, _widen(f, c, _static(f, c.name, c.init), end)
        c.kind = aliases.join_kinds(_kind_of(f, c.init), _kind_of(f, end))
        return False
    if c.state == CarryState.UNBOUND:
        if end is MISSING or end is c.init or is_undefined(end):
            return True
        if isinstance(end, tuple | dict | PyList):
            c.state = CarryState.TUPLE
            count = len(end.items) if isinstance(end, PyList) else len(end)
            c.items = [Carry(c.name, MISSING, CarryState.UNBOUND) for _ in range(count)]
            c.keys = tuple(end) if isinstance(end, dict) else None
            c.tuple_cls = tuple_class(end) if isinstance(end, tuple) else tuple
            c.is_list = isinstance(end, PyList)
            del ends[c.key]
            _settle_one(f, c, end, ends)
        else:
            c.state, c.type = CarryState.VAR, _static(f, c.name, end)
            c.kind = _kind_of(f, end)
        return False
    if end is MISSING or is_undefined(end):
        return True
    new, kind = _widen(f, c, c.type, end), aliases.join_kinds(c.kind, _kind_of(f, end))
    if new == c.type and kind == c.kind:
        return True
    c.type, c.kind = new, kind
    return False


def _kind_of(f: Frame, v: Any) -> str:
    """What `v` is as a loop-carried 0-d value (see `aliases.zero_d_kind`)."""
    if isinstance(v, Value):
        return aliases.zero_d_kind(f, v)
    if _nothing_to_carry(f, v):
        return aliases.BOTTOM
    return aliases.kind_of_object(f.compiler.memory, v)


def _static(f: Frame, name: str, v: Any) -> Type:
    try:
        return static_type(v)
    except TypeError as err:
        if isinstance(v, PyList) and all(isinstance(x, Value) for x in v.items):
            raise f.error(f"`{name}` grows inside a run-time loop, so it is a list built at run "
                          f"time, whose items share one dtype and rank ({err})",
                          "convert the items to one dtype and rank before adding them "
                          "(e.g. `x.astype(np.float64)`)", kind=NeedsUnrolling) from None
        raise f.error(f"{names.shown(name)} changes inside a run-time loop, but holds a {describe(v)}, "
                      "which exists only when compiling",
                      "change it with a compile-time loop (over a tuple or list) instead",
                      kind=NeedsUnrolling)


def _widen(f: Frame, c: Carry, before: Type, end: Any) -> Type:
    after = _static(f, c.name, end)
    try:
        return widen(before, after)
    except TypeError:
        if names.is_synthetic(c.name):
            return AnyType()
        # NOTE: a value whose kind, dtype or rank changes only in the first iteration (NumPy
        # promotion, `v = v.sum()`, None then an array) is right after peeling that iteration
        kind = KindChanges
        if isinstance(before, Tensor) and isinstance(after, Tensor):
            hint = ("give it the dtype and rank it ends with before the loop, e.g. "
                    f"`{c.name} = {c.name}.astype(np.{after.dtype})`")
        elif isinstance(before, TupleType) and isinstance(after, TupleType) and \
                before.cls is not after.cls:
            kind = NeedsUnrolling
            hint = (f"keep `{c.name}` one class in every iteration: rebuild it with "
                    f"{after.cls.__name__ if after.cls is not tuple else before.cls.__name__}(...)"
                    " before the loop, or convert with tuple(...) on both sides")
        elif isinstance(before, TupleType) and isinstance(after, TupleType):
            kind = NeedsUnrolling
            hint = (f"a tuple that grows in a loop whose trip count is known only at run time "
                    f"has no fixed length: make `{c.name}` a list and append to it")
        else:
            hint = ("give it a value of the same kind before the loop (e.g. a zeros array "
                    "instead of None)")
        raise f.error(f"`{c.name}` is {kind_name(before)} before the loop but "
                      f"{kind_name(after)} after an iteration", hint, kind=kind) from None


def _leaf_ends(f: Frame, c: Carry, end: Any, seen: set[int]) -> list[tuple[Carry, Any]]:
    """Each block parameter of `c` with the value the body ends with for it (in the order of
    `Carry.leaves`, sharing its `seen`)."""
    if c.key in seen:
        return []
    seen.add(c.key)
    c = c.same_as or c
    if c.state == CarryState.TUPLE:
        if isinstance(end, Value) and isinstance(end.type, TupleType):
            end = tuple_items(f, end)
        ends = c.parts(end) or [MISSING] * len(c.items)
        return [pair for item, e in zip(c.items, ends) for pair in _leaf_ends(f, item, e, seen)]
    return [(c, end)] if c.state == CarryState.VAR else []


def yields(f: Frame, carries: list[Carry], body: Branch) -> list[Value]:
    out = []
    seen: set[int] = set()
    with f.builder.at(InsertPoint.at_end(body.block)):
        for c in carries:
            for leaf, end in _leaf_ends(f, c, body.scope.get(c.name), seen):
                if body.dead and leaf.param is not None:
                    out.append(leaf.param)  # NOTE: never reached; the value passes through
                elif body.dead or end is MISSING:
                    out.append(f.undefined(leaf.name))
                else:
                    out.append(f.materialise(end))
    return out


def init_values(f: Frame, carries: list[Carry]) -> list[Value]:
    return [f.undefined(leaf.name) if _nothing_to_carry(f, leaf.init) else f.materialise(leaf.init)
            for leaf in leaves(carries)]


def _rebuild(f: Frame, c: Carry, outs: Any, memo: dict[int, Any]) -> Any:
    """The variable's value after the loop (MISSING: still unbound); one object per carry."""
    if c.key not in memo:
        memo[c.key] = _rebuilt(f, c.same_as or c, outs, memo)
    return memo[c.key]


def _rebuilt(f: Frame, c: Carry, outs: Any, memo: dict[int, Any]) -> Any:
    if c.state == CarryState.VAR:
        return next(outs)
    if c.state == CarryState.CONST:
        return c.init
    if c.state == CarryState.UNBOUND:
        return c.init if isinstance(c.init, Unusable) else MISSING
    items = [_rebuild(f, item, outs, memo) for item in c.items]
    return MISSING if any(x is MISSING for x in items) else c.container(f, items)


def leaves(carries: list[Carry]) -> list[Carry]:
    seen: set[int] = set()
    return [leaf for c in carries for leaf in c.leaves(seen)]


def after_loop(f: Frame, node: Node, carries: list[Carry], body: Branch, line: int) -> None:
    """Insert the loop node and bind what it carries out; other names the body changed
    cannot be used after the loop."""
    f.builder.insert(node)
    if node.effectful:
        f.compiler.note_effect(node)
    _check_vjp_reruns(f, node)
    yields = node.blocks[-1].results
    for leaf, out, end in zip(leaves(carries), node.outputs, yields):
        others = f.number_types([v for v in (leaf.param, end) if v is not None], out.type)
        if others is not None:
            f.compiler.numbers[out] = others
    outs = iter(node.outputs)
    memo: dict[int, Any] = {}
    for c in carries:
        value = _rebuild(f, c, outs, memo)
        if value is MISSING:
            f.scope.unbind(c.name)
        else:
            f.scope.bind(c.name, value, line)
    names_carried = {c.name for c in carries}
    for name in changed_names(f.scope, body.scope):
        if name not in names_carried:
            f.scope.vars[name] = Unusable(f"internal: `{name}` was taken to be unused after the "
                                          f"loop at line {line}")




def _check_vjp_reruns(f: Frame, loop: Node) -> None:
    """A `vjp_fn` call in this loop whose `ops.vjp` is outside it runs the forward again on
    each trip: refused if the loop writes an array in place (a later trip would see it)."""
    if not f.compiler.vjp_reruns:
        return  # NOTE: the common case: no walk of every loop built
    inside = {id(b) for n in loop.walk() for b in n.blocks}
    calls = [(made, error) for call, made, error in f.compiler.vjp_reruns if id(call) in inside]
    if any(id(made) not in inside for made, _ in calls) and any(
            writes_an_array(n) for n in loop.walk()):
        raise next(error for made, error in calls if id(made) not in inside)()


def hint(name: str) -> str:
    """The name hint of a carried variable's values."""
    return names.value_hint(name)
