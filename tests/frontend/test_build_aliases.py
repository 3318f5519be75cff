"""In-place writes reach every name that may see the written memory (frontend/aliases.py): the
same array under another name, views and their bases, instance parameters, a caller's arrays
written by a helper, through branches and loops. Each program runs eagerly (the oracle) and as
its optimized graph, where CSE, LICM and folding would reuse a read from before the write."""
import copy

import numpy as np
import pytest

from amber import Parameter, nn, ops
from amber.frontend import build_graph
from amber.frontend.reference import assert_same, gather_inputs, run_eager
from amber.graph.interpreter import run_graph
from amber.graph.passes import optimize
from amber.graph.verifier import verify

X = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def agree_optimized(target, *args):
    """Eager and the graph optimized at level 2 agree (results and written arguments)."""
    result = build_graph(target, args, {})
    optimize(result.graph, 2)
    verify(result.graph)
    eager_target, eager_args = copy.deepcopy((target, args))
    expected = run_eager(eager_target, *eager_args)
    instance = target if isinstance(target, nn.Cell) else None
    got_args = copy.deepcopy(args)
    got = run_graph(result.graph, *gather_inputs(result, instance, got_args, {}))
    assert_same(got, expected)
    assert_same(got_args, eager_args, where="arguments after the call")
    return result


def alias_then_read_other_name(x):
    z = x * 1.0
    a = z
    a[1] = a[1] + 1.0
    a[0] = z[1] + 0.0
    return a, z


def view_write_then_read_base(x):
    z = x * 1.0
    before = z[1] + 0.0
    v = z[1:]
    v[0] = 5.0
    return before, z[1] + 0.0, z


def view_of_view(x):
    z = x * 1.0
    w = z[1:][1:]
    before = z[2] + 0.0
    w[0] = 7.0
    return before, z[2] + 0.0


def reshape_and_transpose_views(x):
    z = x * 1.0
    m = z.reshape(2, 2)
    t = m.T
    before = z[1] + 0.0
    t[1, 0] = 9.0
    return before, z[1] + 0.0, m[0, 1] + 0.0


def tuple_holds_the_array(x):
    z = x * 1.0
    t = (z, 1)
    before = t[0][0] + 0.0
    z[0] = 5.0
    return before, t[0][0] + 0.0


def augmented_through_alias(x):
    z = x * 1.0
    a = z
    before = z.sum()
    a += 1.0
    return before, z.sum()


def write_into_argument(x):
    y = x
    before = x[0] + 0.0
    y[0] = 10.0
    return before, x[0] + 0.0


def _set_first(v):
    v[0] = -1.0


def helper_writes_callers_array(x):
    y = x * 2.0
    a = y[0] + 0.0
    _set_first(y)
    b = y[0] + 0.0
    _set_first(y[2:])
    return a, b, y[2] + 0.0


def write_in_branch(x, c):
    z = x * 1.0
    a = z
    before = z[0] + 0.0
    if c > 0:
        a[0] = 9.0
    return before, z[0] + 0.0


def write_in_loop(x, n):
    z = x * 1.0
    a = z
    s = 0.0
    for i in range(n):
        t = z[0] + 0.0
        a[0] = a[0] + 1.0
        s = s + t + z[0]
    return s, z


def write_in_while(a, b):
    w = 0
    while w < 1 and a.sum() > 0:
        w += 1
        a = b
        a[1] = a[1] + 1
        a[0] = b[1] + 0
    return a, b


def helper_writes_in_loop(x, n):
    y = x * 2.0
    t = 0.0
    for i in range(n):
        t = t + y[0]
        _set_first(y)
    return t, y


def view_made_in_loop_body(x, n):
    z = x * 1.0
    h = x * 2.0
    s = 0.0
    for i in range(n):
        b = z[2] + 0.0
        h[1] = h[1] + 1.0
        s = s + b + z[2]
        h = z[1:]
    return s, z


def list_alias_sees_appends(x, n):
    xs = [x * 1.0]
    ys = xs
    for i in range(n):
        xs.append(x + i)
    return len(ys)


@pytest.mark.parametrize("program, args", [
    (alias_then_read_other_name, (X,)),
    (view_write_then_read_base, (X,)),
    (view_of_view, (X,)),
    (reshape_and_transpose_views, (X,)),
    (tuple_holds_the_array, (X,)),
    (augmented_through_alias, (X,)),
    (write_into_argument, (X,)),
    (helper_writes_callers_array, (X,)),
    (write_in_branch, (X, 1.0)),
    (write_in_branch, (X, -1.0)),
    (write_in_loop, (X, 3)),
    (write_in_while, (X, X + 1.0)),
    (helper_writes_in_loop, (X, 3)),
    (view_made_in_loop_body, (X, 3)),
    (list_alias_sees_appends, (X, 3)),
], ids=lambda v: getattr(v, "__name__", None))
def test_every_alias_reads_the_write(program, args):
    agree_optimized(program, *args)


def test_an_alias_read_after_the_write_is_not_the_read_before():
    graph = build_graph(alias_then_read_other_name, (X,), {}).graph
    reads = [n for n in graph.walk() if n.name == "getitem" and n.attrs["index"] == (1,)]
    assert len(reads) == 2 and reads[1].inputs[0].producer.name == "setitem"  # z is a's write


def test_a_write_through_a_view_makes_a_new_version_of_the_base():
    graph = build_graph(view_write_then_read_base, (X,), {}).graph
    (depend,) = [n for n in graph.walk() if n.name == "depend"]
    write = depend.inputs[1].producer
    assert write.name == "setitem" and depend.inputs[0] is graph.body.nodes[1].output  # z


def test_variables_written_through_an_alias_are_carried_by_loops():
    graph = build_graph(write_in_loop, (X, np.int64(3)), {}).graph
    (loop,) = [n for n in graph.body.nodes if n.is_region]
    assert {"a", "z"} <= {v.name for v in loop.body.params}


class Weights(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.ones(3, np.float32), name="w")

    def construct(self, x):
        a = (self.w * 2.0).sum()
        w = self.w
        w[0] = 3.0
        b = (self.w * 2.0).sum()
        ops.assign(self.w, self.w + x)
        c = (self.w * 2.0).sum()
        self.w[1] = 7.0
        return a, b, c, self.w[1] + 0.0


class Bump(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.ones(3, np.float32), name="w")

    def construct(self, x):
        self.w[0] = self.w[0] + x[0]
        return x


class CallsBump(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bump = Bump()

    def construct(self, x):
        a = self.bump.w[0] + 0.0
        x = self.bump(x)
        b = self.bump.w[0] + 0.0
        if x.sum() > 0:
            x = self.bump(x)
        return a, b, self.bump.w[0] + 0.0


@pytest.mark.parametrize("cell", [Weights, CallsBump])
def test_parameters_written_in_place_are_read_afresh(cell):
    net = cell()
    agree_optimized(net, X[:3])
    agree_optimized(net, -X[:3])


def _set_first_and_count(v):
    v[0] = -5.0
    return 1.0


def write_in_a_conditional_expression(x):
    z = x * 1.0
    before = z[0] + 0.0
    t = _set_first_and_count(z) if x.sum() > 4.0 else 0.0
    return before, z[0] + 0.0, t


@pytest.mark.parametrize("x", [X, -X])
def test_a_write_in_a_conditional_expression_is_seen_after_it(x):
    agree_optimized(write_in_a_conditional_expression, x)
