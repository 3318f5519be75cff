"""Paddle dy2static's if/else and return programs (issue 14), rewritten for NumPy: branches on
means and elements of arrays, names bound in one branch only, `and`/`or` mixing `is None` tests
with array comparisons, truth of 0-d arrays, early returns in branches and loops, helpers called
from branches, Cells whose mode picks the branch (logical operators and lambdas:
test_peer_paddle_logic.py)."""
import numpy as np

from amber import Parameter, nn
from harness import f32, i32, i64, randn, runs

WIDE = randn(4, 5, seed=1)
SHIFTED = randn(4, 5, seed=2) + 6.0
LOW = randn(4, 5, seed=3) - 3.0
ROW = f32([1.0, 3.0])


@runs(WIDE, LOW)
def print_in_a_constant_branch(x):
    flag = True
    if flag:
        print("a constant branch prints once")
    if np.mean(x) < 0:
        x + 1  # an expression statement: computed, never kept
    return x * 2


@runs(WIDE, SHIFTED, (SHIFTED, WIDE), (WIDE, LOW))
def mean_branch_then_optional_label(x, label=None):
    if np.mean(x) > 5:
        x = x - 1
    else:
        x = x + 1
    if label is not None:
        return ((x - label) ** 2).mean(axis=-1)
    return x


@runs((WIDE, 100), (WIDE, 2), (SHIFTED, 3))
def column_chosen_by_a_python_int(x, col=100):
    row = 0
    if abs(col) > x.shape[-1]:
        col = np.full((), -1, np.int64)
    else:
        col = np.full((), 1, np.int64)
    if np.mean(x) > x[row][col]:
        y = np.maximum(np.power(x, 2), 0)
    else:
        y = np.tanh(np.power(x, 2))
    return y


@runs(WIDE, SHIFTED)
def names_bound_in_both_branches(x):
    y = x + 1
    if np.mean(x) < 5:
        x = x + 1
        z = x + 2
        q = x + 3
        m = x + 2
        n = x + 3
    else:
        y = y + 1
        z = x - 2
        q = x + 3
        m = x + 2
        n = x + 3
    q = q + 1
    n = q + 2
    return n, y, z, m


@runs(i64([10]), i64([0]))
def early_return_in_one_branch(x):
    if x == 0:
        a = np.zeros((2, 2))
        b = np.zeros((3, 3))
        return a, b
    a = np.zeros((2, 2)) + 1
    return a, np.zeros((3, 3)) + 1


@runs(i64([10]), i64([0]), i64([1]))
def early_returns_in_elif_chain(x):
    if x == 0:
        return np.zeros((2, 2)), np.zeros((3, 3))
    elif x == 1:
        c = np.zeros((2, 2)) + 1
        d = np.zeros((3, 3)) + 1
        return c, d
    e = np.zeros((2, 2)) + 3
    return e, np.zeros((3, 3)) + 3


@runs(ROW)
def sum_of_a_comprehension_in_a_constant_branch(x):
    if 10 > 5:
        y = sum([np.full((2,), v, np.float32) for v in range(5)])
    else:
        y = x
    return y


@runs(WIDE, LOW, SHIFTED, randn(16, 5, seed=4) - 1)
def nested_branches_on_means_and_elements(x):
    batch_size = 16
    feat_size = x.shape[-1]
    bias = np.full((feat_size,), 1, np.float32)
    if x.shape[0] != batch_size:
        batch_size = x.shape[0]
    if np.mean(x) < 0:
        y = x + bias
        w = np.full((feat_size,), 10, np.float32)
        if y[0][0] < 10:
            tmp = y * w
            y = np.maximum(tmp, 0)
            if np.mean(y) < batch_size:
                y = np.abs(y)
            else:
                tmp = np.full(y.shape, -1, np.float32)
                y = y - tmp
        else:
            y = np.maximum(y * w, 0)
    else:
        y = x - bias
        tmp = y * np.full((feat_size,), 10, np.float32)
        y = np.abs(np.maximum(tmp, 0))
    return y


@runs(WIDE, randn(0, 3))
def name_bound_in_a_dead_branch(x):
    y = np.reshape(x, (-1, 1))
    b = 2
    if b < 1:
        z = y
    if x.shape[0] < 1:
        if y.shape[0] < 1:
            res = np.full(x.shape, 2, np.int32)
            z = y + 1
        else:
            res = np.full(x.shape, 3, np.int32)
    else:
        res = x
    return res


@runs(WIDE, randn(0, 3))
def branch_only_names_not_used_after(x):
    y = np.reshape(x, (-1, 1))
    b = 2
    if b < 1:
        z = y
    else:
        z = x
    if b < 1:
        res = x
        out = x - 1
    else:
        if y.shape[0] < 1:
            res = np.full(x.shape, 2, np.int32)
            z = y + 1
            out = x - 1
        else:
            res = np.full(x.shape, 3, np.int32)
            out = x + 1
            z = y - 1
    return res, out, z


class ControlFlowDense(nn.Cell):
    """The dict of constants is local here: writing into a dict attribute is refused (see the
    refused file)."""

    def __init__(self, hidden=5):
        super().__init__()
        self.hidden = hidden
        self.fc = nn.Dense(hidden, 3, weight_init="ones", bias_init="zeros")
        self.alpha = 10.0

    def construct(self, x):
        if x.shape[-1] != self.hidden:
            raise ValueError(f"hidden {x.shape[-1]} is not {self.hidden}")
        consts = {"bias": np.full((3,), 1, np.float32)}
        out = self.fc(x)
        if np.mean(out) < 0:
            y = out + consts["bias"]
            consts["w"] = np.full((3,), 10, np.float32)
            if y[0][0] < self.alpha:
                tmp = y * consts["w"]
                y = np.maximum(tmp, 0)
                if y[0][-1] < self.alpha:
                    y = np.abs(y)
                else:
                    y = y - np.full(y.shape, -1, np.float32)
        else:
            y = out - consts["bias"]
        return np.mean(y)


runs(WIDE, LOW, SHIFTED, randn(4, 3))(ControlFlowDense)


@runs((WIDE, None), (LOW, None), (WIDE, SHIFTED), (randn(1, 5), None))
def and_or_with_none_and_means(x, label=None):
    batch = x.shape
    if x is not None and (np.mean(x) > 0 or label is not None) and batch[0] > 1 and True:
        x = x - 1
    else:
        x = x + 1
    if label is not None:
        return np.abs(x - label).mean()
    return x


@runs((WIDE, None), (WIDE, 1.0), (randn(1, 5), 2.0))
def and_or_with_none_and_sizes(x, y=None):
    batch = x.shape
    if batch[0] > 1 and y is not None:
        x = x + 1
    if y is not None or batch[0] > 1:
        x = x - 1
    if x is not None and batch[0] > 1 and y is not None:
        x = x + 1
    if batch[0] > 1 or y is not None or x is not None:
        x = x - 1
    return x


@runs((WIDE, None), (SHIFTED, 1.0), (LOW, 1.0), (SHIFTED, 0.0))
def and_or_with_none_and_a_mean_array(x, y=None):
    batch = x.shape
    mean = np.mean(x)
    if x is not None and batch[0] > 1 and y is not None and mean > 0:
        x = x + 1
    if mean > 0 and (x is not None and batch[0] > 1) and y:
        x = x - 1
    return x


@runs((WIDE, None), (SHIFTED, 1.0), (LOW, 1.0), (randn(1, 5), None))
def grouped_and_or_with_none(x, y=None):
    batch = x.shape
    mean = np.mean(x)
    if (x is not None and batch[0] > 1) or (y is not None and mean > 0):
        x = x + 1
    if (x is not None or batch[0] > 1) and (y is not None or mean > 0):
        x = x - 1
    return x


@runs(WIDE, np.zeros((4, 5), np.float32), SHIFTED)
def truth_of_a_mean_and_breaks(x):
    x = np.copy(x)
    mean = np.mean(x)
    if mean:
        for i in range(0, 10):
            if i > 5:
                x += 1
                break
            x += 1
    else:
        for i in range(0, 37):
            x += 1
            break
            x += i
    if np.mean(x) + 1 and mean > 1 and x is not None or 2 > 1:
        x -= 1
    if not (x[0][0] and (mean * x)[0][0]):
        x += 1
    return x


@runs(f32([1.0, 2.0, 3.0]), f32([-1.0, 5.0]))
def return_int_and_array_from_both_branches(x):
    index = 0
    pred = x[:1] > 0
    if pred:
        y = x[index] + 1
        index = index + 1
        return y, index
    else:
        y = x[index] + 2
        index = index + 1
        return y, index


@runs(WIDE, LOW)
def conditional_expressions_in_mapped_lambdas(x):
    y = [x]

    def add_one(v):
        v = v + 1
        return v

    def map_all(func, values):
        return [func(v) for v in values]

    i = np.full((1,), 0, np.int64)
    y = map_all(lambda v: v if i == 1 else add_one(v), y)
    return y[0]


@runs(WIDE)
def while_over_cond_and_body_helpers(x):
    y = [x]

    def add_one(v):
        return v + 1

    def cond(i, ten, y):
        return i < ten

    def body(i, ten, y):
        y = [v if (i == 0) is not None else add_one(v) for v in y]
        i += 1
        return [i, ten, y]

    i = np.full((1,), 0, np.int64)
    ten = np.full((1,), 10, np.int64)
    while cond(i, ten, y):
        i, ten, y = body(i, ten, y)
    return y[0], i


def add_one(x):
    return x + 1


def relu(x):
    return np.maximum(x, 0)


@runs((WIDE, None), (LOW, None), (LOW, SHIFTED))
def external_helpers_in_branches(x, label=None):
    if np.mean(x) < 0:
        v = x - 1
    else:
        v = add_one(x)
    v = relu(v)
    if label is not None:
        return np.abs(v - label).sum()
    return v


class ExternalSoftmax(nn.Cell):
    def construct(self, x, label=None):
        if np.mean(x) < 0:
            v = x - 1
        else:
            v = add_one(x)
        v = softmax_rows(v)
        if label is not None:
            return np.abs(v - label).sum()
        return v


def softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


runs(WIDE, LOW, (LOW, SHIFTED))(ExternalSoftmax)


class ModeSwitch(nn.Cell):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def construct(self, x, y):
        if self.mode == "train":
            out = x + y
        elif self.mode == "infer":
            out = x - y
        else:
            raise ValueError("Illegal mode")
        return out


runs((WIDE, LOW), init=("train",), tag="train")(ModeSwitch)
runs((WIDE, LOW), init=("infer",), tag="infer")(ModeSwitch)
runs((WIDE, LOW), init=("eval",), tag="illegal")(ModeSwitch)


class ModeSwitchReturns(nn.Cell):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def construct(self, x, y):
        if self.mode == "train":
            out = x + y
            return out
        elif self.mode == "infer":
            out = x - y
            return out
        else:
            raise ValueError("Illegal mode")


runs((WIDE, LOW), init=("train",), tag="train")(ModeSwitchReturns)
runs((WIDE, LOW), init=("infer",), tag="infer")(ModeSwitchReturns)


@runs(True, False)
def list_bound_in_one_branch_grown_in_a_loop(training):
    if training:
        targets = [1, 2, 3]
        targets_list = [targets]
    num_step = 3
    for i in range(num_step):
        if i > 0:
            rois, rois_num = 1, 2
            if training:
                ros, rois_num, targets = -1, -2, [-1, -2, -3]
                targets_list.append(targets)
    return rois_num


class MatmulThenBranch(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param = Parameter(randn(3, 2, seed=7))

    def construct(self, a, b, c):
        a = np.matmul(a, self.param)
        a = np.reshape(a, (2, 4))
        cond = np.array([10])
        if cond == 10:
            a_argmax = a.argmax(axis=-1)
            b = b + self.param
        else:
            print(c)
        return b, a_argmax


runs((randn(4, 3), f32([10.0]), i64([2])))(MatmulThenBranch)


# -- returns -------------------------------------------------------------------------------

@runs(i32([1]))
def return_through_an_inner_function(x):
    def inner(v):
        return v

    return inner(x)


@runs(i32([1]), i32([-2]))
def return_in_the_then_branch(x):
    if x < 0:
        x -= 1
        return -x
    x += 3
    return x


@runs(i32([1]), i32([-2]))
def dead_statements_after_returns(x):
    if x > 0:
        x += 10086
        return x
        x -= 3
    else:
        x += 6666
        return x
        x -= 8888


@runs(i32([1]), i32([8]))
def return_inside_a_while_on_an_array_counter(x):
    i = np.full((1,), 0, np.int32)
    while i < 10:
        i += 1
        if i > 5:
            x += 110
            return x
        x += i
    return x


@runs(i32([1]))
def return_in_else_after_continue(x):
    for i in range(10):
        if i <= 4:
            x += 1
            continue
        else:
            return x + 10086
    return x - 1


@runs(f32([1.0]), f32([9.0]))
def return_of_a_helper_with_branches(x):
    return mean_branch_then_optional_label(x)


@runs(i32([1]))
def no_return_statement(x):
    y = x + 1  # noqa: F841


@runs(i32([1]))
def return_list_of_one(x):
    x += 1
    return [x]


@runs(i32([1]))
def return_list_of_three(x):
    x += 1
    return [x, x * 2, x * x]


@runs(i32([1]))
def return_tuple_of_one(x):
    x += 1
    return (x,)


def _double_unless_negative(x):
    a = 2
    if a < 0:
        return x + 1
    return x * 2


@runs(ROW)
def helper_with_a_constant_early_return(x):
    y = np.ones(10)
    y = _double_unless_negative(y)
    return np.reshape(y, (2, 5)), x


def _two_values(x):
    return x * 2, x + 1


def _constant_false_branch(x):
    if False:
        return x + 1, x - 1
    else:
        return _two_values(x)


@runs(ROW, f32([1.0]))
def tuple_from_a_helper_then_shape_branch(x):
    y, z = _constant_false_branch(x)
    if y.shape[0] > 1:
        y = y + 1
    return y, z


@runs(ROW)
def return_constant_from_a_constant_branch(x):
    rr = 0
    if True:
        rr = 1  # noqa: F841
        return 1
    else:
        a = 0  # noqa: F841


@runs(ROW)
def return_in_while_true(x):
    while True:
        a = 12  # noqa: F841
        return 12
    return 10


@runs(ROW)
def return_in_the_first_iteration(x):
    a = 12  # noqa: F841
    for i in range(10):
        return 12
    return 10


@runs(ROW)
def return_of_a_nested_function(x):
    def func():
        rr = 0
        if True:
            rr = 1
            return 1
            rr = 2
        else:
            return 4
        return 3 + rr

    return func()


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
