"""The pass manager: pipelines per level, the per-pass hook, verification and PassError."""
import signal
import textwrap

import numpy as np
import pytest

from amber.graph import (Block, Builder, Graph, InsertPoint, Rewriter, Scalar, Tensor, parse_graph,
                         print_graph)
from amber.graph.passes import PASSES, PIPELINES, PassError, PassManager, optimize
from amber.graph.passes.manager import MAX_ROUNDS

GRAPH = textwrap.dedent("""
    graph @f(%x: f32[4], %n: int) {
      %0 = constant(value=0) : int
      %1 = constant(value=1) : int
      %two = constant(value=2) : int
      %k = mul(%two, %1) : int
      %a = for %0, %n, %1, %x : f32[4] {
        body(%i: int, %a_1: f32[4]) {
          %e = exp(%x) : f32[4]
          %g = add(%a_1, %e) : f32[4]
          yield %g
        }
      }
      %unused = exp(%a) : f32[4]
      return %a
    }
""")


def names(pipeline) -> list[str]:
    return [name for step in pipeline for name in ((step,) if isinstance(step, str) else step)]


def test_levels_are_nested_pipelines():
    assert PIPELINES[0] == ()
    assert set(names(PIPELINES[1])) <= set(names(PIPELINES[2]))
    assert all(name in PASSES for level in PIPELINES.values() for name in names(level))
    assert PIPELINES[2][-1] == "plan_memory"  # in-place marks assume nothing moves after them
    assert PIPELINES[2][-2] == "place_gradients"  # gradient slots assume nothing moves either


def test_o0_leaves_the_graph_alone():
    graph = parse_graph(GRAPH)
    assert print_graph(optimize(graph, level=0)) == print_graph(parse_graph(GRAPH))


def test_o2_hoists_folds_and_sweeps():
    graph = optimize(parse_graph(GRAPH), level=2, verify_each=True)
    text = print_graph(graph)
    assert "%unused" not in text and "%k" not in text
    assert text.index("exp(%x)") < text.index("for ")  # hoisted out of the loop


def test_hook_sees_every_pass_with_counts_and_times():
    seen = []
    optimize(parse_graph(GRAPH), level=2, on_pass=lambda report, g: seen.append(report))
    group, *last = PIPELINES[2]
    rounds = (len(seen) - len(last)) // len(group)
    assert [r.name for r in seen] == list(group) * rounds + last
    assert rounds >= 2 and not any(r.changed for r in seen[-len(last) - len(group):-len(last)])
    assert all(r.nodes > 0 and r.seconds >= 0 for r in seen)
    assert seen[-1].nodes < 9  # the dead exp and the folded multiply are gone


def test_a_group_repeats_until_a_round_changes_nothing():
    budget = [3]

    def shrink(graph, rw: Rewriter) -> bool:
        budget[0] -= 1
        return budget[0] >= 0
    manager = PassManager((("dce", "shrink"), "dce"), {**PASSES, "shrink": shrink})
    manager.run(parse_graph(GRAPH))
    assert [r.name for r in manager.reports] == ["dce", "shrink"] * 4 + ["dce"]


def test_a_group_that_never_settles_stops_after_max_rounds():
    manager = PassManager((("busy",),), {"busy": lambda graph, rw: True})
    manager.run(parse_graph(GRAPH))
    assert len(manager.reports) == MAX_ROUNDS


def test_failing_pass_is_named_with_the_passes_before_it():
    def broken(graph, rw: Rewriter) -> bool:
        raise RuntimeError("boom")
    manager = PassManager(("dce", "broken"), {**PASSES, "broken": broken})
    with pytest.raises(PassError, match=r"pass 'broken' failed \(after: dce\): RuntimeError: boom"):
        manager.run(parse_graph(GRAPH))


def test_a_pass_leaving_invalid_ir_is_caught_by_verify_each():
    def corrupt(graph, rw: Rewriter) -> bool:
        node = graph.body.nodes[0]
        graph.body.nodes.remove(node)  # behind the rewriter's back: its users now dangle
        graph.body.nodes.append(node)
        return True
    manager = PassManager(("corrupt",), {"corrupt": corrupt}, verify_each=True)
    with pytest.raises(PassError, match="corrupt"):
        manager.run(parse_graph(GRAPH))


def test_unknown_level_is_rejected():
    with pytest.raises(ValueError, match="optimization level"):
        optimize(parse_graph(GRAPH), level=3)


def test_deeply_nested_regions_optimize_quickly():
    """An `elif` chain is Ifs nested 120 deep. Asking a region whether it has effects (as DCE
    did for every region) used to ask each nested region again at every level: exponential in
    the depth when there are none."""
    graph = Graph("elif_chain", Block([Scalar(int), Tensor((3,), np.float32)], ["k", "x"]))
    k, x = graph.inputs
    block, b = graph.body, Builder(InsertPoint.at_end(graph.body))
    for i in range(120):
        then, else_ = Block(), Block()
        then.set_results([Builder(InsertPoint.at_end(then)).op("mul", x, b.constant(float(i)))])
        block.set_results(b.if_(b.op("eq", k, b.constant(i)), then, else_, types=[x.type]))
        block, b = else_, Builder(InsertPoint.at_end(else_))
    block.set_results([x])
    # CPU time, not wall time: a loaded machine must not fail it (it takes ~0.4 s; the
    # exponential version never finished)
    signal.signal(signal.SIGPROF, _expire)
    signal.setitimer(signal.ITIMER_PROF, 10.0)
    try:
        assert not graph.body.nodes[-1].effectful
        optimize(graph, level=2, verify_each=True)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    assert sum(1 for n in graph.walk() if n.name == "if") == 120


def _expire(signum, frame) -> None:
    raise TimeoutError("optimizing 120 nested Ifs took over 10 s of CPU time")
