"""Writes to what the caller owns (issue 32): `global` names, the caller's lists and dicts
(arguments, attributes, globals) and plain attributes of cells. Each program runs eagerly and
compiled from the same starting state, several calls in a row; the results and the state left
behind (lists, dicts, globals, counters, with the types of what was appended) must be the same.
Includes the programs the peer ports refused before (Paddle's dict attribute and `global`,
AutoGraph's global updated in a tensor branch)."""
import numpy as np
import pytest

import amber
from amber import nn
from harness import same_state

counter = 0
_counter = None
LOG = []
SOME_GLOBAL = 0
total = 0.0
steps = 0
flag = None


def bump(x):
    global counter
    counter += 1
    LOG.append(counter)
    return x * counter


def if_nested_with_modification_of_global(x):  # AutoGraph's, refused before
    y = 0
    if x > 0:
        global _counter
        if _counter is None:
            _counter = 1
        else:
            _counter += 1
        y += _counter
    return y


def global_statement(x):  # Paddle's, refused before
    global SOME_GLOBAL
    SOME_GLOBAL = 10
    return x + SOME_GLOBAL


def global_in_a_run_time_loop_with_early_return(x, n):
    global total, steps
    i = 0
    while i < n:
        total = total + x[i % 2]  # a Python float first, a NumPy scalar after one call
        steps += 1
        i += 1
        if total > 5:
            return total
    return -total


def global_in_a_run_time_branch(x):
    global flag, steps
    if x.sum() > 0:
        flag = "positive"
        steps = steps + 1
    else:
        steps = steps - 1
    return x * steps


def _logs_and_tests(x):
    LOG.append(1)
    return x.sum() > 0


def write_in_a_statement_built_again(x):
    if _logs_and_tests(x):  # None on one path: what follows is built once per path
        y = None
    else:
        y = x
    if y is None:
        return x
    return y * 2


def _increment(x):
    global counter
    counter += 1
    return x * counter


def helper_writing_a_global_called_twice(x):
    a = _increment(x)
    if _increment(x).sum() > 0:  # again, in a statement built once per path after it
        b = None
    else:
        b = a
    return a if b is None else a + b


def global_in_a_loop(x, n):
    global counter
    for i in range(n):
        counter = counter + x.sum()
    return counter


def two_names_for_one_list(x, out):
    alias = out
    out.append(1)
    alias.append(x.sum())
    return len(alias)


def lists_made_in_compiled_code_go_to_the_caller(x, out, d):
    row = [x.sum()]
    out.append(row)
    out.append((row, 1))
    row.append(2)  # the caller's now: the row in `out` and in `d` grows too
    d["rows"] = {"r": row}
    d["rows"]["s"] = 3
    row.append(x)
    LOG.append(len(out))
    return len(row)


def append_to_an_argument_list(x, items):  # refused before (test_bad_semantics)
    items.append(x * 2)
    return len(items)


def set_a_key_of_an_argument_dict(x, d):  # refused before (test_bad_semantics)
    d["b"] = x * 2
    return len(d)


def append_to_arguments(x, out, d):
    out.append(x * 2)
    out.append(3)
    out.append(x.sum())
    d["k"] = x.sum()
    d.setdefault("n", 0)
    d["n"] += 1
    return len(out)


def append_to_a_global_list(x):  # Paddle's, refused before (the loop is unrolled)
    for i in range(3):
        LOG.append(4)
    return x


def loss_counting_calls(x):
    global counter
    counter += 1
    y = (x * x).sum()
    LOG.append(y)
    return y


def pop_from_an_argument_list(x, lst):  # Paddle's, refused before
    v = lst.pop()
    return x + v


class ConstantsInAnAttributeDict(nn.Cell):  # Paddle's, refused before
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(5, 3, weight_init="ones")
        self.constant_vars = {}

    def construct(self, x):
        self.constant_vars["bias"] = np.full((3,), 1, np.float32)
        out = self.fc(x)
        if np.mean(out) < 0:
            out = out + self.constant_vars["bias"]
        return out


class Counting(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stats = {"calls": 0, "inner": {"k": 0}}
        self.history = self.same_history = []
        self.count = 0

    def construct(self, x):
        self.stats["calls"] += 1
        self.stats["inner"]["k"] += 2
        self.history.append(x.sum())
        self.same_history.append(len(self.history))
        for i in range(2):  # unrolled
            self.count += 1
        if self.count > 2:  # branches on what the previous call wrote
            x = x * 2
        if self.stats["calls"] == 3:  # a dict value the code reads and writes
            x = x - 1
        return x + self.count


class WritesAnAttributeDict(nn.Cell):  # refused before (test_bad_semantics)
    def __init__(self):
        super().__init__()
        self.cache = {"k": 1.0}

    def construct(self, x):
        self.cache["k"] = x.sum()
        return x * 2


class CountingInBranchesAndLoops(nn.Cell):
    """Numbers on self written in run-time branches and loops, read by a helper method."""
    def __init__(self):
        super().__init__()
        self.count = 0
        self.total = 0.0
        self.mode = "train"

    def scaled(self):
        return self.count * 10

    def construct(self, x):
        self.count += 1
        if x.sum() > 0:
            self.count += 1
            self.total = self.total + float(x.sum())
        i = 0
        while i < x.size * (x[0] > 1.5):
            self.count = self.count + 1
            i += 1
        self.mode = "eval"
        return x + self.count + self.scaled() + len(self.mode)


def _state(obj):
    return {k: v for k, v in vars(obj).items() if k in (
        "stats", "history", "count", "constant_vars", "same_history", "total", "mode",
        "cache")}


GLOBALS = ("counter", "_counter", "LOG", "SOME_GLOBAL", "total", "steps", "flag")


def _reset():
    for name, value in zip(GLOBALS, (0, None, [], 0, 0.0, 0, None)):
        globals()[name] = value  # NOTE: this module's globals (other corpora load it too)


def _run(fn, calls):
    _reset()
    results = [fn(*args) for args in calls]
    return results, {name: globals()[name] for name in GLOBALS}


X = np.array([1.0, 2.0], np.float32)
FUNCTIONS = [
    (bump, [(np.float32(2.0),)] * 3),
    (if_nested_with_modification_of_global, [(np.int32(1),), (np.int32(-1),), (np.int32(2),)]),
    (global_statement, [(X,)] * 2),
    (global_in_a_loop, [(X, 3), (X, 2)]),
    (append_to_a_global_list, [(X,)] * 2),
    (global_in_a_run_time_loop_with_early_return,
     [(np.array([1.0, 2.0]), np.int32(n)) for n in (3, 2, 4, 0)]),
    (global_in_a_run_time_branch, [(np.array([v]),) for v in (1.0, -1.0, 2.0, 3.0)]),
    (write_in_a_statement_built_again, [(np.array([v]),) for v in (1.0, -1.0)]),
    (helper_writing_a_global_called_twice, [(np.array([v]),) for v in (1.0, -1.0, 2.0)]),
]


@pytest.mark.parametrize("fn, calls", FUNCTIONS, ids=[f.__name__ for f, _ in FUNCTIONS])
def test_globals_match_eager(fn, calls):
    want = _run(fn, calls)
    got = _run(amber.jit(fn), calls)
    _reset()
    same_state(got, want)


@pytest.mark.parametrize("fn, make", [
    (append_to_arguments, lambda: (X, [], {})),
    (pop_from_an_argument_list, lambda: (X, [1.0, 2.0, 3.0])),
    (two_names_for_one_list, lambda: (X, [])),
    (lists_made_in_compiled_code_go_to_the_caller, lambda: (X, [], {})),
    (append_to_an_argument_list, lambda: (X, [X])),
    (set_a_key_of_an_argument_dict, lambda: (X, {"a": X})),
], ids=["append_to_arguments", "pop_from_an_argument_list", "two_names_for_one_list",
        "lists_made_in_compiled_code_go_to_the_caller", "append_to_an_argument_list",
        "set_a_key_of_an_argument_dict"])
def test_argument_writes_match_eager(fn, make):
    eager_args, jit_args = make(), make()
    compiled = amber.jit(fn)
    for _ in range(2):
        _reset()
        want = fn(*eager_args), list(LOG)
        _reset()
        same_state((compiled(*jit_args), list(LOG)), want)
        same_state(list(jit_args[1:]), list(eager_args[1:]))
    _reset()
    if fn is lists_made_in_compiled_code_go_to_the_caller:  # one object in three places
        out, d = jit_args[1:]
        assert out[-2] is out[-1][0] is d["rows"]["r"]


CELLS = [(Counting, [X] * 4), (ConstantsInAnAttributeDict, [np.ones((4, 5), np.float32)] * 3),
         (CountingInBranchesAndLoops, [X, -X, 2 * X, X]), (WritesAnAttributeDict, [X, -X])]


@pytest.mark.parametrize("cls, inputs", CELLS, ids=[c.__name__ for c, _ in CELLS])
def test_cell_state_matches_eager(cls, inputs):
    eager, net = cls(), cls()
    compiled = amber.jit(net)
    for x in inputs:
        same_state(np.asarray(compiled(x)), np.asarray(eager(x)))
        same_state(_state(net), _state(eager))
    if cls is CountingInBranchesAndLoops:  # read when the code runs: compiled once
        assert compiled.stats.compiles == 1


def test_an_effect_under_grad_runs_once_per_call():
    """As eager: the gradient function runs the function once per call."""
    calls = [(np.array([1.0, 2.0]),), (np.array([0.5, -1.0]),)]
    _reset()
    want = ([np.asarray(amber.grad(loss_counting_calls)(*a)) for a in calls],)
    _reset()
    eager = [loss_counting_calls(*a) for a in calls]
    want += ({"counter": 2, "LOG": eager},)
    _reset()
    got = _run(amber.jit(amber.grad(loss_counting_calls)), calls)
    _reset()
    same_state([np.asarray(g) for g in got[0]], want[0])
    same_state({k: got[1][k] for k in ("counter", "LOG")}, want[1])

