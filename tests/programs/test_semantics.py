"""Python evaluation rules a compiler can get subtly wrong: range arguments evaluated once,
rebinding the loop variable, short-circuit `and` / `or` / ternaries guarding errors, `or`
returning operands, aliasing through names and in-place operators, evaluation order."""
import numpy as np

from harness import f32, i32, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


def _noisy(tag, v):
    print("eval", tag)
    return v


@runs(0, 2, 5)
def rebinding_the_loop_variable(n):
    s = 0
    for i in range(n):
        i = i * 10
        s += i
    return s, n


@runs((POS, 3), (POS, 0))
def range_bound_changed_in_body(x, n):
    count = 0
    for i in range(n):
        n = n + 1
        count += 1
    return count, n


@runs(i32([1, 2]), i32([0, 3]))
def runtime_range_bound_changed_in_body(x):
    n = int(x[1])
    count = 0
    for i in range(n):
        n = n + 2
        count += 1
    return count, n


@runs((POS, 3), (POS, 1), (NEG, 2))
def short_circuit_guards_index(x, i):
    if i < x.shape[0] and x[i] > 0:
        return 1
    return 0


@runs(i32([3, 5, 7]), i32([1, -5, 7]), i32([0, 1, 2]), i32([2, 0, 4]))
def short_circuit_runtime_index(x):
    i = int(x[0])
    if i < 3 and x[i] > 0:
        return x[i]
    return x[0] * 0


@runs(i32([3, 5, 7]), i32([1, -5, 7]))
def ternary_guards_index(x):
    i = int(x[0])
    v = x[i] if i < x.shape[0] else -1
    return v


@runs(i32([0, 4]), i32([2, 4]))
def or_and_return_operands(x):
    k = int(x[0])
    a = k or 7
    b = k and 9
    c = (k > 1) or "fallback"
    return a, b, c


@runs(POS, NEG)
def short_circuit_skips_prints(x):
    if _noisy("left", x[0] > 0) and _noisy("right", x[1] > 0):
        print("both")
    if _noisy("first", x[2] > 0) or _noisy("second", x[0] > 0):
        print("either")
    return x


@runs(POS, NEG)
def evaluation_order_of_arguments(x):
    return _noisy("a", x[0]) + _noisy("b", x[1]) * _noisy("c", x[2])


@runs(POS, NEG)
def alias_then_inplace_add(x):
    y = x * 1.0
    z = y
    z += 1.0
    return y, z


@runs(POS, NEG)
def chained_assignment_alias(x):
    a = b = x * 2.0
    a += 1.0
    return a, b


@runs(POS, NEG)
def rebinding_is_not_inplace(x):
    h = x * 2.0
    g = h
    h = h + 1.0
    return g, h


@runs(randn(3, 4), randn(2, 4, seed=1))
def inplace_on_a_view(x):
    y = x * 1.0
    row = y[0]
    row *= 10.0
    return y, row


@runs(POS, NEG)
def temporaries_reused_after_inplace(x):
    t = np.exp(x)
    u = t * 2.0
    t += 1.0
    return u, t, np.log(t)


@runs(randn(4), randn(6, seed=2))
def swap_tensor_slices(x):
    y = x * 1.0
    a = y[:2] * 1.0
    y[:2] = y[-2:]
    y[-2:] = a
    return y


@runs(POS, NEG)
def list_alias_append(x):
    a = [x]
    b = a
    b.append(x * 2.0)
    return len(a), a[-1]


@runs(POS, NEG)
def loop_reads_value_before_update(x):
    prev = x * 0.0
    cur = x
    for i in range(3):
        prev, cur = cur, cur + prev
    return prev, cur


@runs((POS, 3), (NEG, 0))
def loop_variable_shadows_outer_name(x, n):
    i = 100
    for i in range(n):
        x = x + i
    return x, i


@runs(POS, NEG)
def augmented_ops_on_python_ints_in_branches(x):
    k = 5
    if x[0] > 0:
        k -= 2
        k *= 3
    else:
        k //= 2
        k **= 2
    k %= 7
    return k


@runs(POS, NEG)
def comparison_results_are_bools(x):
    a = x[0] > 0
    b = x.shape[0] > 2
    c = a == b
    return a, b, c, not a, bool(a) is True


def _inner_loop(v):
    i = 0
    t = v
    for i in range(2):
        t = t + i
    return t, i


@runs(POS, NEG)
def inlined_helper_names_do_not_collide(x):
    t = x * 0.0
    t_1 = x + 1.0
    j = -1
    for i in range(3):
        t, j = _inner_loop(t)
        t = t + i
    return t, t_1, i, j


@runs(POS, NEG)
def unicode_and_builtin_like_names(x):
    α = x * 2.0
    sum_ = α.sum()
    list_ = [α]
    return α, sum_, list_


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
