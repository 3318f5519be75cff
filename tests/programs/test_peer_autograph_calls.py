"""Programs from TensorFlow AutoGraph's reference tests (issue 14), part 3 of 3, lists grown in
loops, builtins, lambdas and user functions passed around or called in loops, closures reading loop
variables, print, seeded np.random calls, slices, annotations, assert, namedtuples, and the
regression programs of the general fixes they led to. Rewritten for NumPy: each runs with Python
values (decided while compiling) and with 0-d arrays standing for scalar tensors (If/While/For
regions), with inputs reaching both branches, zero-trip loops and early exits. tf.Variable becomes a
0-d Parameter, tf.TensorArray a list, a tensor to iterate an array. AutoGraph refuses several of
these (a name bound on one path only, None on one path, dtype or shape changing in a loop,
loop/else); Python runs them, so amber must too. Refused ones are in
test_peer_autograph_refused.py."""
import collections

import numpy as np

from harness import i32, runs


def T(n):
    """A scalar tensor: a 0-d int32 array (tf.constant(int) is int32)."""
    return np.array(n, np.int32)


# -- basic_list ------------------------------------------------------------------------------


@runs(())
def list_element_access():
    l = []
    l.append(1)
    l.append(2)
    l.append(3)
    return 2 * l[1]


@runs(())
def list_element_update():
    l = []
    l.append(1)
    l.append(2)
    l.append(3)
    l[1] = 5
    return np.array(l, dtype=np.int32)


@runs(5, 1, T(5), T(1))
def list_simple_fill(n):
    l = []
    for i in range(n):
        l.append(i)
    return np.stack(l)


@runs((5, 3), (1, 1), (T(5), T(3)), (T(2), 3), (3, T(2)))
def list_nested_fill(m, n):
    mat = []
    for _ in range(m):
        l = []
        for j in range(n):
            l.append(j)
        mat.append(np.stack(l))
    return np.stack(mat)


@runs(4, 2, 6, T(4), T(2), T(6))
def list_read_write_loop(n):
    l = []
    l.append(1)
    l.append(1)
    for i in range(2, n):
        l.append(l[i - 1] + l[i - 2])
        l[i - 2] = -l[i - 2]
    return np.array(l, dtype=np.int32)


@runs(0, 2, 4, T(0), T(2), T(4))
def list_simple_empty(n):
    l = []
    l.append(1)
    l.append(2)
    l.append(3)
    l.append(4)
    s = 0
    for _ in range(n):
        s += l.pop()
    return np.array(l, dtype=np.int32), s


@runs(3, T(3), 0, T(0))
def list_stacked_when_empty(n):
    l = []
    for i in range(n):
        l.append(i)
    return np.stack(l)


@runs((np.zeros(5, np.int32), 5), (np.zeros(5, np.int32), T(3)))
def mutation_of_an_argument_array(t, n):
    for i in range(n):
        t[i] = i
    return t


@runs((np.zeros(5, np.int32), 5), (np.zeros(5, np.int32), T(3)))
def mutation_of_a_copy(t, n):
    t = t.copy()
    for i in range(n):
        t[i] = i
    return t


# -- call_to_builtin_function ----------------------------------------------------------------

@runs(1, T(1))
def dict_call(x):
    return dict(foo=x)


@runs(1, T(1))
def dict_call_aliased(x):
    def fake_dict(x):
        return x

    dict = fake_dict
    return dict(x)


@runs(1, T(1))
def dict_call_dynamic(x):
    def gen_dict():
        return dict

    d = gen_dict()
    return d(foo=x)


@runs([1, 2], i32([1, 2]), (i32([[1, 2], [3, 4], [5, 6]]),))
def len_call(x):
    return len(x)


@runs([], [1, 2, 3], i32([]), i32([1, 2, 3]))
def nested_call(x):
    return list(range(len(x)))


@runs(1, 2.5, T(3), np.array(2.5), np.array(-1.5, np.float32))
def nested_cast(x):
    return float(int(x))


@runs([1, 2], i32([1, 2]))
def len_call_aliased(x):
    def fake_len(x):
        return x

    len = fake_len
    return len(x)


@runs([1, 2], i32([1, 2]))
def len_call_dynamic(x):
    def gen_len():
        return len

    l = gen_len()
    return l(x)


# -- call_to_lambda_function -----------------------------------------------------------------

@runs(1, -2, T(1), T(-2))
def inline_lambda(x):
    l = lambda x: x * x if x > 0 else -x
    return l(x)


@runs((1, lambda x: x == 0), (0, lambda x: x == 0), (T(1), lambda x: x == 0),
      (T(0), lambda x: x == 0))
def external_lambda(x, l):
    return l(x)









# -- call_to_print_function / call_to_tf_api -------------------------------------------------

@runs(1, i32([1, 2, 3]), T(4))
def lone_print(x):
    print(x)


@runs(1, i32([1, 2, 3]))
def print_multiple_values(x):
    print("x is", x)


@runs((1, 2), (i32([1, 2, 3]), 4), (T(1), T(2)))
def multiple_prints(x, y):
    print("x is", x)
    print("y is", y)


@runs(1, i32([1, 2, 3]))
def print_with_nontf_values(x):
    print("x is", x, {"foo": "bar"})


@runs(0, 1, T(0), T(1))
def print_in_cond(x):
    if x == 0:
        print(x)


@runs(1, T(1))
def core_api_call(x):
    return x * np.array(2, np.int32)


@runs(())
def seeded_random_numbers():
    np.random.seed(1)
    return 2 * np.random.binomial(1, 0.5, size=(10,)) - 1


# -- call_to_user_function -------------------------------------------------------------------

def cube(x):
    return x * x * x


def affine(x):
    return -1 * x + 11


def pick(n):
    if n == 1:
        return cube
    return affine


@runs(1, T(1), T(3))
def static_fn(x):
    a = cube(x)
    b = affine(x)
    return a + b


@runs(1, T(1), T(3))
def factory_dynamic_fn(x):
    f = pick(1)
    a = f(x)
    f = pick(2)
    b = f(x)
    return a + b


@runs((cube, 1), (cube, T(2)), (affine, T(2)))
def param_dynamic_fn(f, x):
    return f(x)


@runs(1, T(1), T(3))
def variable_dynamic_fn(x):
    f = cube
    a = f(x)
    f = affine
    b = f(x)
    return a + b


@runs(1, T(-1), i32([1, -2]))
def variable_dynamic_library_fn(x):
    f = np.abs
    return f(x)


@runs((cube, 1), (cube, T(2)))
def dynamic_fn_with_kwargs(f, x):
    return f(x=x)


# -- ext_slice / type_annotations / assertion ------------------------------------------------

@runs(np.eye(3, dtype=np.float32), np.arange(6.0).reshape(2, 3))
def basic_ext_slice(n):
    return n[:, :], n[0, :], n[:, 0]


@runs(np.eye(3, dtype=np.float32), np.arange(3.0))
def basic_expand_dims(n):
    return n[:, np.newaxis] - n[np.newaxis, :]


@runs((lambda x: x, np.eye(3, dtype=np.float32)), (lambda x: x * 2, np.arange(3.0)))
def slice_of_application(n, x):
    return n(x)[:, np.newaxis] - n(x)[np.newaxis, :]


@runs(())
def pure_declaration():
    n: int
    return 1


@runs(1, 0, T(1), T(0))
def simple_assertion(x):
    assert x > 0
    return x


# -- loop_with_function_call -----------------------------------------------------------------

def doubled(x):
    return x * 2


class Scaler:
    def method(self, x):
        return x * 4

    def __deepcopy__(self, memo):  # NOTE: the harness copies arguments; a bound method compares
        return self                # equal only on the same instance


CALLEES = (doubled, lambda x: x * 1, Scaler().method, abs)


@runs(*[(n, fn) for n in (0, 2, T(0), T(2)) for fn in CALLEES])
def while_with_call_in_cond(n, fn):
    i = 0
    s = 0
    while i < fn(n):
        s = s * 10 + i
        i += 1
    return s


@runs(*[(l, fn) for l in ([], [1, 2], i32([]), i32([1, 2])) for fn in CALLEES[:3]],
      (i32([-1, 2]), np.abs), (2, range), (T(2), range))
def for_with_call_in_target(l, fn):
    s = 0
    for i in fn(l):
        s = s * 10 + i
    return s


@runs(0, 1, 2, T(0), T(2))
def while_with_local_call_in_cond(n):
    def local_fn(x):
        return x * 3

    i = 0
    s = 0
    while i < local_fn(n):
        s = s * 10 + i
        i += 1
    return s


@runs([], [1, 2], i32([]), i32([1, 2]))
def for_with_local_call_in_target(l):
    def local_fn(l):
        return l * 1

    s = 0
    for i in local_fn(l):
        s = s * 10 + i
    return s


@runs(*[(n, fn) for n in (0, 2, T(0), T(2)) for fn in CALLEES])
def while_with_call(n, fn):
    i = 0
    s = 0
    while i < n:
        s = s * 10 + fn(i)
        i += 1
    return s


@runs(*[(l, fn) for l in ([], [1, 2], i32([]), i32([1, -2])) for fn in CALLEES])
def for_with_call(l, fn):
    s = 0
    for i in l:
        s = s * 10 + fn(i)
    return s


@runs(0, 2, T(0), T(2))
def while_with_local_call(n):
    def local_fn(x):
        return x * 3

    i = 0
    s = 0
    while i < n:
        s = s * 10 + local_fn(i)
        i += 1
    return s


@runs([], [1, 2], i32([]), i32([1, 2]))
def for_with_local_call(l):
    def local_fn(x):
        return x * 3

    s = 0
    for i in l:
        s = s * 10 + local_fn(i)
    return s


@runs(0, 1, 2, T(0), T(1), T(2))
def while_with_closure_call(n):
    i = 0

    def i_via_closure():
        return i + 2

    i = 0
    s = 0
    while i < n:
        s = s * 10 + i_via_closure()
        i += 1
    return s


@runs([], [1], [1, 2], i32([]), i32([1]), i32([1, 2]))
def for_with_closure_call(l):
    i = 0

    def i_via_closure():
        return i + 2

    s = 0
    for i in l:
        s = s * 10 + i_via_closure()
    return s, i


@runs(0, 1, 2, T(0), T(1), T(2))
def while_with_lambda_closure_call(n):
    i = 0
    s = 0
    i_via_closure = lambda: i + 2
    while i < n:
        s = s * 10 + i_via_closure()
        i += 1
    return s


@runs([], [1], [1, 2], i32([]), i32([1]), i32([1, 2]))
def for_with_lambda_closure_call(l):
    i = 0
    s = 0
    i_via_closure = lambda: i + 2
    for i in l:
        s = s * 10 + i_via_closure()
    return s, i


# -- call_to_named_tuple: namedtuples built, read and returned -------------------------------

Pair = collections.namedtuple("Pair", ("a", "b"))


@runs(T(1))
def namedtuple_built(x):
    n = Pair(a=1, b=x)
    return n.a + n.b


@runs((T(1), Pair))
def external_namedtuple(x, nt):
    return nt(a=1, b=x)


class Plus(collections.namedtuple("Plus", ("a",))):
    def bumped(self):
        return self.a + 1


@runs(1)
def namedtuple_subclass(x):
    nt = Plus(x)
    return nt.bumped()


# -- regressions: general fixes these programs led to -----------------------------------------

@runs(1, -2.5, True, T(3), np.array(-1.5))
def numpy_functions_of_numbers(x):
    k = int(x)  # a Python int, known at run time only for an array x
    return (np.abs(x), np.maximum(x, 2), np.greater(x, 0), np.add(x, 1), np.abs(k),
            np.square(k), np.negative(k), np.add(k, 1) * np.ones(2, np.int32))


@runs(T(3), i32([1, 2]), np.float32(2.0), 4)
def isinstance_of_zero_d_arrays_and_scalars(x):
    s = np.sum(x)
    return (isinstance(x, np.ndarray), isinstance(x, np.generic), isinstance(s, np.ndarray),
            isinstance(x, (int, np.ndarray)), isinstance(np.array(s), np.ndarray))


@runs(0, 3, T(0), T(4))
def array_of_a_run_time_list(n):
    ints, zeros_d, floats = [], [], []
    for i in range(n):
        ints.append(i * 2)
        zeros_d.append(np.array(i, np.float32))
        floats.append(i / 2)
    return (np.array(ints, dtype=np.int32), np.asarray(zeros_d, dtype=np.float32),
            np.array(floats), np.array(zeros_d, np.float64))


@runs((T(2), i32([1, 2])), (T(3), i32([1, 2])), (np.array(4.0), np.array([[1.0], [4.0]])),
      (2, i32([[5, 2]])), (T(0), i32([])))
def membership_in_arrays_and_number_tuples(a, b):
    return a in b, a not in b, a in (1, 2, 3), a not in [4, 5], a * 2 in b


@runs(i32([1]), i32([1, 2]), T(3), i32([[1, 2]]), i32([4, 5, 6]))
def rank_changes_after_a_symbolic_axis(x):
    return np.sum(x) * 2, np.ndim(x)


TWO_LAMBDAS = (lambda v: v + 1, lambda v: v * 3)


@runs(T(2), i32([1, 2]), 5)
def two_lambdas_on_one_line(x):
    inc, triple = TWO_LAMBDAS
    return inc(x), triple(x), TWO_LAMBDAS[1](inc(x))


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
