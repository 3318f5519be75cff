"""Programs from the tests of TensorFlow AutoGraph's converters (issue 14): control flow with
composite state (dict items, list items), names created in branches and loops and used later,
loop/else, break and continue with side effects on lists, returns in loops and nested
functions, and `del`. Each runs with Python values and with 0-d arrays standing for scalar
tensors."""
import numpy as np

from harness import runs


def T(n):
    """A scalar tensor: a 0-d int32 array."""
    return np.array(n, np.int32)


def F(x):
    """A float scalar tensor."""
    return np.array(x, np.float32)


def B(c):
    """A boolean scalar tensor."""
    return np.array(c)


# -- control_flow: while ------------------------------------------------------------------------

@runs(0, 1, 5, T(0), T(5))
def nested_while_with_inner_reset(n):
    i = 0
    j = 0
    s = 0
    while i < n:
        while j < i:
            j += 3
        u = i + j
        s += u
        i += 1
        j = 0
    return s, i, j, n


@runs(0, 5, T(0), T(5))
def while_sum_and_count(n):
    i = 0
    s = 0
    while i < n:
        s += i
        i += 1
    return s, i, n


@runs(0, 5, T(0), T(5), F(2.5))
def while_counts_its_argument_down(n):
    while n > 0:
        n -= 1
    return n


@runs(0, 5, T(0), T(5))
def while_dict_item_by_variable_key(n):
    d = {"a": n * 1}  # NOTE: not n itself: `d[k] += 1` on a 0-d array would count n back up
    k = "a"
    while n > 0:
        d[k] += 1
        n -= 1
    return d[k], n


@runs((T(0), T(10)), (T(5), T(10)), tag="tensor", refused_on_numpy1=(
    "d[k] + 1 of an int32 0-d array is int64 under NumPy 1, so the item's dtype depends on the "
    "branch taken"))
@runs((0, 10), (3, 10), (5, 10), (T(3), 10), tag="python")
def while_dict_item_created_in_first_iteration(n, x):
    d = {}
    k = "subkey"
    while n < 5:
        if n == 0:
            d[k] = x
        else:
            d[k] = d[k] + 1
        n += 1
    return d


@runs((0, 10), (5, 10), (T(0), T(10)), (T(5), T(10)))
def while_dict_item_set_by_a_local_key(n, x):
    d = {}
    while n < 5:
        k = "subkey"
        d[k] = x + 1
        n += 1
    return d


@runs(0, 3, T(0), T(3))
def while_local_dict_item_reassigned(n):
    while n > 0:
        d = {"x": n}
        k = "x"
        d[k] = d[k]
        n -= 1
    return n


@runs((5, 0), (0, 0), (T(5), 0), (T(5), T(1)), (T(0), 2.5))
def while_condition_on_one_variable(n, s):
    while n > 0:
        n -= 1
        s += n
    return s


# -- control_flow: if ---------------------------------------------------------------------------

@runs(1, -1, T(1), T(-1))
def if_else_sets_one_of_two(n):
    a = 0
    b = 0
    if n > 0:
        a = -n
    else:
        b = 2 * n
    return a, b


@runs(1, -1, T(1), T(-1))
def if_negates_its_argument(n):
    if n > 0:
        n = -n
    return n


@runs(2, -3, T(2), T(-3))
def if_rebinds_argument_to_a_number(n):
    if n > 0:
        n = 3
    return n


@runs(-3, 1, T(-3), T(1))
def if_raises_on_one_path(n):
    if n > 0:
        n = n + 1
        raise ValueError()
    return n


@runs(1, -1, T(1), T(-1))
def if_with_a_branch_local(n):
    if n > 0:
        b = 4
        n = b + 1
    return n


@runs(1, -1, T(1), T(-1))
def if_with_no_outputs(n):
    if n > 0:
        b = 4  # noqa: F841
    return n


@runs(0, 1, T(0), T(1))
def if_creates_the_result(i):
    if i == 0:
        result = i - 1
    else:
        result = i + 1
    return result


@runs((5, 10), (0, 10), (T(5), 10), (T(0), T(10)))
def loop_local_created_in_branches(n, x):
    for i in range(n):
        if i == 0:
            result = i - 1
        else:
            result = i + 1
        if result > 0:
            x += 1
    return x


@runs((5, 10), (0, 10), (T(5), 10), (T(1), T(10)))
def loop_reads_what_an_earlier_iteration_made(n, x):
    for i in range(n):
        if i == 0:
            result = i - 1
        if i > 0:
            if result < 0:
                x += 1
    return x


# -- control_flow: for --------------------------------------------------------------------------

@runs(np.array([1, 3], np.int32), np.zeros(0, np.int32), [1, 3], [])
def for_two_sums(l):
    s1 = 0
    s2 = 0
    for e in l:
        s1 += e
        s2 += e * e
    return s1, s2


@runs([3, 3], np.array([3, 3], np.int32), np.zeros(0, np.int32))
def for_enumerate_unpacks(x_list):
    z = np.array(0, np.int32)
    for i, x in enumerate(x_list):
        z = z + x + i
    return z


@runs((np.array([1, 2, 3], np.int32), 5), (np.zeros(0, np.int32), 3), ([1, 2], 4))
def for_with_a_comprehension_in_the_body(l, n):
    s = np.array(list(range(n)))
    for _ in l:
        s += np.array([a for a in range(n)])
    return s


# -- loop / else (control_flow, loop_integration) ------------------------------------------------

@runs(4, 2, 9.0, F(4.0), F(2.0), F(9.0))
def while_with_else(x):
    while x > 2:
        x /= 2
    else:
        x += 1
    return x


@runs(True, False, B(True), B(False))
def while_with_else_and_break(cond1):
    x = 8
    while x > 2:
        x /= 2
        if cond1:
            break
    else:
        x += 1
    return x


@runs([], [1, 2], np.zeros(0, np.int32), np.array([1, 2], np.int32))
def for_with_else(l):
    res = 0
    for x in l:
        res += x
    else:
        res += 1
    return res


@runs(True, False, B(True), B(False))
def for_with_else_and_break(flag):
    l = [1, 2, 3]
    res = 0
    for x in l:
        res += x
        if flag:
            break
    else:
        res += 1
    return res


# -- break_statements / continue_statements: lists appended on the way ---------------------------

@runs(0, 1, 4, T(0), T(1), T(4))
def while_break_collects(x):
    v = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            break
        v.append(x)
    return v


@runs([5, 4], [1, 3, 5], np.array([5, 4], np.int32), np.array([2, 6, 3], np.int32))
def for_break_collects(a):
    v = []
    for x in a:
        x -= 1
        if x % 2 == 0:
            break
        v.append(x)
    return v


@runs(0, 3, 11, T(0), T(3), T(11))
def while_nested_break_collects_three(x):
    v = []
    u = []
    w = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            if x % 3 != 0:
                u.append(x)
            else:
                w.append(x)
                break
        v.append(x)
    return v, u, w


@runs(0, 2, 3, 5, T(0), T(3), T(5))
def nested_while_loops_break_collect(x):
    v = []
    u = []
    while x > 0:
        x -= 1
        y = x
        while y > 0:
            y -= 1
            if y % 2 == 0:
                break
            u.append(y)
        if x == 0:
            break
        v.append(x)
    return v, u



@runs(0, 2, 3, T(0), T(2), T(3))
def inner_loop_else_breaks_the_outer(x):
    v = []
    u = []
    while x > 0:
        x -= 1
        y = x * 1
        while y > 1:
            break
        else:
            u.append(y)
            break
        v.append(x * 1)
    return v, u


@runs(([1, 2, 3], [2, 5]), (np.array([1, 2, 3]), np.array([2, 5])), ([], [1]),
      (np.array([4, 5]), np.array([5, 4])))
def inner_loop_else_continues_the_outer(l, m):
    s = 0
    for a in l:
        for b in m:
            if b == a:
                break
        else:
            s += 100
            continue
        s += a
    return s


@runs(True, False, B(True), B(False))
def correlated_breaks_with_side_effects(cond1):
    lst = []
    while True:
        if cond1:
            lst.append(1)
        else:
            break
        if lst[-1] > 0:
            break
    return lst


@runs(0, 1, 3, 4, T(0), T(3), T(4))
def while_continue_collects(x):
    v = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            continue
        v.append(x)
    return v


@runs(0, 1, 3, 4, T(0), T(4))
def while_multiple_continues(x):
    v = []
    while x > 0:
        x -= 1
        if x > 1:
            continue
        if x > 2:
            continue
        v.append(x)
    return v


@runs([], [1], [2], [1, 2, 3], np.array([1, 2, 3], np.int32))
def for_continue_collects(a):
    v = []
    for x in a:
        x -= 1
        if x % 2 == 0:
            continue
        v.append(x)
    return v


@runs(0, 1, 3, 4, T(0), T(4))
def while_nested_continue_collects_three(x):
    v = []
    u = []
    w = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            if x % 3 != 0:
                u.append(x)
            else:
                w.append(x)
                continue
        v.append(x)
    return v, u, w


def _track(y, z):
    y.append(z)
    return z


@runs(3, 2, T(3), T(2))
def continues_guarded_by_side_effects(x):
    u = []
    v = []
    while x > 0:
        x -= 1
        if _track(u, x) > 1:
            continue
        if _track(u, x) > 2:
            continue
        v.append(x)
    return u, v


# -- return_statements ---------------------------------------------------------------------------

@runs(())
def superfluous_returns():
    retval = 1
    return retval
    retval = 2  # noqa: F841
    return retval


@runs(2, -2, T(2), T(-2))
def conditional_return_missing_else(x):
    if x > 0:
        return x


@runs(2, -2, T(2), T(-2))
def else_returns_then_default(x):
    if x < 0:
        x *= x
    else:
        return x
    return x


@runs(2, -2, T(2), T(-2))
def nested_function_with_returns(x):
    def inner_fn(y):
        if y > 0:
            return y * y
        else:
            return y

    return inner_fn(x)


@runs(2, -2, 0, T(2), T(0))
def nested_function_defined_in_a_branch(x):
    if x:
        def inner_fn(y):
            return y
        inner_fn(x)


@runs(2, 0, T(2), T(0))
def return_inside_for(n):
    for _ in range(n):
        return 1


@runs(0, 2, 4, T(0), T(2), T(4))
def return_inside_while(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        s += i
        if s > 4:
            return s
    return -1


@runs(4, 5, T(4), T(5))
def bare_returns(n):
    if n > 4:
        return
    return


@runs(0, 1, 3, 4, T(0), T(3), T(4))
def return_a_list_from_a_loop(x):
    v = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            return v
        v.append(x)
        v.append(x)
    return v


# -- variables and lists ------------------------------------------------------------------------

@runs([1, 2], [1, 2, 3])
def del_items_of_a_copy(l):
    l = list(l)
    del l[0]
    m = list(l)
    del m[0:2]
    return l, m


@runs((1, 2), (T(1), T(2)))
def del_a_list_of_names(a, b):
    del [a, b]
    return a


@runs((1, 2, [1, 2]), (T(1), T(2), [3, 4]))
def del_mixed_then_rebind(a, b, c):
    c = list(c)
    del a, b, c[0]
    a = 1
    b = 2
    return a, b, c


@runs(())
def list_pop_from_a_literal():
    l = [1, 2, 3]
    s = l.pop()
    return s, np.stack(l)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
