"""canonicalize: every corpus function behaves exactly like its canonical twin (results, raised
errors, printed output), and the twin has the documented shape."""
from __future__ import annotations

import contextlib
import io

import gast
import pytest

from amber.frontend.canonicalize import canonicalize
from amber.frontend.source import parse_function


def twin(fn):
    """The canonical form of `fn`, compiled back to a Python function."""
    parsed = parse_function(fn)
    tree = canonicalize(parsed)
    module = gast.gast_to_ast(gast.Module(body=[tree], type_ignores=[]))
    namespace = dict(fn.__globals__, **parsed.closure)
    exec(compile(module, parsed.file, "exec"), namespace)
    return namespace[tree.name]


def outcome(fn, *args):
    """(result or exception, printed text) of one call."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = ("value", fn(*args))
        except Exception as exc:  # the twin must raise the same error
            result = ("raises", type(exc).__name__, str(exc))
    return result, out.getvalue()


def shape_problems(tree: gast.FunctionDef) -> list[str]:
    """Violations of the documented output shape."""
    problems = []
    returns = [n for n in gast.walk(tree) if isinstance(n, gast.Return)]
    if len(returns) != 1 or tree.body[-1] is not returns[0] or returns[0].value is None:
        problems.append("not exactly one trailing `return <value>`")
    for node in gast.walk(tree):
        if isinstance(node, (gast.Break, gast.Continue)):
            problems.append(f"{type(node).__name__} left at line {node.lineno}")
        if isinstance(node, (gast.stmt, gast.expr)) and getattr(node, "lineno", None) is None:
            problems.append(f"{type(node).__name__} without a location")
        if isinstance(node, (gast.While, gast.For)) and node.orelse:
            problems.append("loop with else")
    return problems


# --- the corpus --------------------------------------------------------------------------------

def while_break_continue(n):
    i, total = 0, 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if total > 10:
            break
        total += i
        print("add", i)
    return total, i


def while_true_return(n):
    i = 0
    while True:
        i += 2
        if i >= n:
            return i
        print(i)


def for_range_break(start, stop, step):
    found = -1
    for i in range(start, stop, step):
        print(i)
        if i * i > 20:
            found = i
            break
    return found, i


def for_range_continue(n):
    odd = []
    for i in range(n):
        if i % 2 == 0:
            continue
        odd.append(i)
    return odd


def for_range_return(n, k):
    for i in range(n, -1, -1):
        if i == k:
            return "hit", i
    return "miss"


def range_stop_changes(n):
    for i in range(n):
        n = n - 1
        if i > n:
            break
    return i, n


def range_step_variable(step):
    seen = []
    for i in range(6, -6, step):
        if i == 0:
            break
        seen.append(i)
    return seen


def loop_var_after_zero_trips(n):
    i = "before"
    for i in range(n):
        if i == 5:
            break
    return i


def loop_var_unbound(n):
    for i in range(n):
        if i == 2:
            break
    return i


def for_list_break(xs, limit):
    total = 0
    for x in xs:
        if x > limit:
            break
        total += x
    return total, x


def for_tuple_unpack_return(pairs, key):
    for name, value in pairs:
        if name == key:
            return value
        print(name)
    return None


def for_enumerate_continue_break(xs):
    out = []
    for idx, x in enumerate(xs):
        if x < 0:
            continue
        if x > 100:
            break
        out.append((idx, x))
    return out


def nested_two(n):
    pairs = []
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            if (i + j) % 2:
                continue
            pairs.append((i, j))
        if len(pairs) > 5:
            break
    return pairs


def nested_three_return(n):
    for i in range(n):
        j = 0
        while j < n:
            j += 1
            for k in (1, 2, 3):
                if i * j * k == 12:
                    return i, j, k
                if k == j:
                    break
            print(i, j)
    return None


def return_shapes(x):
    if x < 0:
        return -1
    if x == 0:
        return (0, 0)
    elif x < 5:
        for i in range(x):
            if i == 3:
                return i, x, [i]
    while x > 10:
        x -= 7
        if x % 2:
            return
    print("end", x)
    return x, x


def break_in_nested_if(xs):
    count = 0
    for x in xs:
        if x > 0:
            if x % 5 == 0:
                print("five", x)
                break
            count += 1
        else:
            count -= 1
        print("step", x)
    return count


def continue_and_break_same_loop(n):
    i, acc = 0, []
    while i < 20:
        i += 1
        if i % 2 == 0:
            continue
        elif i > n:
            break
        acc.append(i)
    return acc


def no_return_at_all(n):
    for i in range(n):
        if i == 2:
            continue
        print(i)


def raises_in_loop(n):
    for i in range(5):
        if i == n:
            raise ValueError(f"bad {i}")
        if i > 3:
            break
    return i


def early_return_guard(x):
    """A docstring stays harmless."""
    if x is None:
        return 0
    y = x * 2
    return y


def closure_factory(offset):
    def inner(n):
        for i in range(n):
            if i + offset > 4:
                return i
        return -1
    return inner


class Counter:
    """A method with a loop, compiled as `Counter.construct`."""

    def __init__(self, limit):
        self.limit = limit

    def construct(self, xs):
        total = 0
        for x in xs:
            if total + x > self.limit:
                return total
            total += x
        return total


CASES = [
    (while_break_continue, [(0,), (5,), (12,), (30,)]),
    (while_true_return, [(0,), (1,), (7,)]),
    (for_range_break, [(0, 10, 1), (10, 0, -1), (-10, 10, 3), (0, 0, 1), (5, 1, 1), (20, -20, -3),
                       (0, 20, 2), (3, 4, 1)]),
    (for_range_continue, [(0,), (1,), (9,)]),
    (for_range_return, [(5, 3), (5, 7), (-1, 0), (0, 0)]),
    (range_stop_changes, [(0,), (3,), (8,)]),
    (range_step_variable, [(1,), (-1,), (-2,), (2,), (-5,), (0,)]),
    (loop_var_after_zero_trips, [(0,), (3,), (9,)]),
    (loop_var_unbound, [(0,), (1,), (5,)]),
    (for_list_break, [([], 3), ([1, 2, 3], 2), ([5, 1], 9), ((4, 4, 4), 4)]),
    (for_tuple_unpack_return, [([("a", 1), ("b", 2)], "b"), ([("a", 1)], "z"), ([], "a")]),
    (for_enumerate_continue_break, [([1, -2, 3, 200, 4],), ([],), ([-1, -1],)]),
    (nested_two, [(0,), (3,), (6,)]),
    (nested_three_return, [(0,), (3,), (5,)]),
    (return_shapes, [(-3,), (0,), (2,), (4,), (6,), (23,), (24,), (11,)]),
    (break_in_nested_if, [([1, 2, -3, 10, 4],), ([-1, -2],), ([5],)]),
    (continue_and_break_same_loop, [(0,), (7,), (30,)]),
    (no_return_at_all, [(0,), (4,)]),
    (raises_in_loop, [(2,), (9,)]),
    (early_return_guard, [(None,), (3,)]),
    (closure_factory(2), [(0,), (2,), (9,)]),
    (closure_factory(9), [(3,)]),
    (Counter.construct, [(Counter(5), [1, 2, 3]), (Counter(100), [1, 2, 3]), (Counter(0), [])]),
]


@pytest.mark.parametrize("fn, inputs", CASES, ids=[fn.__qualname__ for fn, _ in CASES])
def test_twin_behaves_like_original(fn, inputs):
    canonical = twin(fn)
    for args in inputs:
        assert outcome(canonical, *args) == outcome(fn, *args), args


@pytest.mark.parametrize("fn", [fn for fn, _ in CASES], ids=[fn.__qualname__ for fn, _ in CASES])
def test_output_shape(fn):
    assert shape_problems(canonicalize(parse_function(fn))) == []


def take(xs):
    print("test")
    return xs.pop() if xs else 0


def run_side_effect_loop(xs):
    got = []
    while take(xs):
        got.append(len(xs))
        if len(got) == 2:
            break
    return got, xs


def test_broken_while_does_not_reevaluate_its_test():
    for xs in ([1, 2, 3, 4], [1], []):
        assert outcome(twin(run_side_effect_loop), list(xs)) == outcome(
            run_side_effect_loop, list(xs))
