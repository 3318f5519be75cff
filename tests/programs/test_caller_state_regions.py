"""Writes to what the caller owns inside run-time branches and loops (issue 32): appends, pops,
item writes and dict updates on lists and dicts passed in, held by `self` or by a module
global, and strings and None stored in attributes of `self`, under `if`s on array data, `while`
loops, `for` loops over run-time ranges, early `return`/`break`/`continue` and `try`/`finally`.
Each program runs eagerly and compiled from the same starting state, several calls in a row;
the results and the objects left behind (items with their types: arrays, NumPy scalars, Python
numbers) must be the same, and a list the code returns must be the caller's very object."""
import numpy as np
import pytest

import amber
from amber import nn
from harness import same_state

LOG = []
TALLY = {"hits": 0, "misses": 0}


def append_in_a_branch(x, out):
    if x.sum() > 0:
        out.append(x)
    out.append(x * 3)
    return len(out)


def pop_in_a_branch(x, out):
    if x.sum() > 0:
        v = out.pop()
    else:
        v = 0.0
    return x + v


def append_in_a_while_loop(x, out, d):
    i = 0
    while i < x.size:
        if x[i] > 0:
            out.append(x[i])
            d["n"] += 1
        i += 1
    return out


def early_exits_in_a_run_time_for(x, out):
    for i in range(x.shape[0] * int(x.sum() > -100)):
        if x[i] < 0:
            out.append(i)
            return out
        if x[i] > 5:
            break
        out.append(i * 10)
    out.append(-1)
    return out


def continue_in_a_while(x, out):
    i = 0
    while i < x.size:
        i += 1
        if x[i - 1] > 0:
            continue
        out.append(x[i - 1])
    return len(out), out[-1] if out else x[0]


def item_writes_over_a_run_time_range(x, t):
    for i in range(int(x.sum() > 0) * 3):
        t[i] = i  # AutoGraph's `t[i] = i`, refused before
    return len(t)


def global_writes_in_branches_and_loops(x):
    n = 0
    while n < x.size and x[n] > -5:
        if x[n] > 0:
            LOG.append(x[n])
            TALLY["hits"] += 1
        else:
            TALLY["misses"] = TALLY["misses"] + 1
        n += 1
    return n + len(LOG)


def returns_the_callers_list(x, out):
    out.append(x.sum())
    return out


def returns_the_callers_dict(x, d):
    if x.sum() > 0:
        d["k"] = x.sum()
    return d


def writes_then_reads_after_the_loop(x, out):
    i = 0
    while i < 2:
        out.append(x * i)
        i += 1
    total = x * 0.0
    for item in out:
        total = total + item
    return total, len(out)


class History(nn.Cell):
    """A Cell recording into its own list and dict in a loop and a branch."""
    def __init__(self):
        super().__init__()
        self.history = []
        self.stats = {"calls": 0, "positive": 0}

    def construct(self, x):
        h = x
        i = 0
        while i < 3:
            h = h * 0.5
            self.history.append(h.sum())
            i += 1
        if x.sum() > 0:
            self.stats["positive"] += 1
        self.stats["calls"] += 1
        return h + len(self.history)


class Modes(nn.Cell):
    """A string and a None attribute stored in run-time branches and a loop."""
    def __init__(self):
        super().__init__()
        self.mode = "train"
        self.last = None
        self.count = 0

    def construct(self, x):
        if x.sum() > 0:
            self.mode = "eval"
        else:
            self.mode = "train"
        i = 0
        while i < x.size:
            if x[i] > 1:
                self.last = "big"
            i += 1
        self.count += 1
        return x + self.count


def _reset():
    LOG.clear()
    TALLY.update(hits=0, misses=0)


V = [np.array([1.0, 2.0], np.float32), np.array([-1.0, 3.0], np.float32),
     np.array([0.5, -0.5], np.float32), np.array([7.0, 1.0], np.float32)]
ARGUMENT_PROGRAMS = [
    (append_in_a_branch, lambda: ([],)),
    (pop_in_a_branch, lambda: ([1.0, 2.0, 3.0, 4.0, 5.0],)),
    (append_in_a_while_loop, lambda: ([], {"n": 0})),
    (early_exits_in_a_run_time_for, lambda: ([],)),
    (continue_in_a_while, lambda: ([],)),
    (item_writes_over_a_run_time_range, lambda: ([0] * 4,)),
    (returns_the_callers_list, lambda: ([],)),
    (returns_the_callers_dict, lambda: ({"k": np.float32(0)},)),
    (writes_then_reads_after_the_loop, lambda: ([],)),
]


@pytest.mark.parametrize("fn, make", ARGUMENT_PROGRAMS,
                         ids=[fn.__name__ for fn, _ in ARGUMENT_PROGRAMS])
def test_argument_writes_in_regions_match_eager(fn, make):
    eager_args, jit_args = make(), make()
    compiled = amber.jit(fn)
    for x in V:
        want, got = fn(x, *eager_args), compiled(x, *jit_args)
        same_state(got, want)
        same_state(list(jit_args), list(eager_args))
        if isinstance(want, list | dict):  # eager returns the caller's object itself
            assert got is jit_args[0]


def test_global_writes_in_regions_match_eager():
    _reset()
    want = [global_writes_in_branches_and_loops(x) for x in V], list(LOG), dict(TALLY)
    _reset()
    compiled = amber.jit(global_writes_in_branches_and_loops)
    got = [compiled(x) for x in V], list(LOG), dict(TALLY)
    _reset()
    same_state(got, want)


def test_cell_writes_in_regions_match_eager():
    eager, net = History(), History()
    compiled = amber.jit(net)
    for x in V + V:
        same_state(np.asarray(compiled(x)), np.asarray(eager(x)))
        same_state((net.history, net.stats), (eager.history, eager.stats))


def test_attributes_stored_in_regions_match_eager():
    eager, net = Modes(), Modes()
    compiled = amber.jit(net)
    for x in V + V:
        same_state(np.asarray(compiled(x)), np.asarray(eager(x)))
        same_state((net.mode, net.last, net.count), (eager.mode, eager.last, eager.count))


def test_gradient_with_appends_in_a_loop_runs_them_once():
    def loss(x, out):
        i, h = 0, x
        while i < 3:
            h = np.sin(h)
            out.append(h.sum())
            i += 1
        return (h * h).sum() + out[-1]

    x = np.array([1.0, 2.0])
    eager_out, got_out = [], []
    g = amber.grad(loss)(x, got_out)
    loss(x, eager_out)
    same_state(got_out, eager_out)
    step = 1e-6
    fd = [(loss(x + d, []) - loss(x - d, [])) / (2 * step) for d in np.eye(2) * step]
    assert np.allclose(g, fd, atol=1e-6)


def test_what_compiled_code_cannot_follow_is_refused_at_the_line():
    def mixed(x, out):
        if x.sum() > 0:
            out.append(x)  # arrays after a number: no one item type at run time
        return out[0]

    def made_inside(x, out):
        if x.sum() > 0:
            out.append([x])  # a list made here, kept by the caller's
        return x

    def per_example(x):
        if x.sum() > 0:
            LOG.append(x.sum())
        return x * 2

    with pytest.raises(amber.CompileError, match="holds items of different kinds"):
        amber.jit(mixed)(V[0], [1])
    with pytest.raises(amber.CompileError, match="made in compiled code cannot go into"):
        amber.jit(made_inside)(V[0], [])
    with pytest.raises(amber.CompileError,
                       match="vmap: `list_append` has an effect outside one example"):
        amber.vmap(per_example)(np.stack(V))
    assert LOG == []


class Recorder(nn.Cell):
    """Appends to its own list every call and reads it back (its length, its last item):
    read when the code runs, so the calls after the first list item compile no more."""
    def __init__(self):
        super().__init__()
        self.history = []

    def construct(self, x):
        h = x
        i = 0
        while i < 3:
            h = h * 0.5
            self.history.append(h.sum())
            i += 1
        if len(self.history) > 7:
            self.history.pop(0)
        return h + len(self.history) + self.history[-1]


def log_every_call(x):
    LOG.append(float(x.sum()))
    return x * len(LOG)


def test_lists_appended_every_call_compile_once_more_at_most():
    eager, net = Recorder(), Recorder()
    compiled = amber.jit(net)
    for k in range(6):
        x = np.array([1.0, float(k)], np.float32)
        same_state(np.asarray(compiled(x)), np.asarray(eager(x)))
        same_state(net.history, eager.history)
    assert compiled.stats.compiles == 2  # the empty list, then a list of float32 scalars
    _reset()
    want = [log_every_call(x) for x in V + V], list(LOG)
    _reset()
    logged = amber.jit(log_every_call)
    got = [logged(x) for x in V + V], list(LOG)
    _reset()
    same_state(got, want)
    assert logged.stats.compiles == 2


def test_a_key_added_in_a_run_time_loop_is_refused_at_the_line():
    """The code knows a dict's keys when compiling: keys the caller's dict gains in a loop
    whose trips are decided at run time are refused at the line, the dict left untouched (a
    key added in a run-time branch works while the code does not read the dict's keys)."""
    def loop_keys(x, d):
        i = 0
        while i < 3:
            if x[i % 2] > 0:
                break
            d[i] = 1.0
            i += 1
        return x

    def branch_key(x, d):
        if x.sum() > 0:
            d["positive"] = float(x.sum())
        return x

    d = {}
    with pytest.raises(amber.CompileError, match="dict with keys") as err:
        amber.jit(loop_keys)(V[1], d)
    assert "if x[i % 2] > 0" in str(err.value) and d == {}
    for x in V:
        compiled, eager = {}, {}
        amber.jit(branch_key)(x, compiled)
        branch_key(x, eager)
        same_state(compiled, eager)
