"""Every gradient rule over a symbolic size: for each sample of tests/graph/test_gradient_rules.py,
one size of its arrays becomes the symbol N (where it occurs, as the runtime names a dynamic
batch), the one-node graph is differentiated with those symbolic types, and the interpreter runs
it at concrete sizes: the gradients must equal those of the graph built for the concrete shapes
(which test_gradient_rules checks against finite differences). A rule may refuse a symbolic size
(listed below, with why); it may never compute something else."""
from __future__ import annotations

import importlib.util
import os
import warnings
from typing import Any

import numpy as np
import pytest

from amber.graph import Builder, Graph, InsertPoint, run_graph, verify
from amber.graph.analysis import differentiable
from amber.graph.autodiff import NotDifferentiable, differentiate
from amber.ops import registry
from amber.ops.symbolic import substitute, symbol
from amber.ops.types import ListType, Tensor, TupleType, Type, join_types, type_of

_spec = importlib.util.spec_from_file_location(
    "gradient_samples", os.path.join(os.path.dirname(__file__), "test_gradient_rules.py"))
_rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rules)
SAMPLES = _rules.SAMPLES
N = symbol("N")

REFUSES_SYMBOLS = {
    "concat": "the pieces' offsets along a symbolic axis are not static slices",
    "sort": "a one-hot over the sorted axis needs its size",
    "cumsum": "(axis=None) reshaping the flattened adjoint back needs the static shape",
    "split": "pieces of a symbolic size",
    "tile": "tiling a symbolic size",
    "repeat": "repeating along a symbolic size",
    "squeeze": "(forward) axis=None: a symbolic dim may or may not be 1",
    "batch_norm_train": "a count over several symbolic axes (N*H*W with H, W symbolic too) is "
                        "not affine",
    "gather_nd": "the last dim of indices is how many axes are indexed, which sets the result's "
                 "rank",
    "topk": "which k of a run-time number of positions are picked needs a scatter of run-time "
            "size",
    "resize_bilinear": "the interpolation weights of a run-time image size",
    "resize_bilinear_grad": "the interpolation weights of a run-time image size",
}
"""Ops whose gradient rule refuses a symbolic size (a compile error, never a wrong result)."""


def _sizes(value: Any) -> list[int]:
    if isinstance(value, np.ndarray):
        return [d for d in value.shape if d >= 2]
    if isinstance(value, tuple | list):
        return [d for v in value for d in _sizes(v)]
    return []


def _symbolic_type(value: Any, size: int | None) -> Type:
    """The value's type with axes of length `size` made N; inside tuples and lists only when
    `size` is not None there (a symbol must be readable from a tensor input)."""
    if isinstance(value, np.ndarray):
        return Tensor(tuple(N if d == size else d for d in value.shape), value.dtype)
    if isinstance(value, tuple):
        return TupleType(tuple(_symbolic_type(v, size) for v in value))
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return ListType(join_types([_symbolic_type(v, size) for v in value]))
    return type_of(value)


def _symbolic_types(inputs: tuple, size: int) -> list[Type]:
    top = any(isinstance(v, np.ndarray) and size in v.shape for v in inputs)
    return [_symbolic_type(v, size if top or isinstance(v, np.ndarray) else None)
            for v in inputs]


def _resized(value: Any, size: int, n: int) -> Any:
    if isinstance(value, np.ndarray):
        for axis, d in enumerate(value.shape):
            if d == size:
                value = np.take(value, np.arange(n) % size, axis=axis)
        return value
    if isinstance(value, tuple | list):
        return type(value)(_resized(v, size, n) for v in value)
    return value


def _fits(t: Type, value: Any, n: int) -> bool:
    """Whether `value` is of type `t` when N is n (tuple and list items too)."""
    if isinstance(t, Tensor):
        return np.ndim(value) == t.rank and all(
            d == "?" or substitute(d, {"N": n}) == s for d, s in zip(t.shape, np.shape(value)))
    if isinstance(t, TupleType):
        return all(_fits(e, v, n) for e, v in zip(t.elements, value))
    if isinstance(t, ListType):
        return all(_fits(t.element, v, n) for v in value)
    return True


def _gradient_graph(op_name: str, types: list[Type], attrs: dict) -> Graph:
    """The op on inputs of `types`, and the gradients of <out, seed> w.r.t. its float inputs."""
    graph = Graph(op_name)
    b = Builder(InsertPoint.at_end(graph.body))
    values = [graph.body.add_param(t, f"x{i}") for i, t in enumerate(types)]
    out = b.op(op_name, *values, **attrs)
    seed = graph.body.add_param(out.type, "seed")
    wrt = [v for v in values if differentiable(v.type)]
    grads = differentiate(graph, {out: seed}, wrt)
    results = [g if g is not None else b.op("zeros_like", w) if isinstance(w.type, Tensor)
               else b.op("list_zeros_like", w) if isinstance(w.type, ListType)
               else b.constant(0.0) for g, w in zip(grads, wrt)]
    graph.body.set_results([b.op("make_tuple", *results, out)])
    verify(graph)
    return graph


def _cases() -> list[tuple[str, int, int]]:
    return [(name, i, size) for name, samples in sorted(SAMPLES.items())
            for i, (inputs, _) in enumerate(samples) for size in sorted(set(_sizes(inputs)))]


def _close(a: Any, b: Any) -> None:
    if isinstance(a, tuple | list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    else:
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                   rtol=1e-12, atol=1e-12)


def _seed_like(value: Any, rng: np.random.Generator) -> Any:
    """A random adjoint shaped like the op's result (zeros where it is not float)."""
    if isinstance(value, tuple | list):
        items = [_seed_like(v, rng) for v in value]
        return value._make(items) if hasattr(value, "_make") else type(value)(items)
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype.kind == "f":
            return rng.standard_normal(np.shape(value)).astype(value.dtype)
        return np.zeros_like(value)
    return rng.standard_normal() if isinstance(value, float) else value


@pytest.mark.parametrize("name,i,size", _cases(), ids=str)
def test_gradient_with_a_symbolic_size_equals_the_static_one(name: str, i: int,
                                                             size: int) -> None:
    inputs, attrs = SAMPLES[name][i]
    op = registry.OPS[name]
    try:
        symbolic = _gradient_graph(name, _symbolic_types(inputs, size), attrs)
    except (NotImplementedError, NotDifferentiable, ValueError, TypeError) as exc:
        assert name in REFUSES_SYMBOLS, f"{name}: refuses a symbolic size: {exc}"
        return
    rng = np.random.default_rng(i)
    checked = 0
    for n in (size, size + 1, 1):
        args = [_rules._redraw(_resized(v, size, n), rng, name in _rules.UNUSUAL_DOMAIN)
                for v in inputs]
        if not all(_fits(p.type, v, n) for p, v in zip(symbolic.inputs, args)):
            continue  # NOTE: a size that only a static item of a tuple or list had
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                seed = _seed_like(op.kernel(*_rules._copy(args), **op.full_attrs(attrs)), rng)
                static = _gradient_graph(name, [type_of(v) for v in args], attrs)
                want = run_graph(static, *_rules._copy(args), seed)
            except Exception:
                continue  # NOTE: these sizes do not fit the sample (eager refuses them too)
            try:
                got = run_graph(symbolic, *_rules._copy(args), seed)
            except ValueError as exc:  # NOTE: the entry check: these args are not of its types
                assert str(exc).startswith("argument "), exc
                continue
        _close(got, want)
        checked += 1
    assert checked, f"{name}: no size ran"
