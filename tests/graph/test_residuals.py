"""graph/residuals.py: a differentiated graph cut at the adjoint into a forward returning its
residuals and a backward taking them; both verify, and run by the interpreter they give the
gradient the whole graph gives."""
from __future__ import annotations

import numpy as np

from amber import ops
from amber.graph import Block, Builder, InsertPoint, run_graph, verify
from amber.graph.gradient import ALL, GradSpec, _position_inputs, as_value, gradient_of
from amber.graph.residuals import split_backward
from amber.runtime import pipeline


def branches_in_a_loop(x, y):
    s = x * y
    for k in range(4):
        if s.sum() > 1.0:
            s = ops.tanh(s) * x + k
        else:
            s = s * s + y
    return s


def _split(fn, args):
    graph = pipeline.build(fn, args).graph
    (result,) = graph.outputs
    back = Block()
    sens = back.add_param(result.type, "sens")
    b = Builder(InsertPoint.at_end(graph.body))
    spec = GradSpec(ALL, False, None, False, False, True)
    found = gradient_of(graph, b, result, spec, _position_inputs(graph, spec, len(args), None),
                        None, sens, None)
    residuals, backward = split_backward(graph, back, [as_value(b, found)])
    graph.body.set_results([b.op("make_tuple", result, b.op("make_tuple", *residuals))])
    return graph, backward, residuals


def test_both_halves_verify_and_give_the_gradient():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(3) * 0.5 + 0.5, rng.standard_normal(3) * 0.5 + 0.7
    forward, backward, residuals = _split(branches_in_a_loop, (x, y))
    verify(forward)
    verify(backward)
    assert {n.op.name for n in backward.walk() if not n.is_region} & {"tanh", "sin"} == set()
    out, saved = run_graph(forward, x, y)
    np.testing.assert_allclose(out, branches_in_a_loop(x, y), rtol=1e-12)
    for v in (np.ones(3), rng.standard_normal(3)):
        got = run_graph(backward, v, *saved)
        for k, arg in enumerate((x, y)):
            want = np.zeros(3)
            for i in range(3):
                step = np.zeros(3)
                step[i] = 1e-6
                moved = [x, y]
                moved[k] = arg + step
                ahead = branches_in_a_loop(*moved) @ v
                moved[k] = arg - step
                want[i] = (ahead - branches_in_a_loop(*moved) @ v) / 2e-6
            np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-6)
