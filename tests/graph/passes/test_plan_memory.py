"""Memory planning: which elementwise ops write into a dying input's buffer.

The verifier and parser do not accept `__inplace__` attributes yet, so these tests compare the
printed IR directly instead of through `check_pass`, and run the marked graph in place."""
from __future__ import annotations

import textwrap
from typing import Callable

import numpy as np

from amber.graph import Rewriter, Tensor, parse_graph, print_graph, verify
from amber.graph.passes import plan_memory
from amber.ops import lookup


def test_elementwise_ops_have_in_place_forms():
    """What the pass relies on from the ops (set in ops/elementwise.py, ops/nn.py)."""
    for name in ("add", "mul", "relu", "exp", "neg", "tanh", "sin"):
        assert lookup(name).inplace and lookup(name).fresh, name
    for name in ("matmul", "max_pool2d", "exp"):
        assert lookup(name).fresh, name


def check_marks(run_in_place: Callable, before: str, after: str) -> None:
    """Run plan_memory on `before`, compare the printed IR with `after`, check the reported
    change, and check that running the marked graph in place gives the unmarked results."""
    graph = parse_graph(textwrap.dedent(before))
    verify(graph)
    printed_before = print_graph(graph)
    changed = plan_memory.run(graph, Rewriter())
    printed = print_graph(graph)
    expected = textwrap.dedent(after).strip("\n") + "\n"
    assert printed == expected, f"plan_memory gave:\n{printed}\nexpected:\n{expected}"
    assert changed == (printed != printed_before)
    args = [_sample(p.type, seed) for seed, p in enumerate(graph.inputs)]
    want = run_in_place(parse_graph(printed_before), *args)  # no marks: plain run_graph
    got = run_in_place(graph, *args)
    for a, b in zip(_arrays(want), _arrays(got), strict=True):
        assert a.tobytes() == b.tobytes(), f"{b} != {a}"


def _arrays(values) -> list:
    """The arrays in `values` (results, tuples of them), flattened in order."""
    if isinstance(values, tuple | list):
        return [a for v in values for a in _arrays(v)]
    return [np.asarray(values)]


def _sample(t, seed: int):
    """A random value of type `t` (tensor, int or bool parameter)."""
    rng = np.random.default_rng(seed)
    if isinstance(t, Tensor):
        return rng.uniform(-2, 2, size=t.shape).astype(t.dtype)
    return t.kind(rng.integers(0, 3))


def test_a_chain_runs_on_one_buffer(run_in_place):
    """exp allocates; the add, relu and multiply after it write into its buffer, as each
    input dies there (a print before does not keep it). `a - b` reuses `a` (or `b`)."""
    check_marks(run_in_place, """
        graph @f(%x: f32[2,3], %y: f32[2,3]) {
          %two = constant(value=2.0) : float
          %t = exp(%x) : f32[2,3]
          %u = add(%t, %y) : f32[2,3]
          %v = relu(%u) : f32[2,3]
          %p = print(%v) : none
          %z = mul(%two, %v) : f32[2,3]
          %a = exp(%x) : f32[2,3]
          %b = add(%a, %y) : f32[2,3]
          %d = sub(%a, %b) : f32[2,3]
          %r = make_tuple(%z, %d) : (f32[2,3], f32[2,3])
          return %r
        }
    """, """
        graph @f(%x: f32[2,3], %y: f32[2,3]) {
          %two = constant(value=2.0) : float
          %t = exp(%x) : f32[2,3]
          %u = add(%t, %y, __inplace__=0) : f32[2,3]
          %v = relu(%u, __inplace__=0) : f32[2,3]
          %p = print(%v) : none
          %z = mul(%two, %v, __inplace__=1) : f32[2,3]
          %a = exp(%x) : f32[2,3]
          %b = add(%a, %y) : f32[2,3]
          %d = sub(%a, %b, __inplace__=0) : f32[2,3]
          %r = make_tuple(%z, %d) : (f32[2,3], f32[2,3])
          return %r
        }
    """)


def test_buffers_that_are_not_private_or_not_dead_are_left_alone(run_in_place):
    """Graph inputs, constants, a broadcast (other shape), a comparison (other dtype), a 0-d
    result (a NumPy scalar), an op without an in-place form (pow), a buffer a view still
    shares, and one read after the op: no marks."""
    text = """
        graph @f(%x: f32[2,3], %w: f32[3]) {
          %two = constant(value=2.0) : float
          %c = constant(value=array<f32[3]>[1.0, 2.0, 3.0]) : f32[3]
          %nx = neg(%x) : f32[2,3]
          %nc = neg(%c) : f32[3]
          %e = exp(%w) : f32[3]
          %g = add(%e, %x) : f32[2,3]
          %h = exp(%x) : f32[2,3]
          %k = lt(%h, %two) : b1[2,3]
          %s = sum(%x) : f32[]
          %sn = neg(%s) : f32[]
          %q = exp(%x) : f32[2,3]
          %q2 = pow(%q, %two) : f32[2,3]
          %m = exp(%x) : f32[2,3]
          %mv = reshape(%m, shape=(3, 2)) : f32[3,2]
          %mn = neg(%m) : f32[2,3]
          %o = exp(%x) : f32[2,3]
          %on = neg(%o) : f32[2,3]
          return %nx, %nc, %g, %k, %sn, %q2, %mv, %mn, %o, %on
        }
    """
    check_marks(run_in_place, text, text)


def test_regions(run_in_place):
    """A buffer from an outer block, or read inside a region, is not reused; one made in the
    same block of a branch or loop body is. A loop-carried parameter starting from a buffer
    read after the loop (%v, returned) is not private."""
    check_marks(run_in_place, """
        graph @f(%x: f32[2,3], %c: bool, %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %t = exp(%x) : f32[2,3]
          %y = if %c : f32[2,3] {
            then {
              %u = neg(%t) : f32[2,3]
              %u2 = neg(%u) : f32[2,3]
              yield %u2
            }
            else {
              yield %x
            }
          }
          %v = tanh(%t) : f32[2,3]
          %a = for %zero, %n, %one, %v : f32[2,3] {
            body(%i: int, %a_1: f32[2,3]) {
              %b = neg(%a_1) : f32[2,3]
              %b2 = sin(%b) : f32[2,3]
              yield %b2
            }
          }
          %r = make_tuple(%y, %a, %v) : (f32[2,3], f32[2,3], f32[2,3])
          return %r
        }
    """, """
        graph @f(%x: f32[2,3], %c: bool, %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %t = exp(%x) : f32[2,3]
          %y = if %c : f32[2,3] {
            then {
              %u = neg(%t) : f32[2,3]
              %u2 = neg(%u, __inplace__=0) : f32[2,3]
              yield %u2
            }
            else {
              yield %x
            }
          }
          %v = tanh(%t) : f32[2,3]
          %a = for %zero, %n, %one, %v : f32[2,3] {
            body(%i: int, %a_1: f32[2,3]) {
              %b = neg(%a_1) : f32[2,3]
              %b2 = sin(%b, __inplace__=0) : f32[2,3]
              yield %b2
            }
          }
          %r = make_tuple(%y, %a, %v) : (f32[2,3], f32[2,3], f32[2,3])
          return %r
        }
    """)


def test_nn_results_take_bias_and_activation_in_place(run_in_place):
    """After `fuse`: bias add and relu into the matmul's buffer, relu into the pooled one."""
    check_marks(run_in_place, """
        graph @f(%x: f32[2,3], %w: f32[5,3], %b: f32[5], %im: f32[1,2,4,4]) {
          %wt = transpose(%w) : f32[3,5]
          %h = matmul(%x, %wt) : f32[2,5]
          %hb = add(%h, %b) : f32[2,5]
          %hr = relu(%hb) : f32[2,5]
          %p = max_pool2d(%im, kernel_size=(2, 2), stride=(2, 2)) : f32[1,2,2,2]
          %pr = relu(%p) : f32[1,2,2,2]
          %r = make_tuple(%hr, %pr) : (f32[2,5], f32[1,2,2,2])
          return %r
        }
    """, """
        graph @f(%x: f32[2,3], %w: f32[5,3], %b: f32[5], %im: f32[1,2,4,4]) {
          %wt = transpose(%w) : f32[3,5]
          %h = matmul(%x, %wt) : f32[2,5]
          %hb = add(%h, %b, __inplace__=0) : f32[2,5]
          %hr = relu(%hb, __inplace__=0) : f32[2,5]
          %p = max_pool2d(%im, kernel_size=(2, 2), stride=(2, 2)) : f32[1,2,2,2]
          %pr = relu(%p, __inplace__=0) : f32[1,2,2,2]
          %r = make_tuple(%hr, %pr) : (f32[2,5], f32[1,2,2,2])
          return %r
        }
    """)


CARRY = """
    graph @f(%x: f32[4,3], %g: f32[3], %n: int) {{
      %zero = constant(value=0) : int
      %one = constant(value=1) : int
      %acc0 = zeros(shape=(4, 3), dtype=f32) : f32[4,3]
      {before}
      %acc = for %zero, %n, %one, %acc0 : f32[4,3] {{
        body(%i: int, %acc_1: f32[4,3]) {{
          %s = sin(%g) : f32[3]
          %acc_2 = index_add_into(%acc_1, %s, %i, index=($0,)) : f32[4,3]
          %acc_3 = add(%acc_2, %x) : f32[4,3]
          {inside}
          yield %acc_3
        }}
      }}
      %r = make_tuple({results}) : ({types})
      return %r
    }}
"""


def _carry(before: str = "", inside: str = "", results: str = "%acc", marked: bool = True
           ) -> tuple[str, str]:
    """The graph, and what plan_memory should make of it: the add after the accumulation
    always runs in place over its fresh result; the accumulation itself when `marked`."""
    count = len(results.split(","))
    types = ", ".join(["f32[4,3]"] * count) + ("," if count == 1 else "")
    text = CARRY.format(before=before, inside=inside, results=results, types=types)
    text = "\n".join(line for line in text.splitlines() if line.strip())
    after = text.replace("add(%acc_2, %x)", "add(%acc_2, %x, __inplace__=0)")
    if marked:
        after = after.replace("index=($0,))", "index=($0,), __inplace__=0)")
    return text, after


def test_an_accumulator_carried_by_a_loop_is_written_in_place(run_in_place):
    """A gradient accumulated over a reverse loop (`dx[i] += g`, then `+= x`): the loop starts
    it from zeros nobody else reads and hands each iteration's result on to the next only, so
    every iteration writes into the one buffer. Only the first input of a non-elementwise op
    (index_add_into's accumulator) may be the buffer."""
    check_marks(run_in_place, *_carry())
    check_marks(run_in_place, *_carry(before="%p = print(%acc0) : none"))  # read before: fine


def test_an_accumulator_someone_else_sees_is_not_written_in_place(run_in_place):
    """The starting buffer read after the loop, the carried value kept by a tuple each
    iteration, or read after the accumulation: the accumulation copies, as before."""
    check_marks(run_in_place, *_carry(results="%acc, %acc0", marked=False))
    check_marks(run_in_place, *_carry(inside="%k = make_tuple(%acc_3) : (f32[4,3],)",
                                      marked=False))
    check_marks(run_in_place, *_carry(inside="%late = print(%acc_1) : none", marked=False))


def test_carried_values_that_swap_are_not_private(run_in_place):
    """`a, b = b, a` in a loop: each buffer goes round under both names, so neither is private
    (and deciding so terminates). Only the fresh product is written in place."""
    check_marks(run_in_place, """
        graph @f(%x: f32[2000], %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %two = constant(value=2.0) : float
          %a0 = neg(%x) : f32[2000]
          %b0 = exp(%x) : f32[2000]
          %a, %b, %c = for %zero, %n, %one, %a0, %b0, %x : f32[2000], f32[2000], f32[2000] {
            body(%i: int, %a_1: f32[2000], %b_1: f32[2000], %c_1: f32[2000]) {
              %c_2 = mul(%a_1, %two) : f32[2000]
              %c_3 = sin(%c_2) : f32[2000]
              yield %b_1, %a_1, %c_3
            }
          }
          %r = make_tuple(%a, %b, %c) : (f32[2000], f32[2000], f32[2000])
          return %r
        }
    """, """
        graph @f(%x: f32[2000], %n: int) {
          %zero = constant(value=0) : int
          %one = constant(value=1) : int
          %two = constant(value=2.0) : float
          %a0 = neg(%x) : f32[2000]
          %b0 = exp(%x) : f32[2000]
          %a, %b, %c = for %zero, %n, %one, %a0, %b0, %x : f32[2000], f32[2000], f32[2000] {
            body(%i: int, %a_1: f32[2000], %b_1: f32[2000], %c_1: f32[2000]) {
              %c_2 = mul(%a_1, %two) : f32[2000]
              %c_3 = sin(%c_2, __inplace__=0) : f32[2000]
              yield %b_1, %a_1, %c_3
            }
          }
          %r = make_tuple(%a, %b, %c) : (f32[2000], f32[2000], f32[2000])
          return %r
        }
    """)


def test_values_die_in_the_arm_of_an_if(run_in_place):
    """%t dies in either arm (the other arm's read never runs with it), %s is read after the If
    and %w is passed through by the other arm: only %t's buffer is reused."""
    check_marks(run_in_place, """
        graph @f(%x: f32[2,3], %c: bool) {
          %t = exp(%x) : f32[2,3]
          %s = exp(%x) : f32[2,3]
          %w = exp(%x) : f32[2,3]
          %p = print(%t) : none
          %y, %z = if %c : f32[2,3], f32[2,3] {
            then {
              %u = neg(%t) : f32[2,3]
              %v = sin(%s) : f32[2,3]
              %q = cos(%w) : f32[2,3]
              yield %u, %q
            }
            else {
              %u2 = sin(%t) : f32[2,3]
              yield %u2, %w
            }
          }
          %r = make_tuple(%y, %z, %s) : (f32[2,3], f32[2,3], f32[2,3])
          return %r
        }
    """, """
        graph @f(%x: f32[2,3], %c: bool) {
          %t = exp(%x) : f32[2,3]
          %s = exp(%x) : f32[2,3]
          %w = exp(%x) : f32[2,3]
          %p = print(%t) : none
          %y, %z = if %c : f32[2,3], f32[2,3] {
            then {
              %u = neg(%t, __inplace__=0) : f32[2,3]
              %v = sin(%s) : f32[2,3]
              %q = cos(%w) : f32[2,3]
              yield %u, %q
            }
            else {
              %u2 = sin(%t, __inplace__=0) : f32[2,3]
              yield %u2, %w
            }
          }
          %r = make_tuple(%y, %z, %s) : (f32[2,3], f32[2,3], f32[2,3])
          return %r
        }
    """)


def test_an_if_result_made_in_every_arm_is_private(run_in_place):
    """%y is a fresh buffer on both paths, so tanh reuses it; %z may be the caller's %x, and
    %v and %w may be one buffer under two names."""
    check_marks(run_in_place, """
        graph @f(%x: f32[2,3], %c: bool) {
          %y, %z, %v, %w = if %c : f32[2,3], f32[2,3], f32[2,3], f32[2,3] {
            then {
              %a = exp(%x) : f32[2,3]
              %b = neg(%x) : f32[2,3]
              %d = cos(%x) : f32[2,3]
              yield %a, %b, %d, %d
            }
            else {
              %a2 = sin(%x) : f32[2,3]
              %d2 = cos(%x) : f32[2,3]
              %e2 = cos(%x) : f32[2,3]
              yield %a2, %x, %d2, %e2
            }
          }
          %y2 = tanh(%y) : f32[2,3]
          %z2 = tanh(%z) : f32[2,3]
          %v2 = tanh(%v) : f32[2,3]
          %r = make_tuple(%y2, %z2, %v2, %w) : (f32[2,3], f32[2,3], f32[2,3], f32[2,3])
          return %r
        }
    """, """
        graph @f(%x: f32[2,3], %c: bool) {
          %y, %z, %v, %w = if %c : f32[2,3], f32[2,3], f32[2,3], f32[2,3] {
            then {
              %a = exp(%x) : f32[2,3]
              %b = neg(%x) : f32[2,3]
              %d = cos(%x) : f32[2,3]
              yield %a, %b, %d, %d
            }
            else {
              %a2 = sin(%x) : f32[2,3]
              %d2 = cos(%x) : f32[2,3]
              %e2 = cos(%x) : f32[2,3]
              yield %a2, %x, %d2, %e2
            }
          }
          %y2 = tanh(%y, __inplace__=0) : f32[2,3]
          %z2 = tanh(%z) : f32[2,3]
          %v2 = tanh(%v) : f32[2,3]
          %r = make_tuple(%y2, %z2, %v2, %w) : (f32[2,3], f32[2,3], f32[2,3], f32[2,3])
          return %r
        }
    """)


LOOP = """
    graph @f(%x: f32[16], %n: int) {{
      %zero = constant(value=0) : int
      %one = constant(value=1) : int
      %stop = {stop}
      %half = constant(value=0.5) : float
      %0 = for %zero, %stop, %one, %x : f32[16] {{
        body(%i: int, %y_1: f32[16]) {{
          %s = sum(%y_1) : f32[]
          %c = gt(%s, %zero) : b1[]
          %y_2 = if %c : f32[16] {{
            then {{
              %a = mul(%y_1, %half) : f32[16]
              %a2 = sub(%a, %one) : f32[16]
              yield %a2
            }}
            else {{
              %b = mul(%y_1, %half) : f32[16]
              %b2 = add(%b, %one) : f32[16]
              yield %b2
            }}
          }}
          yield %y_2
        }}
      }}
      %r = make_tuple(%0, %x) : (f32[16], f32[16])
      return %r
    }}
"""


def _loop(stop: str, copied: bool) -> tuple[str, str]:
    """The if/else loop over the caller's %x, and what plan_memory makes of it: the second op
    of each arm always runs in place over the first's result; the first over the carried value
    when the loop starts from a copy."""
    text = textwrap.dedent(LOOP.format(stop=stop))
    after = text.replace("sub(%a, %one)", "sub(%a, %one, __inplace__=0)") \
        .replace("add(%b, %one)", "add(%b, %one, __inplace__=0)")
    if copied:
        after = after.replace("%y_1, %half)", "%y_1, %half, __inplace__=0)") \
            .replace("%0 = for %zero, %stop, %one, %x", "%x_1 = copy(%x) : f32[16]\n"
                     "  %0 = for %zero, %stop, %one, %x_1")
    return text, after


def test_a_loop_that_surely_runs_starts_from_a_copy(run_in_place):
    """200 trips of `y = y * 0.5 -+ 1`: one copy of the caller's %x before the loop (still
    returned beside the result), then every arm writes into the carried buffer."""
    check_marks(run_in_place, *_loop("constant(value=200) : int", copied=True))


def test_a_loop_that_may_not_run_writes_no_carried_value(run_in_place):
    """Zero trips (constant or not) would return the copy where the caller's own array was:
    no copy, the carried value is not private, and each arm allocates once."""
    check_marks(run_in_place, *_loop("constant(value=0) : int", copied=False))
    check_marks(run_in_place, *_loop("add(%n, %one) : int", copied=False))


def test_an_item_taken_once_from_a_tuple_of_fresh_arrays_is_private(run_in_place):
    """all_reduce_grads's items are distinct fresh arrays (`OpDef.fresh_items`): one taken out
    once takes the update in place; one taken twice, and the items of a tuple also kept whole
    or made by make_tuple, are left alone."""
    before = """
        graph @f(%a: f32[2,3], %b: f32[3], %r: f32[]) {
          %t = make_tuple(%a, %b) : (f32[2,3], f32[3])
          %g = all_reduce_grads(%t) : (f32[2,3], f32[3])
          %ga = tuple_getitem(%g, index=0) : f32[2,3]
          %gb = tuple_getitem(%g, index=1) : f32[3]
          %gb2 = tuple_getitem(%g, index=-1) : f32[3]
          %ua = mul(%r, %ga) : f32[2,3]
          %ub = mul(%r, %gb) : f32[3]
          %h = all_reduce_grads(%t) after %g : (f32[2,3], f32[3])
          %ha = tuple_getitem(%h, index=0) : f32[2,3]
          %va = mul(%r, %ha) : f32[2,3]
          %ta = tuple_getitem(%t, index=0) : f32[2,3]
          %wa = mul(%r, %ta) : f32[2,3]
          return %ua, %ub, %gb2, %va, %h, %wa
        }
    """
    check_marks(run_in_place, before, before.replace(
        "%ua = mul(%r, %ga)", "%ua = mul(%r, %ga, __inplace__=1)"))


def test_a_list_appended_to_and_read_by_nothing_else_appends_as_a_statement():
    """`items.append(x)` instead of a kernel call when the append is the list's only reader;
    appends through two names of one list give eager's items in eager's order."""
    import amber

    def collect(x):
        rows = []
        for i in range(x.shape[0]):
            rows.append(x[i] * 2.0)
        return rows

    def aliased(x):
        rows = []
        kept = rows
        for i in range(x.shape[0]):
            rows.append(x[i])
            kept.append(x[i] + 1.0)
        return kept

    x = np.arange(6.0).reshape(3, 2)
    fast = amber.jit(collect)
    for got, want in zip(fast(x), collect(x)):
        np.testing.assert_array_equal(got, want)
    assert "rows.append(" in fast.code and "list_append_kernel" not in fast.code, fast.code
    fast = amber.jit(aliased)
    got, want = fast(x), aliased(x)
    assert len(got) == len(want) == 6
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
