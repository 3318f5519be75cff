"""Paddle dy2static's call, print, assert, tensor-method and grid programs (issue 14), rewritten
for NumPy: functions and methods calling each other (a nested def, a module-level lambda, a
helper with a shape branch), the same layer applied twice, a Parameter returned as it is,
prints with formats and keywords, asserts on arrays and flags, norms and meshgrids, a
nested def rebinding a variable of its caller (`nonlocal`), clone/item/size/true division,
and a thin-plate-spline grid built with nested loops writing items of a matrix."""
from functools import wraps

import numpy as np

from amber import Parameter, nn
from harness import f32, i32, i64, randn, runs

ONES5 = np.ones(5, np.int32)


# -- prints --------------------------------------------------------------------------------

@runs(ONES5)
def print_an_array(x):
    x_t = np.asarray(x)
    print(x_t)


@runs(ONES5)
def print_with_f_string_and_percent(x):
    print(f"PrintTensor: {x}")
    print("PrintTensor: %s" % (x,))


@runs(ONES5, np.ones((2, 3), np.int32))
def print_in_both_branches_of_a_rank_test(x):
    if len(x.shape) > 1:
        print(x)
    else:
        print(x)


@runs(ONES5)
def print_several_arrays(x):
    y = x * 2
    print(x)
    print(y)
    print(x, y)


@runs(ONES5)
def print_with_end_and_sep(x):
    print("Tensor", x, end="\n\n", sep=": ")


@runs((f32([1.5, 2.25]), 3))
def percent_formats_of_run_time_numbers(x, n):
    line = "sum %.3f max %s count %d%%" % (x.sum(), x.max(), n)
    print("first %r" % x[0])
    return line, "%5.1f" % x.sum()


# -- asserts -------------------------------------------------------------------------------

@runs(np.array([True]), np.array([False]), np.array([1]), np.array([0]))
def assert_on_a_one_element_array(x):
    assert x


@runs(True, False)
def assert_on_a_python_flag(x=True):
    assert x


# -- calls ---------------------------------------------------------------------------------

def mean_branch(x):
    if np.mean(x) > 5:
        x = x - 1
    else:
        x = x + 1
    return x


@runs(randn(10, 16), randn(10, 16) + 7)
def nested_def_returns_a_closed_over_array(x):
    def fn1():
        return x

    return fn1() + mean_branch(x)


lambda_identity = lambda x: x  # noqa: E731


class BranchThenLambda(nn.Cell):
    def construct(self, x):
        y = mean_branch(x)
        y = lambda_identity(y)
        return self.copied(y)

    def copied(self, x):
        return np.copy(x)


class CallsThrough(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = BranchThenLambda()
        self.fc = nn.Dense(5, 1, weight_init="ones", bias_init="ones")
        self.act = nn.ReLU()

    def construct(self, x):
        return self.act(self.fc(self.inner(x)))


runs(randn(1, 3, 3, 5), randn(1, 3, 3, 5) + 7)(CallsThrough)


class LambdaAttributes(nn.Cell):
    """Lambdas made outside compiled code: an instance attribute and a class attribute."""
    shift = staticmethod(lambda v: v - 1)

    def __init__(self, k):
        super().__init__()
        self.scale = lambda v: v * k

    def construct(self, x):
        return self.scale(self.shift(x)), lambda_identity(x)


runs(f32([1.0, -2.0]), init=(3,))(LambdaAttributes)


@runs(randn(3, 4), randn(4) * 3)
def norms_of_vectors_and_matrices(m):
    rows = np.linalg.norm(m, axis=-1)
    whole = np.linalg.norm(m)
    kept = np.linalg.norm(m, ord=2, axis=0, keepdims=True)
    ints = np.linalg.norm(np.arange(4))
    return rows, whole, kept, ints


@runs(f32([1.0, 2.0]))
def nonlocal_statement(x):
    i = 10

    def func():
        nonlocal i
        i = 1

    func()
    return x + i


@runs(randn(3, 4))
def meshgrid_of_run_time_vectors(x):
    gx, gy = np.meshgrid(x[0], x[1])
    return gx + gy


class SumHelper(nn.Cell):
    def sum_of(self, x):
        if x.shape[0] > 1:
            res = x + 1
        res = np.sum(x)
        return res

    def outer(self, x):
        return self.sum_of(x)

    def construct(self, x):
        return self.outer(x)


runs(randn(3, 2), randn(1, 2))(SumHelper)


class TwiceTheSameOutput(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(1, 1, weight_init="ones")

    def construct(self, x):
        x = self.fc(x)
        return x, x


runs(f32([[1.0]]))(TwiceTheSameOutput)


class LayerAppliedTwice(nn.Cell):
    def __init__(self):
        super().__init__()
        self.act = nn.Sigmoid()

    def construct(self, x):
        y = self.act(x)
        z = self.act(x)
        return y + z


runs(randn(2, 10, 3, 3))(LayerAppliedTwice)


class ReturnsItsParameter(nn.Cell):
    def __init__(self, copy):
        super().__init__()
        self.copy = copy
        self.weight = Parameter(randn(10, seed=4))

    def construct(self, x):
        if self.copy:
            return np.copy(self.weight)
        return self.weight


runs(randn(10), init=(True,), tag="copied")(ReturnsItsParameter)
runs(randn(10), init=(False,), tag="itself")(ReturnsItsParameter)


@runs(randn(10))
def input_returned_as_it_is(x):
    return x


# -- decorated helpers (the wrapper's body runs too) ---------------------------------------

def adds_two(fun):
    @wraps(fun)
    def inner(*args, **kwargs):
        print("in adds_two")
        return np.add(np.array([2]), fun(*args, **kwargs))
    return inner


def adds(k=3):
    def decorate(fun):
        @wraps(fun)
        def inner(*args, **kwargs):
            print(f"in adds({k})")
            return np.add(np.array(k), fun(*args, **kwargs))
        return inner
    return decorate


@adds_two
def plain_value(x, y=0):
    print("plain_value x=%d" % x)
    return np.array(y)


@adds(1)
@adds_two
def stacked_decorators(x, y=0):
    return np.array(y) + x


@runs(1, 4)
def decorated_helpers_in_a_loop(k):
    out = []
    for idx, fun in enumerate([plain_value, stacked_decorators]):
        out.append(fun(idx + 1, idx + k))
    return out


runs((np.array(1), np.array(2)))(stacked_decorators)


# -- tensor methods ------------------------------------------------------------------------

@runs(np.ones((1, 2, 3), np.float32))
def copy_then_item_and_size(x):
    y = x.copy()
    z = np.reshape(y, np.shape(y))
    return y, z.size, y[0, 0, :1].item()


@runs((i64([3]), i64([4])), (i64([-7]), i64([2])))
def true_division_of_int_arrays(x, y):
    return x / y, x // y, x % y


# -- a grid built with nested loops --------------------------------------------------------

class GridGenerator(nn.Cell):
    def __init__(self, num_fiducial):
        super().__init__()
        self.eps = 1e-6
        self.F = num_fiducial

    def construct(self, x, size=(4, 6)):
        C = self.fiducials()
        P = self.grid(size)
        inv = self.inverse_delta(C)
        return C, P, self.p_hat(C, P), inv, x * 0

    def fiducials(self):
        F = self.F
        xs = np.linspace(-1.0, 1.0, int(F / 2))
        top = np.stack([xs, -1 * np.ones(int(F / 2))], axis=1)
        bottom = np.stack([xs, np.ones(int(F / 2))], axis=1)
        return np.concatenate([top, bottom], axis=0)

    def grid(self, size):
        width, height = size
        gx = (np.arange(-width, width, 2).astype("float32") + 1.0) / np.float32(width)
        gy = (np.arange(-height, height, 2).astype("float32") + 1.0) / np.float32(height)
        shape = (len(gy), len(gx))  # np.meshgrid(gx, gy), spelled by broadcasting
        P = np.stack([np.broadcast_to(gx, shape), np.broadcast_to(gy[:, None], shape)], axis=2)
        P = np.transpose(P, (1, 0, 2))
        return P.reshape((-1, 2))

    def inverse_delta(self, C):
        F = self.F
        hat = np.zeros((F, F), dtype="float32")
        for i in range(0, F):
            for j in range(i, F):
                if i == j:
                    hat[i, j] = 1
                else:
                    r = np.linalg.norm(C[i] - C[j])
                    hat[i, j] = r
                    hat[j, i] = r
        hat = (hat ** 2) * np.log(hat)
        delta = np.concatenate([
            np.concatenate([np.ones((F, 1)), C, hat], axis=1),
            np.concatenate([np.zeros((2, 3)), np.transpose(C, (1, 0))], axis=1),
            np.concatenate([np.zeros((1, 3)), np.ones((1, F))], axis=1)], axis=0)
        return delta

    def p_hat(self, C, P):
        F = self.F
        n = P.shape[0]
        diff = np.tile(np.expand_dims(P, axis=1), (1, F, 1)) - np.expand_dims(C, axis=0)
        norm = np.linalg.norm(diff, ord=2, axis=2, keepdims=False)
        rbf = np.multiply(np.square(norm), np.log(norm + self.eps))
        return np.concatenate([np.ones((n, 1)), P, rbf], axis=1)


runs(randn(1, 20, 2), init=(6,))(GridGenerator)


@runs(i32([2, 3]), i32([0, 0]))
def loop_bounds_from_an_argument_array(x):
    total = np.zeros(1, np.int32)
    for i in range(x[0]):
        for j in range(i, x[1]):
            if i == j:
                total += 1
            else:
                total += i * j
    return total


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
