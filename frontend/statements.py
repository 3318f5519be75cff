"""Statements of a canonical function body (see canonicalize): assignments, expression
statements, assert, raise, pass, if/while/for (in control) and the one final return."""
from __future__ import annotations

from typing import Any, Callable

import gast
import numpy as np

from ..graph import ListType, Scalar, Tensor, TupleType, Value
from ..nn.cell import Parameter
from . import control, effects, instances, loops, names
from .aliases import is_array_kind, is_mixed_kind, own_array, replace_object, zero_d_kind
from .containers import delitem, extend
from .context import DeadPath, Frame, Mark, MergeConflict
from .expressions import attribute, evaluate
from .names import RESULT
from .operators import binary, condition_value
from .scope import array_input, lookup
from .sequences import as_sequence, getitem, setitem, unpack
from .values import PENDING, Instance, PyList, Ref, describe, has_runtime, truth


MAX_TAILS = 4
"""How many `if`s deep the statements after an if may be built once per side."""


def run_function(f: Frame) -> Any:
    """Build the body of `f`; returns the value of its final `return` (DeadPath if no path
    reaches it)."""
    run_block(f, f.body, frozenset([RESULT]) | f.captured)
    if f.scope.dead:
        raise DeadPath
    value = f.scope.get(RESULT)
    return None if value is PENDING else value


def run_block(f: Frame, stmts: list[gast.stmt], live_out: frozenset[str]) -> None:
    """Build `stmts` in order; stops where the path ends (a compiled raise)."""
    saved = f.live
    try:
        for i, stmt in enumerate(stmts):
            if f.scope.dead:
                break
            f.live = (stmts, i, live_out)
            f.set_stmt(stmt)
            if _run_stmt(f, stmt, stmts[i + 1:], live_out):
                break
    finally:
        f.live = saved


def _run_stmt(f: Frame, stmt: gast.stmt, rest: list[gast.stmt], live_out: frozenset[str]
              ) -> bool:
    """Build one statement; True if it also built `rest` (into both sides of an if, or on
    both paths after a loop whose first iteration was peeled)."""
    mark = Mark(f) if isinstance(stmt, gast.If | gast.While | gast.For) and rest else None
    try:
        run_stmt(f, stmt)
    except DeadPath:
        f.scope.dead = True
    except MergeConflict:
        if mark is None or f.tails >= MAX_TAILS:
            raise
        mark.restore(f)
        f.tails += 1
        try:
            if isinstance(stmt, gast.If):
                control.build_if(f, stmt, rest, live_out)
            else:  # NOTE: a loop whose first iteration was peeled (loops.build_loop_with_tail)
                loops.build_loop_with_tail(f, stmt, rest, live_out)
        except DeadPath:
            f.scope.dead = True
        finally:
            f.tails -= 1
        return True
    return False


def run_stmt(f: Frame, stmt: gast.stmt) -> None:
    handler = f.compiler.rules.statements.get(type(stmt))
    if handler is None:
        raise f.error(f"`{type(stmt).__name__}` statements are not supported in compiled code",
                      node=stmt)
    handler(f, stmt)


def _assign(f: Frame, stmt: gast.Assign) -> None:
    value = evaluate(f, stmt.value)
    if value is None and _is_return_placeholder(stmt):
        value = PENDING
    for target in stmt.targets:
        assign_target(f, target, value)


def _is_return_placeholder(stmt: gast.Assign) -> bool:
    """`__amber_ret_value = None`: canonicalize's prologue (no `return` has run yet)."""
    target = stmt.targets[0]
    return (len(stmt.targets) == 1 and isinstance(target, gast.Name)
            and target.id == names.RETURN_VALUE and isinstance(stmt.value, gast.Constant))


def _ann_assign(f: Frame, stmt: gast.AnnAssign) -> None:
    if stmt.value is not None:
        assign_target(f, stmt.target, evaluate(f, stmt.value))


def assign_target(f: Frame, target: gast.expr, value: Any) -> None:
    """Bind `value` to an assignment target (a name, a tuple of targets, `x[i]`, `self.a`)."""
    if isinstance(target, gast.Name) and target.id in f.global_names:
        effects.store_global(f, target.id, value, getattr(target, "lineno", 0) or 0)
    elif isinstance(target, gast.Name):
        f.scope.bind(target.id, value, getattr(target, "lineno", 0) or 0)
    elif isinstance(target, gast.Tuple | gast.List):
        star = next((i for i, t in enumerate(target.elts) if isinstance(t, gast.Starred)), None)
        items = unpack(f, value, len(target.elts), star)
        for elt, item in zip(target.elts, items):
            assign_target(f, elt.value if isinstance(elt, gast.Starred) else elt, item)
    elif isinstance(target, gast.Subscript):
        base = evaluate(f, target.value)
        _store(f, target.value, setitem(f, base, evaluate(f, target.slice), value))
    elif isinstance(target, gast.Attribute):
        _assign_attribute(f, target, evaluate(f, target.value), value)
    else:
        raise f.error(f"cannot assign to {type(target).__name__}", node=target)


def _store(f: Frame, root: gast.expr, value: Any) -> None:
    """After `x[i] = v`, the name `x` refers to the written value (a module global's list or
    dict is found again through what compiled code made of it: see effects.own)."""
    if isinstance(root, gast.Name) and (root.id in f.locals or root.id in f.scope.vars
                                        or root.id not in f.parsed.globals):
        f.scope.bind(root.id, value, getattr(root, "lineno", 0) or 0)


def _assign_attribute(f: Frame, target: gast.Attribute, base: Any, value: Any) -> None:
    """`self.param = value` writes the Parameter in place (MindSpore's rule); nothing else on
    the instance can change while compiled code runs. An object made in compiled code takes
    any attribute (see `instances.set_attribute`)."""
    if isinstance(base, Instance):
        instances.set_attribute(f, base, target.attr, value)
        return
    if isinstance(base, Ref) and base.path is not None:
        current = getattr(base.obj, target.attr, None)
        if isinstance(current, Parameter):
            param = array_input(f, base.arg, base.child(target.attr), current)
            f.op("assign", param, _parameter_data(f, target.attr, current, value))
            return
        if base.arg is None:  # NOTE: a plain attribute of the compiled cell or one under it
            effects.set_attribute(f, base, target.attr, value)
            return
    raise f.error(f"assigning to attribute '{target.attr}' of {describe(base)} inside compiled "
                  "code is not supported",
                  "keep state in Parameters and update them with ops.assign, or return the "
                  "value", node=target)


def _parameter_data(f: Frame, name: str, param: Parameter, value: Any) -> Value:
    """What `self.<name> = value` writes into the Parameter: MindSpore's `set_data` rule (the
    same shape, a dtype of the same kind), as eager code checks it."""
    data = f.materialise(value)
    t = data.type
    if isinstance(t, Scalar):
        shape, dtype = (), np.asarray(t.kind(0)).dtype
    elif isinstance(t, Tensor):
        shape, dtype = t.shape, t.dtype
    else:
        raise f.error(f"'{name}' is a Parameter; assign an array or a number, not "
                      f"{describe(value)}")
    if len(shape) != param.ndim or any(isinstance(d, int) and d != s
                                       for d, s in zip(shape, param.shape)):
        raise f.error(f"Parameter '{name}' has shape {param.shape}; assigning a value of "
                      f"shape {tuple(shape)} to it fails", "assign a value of the same shape")
    if not np.can_cast(dtype, param.dtype, casting="same_kind"):
        raise f.error(f"Parameter '{name}' is {param.dtype}; a {dtype} value cannot be "
                      "written into it", f"cast it first: .astype(np.{param.dtype})")
    return data


def _aug_assign(f: Frame, stmt: gast.AugAssign) -> None:
    opname = type(stmt.op).__name__
    target = stmt.target
    rhs = evaluate(f, stmt.value)
    if isinstance(target, gast.Name) and target.id in f.global_names:
        effects.store_global(f, target.id, augmented(f, opname, lookup(f, target.id), rhs),
                             stmt.lineno)
    elif isinstance(target, gast.Name):
        old = lookup(f, target.id)
        f.scope.bind(target.id, augmented(f, opname, old, rhs, in_place=True), stmt.lineno)
    elif isinstance(target, gast.Subscript):
        base = evaluate(f, target.value)
        key = evaluate(f, target.slice)
        old = getitem(f, base, key)
        if isinstance(base, Value) and isinstance(base.type, Tensor):
            new = augmented(f, opname, old, rhs)  # `x[i] += v`: the result goes back into x
        else:  # an item of a list, dict or tuple: `item += v` runs on the item itself
            new = augmented(f, opname, old, rhs, in_place=True)
            if wrote_in_place(old, new):
                if isinstance(base, tuple) or isinstance(base, Value) and isinstance(
                        base.type, TupleType):
                    f.raise_at_runtime(TypeError,
                                       "'tuple' object does not support item assignment")
                return  # NOTE: every holder of the item sees the write (aliases.after_write)
        _store(f, target.value, setitem(f, base, key, new))
    elif isinstance(target, gast.Attribute):
        base = evaluate(f, target.value)
        old = attribute(f, base, target.attr)
        _assign_attribute(f, target, base, augmented(f, opname, old, rhs))
    else:
        raise f.error("unsupported augmented assignment target", node=target)


def wrote_in_place(old: Any, new: Any) -> bool:
    """`new` is `old`'s array written in place (by `augmented`)."""
    node = new.producer if isinstance(new, Value) else None
    return node is not None and node.op.writes is not None and node.inputs[0] is old


def augmented(f: Frame, opname: str, old: Any, rhs: Any, in_place: bool = False) -> Any:
    """`old <op>= rhs`: NumPy's in-place rules for arrays (the result keeps old's shape and
    dtype; with `in_place` it is written into old's buffer, so aliases see it as in eager
    code; a NumPy scalar is immutable, so it is rebound instead), in-place extension for lists,
    plain rebinding for everything else."""
    if isinstance(old, PyList) and opname == "Add" and not isinstance(rhs, Value):
        f.writable(old)  # NOTE: extended in place: every name holding the list sees it
        new = PyList(old.items + as_sequence(f, rhs))
        replace_object(f, old, new)
        return new
    if isinstance(old, Value) and isinstance(old.type, ListType) and opname == "Add":
        return extend(f, old, rhs)  # NOTE: `items += more` extends the list in place
    if in_place and isinstance(old, np.ndarray):
        old = own_array(f, old)  # NOTE: an array built while compiling, written from now on
    new = binary(f, opname, old, rhs)
    if not (isinstance(old, Value) and isinstance(old.type, Tensor) and isinstance(new, Value)):
        return new
    if in_place and not old.type.rank:
        kind = zero_d_kind(f, old)
        if is_mixed_kind(kind):
            raise f.error("this 0-d value is a NumPy array on some paths and a NumPy scalar "
                          "on others, so an in-place operator would change other names only "
                          "on some paths",
                          "write it as an assignment (`x = x + ...`), or make it an array "
                          "on every path with np.asarray")
        if not is_array_kind(kind):
            return new  # NOTE: `s += 1` on a NumPy scalar rebinds s, as `s = s + 1`
    want, got = old.type, new.type
    if isinstance(got, Tensor) and len(got.shape) != len(want.shape) or any(
            isinstance(a, int) and isinstance(b, int) and a != b
            for a, b in zip(want.shape, getattr(got, "shape", ()))):
        raise f.error(f"in-place operation: the result {got} does not fit the array {want}",
                      "assign to a new variable instead (`y = x + ...`)")
    if isinstance(got, Tensor) and got.dtype != want.dtype:
        if not np.can_cast(got.dtype, want.dtype, casting="same_kind"):
            raise f.error(f"in-place operation: cannot cast the result from {got.dtype} to "
                          f"{want.dtype} (the array's dtype)",
                          "assign to a new variable instead, or cast with .astype")
        if not in_place:
            new = f.op("cast", new, dtype=want.dtype)
    if in_place:
        return f.op("setitem", old, new, index=(Ellipsis,))
    return new


def _expr(f: Frame, stmt: gast.Expr) -> None:
    if isinstance(stmt.value, gast.Constant) and isinstance(stmt.value.value, str):
        return  # a docstring
    evaluate(f, stmt.value)


def _pass(f: Frame, stmt: gast.Pass) -> None:
    return None


def _assert(f: Frame, stmt: gast.Assert) -> None:
    test = f.condition(stmt.test)
    known = truth(test)
    if known is True:
        return
    if known is None and stmt.msg is not None and not isinstance(stmt.msg, gast.Constant):
        # NOTE: as Python does, the message is computed only when the assertion fails
        def fail() -> Any:
            f.raise_at_runtime(AssertionError, evaluate(f, stmt.msg))

        control.choose(f, f.op("not", condition_value(f, test, at_run_time=True)), fail,
                       lambda: None)
        return
    message = evaluate(f, stmt.msg) if stmt.msg is not None else None
    if has_runtime(message):
        raise f.error("an assert message must be known when compiling", node=stmt.msg)
    if known is False:
        f.raise_at_runtime(AssertionError, *(() if message is None else (str(message),)))
    f.op("assert", condition_value(f, test, at_run_time=True), f.materialise(
        None if message is None else str(message)))


def _raise(f: Frame, stmt: gast.Raise) -> None:
    if stmt.exc is None:
        if not f.handling:
            raise f.error("a bare `raise` outside an except block is not supported in "
                          "compiled code", "raise an exception: raise ValueError('message')",
                          node=stmt)
        _reraise(f, f.handling[-1])
    exc = stmt.exc
    if isinstance(exc, gast.Name):
        caught = evaluate(f, exc)
        if any(caught is e for e in f.handling):
            _reraise(f, caught)
    if isinstance(exc, gast.Call):
        cls = evaluate(f, exc.func)
        args = [evaluate(f, a) for a in exc.args]
        if exc.keywords:
            raise f.error("exception arguments must be positional", node=exc)
    else:
        cls, args = evaluate(f, exc), []
    if isinstance(cls, BaseException):
        cls, args = type(cls), list(cls.args)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise f.error(f"cannot raise {describe(cls)}", "raise an exception class, e.g. "
                      "raise ValueError('message')", node=exc)
    if any(has_runtime(a) for a in args):
        raise f.error("exception arguments must be known when compiling",
                      "raise with a constant message", node=exc)
    f.raise_at_runtime(cls, *args)


def _reraise(f: Frame, exc: Value) -> None:
    """Raise the exception an except block caught again, and end the path."""
    f.op("reraise", exc)
    raise DeadPath


def _delete(f: Frame, stmt: gast.Delete) -> None:
    """`del name`, `del d[key]`, `del items[i]`."""
    for target in stmt.targets:
        if isinstance(target, gast.Name):
            lookup(f, target.id)  # NOTE: deleting an unbound name raises, as reading it does
            f.scope.unbind(target.id)
        elif isinstance(target, gast.Subscript):
            base = evaluate(f, target.value)
            _store(f, target.value, delitem(f, base, evaluate(f, target.slice)))
        elif isinstance(target, gast.Tuple | gast.List):
            _delete(f, gast.Delete(targets=target.elts))
        else:
            raise f.error(f"`del` of {type(target).__name__} is not supported in compiled code",
                          "rebind the name instead", node=target)


def _return(f: Frame, stmt: gast.Return) -> None:
    raise f.error("internal: a return statement survived canonicalization", node=stmt)


HANDLERS: dict[type, Callable[[Frame, Any], None]] = {
    gast.Assign: _assign, gast.AnnAssign: _ann_assign, gast.AugAssign: _aug_assign,
    gast.Expr: _expr, gast.Pass: _pass, gast.Assert: _assert, gast.Raise: _raise,
    gast.Delete: _delete,
    gast.Return: _return,
}
"""Statement handlers by node class; `builder.py` adds if (`control`) and loops (`loops`)."""
