"""Fixtures for pass tests: `run_in_place`, the reference interpreter honouring the in-place
marks `plan_memory` sets, so an unsafe mark shows up as a wrong result; `central_differences.py`
(float64 finite differences of the loop passes' gradients) is importable as a top-level
module, as tests have no packages; `restore_threads`."""
from __future__ import annotations

import os
import sys
from typing import Any, Callable

import numpy as np
import pytest

import amber
from amber.graph import Graph, Node
from amber.graph.interpreter import _Interpreter
from amber.graph.passes.plan_memory import INPLACE_ATTR

sys.path.insert(0, os.path.dirname(__file__))


class InPlaceInterpreter(_Interpreter):
    """The reference interpreter, except that a node marked `__inplace__ = k` runs its op's
    `inplace` form with `out` = input k's array, as generated code does: an unsafe mark then
    clobbers a value someone still reads and the results differ."""

    def run_op(self, node: Node) -> Any:
        k = node.attrs.get(INPLACE_ATTR)
        if k is None:
            return super().run_op(node)
        attrs = {a: v for a, v in node.attrs.items() if a != INPLACE_ATTR}
        inputs = [self.read(v) for v in node.inputs]
        out = inputs[k]
        assert isinstance(out, np.ndarray), f"{node}: in place over {type(out).__name__}"
        fixed = [n for n in node.op.inputs if not n.startswith("*")]
        star = next((n[1:] for n in node.op.inputs if n.startswith("*")), None)
        rest = inputs[len(fixed):]
        names = {**dict(zip(fixed, inputs)), **attrs, "out": out,
                 **({star: tuple(rest)} if star else {}),
                 **{f"{star}_{i}": v for i, v in enumerate(rest)},
                 **{h.__name__: h for h in node.op.helpers}}
        template = node.op.inplace_template(attrs)
        result = eval(template, {"np": np}, names)  # a registry template, trusted
        assert result is out, f"{node}: the in-place form did not return its `out` buffer"
        return out


def _run_in_place(graph: Graph, *args: Any) -> list[Any]:
    """The results (always a list) of `graph` on `args`, in-place marks honoured."""
    return InPlaceInterpreter().call(graph.body, list(args))


@pytest.fixture(scope="session")
def run_in_place() -> Callable[..., list[Any]]:
    """`run_in_place(graph, *args)`: run_graph that writes where plan_memory said it may."""
    return _run_in_place


@pytest.fixture
def restore_threads():
    """Put `num_threads` back after a test that sets it."""
    before = amber.get_context().options.num_threads
    yield
    amber.set_context(num_threads=before)
