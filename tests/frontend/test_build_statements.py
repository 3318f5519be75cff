"""Statements compiled by the frontend: assignment forms, augmented assignment, item assignment,
assert, print (run-time, in program order), raise, pass, parameter updates."""
import numpy as np
import pytest

from amber import nn, ops
from amber.frontend import build_graph
from amber.frontend.reference import agree, gather_inputs
from amber.graph.interpreter import run_graph

X = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
I = np.arange(6).reshape(2, 3)


def multiple_targets(x):
    a = b = x * 2
    c, d = d, c = x, x + 1
    (e, f), g = (x, 1), 2
    h: np.ndarray = x - 1
    return a + b, c, d, e + f + g, h


def starred(x):
    first, *middle, last = (1, x, x * 2, 3)
    *init, tail = [x, x]
    return first + last, len(middle), middle[1], len(init), tail


def unpack_tensor(x):
    top, bottom = x
    return bottom - top


def augmented(x, n):
    y = x.copy() if False else x * 1
    y += 1
    y *= 2
    y -= x
    y /= 4
    n += 1
    n **= 2
    n //= 3
    s = 0
    s += y.sum()
    return y, n, s


def augmented_int_array(a):
    a += 2
    a *= 3
    a //= 2
    return a


def augmented_cast(a):
    b = a.astype(np.float32)
    b += 0.5  # float32 stays float32
    c = a * 1
    c += np.int8(2)
    return b, c


def item_assign(x):
    y = x * 1
    y[0, 1] = 100.0
    y[1] = y[0] * 2
    y[:, 2] += 7
    lst = [1, 2, 3]
    lst[1] = 20
    return y, lst[1]


def item_assign_loop(x):
    out = np.zeros(x.shape)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] * (i + j)
    return out


def assert_ok(x):
    assert x.shape[0] == 2, "static assert"
    assert x.sum() < 100, "runtime assert"
    return x


def assert_fails(x):
    assert x.sum() > 100, "sum is too small"
    return x


def raise_in_branch(x):
    if x.max() > 4:
        raise ValueError("max too large", 4)
    return x


def raise_always(x):
    y = x + 1
    raise RuntimeError("always")


def pass_and_docstring(x):
    """A docstring."""
    pass
    return x


def list_mutations(x):
    items = [x]
    items.extend([x * 2, x * 3])
    items.insert(0, x - 1)
    last = items.pop()
    items.reverse()
    return ops.stack(items), last


PROGRAMS = [
    (multiple_targets, (X,)), (starred, (X,)), (unpack_tensor, (X,)), (augmented, (X, 4)),
    (augmented_int_array, (I,)), (augmented_cast, (I,)), (item_assign, (X,)),
    (item_assign_loop, (X,)), (assert_ok, (X,)), (assert_fails, (X,)), (raise_in_branch, (X,)),
    (raise_in_branch, (X - 10,)), (raise_always, (X,)), (pass_and_docstring, (X,)),
    (list_mutations, (X,)),
]


@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_statement_agrees_with_eager(fn, args):
    agree(fn, *args)


def printing(x):
    print("start", x.shape)
    for i in range(2):
        print("row", i, x[i].sum())
        if x[i].sum() > 0:
            print("positive")
    print("end", sep="-", end="!\n")
    return x


def test_print_runs_at_run_time_in_program_order(capsys):
    result = build_graph(printing, (X,))
    assert capsys.readouterr().out == ""  # nothing printed while compiling
    run_graph(result.graph, *gather_inputs(result, None, (X,), {}))
    compiled = capsys.readouterr().out
    printing(X)
    assert compiled == capsys.readouterr().out


def test_effects_are_ordered_by_control_edges():
    result = build_graph(printing, (X,))
    body = result.graph.body.nodes
    effects = [n for n in body if n.effectful]
    assert [n.name for n in effects] == ["print", "for", "print"]
    assert effects[1].control_inputs == [effects[0]]
    assert effects[2].control_inputs == [effects[1]]


def test_raise_ends_the_path():
    result = agree(raise_always, X)
    names = [n.name for n in result.graph.body.nodes]
    assert "raise" in names and names.index("raise") == len(names) - 2  # then the None result


class Counter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.total = nn.Parameter(np.zeros(3, np.float32), requires_grad=False)

    def construct(self, x):
        self.total = self.total + x
        ops.assign(self.total, self.total * 2)
        return self.total.sum()


def test_parameter_updates_match_eager():
    net, twin = Counter(), Counter()
    x = np.ones(3, np.float32)
    result = build_graph(net, (x,))
    got = run_graph(result.graph, *gather_inputs(result, net, (x,), {}))
    assert got == twin.construct(x)
    np.testing.assert_array_equal(net.total, twin.total)
