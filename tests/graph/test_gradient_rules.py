"""Every op's gradient rule against float64 central finite differences.

Each op must either declare `grad=NO_GRAD` (its result is locally constant in its inputs, which
finite differences confirm here too) or have a rule and a sample below; so adding an op without
a correct rule fails this file. Rules are checked on one-node graphs run by the interpreter, the
result projected on a random direction (a full vector-Jacobian product), inputs drawn by
hypothesis."""
from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import amber
from amber.graph import Builder, Graph, InsertPoint, Node, run_graph, verify
from amber.graph.analysis import differentiable
from amber.graph.autodiff import differentiate
from amber.ops import Dyn, registry
from amber.ops.opdef import NO_GRAD
from amber.ops.types import ListType, Tensor, TupleType, type_of

F = np.float64
EPS = 1e-6

GradPair = collections.namedtuple("GradPair", ("first", "second"))

# op name -> samples: (inputs, attrs); float64 arrays are differentiated, everything else is
# held fixed. Shapes matter (broadcasting, axes); values are redrawn by hypothesis.
SAMPLES: dict[str, list[tuple[tuple, dict]]] = {
    **{name: [((np.ones((2, 3)),), {})] for name in
       ("neg", "pos", "abs", "exp", "tanh", "sigmoid", "relu", "gelu", "sin", "cos", "square",
        "float")},
    "float": [((np.ones(()),), {})],
    **{name: [((np.ones((2, 3)),), {})] for name in ("log", "sqrt", "rsqrt", "reciprocal",
                                                     "log1p", "log2", "log10")},
    **{name: [((np.ones((2, 3)),), {})] for name in ("expm1", "exp2", "tan", "arctan", "sinh",
                                                     "cosh")},
    **{name: [((np.ones((2, 3)), np.ones((3,))), {}), ((np.ones((2, 1)), np.ones((1, 3))), {}),
              ((np.ones((2, 3)), 2.5), {})]
       for name in ("add", "sub", "mul", "div", "maximum", "minimum", "mod", "mindspore_div",
                    "arctan2", "hypot", "fmod", "logaddexp")},
    "pow": [((np.ones((2, 3)), np.ones((3,))), {}), ((np.ones((2, 3)), 3), {})],
    "select": [((np.array([True, False, True]), np.ones((2, 3)), np.ones((3,))), {})],
    "clip": [((np.ones((2, 3)), -0.5, 0.5), {}), ((np.ones((2, 3)), None, np.zeros(3)), {})],
    **{name: [((np.ones((2, 3)),), {}), ((np.ones((2, 3)),), {"axis": 1, "keepdims": True}),
              ((np.ones((2, 3, 2)),), {"axis": (0, 2)})]
       for name in ("sum", "mean", "prod", "reduce_max", "reduce_min")},
    "make_tuple": [((np.ones(2), np.ones(3)), {})],
    "make_namedtuple": [((np.ones(2), np.ones(3)), {"cls": GradPair})],
    "tuple_getitem": [(((np.ones(2), np.ones(3)),), {"index": 1})],
    "depend": [((np.ones(2),), {})],
    "min": [((np.ones(()), np.ones(())), {}), (([np.ones(()), np.ones(())],), {})],
    "max": [((np.ones(()), np.ones(())), {}), (([np.ones(()), np.ones(()), np.ones(())],), {})],
    "list_new": [((np.ones(2), np.ones(2)), {})],
    "list_append": [(([np.ones(2)], np.ones(2)), {})],
    "list_add": [(([np.ones(2)], [np.ones(2)]), {})],
    "list_copy": [(([np.ones(2), np.ones(2)],), {})],
    "list_sum": [(([np.ones((2, 3)), np.ones((1, 3))], np.ones((1, 3))), {}),
                 (([np.ones(()), np.ones(())], 0.5), {})],
    "sum_to_items": [((np.ones((2, 3)), [np.ones((1, 3)), np.ones((2, 1))]), {}),
                     ((np.ones(3), [np.ones(3)]), {})],
    "list_extend": [(([np.ones(2), np.ones(2)], [np.ones(2)]), {})],
    "list_concat": [(([np.ones(2)], [np.ones(2), np.ones(2)]), {})],
    "list_delete": [(([np.ones(2), np.ones(2), np.ones(2)], 1), {}),
                    (([np.ones(2), np.ones(2), np.ones(2)], -1), {})],
    "list_insert": [(([np.ones(2), np.ones(2)], 1, np.ones(2)), {}),
                    (([np.ones(2), np.ones(2)], -1, np.ones(2)), {}),
                    (([np.ones(2), np.ones(2)], 5, np.ones(2)), {}),
                    (([np.ones(2), np.ones(2)], -7, np.ones(2)), {})],
    "array": [((np.ones((2, 3)),), {}), ((np.ones(()),), {"dtype": np.dtype(np.float64)})],
    "asarray": [((np.ones((2, 3)),), {})],
    "full": [((np.ones(()),), {"shape": (2, 3)}), ((np.ones(3),), {"shape": (2, 3)})],
    "full_like": [((np.ones((2, 3)), np.ones(())), {})],
    "one_hot": [((np.array([0, 2, 1]), np.ones(()), np.ones(())), {"depth": 3})],
    "getitem": [((np.ones((3, 4)),), {"index": (1, slice(None, None, 2))}),
                ((np.ones((3, 4)), np.array([0, 2, 0])), {"index": (Dyn(0),)}),
                ((np.ones((3, 4)), np.array([True, False, True])), {"index": (Dyn(0), 1)}),
                (([np.ones(2), np.ones(2)],), {"index": (1,)})],
    "setitem": [((np.ones((3, 4)), np.ones(4)), {"index": (1,)}),
                ((np.ones((3, 4)), np.ones(()), np.array([0, 2])), {"index": (Dyn(0), 1)})],
    "index_add": [((np.ones((3, 4)), np.ones(4)), {"index": (1,)})],
    "index_add_into": [((np.ones((3, 4)), np.ones(4)), {"index": (1,)}),
                       ((np.ones((3, 4)), np.ones((2, 4)), np.array([0, 0])),
                        {"index": (Dyn(0),)})],
    "list_add_at": [(([np.ones(2), np.ones(2)], np.ones(2)), {"index": (1,)}),
                    (([np.ones(2), np.ones(2), np.ones(2)], [np.ones(2), np.ones(2)]),
                     {"index": (slice(1, None),)})],
    "index_zero": [((np.ones((3, 4)),), {"index": (slice(1, None),)})],
    "copy": [((np.ones((3, 4)),), {})],
    "sum_to": [((np.ones((2, 3)),), {"shape": (1, 3)}), ((np.ones((2, 3)),), {"shape": (3,)})],
    "split_like": [((np.ones((2, 5)), [np.ones((2, 2)), np.ones((2, 3))]), {"axis": 1})],
    "unstack": [((np.ones((3, 2)),), {"axis": 0}), ((np.ones((3, 2)),), {"axis": 1})],
    "reshape": [((np.ones((2, 3)),), {"shape": (3, 2)}), ((np.ones((2, 3)),), {"shape": (-1,)})],
    "transpose": [((np.ones((2, 3)),), {}), ((np.ones((2, 3, 4)),), {"perm": (1, 2, 0)})],
    "expand_dims": [((np.ones((2, 3)),), {"axis": 1})],
    "squeeze": [((np.ones((2, 1, 3)),), {})],
    "flatten": [((np.ones((2, 3, 2)),), {}), ((np.ones((2, 3)),), {"start_dim": 0})],
    "concat": [(((np.ones((2, 1)), np.ones((2, 3))),), {"axis": 1}),
               (([np.ones((2, 2)), np.ones((1, 2))],), {"axis": 0})],
    "stack": [(((np.ones(3), np.ones(3)),), {"axis": 1}), (([np.ones(3), np.ones(3)],), {})],
    "split": [((np.ones((4, 3)),), {"axis": 0, "sections": 2}),
              ((np.ones((2, 5)),), {"axis": 1, "sizes": (2, 3)})],
    "tile": [((np.ones((2, 3)),), {"reps": (2, 1)}), ((np.ones(3),), {"reps": (2, 2)})],
    "broadcast_to": [((np.ones((3,)),), {"shape": (2, 3)}), ((np.ones((2, 1)),), {"shape": (2, 4)})],
    "pad": [((np.ones((2, 3)),), {"paddings": ((1, 0), (0, 2))})],
    "flip": [((np.ones((2, 3)),), {}), ((np.ones((2, 3)),), {"axis": 1})],
    "repeat": [((np.ones((2, 3)),), {"repeats": 2}), ((np.ones((2, 3)),), {"repeats": 3, "axis": 1})],
    "cast": [((np.ones((2, 3)),), {"dtype": np.dtype(np.float64)})],
    "matmul": [((np.ones((2, 3)), np.ones((3, 4))), {}),
               ((np.ones((3, 2)), np.ones((4, 3))), {"transpose_a": True, "transpose_b": True}),
               ((np.ones((2, 3)), np.ones((4, 3))), {"transpose_b": True}),
               ((np.ones((3, 2)), np.ones((3, 4))), {"transpose_a": True}),
               ((np.ones(3), np.ones((2, 3, 4))), {}), ((np.ones((2, 2, 3)), np.ones(3)), {}),
               ((np.ones(3), np.ones(3)), {}), ((np.ones((2, 2, 3)), np.ones((3, 4))), {})],
    "dot": [((np.ones((2, 3)), np.ones((3, 4))), {}), ((np.ones(3), np.ones(3)), {})],
    "dense": [((np.ones((2, 3)), np.ones((4, 3)), np.ones(4)), {"has_bias": True}),
              ((np.ones((2, 5, 3)), np.ones((4, 3))), {}), ((np.ones(3), np.ones((4, 3))), {})],
    "softmax": [((np.ones((2, 3)),), {}), ((np.ones((2, 3)),), {"axis": 0})],
    "log_softmax": [((np.ones((2, 3)),), {}), ((np.ones((2, 3, 2)),), {"axis": 1})],
    "softmax_cross_entropy": [
        ((np.ones((4, 3)), np.array([0, 2, 1, 2])), {"sparse": True, "reduction": "mean"}),
        ((np.ones((4, 3)), np.ones((4, 3))), {"sparse": False, "reduction": "none"}),
        ((np.ones((2, 4, 3)), np.array([[0, 2, 1, 2], [1, 1, 0, 2]])),
         {"sparse": True, "reduction": "sum"})],
    "nll_loss": [((np.ones((4, 3)), np.array([0, 2, 1, -100])), {}),
                 ((np.ones((4, 3)), np.array([0, 2, 1, 1]), np.array([0.5, 2.0, 1.0])),
                  {"reduction": "sum"}),
                 ((np.ones((4, 3)), np.array([0, 2, -100, 1]), np.array([0.5, 2.0, 1.0])), {}),
                 ((np.ones((2, 3, 2)), np.array([[0, 2], [1, 1]])), {"reduction": "none"})],
    "mse_loss": [((np.ones((2, 3)), np.ones(3)), {}), ((np.ones((2, 3)), np.ones((2, 3))),
                                                       {"reduction": "none"})],
    "batch_norm": [((np.ones((2, 3, 2, 2)), np.ones(3), np.ones(3), np.ones(3), np.ones(3)), {}),
                   ((np.ones((4, 3)), np.ones(3), np.ones(3), np.ones(3), np.ones(3)), {})],
    "batch_norm_train": [((np.ones((2, 3, 2, 2)), np.ones(3), np.ones(3)), {}),
                         ((np.ones((4, 3)), np.ones(3), np.ones(3)), {})],
    "layer_norm": [((np.ones((2, 3, 4)), np.ones(4), np.ones(4)), {}),
                   ((np.ones((2, 3, 4)), np.ones((3, 4)), np.ones((3, 4))),
                    {"begin_norm_axis": 1, "begin_params_axis": 1})],
    "conv2d": [((np.ones((2, 3, 5, 5)), np.ones((4, 3, 3, 3)), np.ones(4)), {}),
               ((np.ones((1, 4, 6, 5)), np.ones((6, 2, 2, 3))),
                {"stride": (2, 1), "padding": (1, 0, 2, 1), "pad_mode": "pad", "groups": 2}),
               ((np.ones((1, 2, 5, 5)), np.ones((2, 2, 3, 3))),
                {"dilation": (2, 1), "pad_mode": "same"})],
    "conv2d_grad_input": [((np.ones((2, 4, 3, 3)), np.ones((4, 3, 3, 3))),
                           {"x_shape": (2, 3, 5, 5)})],
    "conv2d_grad_weight": [((np.ones((2, 3, 5, 5)), np.ones((2, 4, 3, 3))),
                            {"w_shape": (4, 3, 3, 3)})],
    "conv2d_nhwc": [((np.ones((2, 5, 5, 3)), np.ones((4, 3, 3, 3)), np.ones(4)), {}),
                    ((np.ones((1, 6, 5, 4)), np.ones((6, 4, 2, 3))),
                     {"stride": (2, 1), "padding": (1, 0, 2, 1), "pad_mode": "pad"}),
                    ((np.ones((1, 5, 5, 2)), np.ones((2, 2, 3, 3))),
                     {"dilation": (2, 1), "pad_mode": "same"})],
    "conv2d_nhwc_grad_input": [((np.ones((2, 3, 3, 4)), np.ones((4, 3, 3, 3))),
                                {"x_shape": (2, 3, 5, 5)}),
                               ((np.ones((1, 3, 3, 4)), np.ones((4, 3, 3, 3))),
                                {"x_shape": (1, 3, 5, 5), "stride": (2, 2), "pad_mode": "same"})],
    "conv2d_nhwc_grad_weight": [((np.ones((2, 5, 5, 3)), np.ones((2, 3, 3, 4))),
                                 {"w_shape": (4, 3, 3, 3)})],
    "max_pool2d": [((np.ones((2, 2, 4, 4)),), {"kernel_size": (2, 2), "stride": (2, 2)}),
                   ((np.ones((1, 2, 5, 5)),), {"kernel_size": (3, 3), "stride": (2, 2),
                                               "pad_mode": "same"})],
    "avg_pool2d": [((np.ones((2, 2, 4, 4)),), {"kernel_size": (2, 2), "stride": (2, 2)}),
                   ((np.ones((1, 2, 5, 5)),), {"kernel_size": (3, 3), "stride": (2, 2),
                                               "pad_mode": "pad", "padding": (1, 1, 1, 1),
                                               "count_include_pad": False})],
    "avg_pool2d_grad": [((np.ones((1, 2, 2, 2)),), {"x_shape": (1, 2, 5, 5),
                                                    "kernel_size": (3, 3), "stride": (2, 2)})],
    "embedding": [((np.array([[0, 2], [2, 1]]), np.ones((3, 4))), {})],
    "gather": [((np.ones((3, 4)), np.array([0, 2, 0])), {"axis": 1}),
               ((np.ones((3, 4)), np.array([1, 1])), {"axis": 0})],
    "relu6": [((np.ones((2, 3)) * 3,), {})],
    "leaky_relu": [((np.ones((2, 3)),), {}), ((np.ones((2, 3)),), {"alpha": 1.5})],
    "softplus": [((np.ones((2, 3)),), {}), ((np.ones((2, 3)),), {"beta": 2, "threshold": 1})],
    "erf": [((np.ones((2, 3)),), {})],
    "topk": [((np.ones((2, 5)),), {"k": 2}), ((np.ones(4),), {"k": 3, "largest": False})],
    "sort": [((np.ones((2, 5)),), {}), ((np.ones(4),), {"kind": "stable"}),
             ((np.ones((3, 2, 4)),), {"axis": 0})],
    "cumsum": [((np.ones((2, 3)),), {}), ((np.ones((2, 3)),), {"axis": 0}),
               ((np.ones(4),), {"axis": -1}), ((np.ones(()),), {"axis": 0})],
    "gather_nd": [((np.ones((3, 4)), np.array([[0, 1], [2, 3], [0, 1]])), {}),
                  ((np.ones((3, 4, 2)), np.array([[2], [0]])), {})],
    "l2_normalize": [((np.ones((2, 3)),), {}), ((np.ones((2, 3, 2)),), {"axis": (1, 2)}),
                     ((np.ones((2, 3)),), {"axis": 1, "epsilon": 100.0})],
    "resize_bilinear": [((np.ones((1, 2, 3, 4)),), {"size": (5, 3)}),
                        ((np.ones((1, 1, 3, 4)),), {"size": (2, 7), "align_corners": True}),
                        ((np.ones((2, 1, 3, 2)),), {"size": (4, 4),
                                                    "half_pixel_centers": True})],
    "resize_bilinear_grad": [((np.ones((1, 2, 5, 3)),), {"in_size": (3, 4)})],
}
ADJOINT_PAIRS = ("max_pool2d_grad", "max_pool2d_pick")
REFUSED = ("all_reduce_grads", "broadcast_params")
"""Ops whose rule refuses differentiation with a message (collectives: tested below)."""
AFTER_AUTODIFF = ("placed_matmul",)
"""Ops only a pass makes, in a step's code after its gradients are built (never differentiated;
their rule refuses)."""
"""Ops whose other inputs must stay consistent (`out` is max pooling's result), checked by
`test_max_pool_gradient_and_pick_are_adjoint` instead of finite differences."""
UNUSUAL_DOMAIN = {"log", "log1p", "log2", "log10", "tan", "sqrt", "rsqrt", "reciprocal", "pow",
                  "div", "mindspore_div", "mod", "fmod", "hypot", "arctan2", "batch_norm",
                  "nll_loss"}
"""Ops whose float inputs are drawn from [0.5, 1.4]: away from zero and tan's pole (their rules
are exact there)."""


def test_every_op_declares_its_gradient() -> None:
    missing = [name for name, op in registry.OPS.items() if op.grad is None and op.expand is None]
    assert not missing, f"ops with no gradient rule and no NO_GRAD declaration: {missing}"
    unsampled = [name for name, op in registry.OPS.items()
                 if op.grad not in (None, NO_GRAD) and name not in SAMPLES
                 and name not in ADJOINT_PAIRS and name not in REFUSED + AFTER_AUTODIFF]
    assert not unsampled, f"ops with a gradient rule but no sample here: {unsampled}"


@pytest.mark.parametrize("name", REFUSED)
def test_differentiating_a_collective_is_refused(name: str) -> None:
    spelling = getattr(amber.ops, name)

    def loss(x):
        return spelling((x * 2.0,))[0].sum()
    with pytest.raises(amber.CompileError, match="is not differentiable: reduce gradients"):
        amber.grad(loss)(np.ones(3, np.float32))


def _redraw(value: Any, rng: np.random.Generator, positive: bool) -> Any:
    if isinstance(value, np.ndarray) and value.dtype == F:
        # NOTE: below pi / 2, tan's pole (finite differences there fail, not the rule)
        drawn = rng.uniform(0.5, 1.4, value.shape) if positive else \
            rng.standard_normal(value.shape)
        return drawn.astype(F)
    if isinstance(value, list | tuple):
        return type(value)(_redraw(v, rng, positive) for v in value)
    return value


def _float_paths(value: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(value, np.ndarray):
        return [path] if value.dtype == F else []
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in _float_paths(v, (*path, i))]
    return []


def _get(value: Any, path: tuple) -> Any:
    for i in path:
        value = value[i]
    return value


def _one_node_graph(op_name: str, inputs: tuple, attrs: dict) -> tuple[Graph, list[Any]]:
    """A graph with every input a graph input, the op applied, projected on a fixed random
    direction and summed; returns it and the values of its inputs."""
    graph = Graph(op_name)
    b = Builder(InsertPoint.at_end(graph.body))
    values = [graph.body.add_param(type_of(v), f"x{i}") for i, v in enumerate(inputs)]
    out = b.op(op_name, *values, **attrs)
    graph.body.set_results([out])
    return graph, list(inputs)


def _project(value: Any, rng: np.random.Generator) -> tuple[float, Any]:
    """(sum(value * R), R) for a random R shaped like value (tuples and lists item by item)."""
    if isinstance(value, tuple | list):
        parts = [_project(v, rng) for v in value]
        kind = list if isinstance(value, list) else tuple  # NOTE: a namedtuple's seed too
        return sum(p[0] for p in parts), kind(p[1] for p in parts)
    if isinstance(value, np.ndarray | np.generic | float) and np.asarray(value).dtype.kind == "f":
        r = rng.standard_normal(np.shape(value))
        return float(np.sum(np.asarray(value) * r)), r
    return 0.0, None


def _check_rule(op_name: str, inputs: tuple, attrs: dict, seed: int) -> None:
    rng = np.random.default_rng(seed)
    inputs = tuple(_redraw(v, rng, op_name in UNUSUAL_DOMAIN) for v in inputs)
    graph, values = _one_node_graph(op_name, inputs, attrs)
    (out,) = graph.outputs
    forward = run_graph(graph, *_copy(values))  # NOTE: list_append writes its input
    _, direction = _project(forward, np.random.default_rng(seed + 1))
    b = Builder(InsertPoint.at_end(graph.body))
    seed_value = graph.body.add_param(out.type, "seed")
    wrt = [v for v in graph.inputs[:-1] if differentiable(v.type)]
    grads = differentiate(graph, {out: seed_value}, wrt)
    results = [g if g is not None else b.op("zeros_like", w) if isinstance(w.type, Tensor)
               else b.op("list_zeros_like", w) if isinstance(w.type, ListType)
               else b.constant(0.0) for g, w in zip(grads, wrt)]
    graph.body.set_results([b.op("make_tuple", *results)] if results else [out])
    verify(graph)
    if not wrt:
        return
    got = run_graph(graph, *_copy(values), direction)
    for k, w in enumerate(wrt):
        arg = w.index
        for path in _float_paths(inputs[arg]):
            want = _finite_difference(op_name, inputs, attrs, arg, path, direction)
            have = _get(got[k], path)
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{op_name}: d input {arg} {path}")


def _finite_difference(op_name: str, inputs: tuple, attrs: dict, arg: int, path: tuple,
                       direction: Any) -> np.ndarray:
    op = registry.OPS[op_name]
    base = _get(inputs[arg], path)
    grad = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        total = []
        for step in (EPS, -EPS):
            trial = _copy(inputs)
            cell = _get(trial[arg], path)
            cell[idx] += step
            total.append(_project_with(op.kernel(*trial, **op.full_attrs(attrs)), direction))
        grad[idx] = (total[0] - total[1]) / (2 * EPS)
    return grad


def _copy(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list | tuple):
        return type(value)(_copy(v) for v in value)
    return value


def _project_with(value: Any, direction: Any) -> float:
    if isinstance(value, tuple | list):
        return sum(_project_with(v, d) for v, d in zip(value, direction))
    if direction is None:
        return 0.0
    return float(np.sum(np.asarray(value, dtype=F) * direction))


RULED = sorted((name, i) for name, samples in SAMPLES.items() for i in range(len(samples)))


@pytest.mark.parametrize("name,i", RULED, ids=[f"{n}-{i}" for n, i in RULED])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_rule_matches_finite_differences(name: str, i: int, seed: int) -> None:
    inputs, attrs = SAMPLES[name][i]
    _check_rule(name, inputs, attrs, seed)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), same=st.booleans())
def test_max_pool_gradient_and_pick_are_adjoint(seed: int, same: bool) -> None:
    """<max_pool2d_grad(x, out, g), u> == <g, max_pool2d_pick(x, out, u)>, with ties (`same`)
    going to one element only."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (2, 2, 5, 5)).astype(F) if same else rng.standard_normal((2, 2, 5, 5))
    attrs = {"kernel_size": (3, 3), "stride": (2, 2), "pad_mode": "same"}
    ops = registry.OPS
    out = ops["max_pool2d"].kernel(x, **ops["max_pool2d"].full_attrs(attrs))
    g, u = rng.standard_normal(out.shape), rng.standard_normal(x.shape)
    dx = ops["max_pool2d_grad"].kernel(x, out, g, **ops["max_pool2d_grad"].full_attrs(attrs))
    picked = ops["max_pool2d_pick"].kernel(x, out, u, **ops["max_pool2d_pick"].full_attrs(attrs))
    np.testing.assert_allclose(np.sum(dx * u), np.sum(g * picked), rtol=1e-10)
    np.testing.assert_allclose(dx.sum(), g.sum(), rtol=1e-10)  # one element per window
