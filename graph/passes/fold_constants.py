"""Constant folding and branch pruning.

- A pure op whose inputs are all constants runs its kernel at compile time, unless its result
  type says it would be larger than `FOLD_LIMIT` elements (checked before running, so folding
  never allocates much), the result is mutable and could be written or kept by someone, or the
  kernel raises or warns (the error or warning is left for run time, at the user's line).
- An If on a constant condition becomes its taken block; an If whose arms yield the same outer
  value forwards it.
- A While whose condition is false on its (constant) initial values, or a For with constant
  bounds and zero trips, becomes its initial values (after the While's cond, run once inline).
- A loop-carried value the body passes through unchanged is its initial value everywhere, which
  carries constants into loop bodies.
Effects stay in order: when a region goes, control edges are handed to what replaces it.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Iterator

import numpy as np

from ...ops import python as pyops
from ...ops.symbolic import holds_symbols
from ...ops.types import type_of
from ..analysis import NOT_CONSTANT, constant_of, only_read, trip_count
from ..builder import InsertPoint
from ..ir import FOR, IF, TRY, WHILE, Block, Graph, Node, Value
from ..rewriter import Rewriter
from ..types import NoneType, Scalar, StrType, Tensor, TupleType, Type

FOLD_LIMIT = 4096
"""The largest number of elements a folded tensor (or tuple of them) may have."""


def run(graph: Graph, rw: Rewriter) -> bool:
    """Fold constant pure ops and prune regions whose path is known; True if any."""
    _visit(graph.body, rw)
    if rw.changed:
        _mend_control_edges(graph, rw)
    return rw.changed


def _visit(block: Block, rw: Rewriter) -> None:
    for node in list(block.nodes):
        if node.parent is not block:
            continue  # moved away by an earlier rewrite
        if node.is_region:
            _forward_passthroughs(node, rw)
            for inner in node.blocks:  # NOTE: first, so a cond folded to false prunes now
                _visit(inner, rw)
            _prune(node, rw)
        else:
            _fold(node, rw)


def _fold(node: Node, rw: Rewriter) -> None:
    result = _folded(node, [constant_of(v) for v in node.inputs])
    # NOTE: a folded array becomes one shared module constant: only pure readers may see it
    if result is NOT_CONSTANT or (_holds_array(result) and not only_read(node.output)):
        return
    value = rw.builder(InsertPoint.before(node), node.loc).constant(result, node.output.name)
    rw.replace(node, [value])


def _folded(node: Node, args: list[Any]) -> Any:
    """What pure op `node` computes from constant `args`, or NOT_CONSTANT if it is not to fold."""
    if node.is_region or node.effectful or node.op in (pyops.constant, pyops.undefined):
        return NOT_CONSTANT
    if holds_symbols(node.attrs):  # NOTE: a symbolic size is known only once a call comes
        return NOT_CONSTANT
    if any(a is NOT_CONSTANT for a in args) or _elements(node.output.type) > FOLD_LIMIT:
        return NOT_CONSTANT
    if node.op.operator == "Pow" and _huge_power(*args):
        return NOT_CONSTANT
    result = _evaluate(node, args)
    if result is NOT_CONSTANT or isinstance(result, list) or type_of(result) != node.output.type:
        return NOT_CONSTANT
    return result


def _evaluate(node: Node, args: list[Any]) -> Any:
    """The kernel's result, or NOT_CONSTANT if it raises or warns (so run time does that)."""
    # NOTE: warnings are recorded, not turned into errors: the filters are process-wide, and a
    # kernel thread warning meanwhile (runtime/tiers.py) must not raise there
    try:
        with warnings.catch_warnings(record=True) as warned, np.errstate(
                divide="raise", over="raise", invalid="raise"):
            warnings.simplefilter("always")
            result = node.op.kernel(*args, **node.attrs)
            type_of(result)
    except Exception:
        return NOT_CONSTANT
    return NOT_CONSTANT if warned else result


def _elements(t: Type) -> float:
    """How many elements a value of type `t` holds (infinite when unknown or unbounded)."""
    if isinstance(t, Scalar | NoneType | StrType):
        return 1
    if isinstance(t, Tensor) and t.is_static:
        return math.prod(t.shape)
    if isinstance(t, TupleType):
        return sum(_elements(e) for e in t.elements)
    return math.inf


def _huge_power(base: Any, exponent: Any) -> bool:
    """Python's int ** int is exact: a large one would take ages and memory to fold."""
    ints = all(isinstance(a, int) and not isinstance(a, bool) for a in (base, exponent))
    return ints and exponent > 0 and abs(base).bit_length() * exponent > 64 * FOLD_LIMIT


def _holds_array(value: Any) -> bool:
    if isinstance(value, tuple):
        return any(_holds_array(v) for v in value)
    return isinstance(value, np.ndarray)


def _prune(node: Node, rw: Rewriter) -> None:
    """Replace a region whose path is known at compile time by what that path computes."""
    if node.op == TRY:
        return  # NOTE: which blocks run is known only when something raises
    if node.op == IF:
        cond = constant_of(node.inputs[0])
        if cond is not NOT_CONSTANT:
            try:
                taken = node.then if bool(cond) else node.else_
            except Exception:
                return  # NOTE: bool() of a many-element array raises at run time too
            inlined = list(taken.nodes)
            results = rw.inline(taken, InsertPoint.before(node), [])
            _hand_over_effects(node, [n for n in inlined if n.effectful], rw)
            rw.replace(node, results)
            return
        same = [a if a is b else None for a, b in zip(node.then.results, node.else_.results)]
        for out, value in zip(node.outputs, same):
            if value is not None and value.owner not in node.blocks:
                rw.replace_value(out, value)
    elif _never_runs(node):
        inits = list(node.inits)
        effects = node.op == WHILE and any(n.effectful for n in node.cond.nodes)
        inlined = list(node.cond.nodes) if effects else []
        if inlined:  # NOTE: the cond still runs once, for its effects
            rw.inline(node.cond, InsertPoint.before(node), inits)
        _hand_over_effects(node, [n for n in inlined if n.effectful], rw)
        rw.replace(node, inits)


def _hand_over_effects(region: Node, inlined: list[Node], rw: Rewriter) -> None:
    """Keep the effect chain whole when `region` goes: its first inlined effect follows what the
    region followed, and what followed the region follows its last inlined effect instead."""
    if inlined and not inlined[0].control_inputs:
        rw.set_control_inputs(inlined[0], region.control_inputs)
    last = inlined[-1:] or region.control_inputs
    for other in region.parent.nodes:
        if region in other.control_inputs:
            deps = [d for dep in other.control_inputs for d in (last if dep is region else [dep])]
            rw.set_control_inputs(other, list(dict.fromkeys(deps)))


def _mend_control_edges(graph: Graph, rw: Rewriter) -> None:
    """A region whose effects were all pruned away (a zero-trip loop inside it) is no longer a
    valid control input, nor is a node gone from the graph: edges to one go to what it was
    ordered after instead."""
    for node in graph.walk():
        if not all(_orders(dep) for dep in node.control_inputs):
            rw.set_control_inputs(node, list(dict.fromkeys(_effects_among(node.control_inputs))))


def _orders(dep: Node) -> bool:
    return dep.parent is not None and dep.effectful


def _effects_among(deps: list[Node]) -> Iterator[Node]:
    for dep in deps:
        if _orders(dep):
            yield dep
        else:
            yield from _effects_among(dep.control_inputs)


def _never_runs(node: Node) -> bool:
    if node.op == FOR:
        return trip_count(node) == 0
    flag = _first_test(node)
    try:
        return flag is not NOT_CONSTANT and not bool(flag)
    except Exception:
        return False


def _first_test(loop: Node) -> Any:
    """The While's condition on its initial values, folding the cond block over them (its
    effects and regions give unknown values)."""
    known: dict[Value, Any] = {p: constant_of(v) for p, v in zip(loop.cond.params, loop.inputs)}
    for node in loop.cond.nodes:
        if not node.is_region:
            args = [known[v] if v in known else constant_of(v) for v in node.inputs]
            known[node.output] = _folded(node, args)
    flag = loop.cond.results[0]
    return known[flag] if flag in known else constant_of(flag)


def _forward_passthroughs(node: Node, rw: Rewriter) -> None:
    """A carried slot whose body yields its own parameter never changes: use the init."""
    if node.op not in (WHILE, FOR):
        return
    for i, (init, result) in enumerate(zip(node.inits, node.body.results)):
        if result is not node.carried(node.body)[i]:
            continue
        for block in node.blocks:
            rw.replace_value(node.carried(block)[i], init)
        rw.replace_value(node.outputs[i], init)
