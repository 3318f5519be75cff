"""What users of other dynamic-to-static compilers trip over, each as a passing program: names
bound in one branch, branches and loops changing shapes, dtypes and types, iterating tensors,
mutating arguments, scalar arguments that recompile, and long `range` loops."""
import ast

import numpy as np

from amber.graph import FOR
from harness import Program, build, f32, i32, node_count, randn, runs, specializations

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


@runs(POS, NEG)
def bound_in_one_branch_used_under_same_test(x):
    big = x.max() > 2.5
    if big:
        y = x * 2.0
    if big:
        x = y - 1.0
    return x


@runs(POS, NEG)
def bound_in_one_branch_unbound_error(x):
    if x.sum() > 0:
        y = x * 2.0
    return y


@runs((POS, 0), (POS, 2))
def bound_only_in_loop_body(x, n):
    for i in range(n):
        last = x * i
    return last


@runs(randn(3, 4), -np.abs(randn(3, 4, seed=1)))
def branches_return_different_shapes(x):
    if x.sum() > 0:
        return x.sum(axis=0)
    return x


@runs(randn(3, 4), -np.abs(randn(3, 4, seed=1)))
def branch_assigns_different_shapes(x):
    if x.sum() > 0:
        y = x[0]
    else:
        y = x.reshape(2, 6)
    return y * 2.0, y.shape


@runs(POS, NEG)
def branches_assign_different_dtypes(x):
    if x[0] > 0:
        y = (x * 10.0).astype(np.int32)
    else:
        y = x
    return y


@runs((POS, 0), (POS, 1), (POS, 3))
def loop_carried_shape_doubles(x, n):
    for i in range(n):
        x = np.concatenate([x, x * 0.5])
    return x


@runs(f32([0.5, 1.0, 2.0, 3.0]), f32([5.0]), f32([0.1, 0.1]))
def while_carried_shape_shrinks(x):
    while x.shape[0] > 1 and x.sum() > 1.0:
        x = x[1:]
    return x


@runs(POS, NEG, f32([0.5]))
def int_accumulator_becomes_float(x):
    total = 0
    for v in x:
        total = total + v
    return total


@runs(randn(3, 2), randn(1, 2, seed=4))
def none_then_tensor_accumulator(x):
    h = None
    for row in x:
        if h is None:
            h = row
        else:
            h = h + row
    return h


@runs(f32([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.0]]), f32([[0.5, 0.5]]))
def iterate_tensor_unpacking_rows(x):
    s = np.float32(0.0)
    for a, b in x:
        s = s + a * b
    return s


@runs(randn(4, 3), randn(2, 3, seed=6))
def break_in_tensor_iteration(x):
    count = 0
    for row in x:
        if row.min() < -1.0:
            break
        count += 1
    return count


@runs(randn(4, 3), randn(2, 3, seed=6) + 4.0, randn(3, 3, seed=7, scale=0.1))
def return_in_enumerate(x):
    for i, row in enumerate(x):
        if row.max() > 1.0:
            return i, row
    return -1, x[0]


@runs(i32([3, 1]), i32([0, 4]), i32([1, 1]))
def python_int_from_tensor_controls_branch(x):
    k = int(x[0])
    if k == 3:
        return x * k
    elif k > 0:
        return x + k
    return x - 1


@runs(POS, NEG)
def mutate_argument_item(x):
    x[0] = 0.0
    return x.sum()


@runs(POS, NEG)
def augmented_assign_on_argument(x):
    x += 1.0
    return x * 2.0


@runs(POS, NEG)
def alias_then_mutate(x):
    y = x
    y[1] = 9.0
    return x


@runs(randn(2, 3), randn(3, 3, seed=2))
def mutate_through_view(x):
    v = x[0]
    v[:] = 0.0
    return x.sum(axis=0)


@runs(randn(2, 3), randn(5, 2, seed=2))
def static_shape_condition(x):
    if x.shape[0] > 2:
        x = x[:2]
    if x.shape[1] == 3:
        return x * 3.0
    return x


@runs(f32([1.0, 2.0, 3.0, 4.0]), f32([3.0]))
def float32_accumulator_stays_float32(x):
    acc = np.float32(0.0)
    for i in range(x.shape[0]):
        acc += x[i] * 0.5
    return acc, acc * 2


@runs(randn(5), randn(3, seed=9))
def loop_carried_tuple_in_while(x):
    state = (x, 0)
    while state[1] < 3 and state[0].max() > 0.1:
        state = (state[0] * 0.5, state[1] + 1)
    return state


@runs((POS, 3), (NEG, 0))
def runtime_zero_trip_loop_var_unbound(x, n):
    k = int(x[0] > 0) * n
    for i in range(k):
        x = x + i
    return x, i


def scaled_loop(x, n, scale):
    """A Python-scalar argument program for the recompile tests."""
    for i in range(n):
        x = x * scale + i
    return x


def long_range(x, n):
    """Same code, any trip count: the loop must stay a loop."""
    for i in range(n):
        x = x * 0.999 + 1e-4
    return x


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)


def test_scalar_arguments_recompile_once_per_value(check_program):
    """A new Python scalar value compiles a new specialization; a repeated one does not."""
    x = randn(4)
    calls = [(3, 0.5), (3, 0.5), (5, 0.5), (3, 2.0), (5, 0.5), (0, 1.0)]
    check_program(Program(scaled_loop, tuple((x, n, s) for n, s in calls)))
    subject = build(Program(scaled_loop, ()))
    for n, s in calls:
        np.testing.assert_allclose(subject.compiled(x, n, s), scaled_loop(x, n, s), rtol=1e-6)
    assert specializations(subject.jitted) == 4
    assert subject.jitted.stats.recompiles == 3


def test_new_shapes_and_dtypes_recompile():
    """Each new shape / dtype signature compiles once; results follow the eager dtypes."""
    subject = build(Program(long_range, ()))
    inputs = [randn(3), randn(3, seed=1), randn(2, 5), randn(3).astype(np.float64), randn(3)]
    for x in inputs:
        got, want = subject.compiled(x, 4), long_range(x, 4)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert specializations(subject.jitted) == 3


def test_long_range_code_size_independent_of_trip_count():
    """range(10) and range(10000) give the same graph and code sizes, with a real loop: a `for`
    region in the graph and a `for` statement in the generated code."""
    x = randn(8)
    sizes = []
    for n in (10, 10000):
        subject = build(Program(long_range, ()))
        np.testing.assert_allclose(subject.compiled(x, n), long_range(x, n), rtol=1e-5)
        code = subject.jitted.code
        assert any(isinstance(node, ast.For) for node in ast.walk(ast.parse(code))), code
        assert any(node.op == FOR for node in subject.jitted.graph.walk())
        sizes.append((len(code.splitlines()), node_count(subject.jitted)))
    assert sizes[0] == sizes[1]
