"""Every op's tangent (forward mode) against float64 central differences.

amber derives forward mode from each op's gradient rule (graph/jacobian.py: the transpose of
the linear backward), so this file checks, for every sample of test_gradient_rules.py, that the
derived tangent of a one-node graph along a random direction equals the central difference of
the op's kernel along that direction. An op whose rule cannot be transposed must refuse
(NotDifferentiable), never give a wrong tangent."""
from __future__ import annotations

import importlib.util
import os
from typing import Any

import numpy as np
import pytest

from amber.graph import Builder, Graph, InsertPoint, run_graph, verify
from amber.graph.analysis import differentiable
from amber.graph.jacobian import jvp_of
from amber.ops import registry
from amber.ops.types import Tensor, type_of

_spec = importlib.util.spec_from_file_location(
    "gradient_rules", os.path.join(os.path.dirname(__file__), "test_gradient_rules.py"))
rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rules)

EPS = 1e-6
CASES = rules.RULED
"""Float arrays get tangents; list and tuple inputs are held fixed (their items' tangents are
checked through programs in tests/gradients/test_transforms.py)."""


def _tangent_graph(name: str, inputs: tuple, attrs: dict) -> tuple[Graph, list[int]]:
    graph = Graph(name)
    b = Builder(InsertPoint.at_end(graph.body))
    values = [graph.body.add_param(type_of(v), f"x{i}") for i, v in enumerate(inputs)]
    out = b.op(name, *values, **attrs)
    wrt = [k for k, v in enumerate(values)
           if isinstance(v.type, Tensor) and differentiable(v.type)]
    tangents = [graph.body.add_param(values[k].type, f"t{k}") for k in wrt]
    found = jvp_of(graph, b, 0, out, [values[k] for k in wrt], tangents)
    graph.body.set_results([found])
    verify(graph)
    return graph, wrt


def _moved(inputs: tuple, wrt: list[int], tangents: list[np.ndarray], step: float) -> list:
    moved = list(rules._copy(inputs))
    for k, t in zip(wrt, tangents):
        moved[k] = moved[k] + step * t
    return moved


@pytest.mark.parametrize("name,i", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_tangent_matches_central_differences(name: str, i: int) -> None:
    inputs, attrs = rules.SAMPLES[name][i]
    rng = np.random.default_rng(hash((name, i)) % 2**32)
    inputs = tuple(rules._redraw(v, rng, name in rules.UNUSUAL_DOMAIN) for v in inputs)
    graph, wrt = _tangent_graph(name, inputs, attrs)
    if not wrt:
        return
    tangents = [rng.standard_normal(np.shape(inputs[k])) for k in wrt]
    got = run_graph(graph, *rules._copy(inputs), *tangents)
    op = registry.OPS[name]
    full = op.full_attrs(attrs)
    ahead = op.kernel(*_moved(inputs, wrt, tangents, EPS), **full)
    behind = op.kernel(*_moved(inputs, wrt, tangents, -EPS), **full)
    _close(got, ahead, behind, name)


def _close(got: Any, ahead: Any, behind: Any, name: str) -> None:
    if isinstance(ahead, tuple | list):
        for g, a, b in zip(got, ahead, behind):
            _close(g, a, b, name)
        return
    if np.asarray(ahead).dtype.kind != "f":
        return
    want = (np.asarray(ahead, np.float64) - np.asarray(behind, np.float64)) / (2 * EPS)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-5, atol=1e-6,
                               err_msg=f"{name}: tangent")
