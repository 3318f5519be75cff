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

from ..graph import AnyType, Scalar, Value
from .context import Frame, NeedsUnrolling
from .errors import CompileError
from .guards import AttrReader, NamespaceReader, TypeReader
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
    container the code wrote before in this call is its latest model instead."""
    shadow = f.compiler.shadows.get(id(owner.obj))
    if shadow is not None:
        # NOTE: one model per caller's object in a build (read twice, through two names or
        # attributes, written through either): writes happen in straight-line code only, so
        # the latest model is what every later read finds
        return shadow[0]
    f.compiler.owners[id(model)] = (model, owner)
    f.compiler.shadows[id(owner.obj)] = (model, f.builder.ip.block)
    return model


def owner_of(f: Frame, container: Any) -> Owner | None:
    found = f.compiler.owners.get(id(container))
    return found[1] if found is not None and found[0] is container else None


def _in_region(f: Frame) -> bool:
    return f.builder.ip.block is not f.compiler.graph.body


def check_write(f: Frame, container: Any) -> bool:
    """True if writing `container` is a write to the caller's object compiled code makes too;
    CompileError where it cannot follow it (inside a run-time branch or loop)."""
    owner = owner_of(f, container)
    if owner is None:
        return False
    if _in_region(f):
        # NOTE: NeedsUnrolling: a loop over a short constant range is unrolled instead
        raise f.error(f"this changes {owner.where}, which belongs to the caller, inside a "
                      "run-time branch or loop; compiled code changes the caller's lists and "
                      "dicts only in straight-line code (or loops over compile-time ranges)",
                      HINT, kind=NeedsUnrolling if f.compiler.loop_seeds else CompileError)
    return True


def replaced(f: Frame, old: Any, new: Any) -> None:
    """After a write built `new` from the caller's `old`: the same change to the caller's
    object, at run time."""
    owner = owner_of(f, old)
    if owner is None:
        return
    check_write(f, old)
    handle = _handle(f, owner)
    if isinstance(new, PyList):
        f.op("set_list", handle, *(_item(f, x) for x in new.items))
    elif isinstance(new, dict) and _plain_keys(new):
        f.op("set_dict", handle, *(_item(f, x) for x in new.values()), keys=tuple(new))
    else:
        raise f.error(f"this changes {owner.where}, which belongs to the caller, in a way "
                      "compiled code cannot follow (into a list built at run time)", HINT)
    f.compiler.owners[id(new)] = (new, owner)
    f.compiler.foreign[id(new)] = (new, owner.where)
    f.compiler.shadows[id(owner.obj)] = (new, f.builder.ip.block)


def _item(f: Frame, x: Any) -> Value:
    """An item of a caller's container as it goes back in: a list or dict of the caller's
    (written through on its own) as that very object, anything else as its value. A list or
    dict made in compiled code becomes the caller's from here on: the object made at run time
    is written through when the code changes it later (`row = []; out.append(row);
    row.append(1)`)."""
    owner = owner_of(f, x)
    if owner is not None:
        return _handle(f, owner)
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
    owner = Owner(x, "a list or dict now held by the caller's", "made", "")
    f.compiler.owners[id(x)] = (x, owner)
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
        found = f.op("get_global", module=owner.module, variable=owner.path)
    compiler.handles[id(owner.obj)] = found
    return found


def module_of(f: Frame) -> str | None:
    """The name the module of the function being built has in sys.modules, if its globals
    are that module's (a function made by exec has none)."""
    name = getattr(f.func, "__module__", None)
    module = sys.modules.get(name) if name else None
    return name if module is not None and vars(module) is f.parsed.globals else None


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
            or ref.path is None or not f.compiler.guards_methods or key in f.compiler.shadows:
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
    stored = f.compiler.shadows.get((id(ref.obj), name))
    if stored is not None:
        return stored[0]  # NOTE: stored in straight-line code, so before this read
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
    if isinstance(current, np.ndarray | list | dict | tuple) or not (
            current is None or isinstance(current, PLAIN)) or _in_region(f):
        where = "in a run-time branch or loop" if _in_region(f) else \
            f"holding a {type(current).__name__}"
        error = NeedsUnrolling if _in_region(f) and f.compiler.loop_seeds else CompileError
        raise f.error(f"assigning to attribute '{name}' of {type(ref.obj).__name__} {where} "
                      "inside compiled code is not supported",
                      "keep state in Parameters and update them with ops.assign, or return the "
                      "value; numbers on self may be assigned, other plain values in "
                      "straight-line code", kind=error)
    if not isinstance(value, (Value, *PLAIN)):
        raise f.error(f"compiled code stores only numbers, strings, None and arrays in "
                      f"attribute '{name}'", "store a number or an array")
    f.op("set_attribute", _handle(f, _self_owner(ref)), f.materialise(value), attribute=name)
    f.compiler.shadows[(id(ref.obj), name)] = (value, f.builder.ip.block)


# -- globals --------------------------------------------------------------------------------------

def enter_frame(f: Frame, global_value: Callable[[Frame, str], Any]) -> None:
    """At the entry of a function with `global` statements (wherever they are in its body, as
    Python has it): the names become variables of this frame holding the module's values,
    written back to the module on every assignment. A Python number is read when the code
    runs (only its type is guarded); anything else is a compile-time value, guarded, as
    `global_value` (scope.py, which reads this module's shadows) reads it."""
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
