"""`del` of large intermediates right after their last use, only where it is safe: in the block
that defines them, never for outputs, small values, or values a path may leave unassigned."""
from __future__ import annotations

import ast

import numpy as np

from amber.codegen import generate
from amber.graph import parse_graph


def deletes(source: str) -> list[tuple[int, list[str]]]:
    """(line, names) of every `del` statement."""
    return [(n.lineno, [t.id for t in n.targets]) for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Delete)]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_large_intermediate_is_freed_after_its_last_use(check_graph) -> None:
    graph = parse_graph("""
    graph @mlp(%x: f32[64,128], %w: f32[128,128]) {
      %h = matmul(%x, %w) : f32[64,128]
      %a = relu(%h) : f32[64,128]
      %s = sum(%h) : f32[]
      %small = sum(%x, axis=0) : f32[128]
      %y = mul(%a, %s) : f32[64,128]
      %z = add(%y, %small) : f32[64,128]
      return %z
    }""")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 128), np.float32), rng.standard_normal((128, 128), np.float32)
    code = check_graph(graph, (x, w))
    src = code.source
    assert [names for _, names in deletes(src)] == [["h"], ["a"], ["y"]]
    (del_h, _), (del_a, _), _ = deletes(src)
    made_y = line_of(src, "y = np.multiply(a, s, out=buffers.y)")  # NOTE: a kept buffer
    assert line_of(src, "s = h.sum()") < del_h < made_y < del_a


def test_symbolic_sizes_count_as_large_and_outputs_are_kept(check_graph) -> None:
    graph = parse_graph("""
    graph @f(%x: f32[N,4]) {
      %e = exp(%x) : f32[N,4]
      %t = tanh(%e) : f32[N,4]
      return %t, %e
    }""")
    code = check_graph(graph, (np.ones((3, 4), np.float32),))
    assert deletes(code.source) == []


def test_no_del_inside_a_loop_for_a_value_defined_outside(check_graph) -> None:
    graph = parse_graph("""
    graph @loop(%x: f32[N,4], %k: int) {
      %e = exp(%x) : f32[N,4]
      %zero = constant(value=0) : int
      %one = constant(value=1) : int
      %acc = for %zero, %k, %one, %x : f32[N,4] {
        body(%i: int, %acc_1: f32[N,4]) {
          %p = mul(%acc_1, %e) : f32[N,4]
          %q = tanh(%p) : f32[N,4]
          yield %q
        }
      }
      %r = sum(%acc) : f32[]
      return %r
    }""")
    code = check_graph(graph, (np.full((2, 4), 0.5, np.float32), 3))
    loop = next(n for n in ast.walk(ast.parse(code.source)) if isinstance(n, ast.For))
    inside = [t.id for n in ast.walk(loop) if isinstance(n, ast.Delete) for t in n.targets]
    assert "e" not in inside and "p" in inside
    assert ["e"] in [names for _, names in deletes(code.source)]


def test_maybe_unassigned_variables_are_not_deleted() -> None:
    graph = parse_graph("""
    graph @g(%x: f32[N,4], %c: bool) {
      %u = undefined(name='y') : f32[N,4]
      %y = if %c : f32[N,4] { then { %y_1 = exp(%x) : f32[N,4]; yield %y_1 } else { yield %u } }
      %z = if %c : f32[] { then { %s = sum(%y) : f32[]; yield %s } else { %s_1 = sum(%x) : f32[]
                                                                        yield %s_1 } }
      return %z
    }""")
    code = generate(graph)
    assert "del y" not in code.source
    namespace: dict = {}
    exec(code.source, namespace)  # noqa: S102
    assert namespace[code.function_name](np.zeros((1, 4), np.float32), False) == 0


def test_value_read_through_an_inlined_tuple_is_freed_after_the_tuple_is_used(check_graph):
    graph = parse_graph("""
    graph @tup(%x: f32[64,128], %n: int) {
      %e = exp(%x) : f32[64,128]
      %t = make_tuple(%e, %n) : (f32[64,128], int)
      %s = sum(%x) : f32[]
      %g = tuple_getitem(%t, index=0) : f32[64,128]
      %r = sum(%g) : f32[]
      %z = add(%r, %s) : f32[]
      return %z
    }""")
    code = check_graph(graph, (np.full((64, 128), 0.01, np.float32), 2))
    src = code.source
    assert "(e, n)[0]" in src
    assert line_of(src, "(e, n)[0]") < line_of(src, "del e")


def test_views_are_not_freed(check_graph) -> None:
    """`w_t = w.T` owns no memory: deleting it would only add a line."""
    graph = parse_graph("""
    graph @views(%x: f32[64,128], %w: f32[128,128]) {
      %t = transpose(%w) : f32[128,128]
      %a = matmul(%x, %t) : f32[64,128]
      %b = matmul(%a, %t) : f32[64,128]
      %c = tanh(%b) : f32[64,128]
      return %c
    }""")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 128), np.float32), rng.standard_normal((128, 128), np.float32)
    code = check_graph(graph, (x, w))
    assert "t = w.T" in code.source
    assert [names for _, names in deletes(code.source)] == [["a"], ["b"]]
