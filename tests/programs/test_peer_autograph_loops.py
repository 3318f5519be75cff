"""Programs from TensorFlow AutoGraph's reference tests (issue 14), part 1 of 3, loops: while/for
over counts, lists and arrays, break/continue/return inside them, nested loops, names bound or
rebound in loop bodies, and loop-carried values whose shape, dtype or kind changes. Rewritten
for NumPy: each runs with Python values (decided while compiling) and with 0-d arrays standing
for scalar tensors (If/While/For regions), with inputs reaching both branches, zero-trip loops
and early exits. tf.Variable becomes a 0-d Parameter, tf.TensorArray a list, a tensor to iterate
an array. AutoGraph refuses several of these (a name bound on one path only, None on one path,
dtype or shape changing in a loop, loop/else); Python runs them, so amber must too. Refused ones
are in test_peer_autograph_refused.py."""
import collections

import numpy as np

from amber import Parameter, nn
from harness import i32, runs


def T(n):
    """A scalar tensor: a 0-d int32 array (tf.constant(int) is int32)."""
    return np.array(n, np.int32)


# -- loop_basic ------------------------------------------------------------------------------

class WhileCountsIntoVariable(nn.Cell):
    def __init__(self):
        super().__init__()
        self.v = Parameter(np.array(5, np.int32))

    def construct(self, n):
        self.v = 0
        while self.v < n:
            self.v += 1
        return self.v * 1


runs(0, 2, T(0), T(1), T(2))(WhileCountsIntoVariable)


class ForCountsIntoVariable(nn.Cell):
    def __init__(self):
        super().__init__()
        self.v = Parameter(np.array(5, np.int32))

    def construct(self, l):
        self.v = 0
        for _ in l:
            self.v += 1
        return self.v * 1


runs([], [1], [1, 2], i32([]), i32([1]), i32([1, 2]))(ForCountsIntoVariable)


@runs(0, 1, 2, T(0), T(1), T(2))
def while_one_var(n):
    i = 0
    while i < n:
        i = i * 10 + 1
    return i


@runs([], [1], [1, 2], i32([]), i32([1]), i32([1, 2]))
def for_one_var(l):
    i = 0
    for i in l:
        pass
    return i


@runs(0, 1, 2, T(0), T(1), T(2))
def while_two_vars(n):
    s = 0
    i = 0
    while i < n:
        s = s * 10 + i
        i += 1
    return s


@runs([], [1], [1, 2], i32([]), i32([1]), i32([1, 2]))
def for_two_vars(l):
    s = 0
    for i in l:
        s = s * 10 + i
    return s


@runs((0, 0), (2, 0), (2, 2), (3, 1), (T(0), T(0)), (T(2), T(0)), (T(2), T(2)), (T(3), T(1)))
def while_else(x, y):
    s = 0
    while x > 0:
        x -= 1
        if x > y:
            break
        s += x
    else:
        s = -100
    return s


@runs(([], []), ([1, 2], []), ([1, 2], [2]), ([3, 4], [1, 2]),
      (i32([1, 2]), i32([2])), (i32([3, 4]), i32([1, 2])), (i32([]), i32([1])))
def for_else(l1, l2):
    s = 0
    for c in l1:
        if c in l2:
            break
        s = s * 10 + c
    else:
        s = -1000
    return s


@runs(0, 1, 2, T(0), T(1), T(2))
def while_creates_var(n):
    i = 0
    while i < n:
        i = n + 1
        j = i + 1
    return i, j


@runs([], [1], [1, 2], i32([]), i32([1]), i32([1, 2]))
def for_creates_var(l):
    for i in l:
        pass
    return i


@runs((0, 2), (2, 0), (2, 1), (T(0), T(2)), (T(2), T(0)), (T(1), T(2)), (T(2), 1))
def successive_while_loops(n1, n2):
    s = 0
    i = 0
    while i < n1:
        s = s * 10 + i
        i += 1
    i = 0
    while i < n2:
        s = s * 10 + i
        i += 1
    return s


@runs(([], [1, 2]), ([1], []), ([1, 2], [1]), (i32([]), i32([1, 2])), (i32([1, 2]), i32([3])))
def successive_for_loops(l1, l2):
    s = 0
    for i in l1:
        s = s * 10 + i
    for i in l2:
        s = s * 10 + i
    return s


@runs((0, 2), (2, 0), (2, 2), (T(0), T(2)), (T(2), T(0)), (T(2), T(3)))
def nested_while_loops_into_a_list(n1, n2):
    i = 0
    rows = []
    while i < n1:
        j = 0
        s = 0
        while j < n2:
            s = s * 10 + i * j
            j += 1
        rows.append(s)
        i += 1
    return np.array(rows, dtype=np.int32)


@runs(i32([[1, 2], [3, 4]]), i32([[1]]), np.zeros((0, 2), np.int32), np.zeros((2, 0), np.int32),
      [[1, 2], [3]], [[], [1]])
def nested_for_loops_into_a_list(m):
    rows = []
    for row in m:
        s = 0
        for j in row:
            s = s * 10 + j
        rows.append(s)
    return np.array(rows, dtype=np.int32)


# -- loop_control_flow -----------------------------------------------------------------------

LISTS = ([], [1], [1, 2], [1, 2, 3], [1, 2, 3, 4], i32([]), i32([1]), i32([1, 2, 3]),
         i32([2, 4, 1, 6]))
COUNTS = (0, 1, 2, 3, 4, T(0), T(1), T(2), T(3), T(4))


@runs(*LISTS)
def continue_in_single_for(l):
    s = 0
    for c in l:
        if c % 2 > 0:
            continue
        s += c
    return s


@runs(*COUNTS)
def continue_in_single_while(x):
    s = 0
    while x > 0:
        x -= 1
        if x % 2 > 0:
            continue
        s += x
    return s


MATRICES = ([[], []], [[1], [2]], [[1, 2], [3, 4]], [[1, 2, 3], [4, 5, 6]],
            i32([[1], [2]]), i32([[1, 2], [3, 4]]), i32([[2, 4, 3], [4, 5, 6]]),
            [i32([1, 2]), i32([4, 6])])


@runs(*MATRICES)
def continue_in_inner_for(m):
    s = 0
    for l in m:
        for c in l:
            if c % 2 > 0:
                continue
            s += c
    return s


PAIRS = ((0, 3), (3, 0), (2, 4), (4, 4), (T(0), T(3)), (T(3), T(0)), (T(2), T(4)), (T(4), T(4)))


@runs(*PAIRS)
def continue_in_inner_while(x, y):
    s = 0
    while x > 0:
        x -= 1
        while y > 0:
            y -= 1
            if (x + y) % 2 > 0:
                continue
            s += x + y
    return s


@runs(*LISTS)
def break_in_single_for(l):
    s = 0
    for c in l:
        if c % 2 > 0:
            break
        s += c
    return s


@runs(*LISTS)
def unconditional_return_in_single_for(l):
    s = 0
    for c in l:
        s += c
        return s
    return s


@runs(*LISTS)
def effectively_unconditional_return_in_single_for(l):
    s = 0
    for c in l:
        s += c
        if c % 2 > 0:
            return s
        else:
            return -s
    return s


@runs(*COUNTS)
def unconditional_return_in_single_while(x):
    s = 0
    while x > 0:
        x -= 1
        s += x
        return s
    return s


@runs(*COUNTS)
def effectively_unconditional_return_in_single_while(x):
    s = 0
    while x > 0:
        x -= 1
        s += x
        if x % 2 > 0:
            return s
        else:
            return -s
    return s


@runs(*COUNTS)
def break_in_single_while(x):
    s = 0
    while x > 0:
        x -= 1
        if x % 2 > 0:
            break
        s += x
    return s


@runs(*MATRICES)
def break_in_inner_for(m):
    s = 0
    for l in m:
        for c in l:
            if c % 2 > 0:
                break
            s += c
    return s


@runs(*PAIRS)
def break_in_inner_while(x, y):
    s = 0
    while x > 0:
        x -= 1
        while y > 0:
            y -= 1
            if ((x + y) % 2) == 0:
                break
            s += x + y
    return s


@runs(*MATRICES)
def break_continue_in_inner_for(m):
    s = 0
    for l in m:
        for c in l:
            if c % 2 > 0:
                break
            else:
                continue
            s += c
    return s


@runs(*PAIRS)
def break_continue_in_inner_while(x, y):
    s = 0
    while x > 0:
        x -= 1
        while y > 0:
            y -= 1
            if (x + y) % 2 > 0:
                break
            else:
                continue
            s += x + y
    return s


@runs((3, 5), (1, 5), (3, 1), (T(3), T(5)), (T(1), T(5)), (T(3), T(0)), (5, T(4)))
def break_followed_by_cond_in_single_for(x, y):
    for i in range(y):
        if i == 2:
            break
        if x > 0:
            x -= 1
    return x


@runs(*COUNTS)
def break_followed_by_cond_in_single_while(x):
    while x > 0:
        if x == 2:
            break
        if x > 0:
            x -= 1
    return x


@runs(*COUNTS)
def multiple_breaks_in_single_while(n):
    s = 1
    i = 0
    while i < n:
        i += 1
        if i > 10 * n:
            break
        if i == n:
            break
        s = s * 10 + i
    return i, s


# -- nested_control_flow ---------------------------------------------------------------------

@runs(*[(a, b) for a in (-1, 1, T(-1), T(1)) for b in (-1, 1, T(-1), T(1))])
def independent_ifs(x, y):
    z = 0
    if x > 0:
        if y > 0:
            z = x + y
    return z


@runs(-1, 1, T(-1), T(1))
def dependent_inner_if(x):
    y = 0
    if x > 0:
        y = -2 * x
        if y > 0:
            x = -3 * x
    else:
        y = 4 * x
    return x, y


@runs(-1, 1, 4, T(-1), T(1), T(4))
def dependent_imbalanced_inner_if(x):
    y = 0
    if x > 0:
        if x < 3:
            y = -2 * x
            x = -3 * x
    return x, y


SMALL_PAIRS = [(a, b) for a in (0, 2, T(0), T(2)) for b in (0, 1, T(0), T(2))]


@runs(*SMALL_PAIRS)
def independent_inner_for(a, b):
    p = 0
    for _ in range(a):
        tmp = b
        for j in range(tmp):
            p += j
    return p


@runs(*SMALL_PAIRS)
def independent_inner_while(a, b):
    p = 0
    while a > 0:
        tmp = b
        while tmp > 0:
            p += 1
            tmp -= 1
        a -= 1
    return p


@runs(*SMALL_PAIRS)
def dependent_inner_for(a, b):
    r = 1
    s = 0
    for _ in range(a):
        r += s
        tmp = b
        for j in range(tmp):
            s += j
    return r


@runs(*[(a, b) for a in (0, 3, 4, T(0), T(3), T(4)) for b in (0, 1, T(0), T(2))])
def dependent_inner_while(a, b):
    r = 1
    while a > 0:
        r += 1
        tmp = b
        while tmp > 0:
            a -= 1
            tmp -= 1
        a -= 1
    return r


@runs(0, 1, 5, T(0), T(1), T(5))
def if_in_for(a):
    k = 0
    for i in range(a):
        if i % 2 > 0:
            j = i // 2
            k += j
    return k


@runs(0, 1, 2, T(0), T(1), T(2))
def loop_initializing_invariant_variable(n):
    for i in range(n):
        if i == 0:
            a = 1
        else:
            a = 2
    return a


@runs(0, 1, 3, T(0), T(1), T(3))
def loop_initializing_variant_variable(n):
    for i in range(n):
        if i == 0:
            a = 1
        else:
            a = a + 1
    return a


# -- loop_scoping ----------------------------------------------------------------------------

@runs([], [1], [1, 2], i32([]), i32([1]), i32([1, 2]), 0, 2, T(0), T(2))
def for_with_local_var(l):
    s = 0
    for i in (range(l) if isinstance(l, (int, np.ndarray)) and np.ndim(l) == 0 else l):
        x = i + 2
        s = s * 10 + x
    return s


@runs(0, 1, 2, T(0), T(1), T(2))
def while_with_local_var(x):
    s = 0
    while x > 0:
        y = x + 2
        s = s * 10 + y
        x -= 1
    return s


@runs([1], [1, 2], i32([1, 2]))
def for_with_lambda_iter(l):
    fns = []
    results = []
    for i in l:
        fns.append(lambda: i + i)
    for f in fns:
        results.append(f())
    return results


@runs([1], [1, 2], i32([1, 2]))
def for_with_lambda_iter_local_var(l):
    fns = []
    results = []
    for i in l:
        fns.append(lambda i=i: i + i)
    for f in fns:
        results.append(f())
    return results


@runs([], [1], [1, 2], [3, 1, 2], i32([]), i32([1, 2]), i32([3, 1, 2]))
def for_initializes_local_var(l):
    s = 0
    for i in l:
        if i == l[0]:
            x = 0
        else:
            x += 1
        s = s * 10 + x
    return s


@runs(0, 1, 2, T(0), T(1), T(2))
def while_initializes_local_var(x):
    s = 0
    while x > 0:
        if x > 0:
            y = 0
        else:
            y += 1
        s = s * 10 + y
        x -= 1
    return s


@runs([], [1], [1, 2], i32([]), i32([1]), i32([1, 2]))
def for_defines_var(l):
    for i in l:
        x = i + 2
    return x


@runs(0, 1, 2, T(0), T(1), T(2))
def while_defines_var(x):
    while x > 0:
        y = x + 2
        x -= 1
    return y


@runs(0, 1, 2, T(0), T(1), T(2))
def for_defines_iterate(n):
    s = 0
    for i in range(n):
        s = s * 10 + i
    return i, s


@runs(0, 1, 2, T(0), T(1), T(2), [], [1, 2], i32([1, 2]))
def for_reuses_iterate(n):
    i = 7
    s = 0
    for i in (n if isinstance(n, list) or np.ndim(n) == 1 else range(n)):
        s = s * 10 + i
    return i, s


@runs(0, 1, 2, T(0), T(1), T(2), [], [1, 2], i32([1, 2]))
def for_alters_iterate(n):
    i = 7
    s = 0
    for i in (n if isinstance(n, list) or np.ndim(n) == 1 else range(n)):
        i = 3 * i + 1
        s = s * 10 + i
    return i, s


# -- loop_created_variables ------------------------------------------------------------------

@runs(0, 1, 2, T(0), T(1), T(2))
def while_creates_var_static_shape(n):
    i = 0
    while i < n:
        v = np.zeros([1, 2, 3])
        i += 1
    return v


@runs(1, 2, T(1), T(2))
def while_creates_var_dynamic_shape_py_init_var(n):
    i = 0
    while i < n:
        v = np.arange(i)
        i += 1
    return v


@runs(0, 1, 2, T(0), T(1), T(2))
def while_creates_nested_var_static_shape(n):
    i = 0
    while i < n:
        v = {"a": np.zeros([1, 2, 3]), "b": np.ones([1, 2, 3])}
        i += 1
    return v["a"], v["b"]


# -- loop_with_variable_type -----------------------------------------------------------------

@runs(0, 1, 2, T(0), T(1), T(2))
def while_with_variable_shape_growing_vector(n):
    v = np.array([0, 0], np.int32)
    i = 0
    while i < n:
        v = np.concatenate((v, [i]), 0)
        i += 1
    return v


@runs(0, 1, 2, T(0), T(2))
def for_with_variable_shape_growing_vector(n):
    v = np.array([0, 0], np.int32)
    for i in range(n):
        v = np.concatenate((v, [i]), 0)
    return v


@runs(0, 1, 2, T(0), T(1), T(2))
def while_with_variable_shape_growing_matrix_rows(n):
    m = np.array([[0]], np.int32)
    i = 0
    while i < n:
        m = np.concatenate((m, [[i]]), 0)
        i += 1
    return m


@runs(0, 2, T(0), T(2))
def for_with_variable_shape_growing_matrix_cols(n):
    m = np.array([[0, 0]], np.int32)
    for i in range(n):
        m = np.concatenate((m, [[i]]), 1)
    return m


@runs(0, 1, 2, T(0), T(1), T(2))
def while_with_variable_shape_growing_matrix(n):
    m = np.array([[0, 0], [0, 0]], np.int32)
    i = 0
    while i < n:
        m = np.pad(m, [[1, 1], [1, 1]], constant_values=i)
        i += 1
    return m


@runs(0, 1, 2, T(0), T(1), T(2))
def while_with_variable_shape_inside_if(n):
    v = np.array([0, 0], np.int32)
    i = 0
    if n > 1:
        while i < n:
            v = np.concatenate((v, [i]), 0)
            i += 1
    else:
        v = np.array([1, 2, 3], np.int32)
    return v


@runs(0, 1, 2, T(0), T(1), T(2))
def for_with_variable_shape_inside_if(n):
    v = np.array([0, 0], np.int32)
    if n > 1:
        for i in range(n):
            v = np.concatenate((v, [i]), 0)
            i += 1
    else:
        v = np.array([1, 2, 3], np.int32)
    return v





@runs(0, 1, 2, 5, T(0), T(2), T(5))
def while_with_variable_shape_and_break(n):
    v = np.array([0, 0], np.int32)
    i = 0
    if n > 1:
        while i < n:
            v = np.concatenate((v, [i]), 0)
            i += 1
            if i > 3:
                break
    else:
        v = np.array([1, 2, 3], np.int32)
    return v


@runs(0, 1, 2, 5, T(0), T(2), T(5))
def for_with_variable_shape_and_break(n):
    v = np.array([0, 0], np.int32)
    if n > 1:
        for i in range(n):
            v = np.concatenate((v, [i]), 0)
            i += 1
            if i > 3:
                break
    else:
        v = np.array([1, 2, 3], np.int32)
    return v


Box = collections.namedtuple("Box", ["var"])


@runs(T(2))
def for_with_nested_variable_shape_inside_if(n):
    t = Box(var=np.array([0], np.int32))
    v = np.array([0, 0], np.int32)
    if n > 1:
        for i in range(n):
            v = np.concatenate((v, [i]), 0)
            t = Box(var=t.var + 1)
    return v, t.var


# -- loop_with_variable_type_illegal_cases: AutoGraph refuses, Python runs -------------------

@runs(i32([1, 2, 3]), i32([]), 3, 0)
def for_with_variable_dtype(l):
    n = np.array(0, np.int32)
    for _ in (range(l) if isinstance(l, int) else l):
        n = np.array(0, np.float32)
    return n


@runs(i32([1, 2, 3]), i32([]), 3, 0)
def for_with_variable_dtype_and_early_stopping(l):
    n = np.array(0, np.int32)
    for _ in (range(l) if isinstance(l, int) else l):
        n = np.array(0, np.float32)
        break
    return n


@runs(i32([1, 2, 3]), i32([]), 2, 0)
def for_with_variable_shape(l):
    t = np.array([1], np.int32)
    for _ in (range(l) if isinstance(l, int) else l):
        t = np.array([1, 1], np.int32)
    return t


@runs(i32([1, 2, 3]), i32([]), T(2), T(0))
def for_with_shape_erasure(l):
    t = np.array([1], np.int32)
    for k in (range(l) if np.ndim(l) == 0 else l):
        t = np.arange(k + 2)
    return t


@runs(i32([1, 2, 3]), i32([]), 2, 0)
def for_with_variable_structure(l):
    s = [np.array(0)]
    for _ in (range(l) if isinstance(l, int) else l):
        s = s + [np.array(0)]
    return s


@runs(i32([1, 2, 3]), i32([]))
def for_with_variable_kind(l):
    s = {"a": np.array(0)}
    for _ in l:
        s = np.float32(7.0)
    return s


@runs(T(0), T(3), 0, 3)
def while_with_variable_py_type(n):
    k = np.array(0, np.int32)
    c = True
    while c:
        k += 1
        c = k < n
    return k


# -- loop_control_flow_illegal_cases: AutoGraph refuses, Python runs -------------------------

@runs([1], [2, 1], [2, 4, 3])
def array_break_in_py_for(l):
    s = 0
    for c in l:
        if np.greater(c % 2, 0):
            break
        s += c
    return s


@runs([1], [2, 1], [2, 4, 3])
def array_return_in_py_for(l):
    s = 0
    for c in l:
        if np.greater(c % 2, 0):
            return s
        else:
            return s
        s += c
    return s


@runs(1, 2, 3, T(3))
def array_break_in_py_while(x):
    s = 0
    while x > 0:
        x -= 1
        if np.greater(x % 2, 0):
            break
        s += x
    return s


@runs(1, 2, 3, T(3))
def array_return_in_py_while(x):
    s = 0
    while x > 0:
        x -= 1
        if np.greater(x % 2, 0):
            return s
        else:
            return s
        s += x
    return s


def _generator_in_for(n):
    for i in range(n):
        yield i


@runs(3, i32(4))
def sum_of_a_generator(n):
    # NOTE: refused until generators were inlined into their consumers (issue 32)
    return sum(_generator_in_for(n))


@runs(([0] * 10, T(4)), ([0] * 10, T(0)), ([5] * 6, 3))
def mutation_of_an_argument_list_in_a_loop(t, n):
    # NOTE: refused until the caller's lists could be written inside run-time loops (issue 32)
    for i in range(n):
        t[i] = i
    return t


@runs(([0, 0, 0], 2), ([0, 0, 0], T(3)), ([1, 2, 3], T(0)))
def mutation_through_another_name_in_a_loop(t, n):
    u = t
    for i in range(n):
        u[i] += 1
    return len(u), t


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
