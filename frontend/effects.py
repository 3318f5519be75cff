"""Writes compiled code makes to what its caller owns: module globals the function declares
`global`, lists and dicts passed in or held by an attribute or a global (`out.append(y)`,
`self.stats["calls"] += 1`), and plain attributes of cells (`self.count += 1`).

The frontend keeps computing with its compile-time model of the object (a `PyList`, a dict,
a constant), so the rest of the call reads what was written; every write also becomes an
effect op (ops/caller.py) that makes the caller's object the same, in program order. A global
is a variable of the frame declaring it, so branches merge it and loops carry it like a local;
each assignment also stores it in the module.

A Python number the code itself writes (a declared global, an assigned cell attribute) is
read when the code runs, in program order with its writes, with only its type guarded. Where
the model cannot follow the object (a caller's container or a non-number attribute written
inside a run-time branch or loop), compiling is refused at the line. The next call sees what
was written: numbers are read again, and the guards on the other values the code read (a
dict's items, a list's length) no longer hold, so the runtime compiles again for them."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

import gast
import numpy as np

from ..graph import AnyType, InsertPoint, Scalar, Tensor, Value
from . import names
from .context import Frame, MergeConflict, NeedsUnrolling
from .errors import CompileError
from .guards import (AttrReader, ItemKindsReader, NamespaceReader, TypeReader, item_kinds,
                     structure)
from .values import MISSING, PyList

HINT = "copy it first (`items = list(items)`, `d = dict(d)`) and return the new one"


@dataclass(frozen=True)
class Owner:
    """Where a caller's list or dict is, so compiled code reaches it at run time: an
    attribute path under self ("self"), an input path of an argument ("arg"), or a module
    global ("global", path being its name)."""
    obj: Any
    where: str
    kind: str
    path: str
    module: str = ""


def declared_globals(fdef: gast.FunctionDef) -> frozenset[str]:
    """The names `global` statements of `fdef` declare (not those of functions nested in it)."""
    found: set[str] = set()
    todo = list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Global):
            found.update(node.names)
        elif not isinstance(node, gast.FunctionDef | gast.Lambda | gast.ClassDef):
            todo.extend(gast.iter_child_nodes(node))
    return frozenset(found)


def own(f: Frame, model: Any, owner: Owner) -> Any:
    """Record that compile-time container `model` stands for the caller's `owner.obj`; a
    container the code wrote before in this call is its latest version instead (a scope name
    holds it, so branches merge it and loops carry it like a variable)."""
    found = f.compiler.caller_states.get(id(owner.obj))
    if found is not None:
        return f.scope.get(found[0])  # NOTE: one version per point, through every name
    _track(f, model, owner)
    return model


def _track(f: Frame, model: Any, owner: Owner) -> None:
    state = names.STATE.format(f"caller{len(f.compiler.caller_states)}")
    f.compiler.caller_states[id(owner.obj)] = (state, owner)
    f.compiler.memory.defaults[state] = model
    f.compiler.owners[id(model)] = (model, owner)


def owner_of(f: Frame, container: Any) -> Owner | None:
    """The caller's object `container` stands for here: a version a write made, or one a
    branch merge or a loop carry made of the caller's (found through its scope name)."""
    found = f.compiler.owners.get(id(container))
    if found is not None and found[0] is container:
        return found[1]
    if not isinstance(container, PyList | dict):
        return None
    for state, owner in f.compiler.caller_states.values():
        if f.scope.get(state) is container:
            f.compiler.owners[id(container)] = (container, owner)
            return owner
    return None


def _in_region(f: Frame) -> bool:
    return f.builder.ip.block is not f.compiler.graph.body


def check_write(f: Frame, container: Any) -> bool:
    """True if writing `container` is a write to the caller's object compiled code makes too
    (in program order, inside run-time branches and loops too)."""
    return owner_of(f, container) is not None


def replaced(f: Frame, old: Any, new: Any) -> None:
    """After a write built `new` from the caller's `old`: the same change to the caller's
    object, at run time, where the write is (inside the branch or loop body it is in)."""
    # NOTE: a version a merge or carry made is found by its scope name, which `new` holds now
    owner = owner_of(f, old) or owner_of(f, new)
    if owner is None:
        return
    handle = _handle(f, owner)
    state = f.compiler.caller_states[id(owner.obj)][0]
    if isinstance(new, Value) and _is_view(new, handle):
        f.scope.vars[state] = new  # NOTE: written in place from here on (`t[i] = v`, i at run time)
        return
    if isinstance(new, PyList):
        f.op("set_list", handle, *(_item(f, x) for x in new.items))
    elif isinstance(new, dict) and _plain_keys(new):
        f.op("set_dict", handle, *(_item(f, x) for x in new.values()), keys=tuple(new))
    else:
        raise f.error(f"this changes {owner.where}, which belongs to the caller, in a way "
                      "compiled code cannot follow (into a list built at run time)", HINT)
    f.compiler.owners[id(new)] = (new, owner)
    f.compiler.foreign[id(new)] = (new, owner.where)
    f.scope.vars[state] = new


def _is_view(v: Value, handle: Value) -> bool:
    node = v.producer
    return node is not None and not node.is_region and node.op.name in (
        "caller_list", "caller_dict") and node.inputs[0] is handle


def caller_view(f: Frame, container: Any) -> Value | None:
    """The caller's list or dict itself where compiled code needs the container as a run-time
    value (a branch merge, a loop carry, a return): the object, never a copy, so the writes
    after it still reach the caller and `out is items` holds as in eager code."""
    owner = owner_of(f, container)
    if owner is None:
        return None
    handle = _handle(f, owner)
    if isinstance(container, PyList):
        items = [f.materialise(x) for x in container.items]
        if not _uniform([x.type for x in items]):
            raise f.error(f"{owner.where}, which belongs to the caller, holds items of "
                          "different kinds here ("
                          f"{', '.join(sorted({str(x.type) for x in items}))}), so compiled "
                          "code cannot hold it as a run-time list (after a run-time branch or "
                          "loop, or returned)",
                          "keep items of one kind in it (all arrays of one dtype and rank, or "
                          "all numbers of one type)", kind=MergeConflict)
        return f.op("caller_list", handle, *items)
    return f.op("caller_dict", handle)


def _uniform(types: list[Any]) -> bool:
    """Items a run-time list can hold with one item type: numbers of one type, arrays of one
    dtype and rank (sizes may differ), or one other type."""
    if all(isinstance(t, Tensor) for t in types):
        return len({(t.dtype, t.rank) for t in types}) <= 1
    return len(set(types)) <= 1


def _item(f: Frame, x: Any) -> Value:
    """An item of a caller's container as it goes back in: a list or dict of the caller's
    (written through on its own) as that very object, anything else as its value. A list or
    dict made in compiled code becomes the caller's from here on: the object made at run time
    is written through when the code changes it later (`row = []; out.append(row);
    row.append(1)`)."""
    owner = owner_of(f, x)
    if owner is not None:
        return _handle(f, owner)
    if isinstance(x, PyList | dict) and _in_region(f):
        raise f.error("a list or dict made in compiled code cannot go into the caller's object "
                      "inside a run-time branch or loop (compiled code could not follow it "
                      "after the branch or loop)", "put a tuple or a copy there, made before "
                      "the branch or loop")
    if isinstance(x, PyList):
        made = f.op("list_new", *(_item(f, item) for item in x.items))
    elif isinstance(x, dict) and _plain_keys(x):
        made = f.op("make_dict", *(_item(f, item) for item in x.values()), keys=tuple(x))
    elif type(x) is tuple:
        return f.op("make_tuple", *(_item(f, item) for item in x))
    elif isinstance(x, tuple) and not _plain_value(x):
        raise f.error("a namedtuple holding a list or dict cannot go into the caller's object",
                      "use a plain tuple, or store the values")
    else:
        return f.materialise(x)
    _track(f, x, Owner(x, "a list or dict now held by the caller's", "made", ""))
    f.compiler.handles[id(x)] = made
    return made


def _plain_keys(d: dict) -> bool:
    return all(isinstance(k, str | int | bool | float | type(None)) for k in d)


def _handle(f: Frame, owner: Owner) -> Value:
    """The graph value holding the caller's object when the code runs."""
    compiler = f.compiler
    found = compiler.handles.get(id(owner.obj))
    if found is not None:
        return found
    if owner.kind == "self":
        found = compiler.graph.body.add_param(AnyType(), owner.path.replace(".", "_") or "self")
        compiler.params[owner.path] = found
    elif owner.kind == "arg":
        found = compiler.graph.body.add_param(AnyType(), "arg_" + owner.path.replace(".", "_"))
        compiler.inputs.append((owner.path, found))
    else:
        found = _at_entry(f, lambda: f.op("get_global", module=owner.module,
                                          variable=owner.path))
    compiler.handles[id(owner.obj)] = found
    return found


def _at_entry(f: Frame, make: Callable[[], Value], after: Value | None = None) -> Value:
    """An effect read once at the top of the graph (a global's object, which compiled code
    never rebinds), so every branch and loop may use it; not ordered after later effects.
    `after`: a value it reads, made there before it."""
    body = f.compiler.graph.body
    last = f.compiler.last_effect.get(body)
    node = after.producer if after is not None else None
    with f.builder.at(InsertPoint.after(node) if node is not None and node.parent is body
                      else InsertPoint.at_start(body)):
        value = make()
    value.owner.control_inputs.clear()
    if last is not None:
        f.compiler.last_effect[body] = last
    return value


def module_of(f: Frame) -> str | None:
    """The name the module of the function being built has in sys.modules, if its globals
    are that module's (a function made by exec has none)."""
    name = getattr(f.func, "__module__", None)
    module = sys.modules.get(name) if name else None
    return name if module is not None and vars(module) is f.parsed.globals else None


# -- lists read when the code runs ------------------------------------------------------------

RUN_TIME_MUTATORS = frozenset(("append", "extend", "insert", "pop"))
"""The methods changing a list that a list built at run time has (containers.py)."""
OTHER_MUTATORS = frozenset(("remove", "clear", "reverse", "sort"))


def _mutated(f: Frame) -> frozenset[str]:
    """The attribute names `a` and global names `g` whose list `f`'s own code changes in place
    with what a run-time list supports: `x.a.append(...)`, `g.pop()`, `x.a[i] = v`, `del g[i]`
    (not `g.clear()`, which only the compile-time list has)."""
    found = f.compiler.mutated_lists.get(f.fdef)
    if found is None:
        names_: set[str] = set()
        other: set[str] = set()
        for node in gast.walk(f.fdef):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                    node.func.attr in RUN_TIME_MUTATORS | OTHER_MUTATORS:
                target = node.func.value
                into = other if node.func.attr in OTHER_MUTATORS else names_
            elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store | gast.Del):
                target, into = node.value, names_
            else:
                continue
            if isinstance(target, gast.Attribute):
                into.add(target.attr)
            elif isinstance(target, gast.Name):
                into.add(target.id)
        found = f.compiler.mutated_lists[f.fdef] = frozenset(names_ - other)
    return found


def live_list(f: Frame, value: Any, name: str, owner: Owner, reader: ItemKindsReader) -> Any:
    """A list of the caller's that compiled code changes in place (`self.history.append(h)`,
    `LOG.append(v)`) and whose items are numbers of one kind, as a run-time list: the caller's
    object itself, read when the code runs, so its length and its items are not compile-time
    facts and appending to it every call compiles once (only the kind of its items is
    guarded). MISSING where it is read as a compile-time list instead (see `own`)."""
    found = f.compiler.caller_states.get(id(value))
    if found is not None:
        current = f.scope.get(found[0])
        if not isinstance(current, Value):
            return MISSING
        f.scope.vars[found[0]] = current  # NOTE: bound here, so a write rebinds it
        return current
    kinds = item_kinds(value)
    if kinds is None or len(kinds) > 1 or name not in _mutated(f) or \
            not f.compiler.guards_methods:
        return MISSING
    f.compiler.guard(f"the kinds of the items of {owner.where}", reader, kinds)
    handle = _handle(f, owner)
    view = _at_entry(f, lambda: f.op("caller_items", handle, kind=kinds, name=name), handle)
    state = names.STATE.format(f"caller{len(f.compiler.caller_states)}")
    f.compiler.caller_states[id(value)] = (state, owner)
    f.compiler.memory.defaults[state] = view
    f.scope.vars[state] = view  # NOTE: so a write in place rebinds it (aliases.after_write)
    return view


# -- attributes of cells ------------------------------------------------------------------------

PLAIN = (bool, int, float, str, type(None), np.generic)
NUMBERS = (bool, int, float)


def stored_attributes(fdef: gast.FunctionDef) -> frozenset[str]:
    """The attribute names `fdef` assigns (`x.<name> = ...`, `x.<name> += ...`)."""
    return frozenset(node.attr for node in gast.walk(fdef) if isinstance(node, gast.Attribute)
                     and isinstance(node.ctx, gast.Store))


def _live(f: Frame, ref: Any, name: str, value: Any) -> str | None:
    """The kind ("int", "float", "bool") of `ref.<name>` if compiled code reads it when it
    runs: a Python number of the compiled cell (or one under it) that this function assigns,
    or that compiled code already reads that way; else None."""
    key = (id(ref.obj), name)
    kind = f.compiler.live_attributes.get(key)
    if kind is not None:
        return kind
    if type(value) not in NUMBERS or name not in f.stored_attributes or ref.arg is not None \
            or ref.path is None or not f.compiler.guards_methods or key in f.compiler.caller_states:
        return None
    path = ref.child(name)
    f.compiler.guard(f"type of self.{path}", TypeReader(AttrReader(path)), type(value))
    kind = f.compiler.live_attributes[key] = type(value).__name__
    return kind


def read_attribute(f: Frame, ref: Any, name: str) -> Any:
    """`ref.<name>` where compiled code itself writes it: a Python number read when the code
    runs (in program order with the writes, so in branches and loops too; only its type is
    guarded, so the next call runs the same code), or what straight-line code stored in it
    earlier in this call; else MISSING (read as any other attribute)."""
    stored = f.compiler.caller_states.get((id(ref.obj), name))
    if stored is not None:
        return f.scope.get(stored[0])  # NOTE: what the code stored, merged and carried
    kind = _live(f, ref, name, getattr(ref.obj, name, None))
    if kind is None:
        return MISSING
    return f.op("read_attribute", _handle(f, _self_owner(ref)), attribute=name, kind=kind,
                name=name)


def _self_owner(ref: Any) -> Owner:
    return Owner(ref.obj, f"self.{ref.path}" if ref.path else "self", "self", ref.path)


def set_attribute(f: Frame, ref: Any, name: str, value: Any) -> None:
    """`self.<name> = value`: stored on the cell when the code runs. A Python number compiled
    code reads when it runs (see `read_attribute`) may be stored anywhere, keeping its type;
    other plain values (a string, None, an array) in straight-line code, later reads in this
    call finding what was stored."""
    current = getattr(ref.obj, name, None)
    kind = _live(f, ref, name, current)
    if kind is not None:
        stored = f.materialise(value)
        if stored.type != Scalar({k.__name__: k for k in NUMBERS}[kind]):
            raise f.error(f"this stores {stored.type} in self.{ref.child(name)}, which holds a "
                          f"Python {kind} compiled code reads when it runs",
                          f"keep it a Python {kind} (e.g. with {kind}(...))")
        f.op("set_attribute", _handle(f, _self_owner(ref)), stored, attribute=name)
        return
    key = (id(ref.obj), name)
    # NOTE: in a branch or loop, what it held before is merged with what is stored: a value
    # known when compiling (guarded), so a Python number, string or None
    region = _in_region(f) and key not in f.compiler.caller_states and not isinstance(
        current, bool | int | float | str | type(None))
    if isinstance(current, np.ndarray | list | dict | tuple) or not (
            current is None or isinstance(current, PLAIN)) or region:
        where = "in a run-time branch or loop" if region else \
            f"holding a {type(current).__name__}"
        error = NeedsUnrolling if region and f.compiler.loop_seeds else CompileError
        raise f.error(f"assigning to attribute '{name}' of {type(ref.obj).__name__} {where} "
                      "inside compiled code is not supported",
                      "keep state in Parameters and update them with ops.assign, or return the "
                      "value; numbers on self may be assigned, other plain values in "
                      "straight-line code", kind=error)
    if not isinstance(value, (Value, *PLAIN)):
        raise f.error(f"compiled code stores only numbers, strings, None and arrays in "
                      f"attribute '{name}'", "store a number or an array")
    f.op("set_attribute", _handle(f, _self_owner(ref)), f.materialise(value), attribute=name)
    if key not in f.compiler.caller_states:
        if _in_region(f):  # NOTE: the value before the branch or loop is merged with it
            path = ref.child(name)
            f.compiler.guard(f"self.{path}", AttrReader(path), structure(current))
        state = names.STATE.format(f"caller{len(f.compiler.caller_states)}")
        f.compiler.caller_states[key] = (state, _self_owner(ref))
        f.compiler.memory.defaults[state] = current
    f.scope.vars[f.compiler.caller_states[key][0]] = value


# -- globals --------------------------------------------------------------------------------------

def enter_frame(f: Frame, global_value: Callable[[Frame, str], Any]) -> None:
    """At the entry of a function with `global` statements (wherever they are in its body, as
    Python has it): the names become variables of this frame holding the module's values,
    written back to the module on every assignment. A Python number is read when the code
    runs (only its type is guarded); anything else is a compile-time value, guarded, as
    `global_value` (scope.py) reads it."""
    if not f.global_names:
        return
    module = module_of(f)
    _check_bindings(f, set(f.global_names))
    for name in sorted(f.global_names):
        if module is None:
            raise f.error(f"`global {name}` in a function whose module is not imported",
                          "define the function in a module")
        value = f.parsed.globals.get(name, MISSING)
        writer = f.compiler.global_writers.setdefault((module, name), f)
        if writer is not f and not _again(f, writer, module, name, value):
            raise f.error(f"global `{name}` is written by two functions in one compiled call",
                          "write it in one function, or pass the value and return the new one")
        f.compiler.global_writers[(module, name)] = f
        if value is MISSING:
            continue  # NOTE: reading it before the first assignment raises NameError
        if type(value) in NUMBERS:
            f.compiler.guard(f"type of global {name}",
                             TypeReader(NamespaceReader(f.parsed.globals, name)), type(value))
            value = f.op("read_global", module=module, variable=name,
                         kind=type(value).__name__, name=name)
        else:
            value = global_value(f, name)
        f.scope.bind(name, value)


def _again(f: Frame, writer: Frame, module: str, name: str, value: Any) -> bool:
    """Whether `f` may declare global `name` that `writer` (an earlier frame) wrote in this
    build: another call of the same function, returned already, the global a Python number
    every store kept the type of (so `f` reads it when the code runs, after those stores)."""
    stored = f.compiler.global_types.get((module, name), set())
    return writer.func.__code__ is f.func.__code__ and writer not in f.compiler.frames and \
        type(value) in NUMBERS and stored <= {Scalar(type(value))}


def declare_globals(f: Frame, stmt: gast.Global) -> None:
    """`global a, b`: nothing to build (see `enter_frame`)."""


def _check_bindings(f: Frame, names: set[str]) -> None:
    """Globals are written by `=` and `op=` only: another binding of one (a loop target,
    `with ... as`, `del`, an import, `:=`) is refused at its line."""
    plain: set[int] = set()
    for node in gast.walk(f.parsed.node):
        if isinstance(node, gast.Assign | gast.AugAssign | gast.AnnAssign):
            for target in node.targets if isinstance(node, gast.Assign) else [node.target]:
                plain.update(id(n) for n in gast.walk(target) if isinstance(n, gast.Name))
    for node in gast.walk(f.parsed.node):
        if isinstance(node, gast.Name) and node.id in names and id(node) not in plain and \
                isinstance(node.ctx, gast.Store | gast.Del):
            raise f.error(f"compiled code writes global `{node.id}` only by assignment",
                          f"assign it with `{node.id} = ...`", node=node)


def store_global(f: Frame, name: str, value: Any, line: int) -> None:
    """`name = value` where `name` is declared global: the module's global too, at run time."""
    if not _plain_value(value):
        raise f.error(f"compiled code stores only numbers, strings, None, tuples and arrays in "
                      f"global `{name}`", "store a number or an array")
    stored = f.materialise(value)
    f.op("set_global", stored, module=module_of(f), variable=name)
    f.compiler.global_types.setdefault((module_of(f), name), set()).add(stored.type)
    f.scope.bind(name, value, line)


def _plain_value(value: Any) -> bool:
    """A value stored as it is: numbers, strings, None, run-time values, tuples of them (a
    compile-time list or dict would be a copy the code could not follow)."""
    if isinstance(value, tuple):
        return all(map(_plain_value, value))
    return isinstance(value, (Value, *PLAIN))


def check_global_read(f: Frame, name: str) -> None:
    """A global read from a function that does not declare it, while another does: refused
    (the other frame's variable holds its value)."""
    writer = f.compiler.global_writers.get((module_of(f) or "", name))
    if writer is not None and writer is not f:
        raise f.error(f"this reads global `{name}`, which compiled code also writes in "
                      f"{writer.func.__qualname__}", "pass the value in as an argument")


STATEMENTS = {gast.Global: declare_globals}
