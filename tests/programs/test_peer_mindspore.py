"""MindSpore graph mode's control-flow tests (tests/st/control: the if/while/for nesting matrix,
break/continue, parallel-if returns, Parameters updated in construct, Tensor loop counters,
CellList indexed by a Tensor, higher-order functions, GradOperation wrappers), rewritten for
amber. The shapes of MindSpore's inputs are kept: 0-d and [1]-shaped int32 Tensors as loop
counters and conditions, 0-d Parameters updated in place (`+=`, `F.assign`, `P.Assign`,
`self.p = ...`) inside loops, branches and helper methods."""
import numpy as np

import amber
from amber import Parameter, Tensor, nn, ops
from amber.common import dtype as mstype
from amber.ops import functional as F
from amber.ops import operations as P
from harness import f32, i32, randn, runs


def s32(v):
    """A 0-d int32 array (MindSpore's `Tensor(v, mstype.int32)`)."""
    return np.array(v, np.int32)


def sf(v):
    """A 0-d float32 array."""
    return np.array(v, np.float32)


def t32(v):
    """A 0-d or n-d int32 amber Tensor (an ndarray subclass NumPy keeps: `t + 1` and `t.sum()`
    are 0-d Tensors, arrays, where a plain array gives NumPy scalars)."""
    return Tensor(np.array(v, np.int32))


def tf(v):
    """A float32 amber Tensor."""
    return Tensor(np.array(v, np.float32))


X23 = randn(2, 3)
X23B = randn(2, 3, seed=5, scale=2.0)
ONE_I = s32(1)
THREE_I = s32(3)


# -- break / continue (test_cont_break.py, inner/test_break_continue.py) ---------------------

@runs(X23, X23B)
def for_break_after_scaling(x):
    for i in range(8):
        if i > 5:
            x *= 3
            break
        x = x * 2
    return x


@runs(X23, X23B)
def for_continue_after_scaling(x):
    for i in range(8):
        if i > 5:
            x *= 3
            continue
        x = x * 2
    return x


@runs(X23, X23B)
def for_continue_then_break(x):
    for i in range(8):
        if i < 3:
            i *= 2
            continue
        if i > 5:
            x *= 3
            break
        x = x * 2
    return x


@runs(X23, X23B)
def nested_for_inner_break(x):
    for _ in range(3):
        for j in range(5):
            if j > 3:
                x *= 2
                break
            x = x * 1.5
    return x


@runs(X23, X23B)
def while_counter_break(x):
    i = 0
    while i < 5:
        if i > 3:
            x *= 2
            break
        x = x * 1.5
        i += 1
    return x


@runs(X23, X23B)
def while_counter_continue(x):
    i = 0
    while i < 5:
        if i > 3:
            x *= 2
            i += 1
            continue
        x = x * 1.5
        i += 1
    return x


@runs(X23, X23B)
def while_with_breaking_for_then_continue(x):
    i = 0
    while i < 5:
        if i > 3:
            for j in range(3):
                if j > 1:
                    break
                x *= 2
            i += 1
            continue
        x = x * 1.5
        i += 1
    return x


@runs(X23, X23B)
def while_with_pass_branch(x):
    i = 0
    while i < 5:
        if i > 3:
            pass
        else:
            x = x * 1.5
        i += 1
    return x


class ForContinueReturnBreak(nn.Cell):
    def __init__(self, cycles):
        super().__init__()
        self.cycles = cycles
        self.zero = Tensor(np.array(0), mstype.int32)

    def construct(self, x, y):
        acc = self.zero
        for k in range(self.cycles):
            if k % 2 == 0:
                continue
            acc = x * y + acc
            if acc == 20:
                return acc
            if acc > 20:
                break
        return acc


runs((ONE_I, THREE_I), (s32(4), s32(5)), (s32(2), s32(10)), init=(3,), tag="3")(
    ForContinueReturnBreak)
runs((ONE_I, THREE_I), (s32(4), s32(5)), (s32(2), s32(10)), init=(12,), tag="12")(
    ForContinueReturnBreak)


class WhileTensorCounterBreakReturn(nn.Cell):
    def __init__(self, cycles):
        super().__init__()
        self.cycles = cycles
        self.start = Tensor(np.array(0), mstype.int32)
        self.zero = Tensor(np.array(0), mstype.int32)

    def construct(self, x, y):
        i = self.start
        acc = self.zero
        while i < self.cycles:
            if i % 2 == 0:
                i = i + 1
                continue
            acc = x * y + acc
            if acc > 20:
                break
            if acc == 20:
                return acc
            i = i + 1
        return acc


runs((ONE_I, THREE_I), (s32(2), s32(5)), (s32(3), s32(4)), init=(10,))(
    WhileTensorCounterBreakReturn)


class ParameterFollowsCounterWithBreak(nn.Cell):
    def __init__(self):
        super().__init__()
        self.start = Tensor(np.array(0), mstype.int32)
        self.zero = Tensor(np.array(0), mstype.int32)
        self.weight = Parameter(Tensor(np.array(0), mstype.int32), name="weight")

    def construct(self, x, y):
        i = self.start
        acc = self.zero
        while i < 10:
            self.weight = i
            if self.weight % 2 == 0:
                i = i + 1
                continue
            if acc <= 20:
                self.weight = i
                acc = x * y + acc
            else:
                break
            i = i + 1
        if acc >= 30:
            self.weight = acc
            acc = acc - 30
            return acc
        acc = acc + 1
        return acc, self.weight * 1


runs((ONE_I, THREE_I), (s32(3), s32(4)))(ParameterFollowsCounterWithBreak)


class NestedWhileBreaksThenWhile(nn.Cell):
    def __init__(self, cycles):
        super().__init__()
        self.cycles = cycles
        self.zero = Tensor(np.array(0), mstype.int32)

    def construct(self, x, y):
        acc = self.zero
        i = self.zero
        while i < self.cycles:
            j = self.zero
            while j < self.cycles + 3:
                acc = x * y + acc
                j = j + 1
                if j > 4:
                    break
            i = i + 1
            if i > 2:
                break
        i = self.zero
        while i < self.cycles:
            acc = x * y + acc
            i = i + 1
        return acc


runs((ONE_I, THREE_I), (s32(2), s32(-1)), init=(3,))(NestedWhileBreaksThenWhile)


class ForInForGuardedBreak(nn.Cell):
    def __init__(self):
        super().__init__()
        self.relu = P.ReLU()
        self.add = P.Add()

    def construct(self, x, y, z):
        out = z
        for _ in range(2):
            for _ in range(3):
                if 2 * x < y:
                    out = self.add(out, out)
                    x = x + 1
                    if x + 6 == y:
                        break
        return self.relu(out)


runs((sf(7), sf(20), sf(2)), (sf(1), sf(9), sf(-0.5)), (sf(3), sf(2), sf(1.5)),
     refused_on_numpy1="`x + 1` is float64 under NumPy 1 (a 0-d float32 plus a Python int) "
     "and runs only in iterations where `2 * x < y`: `x`'s dtype in the loops depends on the "
     "data")(ForInForGuardedBreak)


class WhileTrueContinueBreak(nn.Cell):
    def __init__(self):
        super().__init__()
        self.add = P.Add()
        self.mul = P.Mul()
        self.scale = Parameter(Tensor(np.array([1], np.int32), mstype.int32), name="scale")

    def construct(self, x, y):
        out = self.mul(y, self.scale)
        while True:
            if x == 5:
                x = x - 3
                continue
            if x == 2:
                break
            out = self.add(out, out)
            x = x - 1
        return out


runs((i32([5]), i32([1])), (i32([4]), i32([3])), (i32([2]), i32([7])))(WhileTrueContinueBreak)


class ParameterCountdownReturnsFromInnerWhile(nn.Cell):
    def __init__(self, start):
        super().__init__()
        self.add = P.Add()
        self.mul = P.Mul()
        self.level = Parameter(Tensor(start, mstype.int32), name="level")

    def construct(self, x, y):
        out = self.mul(y, y)
        while x != 3:
            while self.level > 5:
                self.level -= 1
                x += 1
                if x > 3:
                    self.level -= x
                    return out
                out = self.add(out, y)
            x = x + 1
        out = self.mul(out, y)
        return out


runs((t32(2), t32(1)), (t32(0), t32(2)), (t32(3), t32(4)), init=(8,),
     refused_on_numpy1="`x = x + 1` is int64 under NumPy 1 (a 0-d int32 plus a Python int), "
     "where the path that returned from the inner while keeps an int32 `x`: they do not merge")(
    ParameterCountdownReturnsFromInnerWhile)


@runs(f32([0.0]), f32([2.5]), f32([-4.0]))
def while_with_inner_for_break(x):
    while x < 3:
        for _ in range(2):
            if x <= 4:
                x = x + 1
                break
        x = 1 + x
    return x


# -- while on tensors (test_while.py) ---------------------------------------------------------

@runs((i32([2]), i32([14])), (i32([30]), i32([1])))
def while_tensor_below_tensor(x, y):
    y = y + 4
    while x < y:
        x = x + 1
    x = x + 3
    return x


@runs((f32([2.0]), f32([5.5])), (f32([9.0]), f32([1.0])))
def float_while_tensor_below_tensor(x, y):
    y = y + 4
    while x < y:
        x = x + 1.5
    return x * y


@runs(s32(5), s32(-2), s32(1))
def countdown_then_return_or_constant(y):
    if y >= 0:
        while y > 1:
            y -= 1
        return y
    return s32(2)


# -- returns inside branches and loops (test_parallel_if.py) ---------------------------------

BRANCH_INPUTS = ((i32([4]), i32([1]), i32([-5])), (i32([4]), i32([1]), i32([7])),
                 (i32([-2]), i32([1]), i32([-5])), (i32([0]), i32([-3]), i32([-5])))


@runs(*BRANCH_INPUTS)
def return_inside_while_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            return bias
    return x + y


@runs(*BRANCH_INPUTS)
def guarded_return_inside_while_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            if y > 0:
                return bias
            x = x - 1
            y = y + 1
    return x + y


@runs(*BRANCH_INPUTS)
def return_or_break_inside_while_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            if y > 0:
                return bias
            break
    return x + y


@runs(*BRANCH_INPUTS)
def two_returns_inside_while_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            if y > 0:
                return bias
            return x
    return x + y


@runs(*BRANCH_INPUTS, (i32([4]), i32([-1]), i32([-5])))
def break_or_return_inside_while_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            if y > 0:
                break
            return x
    return x + y


@runs(*BRANCH_INPUTS)
def return_in_doubly_nested_while(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            while x > 0:
                return bias
    return x + y


@runs(*BRANCH_INPUTS)
def guarded_return_in_doubly_nested_while(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            while x > 0:
                if y > 0:
                    return bias
                x = x - 1
                y = y + 1
    return x + y


@runs(*BRANCH_INPUTS)
def branch_then_return_in_while_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        if x > y:
            x = x + y
        else:
            x = x - y
        while x > 0:
            return bias
    return x + y


@runs(*BRANCH_INPUTS)
def return_in_while_then_branch_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            return bias
        if x > y:
            x = x + y
        else:
            x = x - y
    return x + y


@runs(*BRANCH_INPUTS)
def branch_then_guarded_return_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        if x > y:
            x = x + y
        else:
            x = x - y
        if x > 0:
            return bias
    return x + y


@runs(*BRANCH_INPUTS)
def guarded_return_then_branch_in_else(x, y, bias):
    if bias > y:
        y = x + y
    else:
        if x > 0:
            return bias
        if x > y:
            x = x + y
        else:
            x = x - y
    return x + y


@runs(*BRANCH_INPUTS)
def branch_before_return_in_while_in_else(x, y, bias):
    if x > y:
        x = x + y
    else:
        x = x - y
    if bias > y:
        y = x + y
    else:
        while x > 0:
            return bias
    return x + y


@runs(*BRANCH_INPUTS)
def return_in_while_in_else_then_branch(x, y, bias):
    if bias > y:
        y = x + y
    else:
        while x > 0:
            return bias
    if x > y:
        x = x + y
    else:
        x = x - y
    return x + y


@runs(*BRANCH_INPUTS)
def nested_branch_in_then_return_in_else(x, y, bias):
    if bias > y:
        y = x + y
        if x > y:
            x = x + y
        else:
            x = x - y
    else:
        while x > 0:
            return bias
    return x + y


@runs(*BRANCH_INPUTS)
def nested_branch_in_then_guarded_return_in_else(x, y, bias):
    if bias > y:
        y = x + y
        if x > y:
            x = x + y
        else:
            x = x - y
    else:
        if x > 0:
            return bias
    return x + y


@runs(*BRANCH_INPUTS)
def returns_in_both_arms_of_nested_branch(x, y, bias):
    if bias > y:
        if x > 0:
            return x
        return y
    x = x * 2
    if x > y:
        return x - y
    return x + y + bias


# -- the nesting matrix with Parameters (inner/test_0xx..3xx) ---------------------------------

class IfInWhileAssignsWeight(nn.Cell):
    """A 0-d Parameter written by F.assign and by attribute assignment inside a branch of a
    Tensor-counted while."""
    def __init__(self, cycles):
        super().__init__()
        self.cycles = cycles
        self.start = Tensor(np.array(0), mstype.int32)
        self.weight = Parameter(Tensor(np.array(0), mstype.int32), name="weight")

    def construct(self, x, y):
        i = self.start
        out = self.start
        while i < self.cycles:
            if out <= 20:
                out = x * y + out
                F.assign(self.weight, i)
                self.weight = i
            i = i + 1
        return out, self.weight * 1


runs((ONE_I, THREE_I), (s32(2), s32(2)), (s32(0), s32(5)), init=(10,))(IfInWhileAssignsWeight)


class IfAfterIfInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(4, mstype.int32), name="b")

    def construct(self, x):
        out = x + self.param_b
        if self.param_a > self.param_b:
            x += 5
            if x > self.param_a:
                self.param_b += 1
        self.param_b += 3
        if x < self.param_b:
            out += self.param_b
        return out


runs(s32(2), s32(-1), s32(9))(IfAfterIfInIf)


class IfAfterIfInIfThroughHelper(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(4, mstype.int32), name="b")

    def construct(self, x):
        out = x + self.param_b
        x = self.shift(x)
        if x < self.param_b:
            out += self.param_b
        return out

    def shift(self, x):
        if self.param_a > self.param_b:
            x += 5
            if x > self.param_a:
                self.param_b += 1
        self.param_b += 3
        return x


runs(s32(2), s32(-1), s32(9))(IfAfterIfInIfThroughHelper)


class HelperReturnsTensorFlag(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(4, mstype.int32), name="b")
        self.yes = Tensor([True])
        self.no = Tensor([False])

    def construct(self, x):
        out = x + self.param_b
        x = self.shift(x)
        if x < self.param_b:
            out += self.param_b
        return out

    def shift(self, x):
        if self.exceeds(x):
            x += 5
        self.param_b += 3
        return x

    def exceeds(self, x):
        if x > self.param_a:
            self.param_b += 1
            return self.yes
        self.param_b -= 1
        return self.no


runs(s32(2), s32(7), s32(6))(HelperReturnsTensorFlag)


class HelperBranchesOnHelperResult(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(4, mstype.int32), name="b")

    def construct(self, x):
        out = x + self.param_b
        x = self.shift(x)
        if x < self.param_b:
            out += self.param_b
        return out

    def shift(self, x):
        if self.moved(x) > self.param_a:
            x += 5
        self.param_b += 3
        return x

    def moved(self, x):
        if x > self.param_a:
            x -= self.param_b
            self.param_b += 1
        else:
            x += self.param_b
            self.param_b -= 1
        return x


runs(s32(2), s32(7), s32(-3))(HelperBranchesOnHelperResult)


class WhileInWhileAssignsThenBranch(nn.Cell):
    def __init__(self, cycles):
        super().__init__()
        self.cycles = cycles
        self.zero = Tensor(np.array(0), mstype.int32)
        self.weight = Parameter(Tensor(np.array(0), mstype.int32), name="weight")

    def construct(self, x, y):
        out = self.zero
        i = self.zero
        while x < y:
            F.assign(self.weight, out)
            while i < self.cycles:
                out = x * y + out
                i = i + 1
                F.assign(self.weight, i)
            x = x + 1
        if out < 20:
            F.assign(self.weight, out)
            out = out - 20
        return out, self.weight


runs((ONE_I, THREE_I), (s32(5), s32(2)), (s32(2), s32(4)), init=(3,),
     refused_on_numpy1="`i + 1` and `x + 1` are int64 under NumPy 1 (a 0-d int32 plus a Python "
     "int), so `out` widens only where the inner while runs after the first outer iteration, "
     "or `out < 20`: the result is int64 for (1, 3) and int32 for (2, 4)")(
    WhileInWhileAssignsThenBranch)


class WhileForWhileAccumulate(nn.Cell):
    def __init__(self, cycles):
        super().__init__()
        self.cycles = cycles
        self.zero = Tensor(np.array(0), mstype.int32)

    def construct(self, x, y):
        out = self.zero
        j = self.zero
        while j < self.cycles:
            for _ in range(0, self.cycles):
                out = x * y + out
            j = j + 1
        i = self.zero
        while i < self.cycles:
            out = x * y + out
            i = i + 1
        return out


runs((ONE_I, THREE_I), (s32(-2), s32(4)), init=(3,))(WhileForWhileAccumulate)


class FloatWhileForWhileAccumulate(nn.Cell):
    def __init__(self, cycles):
        super().__init__()
        self.cycles = cycles
        self.zero = Tensor(np.array(0.0), mstype.float32)

    def construct(self, x, y):
        out = self.zero
        j = 0
        while j < self.cycles:
            for _ in range(0, self.cycles):
                out = x * y + out
            j = j + 1
        return out * x


runs((sf(1.5), sf(3.0)), (sf(-0.5), sf(2.0)), init=(3,))(FloatWhileForWhileAccumulate)


class ForAfterForInForRebindsParameters(nn.Cell):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU()
        self.add = P.Add()
        self.param_a = Parameter(Tensor(np.full((1,), 5, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.full((1,), 2, np.float32)), name="b")
        self.param_c = Parameter(Tensor(np.full((1,), 20, np.float32)), name="c")

    def construct(self, x, y):
        for _ in range(0, 4):
            self.param_b = self.add(self.param_c, self.param_b)
            for _ in range(0, 8):
                self.param_b = self.param_a + x
            self.param_c = self.param_a * self.param_b
        for _ in range(0, 3):
            y = y + self.param_b
            x = self.relu(self.param_c * 3)
            self.param_a = x - y
        return y + self.param_b


runs((i32([11]), i32([7])), (i32([-3]), i32([2])))(ForAfterForInForRebindsParameters)


class ForAfterForInForAssigns(nn.Cell):
    def __init__(self):
        super().__init__()
        self.add = P.Add()
        self.relu = nn.ReLU()
        self.assign = P.Assign()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")
        self.param_c = Parameter(Tensor(20, mstype.int32), name="c")

    def construct(self, x, y):
        for _ in range(0, 6):
            self.param_b = self.add(self.param_c, self.param_b)
            for _ in range(0, 2):
                self.assign(self.param_b, self.param_a + x)
            self.assign(self.param_c, self.param_a * self.param_b)
        for _ in range(0, 3):
            y = y + self.param_b
            x = self.relu(self.param_c * 3)
            self.assign(self.param_b, x - y)
        return y + self.param_b


runs((i32([11]), i32([7])), (i32([-3]), i32([2])))(ForAfterForInForAssigns)


class IfAfterForInIfBreak(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(4, mstype.int32), name="b")

    def construct(self, x):
        out = x + self.param_a
        if self.param_a > self.param_b:
            for _ in range(4):
                self.param_a += 1
                if self.param_b < 0:
                    continue
                self.param_b -= 3
                if self.param_a > 6:
                    break
        self.param_b += 15
        if x < self.param_b:
            out -= self.param_b
            return out
        out = self.param_b + out
        return out


runs(s32(2), s32(30), s32(2))(IfAfterForInIfBreak)


class IfAfterForInForBreakReturn(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        out = x + self.param_a
        for _ in range(0, 10):
            x *= 2
            if self.param_a % 2 == 0:
                self.param_a += 1
                continue
            for _ in range(0, 5):
                self.param_a += 1
                x += self.param_b
                if x > 10:
                    break
            if x > 100:
                return x
        if self.param_a > self.param_b:
            out += x
        return out


runs(s32(2), s32(-40), s32(0))(IfAfterForInForBreakReturn)


class SingleIfOnParameters(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(5.0, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.array(4.0, np.float32)), name="b")

    def construct(self, x):
        if self.param_a > self.param_b:
            x = x * self.param_a
        else:
            x = x + self.param_b
        return x * 2


runs(X23, sf(3.0))(SingleIfOnParameters)


class SingleWhileOnParameterCounter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.steps = Parameter(Tensor(0, mstype.int32), name="steps", requires_grad=False)
        self.limit = Parameter(Tensor(4, mstype.int32), name="limit", requires_grad=False)

    def construct(self, x):
        while self.steps < self.limit:
            x = x * 1.5 + 1
            self.steps += 1
        self.limit += 2
        return x


runs(X23, X23B, sf(1.0))(SingleWhileOnParameterCounter)


class SingleForAddsParameter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.add = P.Add()
        self.mul = P.Mul()
        self.bias = Parameter(Tensor(np.full((1,), 0.5, np.float32)), name="bias")

    def construct(self, x, y, z):
        x = self.add(x, y)
        for _ in range(0, 3):
            z = self.add(z, x)
            z = self.add(z, self.bias)
        return self.mul(z, y)


runs((f32([2.0]), f32([5.0]), f32([4.0])), (X23, X23B, sf(1.5)))(SingleForAddsParameter)


class IfInForParameterAccumulates(nn.Cell):
    def __init__(self):
        super().__init__()
        self.total = Parameter(Tensor(0.0, mstype.float32), name="total", requires_grad=False)

    def construct(self, x):
        for i in range(4):
            if x.sum() > i:
                self.total += x.sum()
            else:
                self.total -= 1.0
        return x * self.total


runs(X23, X23B, -X23B)(IfInForParameterAccumulates)


class IfInIfOnParameterAndInput(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(4, mstype.int32), name="b")

    def construct(self, x):
        if self.param_a > self.param_b:
            x = x + self.param_a
            if x > 10:
                self.param_a -= 2
                x = x - self.param_b
            else:
                self.param_b += x
        else:
            x = x * 2
        return x + self.param_a + self.param_b


runs(s32(2), s32(9), s32(4))(IfInIfOnParameterAndInput)


class WhileInIfParameterCondition(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.full((1,), 5, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.full((1,), 4, np.float32)), name="b")

    def construct(self, x):
        if self.param_a > self.param_b:
            x = x * 1
            while self.param_b < 6:
                x = x + x
                self.param_b += 1
        return x


runs(X23, X23B)(WhileInIfParameterCondition)


class WhileWhileNormal(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        out = x
        while self.param_a > self.param_b:
            x = x + self.param_a
            j = self.param_b
            while j < 4:
                out = out + x
                j += 1
            self.param_a -= 1
        return out + self.param_a


runs(s32(3), s32(-1))(WhileWhileNormal)


class ForInWhileParameterDecrements(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(5.0, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.array(2.0, np.float32)), name="b")

    def construct(self, x):
        out = x * 0
        while self.param_a > self.param_b:
            for _ in range(3):
                out = out + x * self.param_b
            self.param_a -= 1.0
        return out


runs(X23, X23B)(ForInWhileParameterDecrements)


class ForInForParameterProduct(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mul = P.Mul()
        self.param_a = Parameter(Tensor(np.array(1.0, np.float32)), name="a")

    def construct(self, x):
        out = x
        for i in range(3):
            for j in range(2):
                out = self.mul(out, self.param_a) + i - j
        return out


runs(X23, X23B)(ForInForParameterProduct)


class IfAfterWhileOnParameters(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        out = x
        while self.param_a > self.param_b:
            out = out + self.param_b
            self.param_b += 1
        if x > self.param_b:
            out = out * 2
        else:
            out = out - 1
        return out


runs(s32(3), s32(12))(IfAfterWhileOnParameters)


class IfAfterForOnParameters(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(5.0, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.array(2.0, np.float32)), name="b")

    def construct(self, x):
        for _ in range(3):
            x = x * self.param_b - self.param_a
        if x.sum() > self.param_a:
            x = x / 2
        return x


runs(X23, f32([[9.0, 9.0]]))(IfAfterForOnParameters)


class IfAfterIfInWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        out = x + self.param_a
        while self.param_a > self.param_b:
            if x > self.param_b:
                self.param_b += 2
            self.param_b += 1
        if x < self.param_b:
            out = out + self.param_b
        return out


runs(s32(3), s32(-2), s32(12))(IfAfterIfInWhile)


class IfAfterIfInFor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(5.0, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.array(2.0, np.float32)), name="b")

    def construct(self, x):
        out = x * 1
        for i in range(4):
            if out.sum() > self.param_b:
                out = out - self.param_a * 0.1
            out = out * 1.5 + i
        if out.sum() > self.param_a:
            out = out * self.param_b
        return out


runs(X23, X23B)(IfAfterIfInFor)


class IfAfterWhileInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        out = x + self.param_b
        if self.param_a > x:
            while self.param_b < self.param_a:
                out = out + x
                self.param_b += 1
        if out > self.param_a:
            out = out - self.param_a
        return out


runs(s32(3), s32(10), s32(-1))(IfAfterWhileInIf)


class IfAfterWhileInFor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        out = x
        for _ in range(2):
            j = self.param_b
            while j < self.param_a:
                out = out + j
                j = j + 1
            self.param_b += 1
        if out > 20:
            out = out - 20
        return out, self.param_b * 1


runs(s32(3), s32(25), refused_on_numpy1=(
    "`out` turns int64 under NumPy 1 only on some paths (a 0-d int32 plus the int64 counter "
    "`j + 1`, or minus the Python int 20): with the Parameters counting up from call to call, "
    "the third call with x = 3 returns int32 where the first returns int64"))(IfAfterWhileInFor)


class IfAfterForInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(5.0, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.array(2.0, np.float32)), name="b")

    def construct(self, x):
        if self.param_a > self.param_b:
            for _ in range(3):
                x = x * self.param_b
        if x.sum() > 0:
            x = x + self.param_a
        return x


runs(X23, -X23B)(IfAfterForInIf)


class IfAfterForInWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        while self.param_a > self.param_b:
            for _ in range(2):
                x = x + self.param_b
            self.param_a -= 1
        if x > 10:
            x = x * 2
        return x


runs(s32(3), s32(-3))(IfAfterForInWhile)


class IfAfterForInFor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(1.5, np.float32)), name="a")

    def construct(self, x):
        for i in range(2):
            for _ in range(3):
                x = x * self.param_a - i
        if x.sum() > 2:
            x = x - 2
        return x


runs(X23, X23B)(IfAfterForInFor)


class WhileAfterIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        if x > self.param_a:
            x = x - self.param_a
        else:
            self.param_b += 1
        while self.param_b < self.param_a:
            x = x * 2
            self.param_b += 1
        return x, self.param_b * 1


runs(s32(3), s32(8))(WhileAfterIf)


class ForThenWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(4.0, np.float32)), name="a")

    def construct(self, x):
        out = x
        for _ in range(3):
            out = out * 1.1 + self.param_a
        i = 0
        while out.sum() > 0 and i < 5:
            out = out - self.param_a
            i += 1
        return out


runs(X23, X23B)(ForThenWhile)


class WhileThenWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(3, mstype.int32), name="a")

    def construct(self, x, y):
        while x < self.param_a:
            x = x + 1
        while y > x:
            y = y - 2
        return x + y


runs((s32(0), s32(9)), (s32(7), s32(2)))(WhileThenWhile)


class WhileAfterIfInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(5.0, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.array(2.0, np.float32)), name="b")

    def construct(self, x):
        if self.param_a > self.param_b:
            if x.sum() > 0:
                x = x * self.param_b
            else:
                x = x - self.param_b
        i = 0
        while i < 3:
            x = x + self.param_a
            i = i + 1
        return x


runs(X23, -X23B)(WhileAfterIfInIf)


class WhileAfterIfInWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        out = x
        while self.param_b < self.param_a:
            if out > 4:
                out = out - 1
            self.param_b += 1
        while out < self.param_a:
            out = out + 2
        return out


runs(s32(3), s32(9), refused_on_numpy1=(
    "`out - 1` (only when `out > 4`) and `out + 2` are int64 under NumPy 1 (a 0-d int32 and a "
    "Python int): a second call with x = 9 returns int32 where the first returns int64"))(
    WhileAfterIfInWhile)


class WhileAfterIfInFor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")

    def construct(self, x):
        out = x
        for i in range(3):
            if out > i:
                out = out + self.param_a
            else:
                self.param_a -= 1
        while out > 10:
            out = out - self.param_a
        return out


runs(s32(3), s32(-5))(WhileAfterIfInFor)


class WhileAfterWhileInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        if x < self.param_a:
            while self.param_b < self.param_a:
                x = x + self.param_b
                self.param_b += 1
        while x < 20:
            x = x * 2
        return x


runs(s32(3), s32(8), s32(1))(WhileAfterWhileInIf)


class WhileWhileWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.zero = Tensor(np.array(0), mstype.int32)

    def construct(self, x, y):
        out = self.zero
        i = self.zero
        while i < 3:
            j = self.zero
            while j < 2:
                out = out + x
                j = j + 1
            i = i + 1
        k = self.zero
        while k < y:
            out = out + y
            k = k + 1
        return out


runs((ONE_I, THREE_I), (s32(-2), s32(0)))(WhileWhileWhile)


class ForWhileWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.zero = Tensor(np.array(0), mstype.int32)

    def construct(self, x, y):
        out = self.zero
        for _ in range(2):
            i = self.zero
            while i < y:
                out = x * y + out
                i = i + 1
        i = self.zero
        while i < 2:
            out = out - x
            i = i + 1
        return out


runs((ONE_I, THREE_I), (s32(4), s32(1)))(ForWhileWhile)


class WhileAfterForInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(2.0, np.float32)), name="a")

    def construct(self, x):
        if x.sum() > 0:
            for _ in range(3):
                x = x - self.param_a
        n = 0
        while n < 4:
            x = x * 0.5
            n += 1
        return x


runs(X23, -X23B)(WhileAfterForInIf)


class ForForWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(0.5, np.float32)), name="a")

    def construct(self, x):
        for _ in range(2):
            for _ in range(2):
                x = x + self.param_a
        i = 0
        while i < 3:
            x = x * self.param_a
            i += 1
        return x


runs(X23, X23B)(ForForWhile)


class ForAfterIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        out = x + self.param_a
        if self.param_a > self.param_b:
            self.param_b += 4
        for _ in range(3):
            out = out + self.param_b
            self.param_a -= 1
        return out, self.param_a * 1, self.param_b * 1


runs(s32(3), s32(-5))(ForAfterIf)


class WhileThenFor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")

    def construct(self, x):
        i = x
        while i < self.param_a:
            i = i + 1
        out = i
        for _ in range(3):
            out = out * 2 - x
        return out


runs(s32(1), s32(7))(WhileThenFor)


class ForAfterFor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(2.0, np.float32)), name="a")

    def construct(self, x):
        for _ in range(3):
            x = x + self.param_a
        for i in range(2):
            x = x * (i + 1)
        return x


runs(X23, X23B)(ForAfterFor)


class ForAfterIfInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        if self.param_a > self.param_b:
            if x > self.param_b:
                self.param_a += x
            else:
                self.param_b -= x
        out = x
        for _ in range(2):
            out = out + self.param_a - self.param_b
        return out


runs(s32(3), s32(-3), s32(2))(ForAfterIfInIf)


class WhileIfFor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")

    def construct(self, x):
        i = self.param_a * 0
        while i < 3:
            if x > i:
                x = x - 1
            i = i + 1
        for _ in range(2):
            x = x + self.param_a
        return x


runs(s32(3), s32(0), refused_on_numpy1=(
    "`x - 1` is int64 under NumPy 1 (a 0-d int32 minus a Python int) and runs only while "
    "`x > i`: the result is int64 for x = 3 and int32 for x = 0"))(WhileIfFor)


class ForAfterWhileInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")
        self.param_b = Parameter(Tensor(2, mstype.int32), name="b")

    def construct(self, x):
        if self.param_a > x:
            while self.param_b < self.param_a:
                x = x + 1
                self.param_b += 1
        for _ in range(3):
            x = x + self.param_b
        return x


runs(s32(3), s32(7))(ForAfterWhileInIf)


class WhileWhileInWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(3, mstype.int32), name="a")

    def construct(self, x):
        i = x * 0
        out = x
        while i < self.param_a:
            j = x * 0
            while j < i:
                out = out + j
                j = j + 1
            i = i + 1
        k = x * 0
        while k < 2:
            out = out * 2
            k = k + 1
        return out


runs(s32(1), s32(-4), refused_on_numpy1=(
    "`j = x * 0` is an int64 counter under NumPy 1 (a 0-d int32 times a Python int), so "
    "`out + j` widens `out` only in the outer iterations where the inner while runs: `out`'s "
    "dtype in the loop depends on the data"))(WhileWhileInWhile)


class ForAfterWhileInFor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(2.0, np.float32)), name="a")

    def construct(self, x):
        for _ in range(2):
            n = 0
            while n < 2:
                x = x * self.param_a
                n += 1
        for _ in range(2):
            x = x - 1
        return x


runs(X23, X23B)(ForAfterWhileInFor)


class ForAfterForInIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(5, mstype.int32), name="a")

    def construct(self, x):
        if x < self.param_a:
            for _ in range(3):
                self.param_a -= 1
        out = x
        for _ in range(2):
            out = out + self.param_a
        return out


runs(s32(3), s32(9))(ForAfterForInIf)


class ForAfterForInWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(np.array(3.0, np.float32)), name="a")
        self.param_b = Parameter(Tensor(np.array(1.0, np.float32)), name="b")

    def construct(self, x):
        while self.param_a > self.param_b:
            for _ in range(2):
                x = x * 0.5
            self.param_b += 1.0
        for _ in range(2):
            x = x + self.param_b
        return x


runs(X23, X23B)(ForAfterForInWhile)


# -- attributes, CellList, tuples of cells (test_switch_layer.py, for_body_get_outer_class_attr)

class Scaled(nn.Cell):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def construct(self, x):
        return self.k * x


class CellListIndexedByTensorCounter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList()
        self.blocks.append(Scaled(4))
        self.blocks.append(Scaled(5))
        self.blocks.append(Scaled(6))

    def construct(self, t, x):
        out = t
        while x < 3:
            out = out + self.blocks[x](t)
            x += 1
        return out


runs((s32(10), s32(0)), (s32(3), s32(2)), (s32(1), s32(5)))(CellListIndexedByTensorCounter)


class FloatCellListIndexedByTensorCounter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([Scaled(0.5), Scaled(2.0), Scaled(-1.0)])

    def construct(self, t, x):
        out = t
        while x < 3:
            out = out + self.blocks[x](t)
            x += 1
        return out


runs((X23, s32(0)), (X23B, s32(1)))(FloatCellListIndexedByTensorCounter)


class TupleOfCellsIndexedByTensor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU()
        self.softmax = nn.Softmax()
        self.tanh = nn.Tanh()
        self.first = (self.relu, self.softmax)
        self.second = (self.tanh, self.relu)

    def construct(self, x, i, j):
        x = self.first[i](x)
        return self.second[j](x)


runs((X23, s32(0), s32(-1)), (X23B, s32(1), s32(0)))(TupleOfCellsIndexedByTensor)


class CellListIndexPastTheEnd(nn.Cell):
    """Python's IndexError once the Tensor counter passes the last layer; a negative index
    counts from the end."""
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([Scaled(2), Scaled(3)])

    def construct(self, t, x):
        out = t
        while x < 3:
            out = out + self.blocks[x](t)
            x += 1
        return out


runs((s32(1), s32(-2)), (s32(1), s32(0)), (s32(1), s32(3)))(CellListIndexPastTheEnd)


class SwitchLayerInBranch(nn.Cell):
    def __init__(self):
        super().__init__()
        self.heads = (nn.ReLU(), nn.Tanh(), nn.Sigmoid())

    def construct(self, x, i):
        if x.sum() > 0:
            return self.heads[i](x) * 2
        return self.heads[i - 1](x)


runs((X23, s32(0)), (X23B, s32(2)), (-X23B, s32(1)))(SwitchLayerInBranch)


def _double(v):
    return v * 2


def _shift(v):
    return v - 1


@runs((X23, s32(1)), (X23B, s32(0)))
def functions_in_a_tuple_picked_by_tensor(x, k):
    return (_double, _shift)[k](x)


@runs((t32(2),), (t32(7),), (s32(3),))
def tensor_in_a_tuple_of_numbers(n):
    if n in (1, 2, 3):
        return n * 10
    return n


@runs((i32([4]), i32([2])), (i32([9]), i32([9])))
def tensor_not_in_a_list_of_tensors(a, b):
    seen = [b, b + 1]
    if a not in seen:
        return a + 100
    return a


class LoopReadsOuterAttribute(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scales = (1.0, 2.0, 0.5)
        self.offset = Tensor(np.array(0.25, np.float32))

    def construct(self, x):
        for s in self.scales:
            x = x * s + self.offset
        return x


runs(X23, X23B)(LoopReadsOuterAttribute)


class SubCellInLoopWithParameter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 3)
        self.rounds = Parameter(Tensor(0, mstype.int32), name="rounds", requires_grad=False)

    def construct(self, x):
        for _ in range(3):
            x = ops.tanh(self.dense(x))
            self.rounds += 1
        return x


runs(X23, X23B)(SubCellInLoopWithParameter)


class SubNetWithWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mul = P.Mul()
        self.add = P.Add()
        self.a = Parameter(Tensor(np.full((1,), 5, np.float32)), name="a")
        self.b = Parameter(Tensor(np.full((1,), 4, np.float32)), name="b")

    def construct(self, x):
        if self.a > self.b:
            x = self.mul(x, 1)
            while self.b < 6:
                x = self.add(x, x)
                self.b += 1
        return x


class IfByIfWithSubNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.subnet = SubNetWithWhile()
        self.relu = P.ReLU()
        self.add = P.Add()
        self.a = Parameter(Tensor(np.full((1,), 5, np.float32)), name="a")
        self.b = Parameter(Tensor(np.full((1,), 4, np.float32)), name="b")
        self.c = Parameter(Tensor(np.full((1,), 7, np.float32)), name="c")

    def twice(self, x):
        for _ in range(0, 2):
            x = self.add(x, 0)
        return x

    def construct(self, x):
        if self.a > self.b:
            x = self.subnet(x)
        else:
            x = self.relu(x)
        if self.a < self.c:
            x = self.twice(x)
        else:
            x = self.add(x, 2)
        return x


runs(randn(2, 3, 4, 5), X23B)(IfByIfWithSubNet)


class AssignThenReadInBranch(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param_a = Parameter(Tensor(3, mstype.float32), name="a")
        self.zero = Tensor(0, mstype.float32)

    def construct(self, x):
        out = self.zero
        if x > 0:
            F.assign(self.param_a, 1)
            out = out + self.param_a
            F.assign(self.param_a, 6)
        return out, self.param_a * 1


runs(sf(3.0), sf(-1.0))(AssignThenReadInBranch)


class BranchSameShapeNested(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = 1

    def construct(self, x, y):
        for k in range(1):
            if x != 1:
                for _ in range(1):
                    y = k * x
                    y = self.a + y
                    if x > 5:
                        break
            if x == 5:
                for _ in range(1):
                    y = self.a - y
                    if x == y:
                        continue
        return x + y


runs((f32([-1.0]), f32([2.0])), (f32([5.0]), f32([2.0])), (f32([1.0]), f32([3.0])),
     (f32([7.0]), f32([0.0])))(BranchSameShapeNested)


# -- membership, lists, dicts (test_tensor_in_list.py, test_list_append.py) ------------------

class TensorInAttributeList(nn.Cell):
    def __init__(self):
        super().__init__()
        self.known = [Tensor([1], mstype.int32), Tensor([2], mstype.int32),
                      Tensor([3], mstype.int32)]

    def construct(self, c):
        if c in self.known:
            out = c + c
        else:
            out = c + 0
        return out


runs(i32([1]), i32([3]), i32([4]))(TensorInAttributeList)


def _homogeneous_padding(points):
    padding = [[0, 0] for _ in range(len(points.shape))]
    padding[-1][-1] = 1
    return padding


@runs((randn(1, 4, 2), randn(5, 2)))
def padding_list_built_from_rank(x1, x2):
    return _homogeneous_padding(x1), _homogeneous_padding(x2)


class DictsAppendedInLoop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = Tensor(randn(4, 3, seed=2))
        self.b = Tensor(randn(4, seed=3))

    def construct(self, a, b):
        pts = [[a * self.a, b * self.b]]
        boxes = []
        for p in pts:
            boxes.append({"pts": p})
        return boxes[0]["pts"][0], boxes[0]["pts"][1], len(boxes)


runs((randn(4, 3), randn(4, seed=1)))(DictsAppendedInLoop)


@runs(f32([1.0]), f32([12.0]))
def list_summed_while_growing(x):
    y = []
    for _ in range(3):
        y.append(x)
        x = x + 1
    total = y[0]
    for v in y[1:]:
        total = total + v
    return total


@runs(X23, X23B)
def list_of_tensors_in_branches(x):
    outs = [x]
    if x.sum() > 0:
        outs.append(x * 2)
    else:
        outs.append(x - 1)
    outs.append(outs[-1] + outs[0])
    return outs[1], outs[2]


@runs(X23, X23B)
def tuple_unpacked_in_while(x):
    a, b = x, x * 2
    i = 0
    while i < 3:
        a, b = b, a + b
        i += 1
    return a, b


@runs(X23, X23B)
def dict_of_tensors_updated_in_for(x):
    d = {"sum": x * 0, "prod": x * 0 + 1}
    for i in range(3):
        d["sum"] = d["sum"] + x
        d["prod"] = d["prod"] * (x + i)
    return d["sum"], d["prod"]


# -- functions of functions, recursion with a static depth (test_fun_fun, test_recrusive_fun) --

def _plus_three(x):
    return x + 3


def _minus_one(x):
    return x - 1


def _choose_by_rank(x):
    if x.ndim > 1:
        return _plus_three
    return _minus_one


@runs(i32([10]), i32([[1, 2]]))
def function_chosen_by_static_fact(x):
    return _choose_by_rank(x)(x)


@runs(X23, X23B)
def closures_defined_in_body(x):
    def f(v):
        return v + 3

    def k(v):
        return v - 1
    return f(k(x)), k(f(x))


def _factorial_like(x, depth):
    if depth <= 0:
        return x * 0 + 1
    return x * _factorial_like(x - 1, depth - 1)


@runs(f32([5.0]), X23)
def recursion_on_a_constant_depth(x):
    return _factorial_like(x, 3)


@runs(i32([5]), i32([1]), i32([-2]))
def recursion_unrolled_as_branches(x):
    y = x * 0
    if x < 0:
        y = y + 1
    elif x < 3:
        y = x * (x - 1 + 1)
    else:
        y = x * (x - 2)
    return y + 1


# -- ops.* primitives and Tensor methods in control flow (test_control_flow_specialize) -------

@runs(X23, X23B)
def primitive_instances_in_loop(x):
    add = P.Add()
    mul = P.Mul()
    out = x
    for i in range(3):
        out = add(mul(out, 0.5), i)
    return out


@runs(X23, X23B)
def reduce_sum_steers_while(x):
    reduce_sum = P.ReduceSum()
    n = 0
    while reduce_sum(x * x) < 50 and n < 10:
        x = x * 1.5
        n += 1
    return x, n


@runs(X23, X23B)
def select_and_maximum_in_branch(x):
    if F.reduce_sum(x) > 0:
        out = F.select(x > 0, x, x * 0.1)
    else:
        out = F.maximum(x, -0.5)
    return out


@runs(X23, X23B)
def cast_and_shape_in_loop(x):
    shape = F.shape(x)
    out = F.zeros(shape, mstype.float32)
    for i in range(shape[0]):
        out = out + F.cast(x > i * 0.1, mstype.float32)
    return out


@runs(X23, X23B)
def concat_grown_in_static_loop(x):
    parts = (x,)
    for i in range(2):
        parts = parts + (x * (i + 2),)
    return ops.concat(parts, 0)


@runs(X23, X23B)
def greater_op_as_condition(x):
    gt = P.Greater()
    if gt(x.sum(), 0.0):
        return x * 2
    return x - 2


@runs((X23, sf(0.5)), (X23B, sf(-2.0)))
def zero_d_tensor_threshold_while(x, t):
    n = Tensor(0, mstype.int32)
    while x.max() > t and n < 6:
        x = x - 0.5
        n = n + 1
    return x, n


@runs(s32(3), s32(0), s32(9))
def zero_d_counter_augmented_in_both_arms(n):
    i = s32(0)
    total = s32(0)
    while i < n:
        if i % 2 == 0:
            total += i
        else:
            total -= 1
        i += 1
    return total, i


@runs(s32(4), s32(1))
def zero_d_alias_survives_loop_update(n):
    i = s32(0)
    start = i
    while i < n:
        i += 1
    return start, i


@runs(t32(2), s32(2))
def tensor_sum_is_an_array_alias(x):
    y = x + 1
    z = y
    z += 1
    return y, z


@runs(tf([1.0, 2.0, 3.0]), f32([1.0, 2.0, 3.0]))
def tensor_reduction_aliased_then_augmented(x):
    s = x.sum()
    t = s
    t += 1.0
    m = x.max() * 2
    m -= 1.0
    return s, t, m


@runs(t32(1), t32(4), t32(3), t32(7))
def tensor_counter_augmented_in_loop_branches(x):
    while x < 5:
        if x > 3:
            x -= 2
        elif x == 3:
            break
        else:
            break
        x = x + 1
    return x


@runs((t32(0), t32(5)), (t32(7), t32(2)))
def tensor_counters_alias_across_loop(i, n):
    start = i + 0
    seen = start
    while i < n:
        seen += 1
        i = i + 1
    return start, seen, i


class TensorZeroAttributeAccumulates(nn.Cell):
    def __init__(self):
        super().__init__()
        self.zero = Tensor(np.array(0), mstype.int32)
        self.one = Tensor(np.array(1), mstype.int32)

    def construct(self, x):
        acc = self.zero + 0
        alias = acc
        k = self.zero
        while k < x:
            acc += self.one
            k = k + self.one
        return acc, alias, k + 0


runs(s32(3), t32(0), t32(4))(TensorZeroAttributeAccumulates)


class ParameterAliasedThenUpdatedInLoop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.count = Parameter(Tensor(0, mstype.int32), name="count", requires_grad=False)

    def construct(self, n):
        before = self.count
        snapshot = self.count * 1
        for _ in range(3):
            if n > 0:
                self.count += n
        return before * 1, snapshot, self.count * 1


runs(s32(2), s32(-1), s32(1))(ParameterAliasedThenUpdatedInLoop)


class ParameterAssignAddInWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.assign_add = P.AssignAdd()
        self.acc = Parameter(Tensor(np.array(0.0, np.float32)), name="acc", requires_grad=False)

    def construct(self, x):
        i = 0
        while i < 3:
            self.assign_add(self.acc, x.sum())
            i += 1
        return self.acc * 1


runs(X23, X23B)(ParameterAssignAddInWhile)


class ParameterUpdatedByHelperInLoop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = Parameter(Tensor(np.array(1.0, np.float32)), name="p", requires_grad=False)

    def step(self, v):
        if v > 0:
            self.p *= 2.0
        else:
            self.p -= v
        return self.p

    def construct(self, x):
        out = x * 0
        for v in x:
            out = out + self.step(v.sum())
        return out, self.p * 1


runs(X23, X23B)(ParameterUpdatedByHelperInLoop)


# -- while loops over Parameters and Tensor-indexed writes (parse/test_while_param.py,
#    test_cont_grad.py) ------------------------------------------------------------------------

class ParameterRebindInTensorWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.update = Parameter(Tensor(1, mstype.float32), name="update")

    def construct(self, x, y, z):
        out = z
        while x < y:
            self.update = self.update + 1
            out = out + 1
            x = x + 1
        return out, self.update * 1


runs((tf(0.0), tf(10.0), tf(100.0)), (sf(3.0), sf(1.0), sf(2.0)))(ParameterRebindInTensorWhile)


class ParameterCopiedToCounter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.update = Parameter(Tensor(1, mstype.float32), name="update")

    def construct(self, x, y, z):
        out = z
        i = self.update
        while x < y:
            i = i + 1
            out = out + 1
            x = x + 1
        return out, i, self.update * 1


runs((tf(0.0), tf(10.0), tf(100.0)), (sf(4.0), sf(6.0), sf(-1.0)))(ParameterCopiedToCounter)


class TwoParametersFromOneTensor(nn.Cell):
    def __init__(self, start):
        super().__init__()
        self.px = Parameter(start, name="px")
        self.py = Parameter(start, name="py")

    def construct(self):
        a = 0
        while a < 3:
            self.px = self.px + self.py
            a += 1
        return self.px * 1, self.py * 1


runs((), init=(Tensor(np.array(2.0, np.float32)),))(TwoParametersFromOneTensor)


class AssignResultsSteerNestedWhiles(nn.Cell):
    def __init__(self):
        super().__init__()
        self.assign = P.Assign()
        self.var = Parameter(Tensor([1], mstype.int32), name="var")

    def construct(self, x, y, z, c2, c4):
        out = self.assign(self.var, c4)
        while x < c2:
            y = self.assign(self.var, c4)
            while y < c2 and x < c2:
                if 2 * y < c2:
                    y = y + 2
                else:
                    y = y + 1
            out = out + y
            z = self.assign(self.var, c4)
            while z < c2:
                z = z + 1
            out = out + z
            x = x + 1
        out = out + x
        while x < 2 * c2:
            y = self.assign(self.var, c4)
            x = x + 1
            while y < c2:
                z = self.assign(self.var, c4)
                while z < c2:
                    z = z + 1
                if x < c2:
                    y = y - 1
                else:
                    y = y + 1
                out = out + z
            out = out + y
        out = out + x
        return out


runs((t32(2), t32(14), t32(1), Tensor(i32([14])), Tensor(i32([0]))),
     (t32(5), t32(1), t32(0), Tensor(i32([6])), Tensor(i32([2]))))(AssignResultsSteerNestedWhiles)


class WhileWritesRowsOfInput(nn.Cell):
    def __init__(self):
        super().__init__()
        self.max = P.ReduceMax()

    def construct(self, idx, end, x):
        while idx < end:
            part = x[idx, :, :]
            top = self.max(part)
            x[idx, :, 0:2] = top
            idx = idx + 1
        return x


runs((t32(0), t32(2), Tensor(f32([[[4, 0], [0, 0]], [[0, 4], [0, 0]]]))),
     (s32(1), s32(2), f32(np.arange(8).reshape(2, 2, 2))))(WhileWritesRowsOfInput)


class WhileAccumulatesWithParameter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.max = P.ReduceMax()
        self.param = Parameter(Tensor(np.arange(8).reshape((2, 2, 2)), mstype.float32),
                               name="weight")
        self.zero = Tensor(np.zeros([2, 2, 2]), mstype.float32)

    def construct(self, idx, end, x):
        out = self.zero
        while idx < end:
            part = x[idx, :, :]
            x[idx, :, 0:2] = self.max(part)
            out = out + x + self.param
            idx = idx + 1
        return out


runs((t32(0), t32(2), Tensor(f32(np.arange(8).reshape(2, 2, 2)))),
     (s32(1), s32(0), f32(np.ones((2, 2, 2)))))(WhileAccumulatesWithParameter)


class WhileSumsSlices(nn.Cell):
    def __init__(self):
        super().__init__()
        self.zero = Tensor(np.zeros([2, 2, 2]), mstype.float32)

    def construct(self, idx, end, x):
        out = self.zero
        while idx < end:
            out = out + x[idx, :, :]
            idx = idx + 1
        return out


runs((t32(0), t32(2), Tensor(f32(np.arange(8).reshape(2, 2, 2)))),
     (s32(1), s32(2), f32(np.ones((2, 2, 2)))))(WhileSumsSlices)


class ConstantBranchInTensorWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.param = Parameter(Tensor(np.arange(8).reshape((2, 2, 2)), mstype.float32),
                               name="weight")
        self.zero = Tensor(np.zeros([2, 2, 2]), mstype.float32)
        self.start = Tensor(np.array(0), mstype.int32)

    def construct(self, idx, end, x):
        out = self.zero
        for _ in range(0, 2):
            idx = self.start
            while idx < end:
                if 2 > 1:
                    out = out + self.param
                else:
                    out = out + idx + self.param
                idx = idx + 1
        return out + x


runs((t32(0), t32(4), f32(np.ones((2, 2, 2)))), (s32(0), s32(0), f32(np.zeros((2, 2, 2)))))(
    ConstantBranchInTensorWhile)


class AddNInWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.addn = P.AddN()

    def construct(self, idx, end, x):
        first = self.addn((x, x, x))
        out = first
        while idx < end:
            out = self.addn((out, first))
            idx = idx + 1
        return self.addn((out, x))


runs((t32(0), t32(4), f32(np.ones((2, 2, 2)) * 3)), (s32(2), s32(1), X23))(AddNInWhile)


@runs((f32([1.1]), f32([8.0])), (f32([3.0]), f32([2.0])))
def while_squares_until_bound(x, y):
    while x < y:
        z = x * x
        x = z + 1
    return x


@runs((f32([1.1]), f32([8.0])), (f32([0.5]), f32([0.2])))
def while_squares_plus_bound(x, y):
    while x < y:
        z = x * x
        x = z + y
    return x


# -- sequences of ops and objects in loops (parse/test_for_stmt.py, test_celllist.py) ---------

class TupleOfPrimitivesApplied(nn.Cell):
    def __init__(self):
        super().__init__()
        self.steps = (P.Sqrt(), P.Reciprocal(), P.Square())

    def construct(self, x):
        t = x
        for op in self.steps:
            t = op(t)
        return t


runs(np.abs(X23) + 0.5, np.abs(X23B) + 0.1)(TupleOfPrimitivesApplied)


class LayerChosenByConfigInZip(nn.Cell):
    def __init__(self):
        super().__init__()
        self.convs = nn.CellList([nn.Dense(3, 4), nn.Dense(3, 5)])
        self.widths = [(4, 3), (5, 3)]
        self.info = [self.convs, self.widths]

    def construct(self, x):
        func = None
        convs, widths = self.info
        for _, (layer, width) in enumerate(zip(convs, widths)):
            if width[0] == 5:
                func = layer
        return func(x)


runs(X23, X23B)(LayerChosenByConfigInZip)


class Pair:
    """A plain Python object used in construct (MindSpore's ms_class)."""
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def larger(self):
        if self.a > self.b:
            return self.a
        return self.b


class LoopOverMixedTuple(nn.Cell):
    def __init__(self, number, rounds=1):
        super().__init__()
        self.number = number
        self.rounds = rounds
        self.relu = nn.ReLU()

    def construct(self, x):
        pair = Pair(self.rounds, self.number)
        for _ in (self.rounds, pair):
            x = self.relu(x) + pair.larger()
        return x


runs(np.ones((2, 3), np.float32), init=(2,))(LoopOverMixedTuple)


# -- Tensors and NumPy arrays made inside construct (st/fallback/control_flow) ---------------

@runs(())
def tensor_constants_counted_in_while():
    x = Tensor(1)
    y = Tensor(0)
    while x < Tensor(5):
        if x % 2 == Tensor(0):
            y += Tensor(1)
        x += Tensor(1)
    return x + y


@runs(())
def tensor_constant_breaks_on_multiple():
    x = Tensor(1)
    while x < Tensor(5):
        if x % 3 == Tensor(0):
            break
        x += Tensor(1)
    return x


@runs(())
def tensor_constants_continue_and_elif_break():
    x = Tensor(1)
    y = Tensor(0)
    while x < Tensor(10) and x + y < Tensor(20):
        if x % 3 == Tensor(0):
            x += Tensor(1)
            y += Tensor(1)
            continue
        elif y % 2 == Tensor(0):
            x += Tensor(1)
        elif (x + y) % 5 == Tensor(0):
            break
        else:
            x += Tensor(1)
    return x + y


@runs(())
def numpy_array_grown_until_builtin_sum():
    x = np.array([1, 2, 3, 4])
    y = 0
    while sum(x) <= 40 and y % 2 == 0:
        if min(x) % 2 == 0:
            x += 1
        else:
            x += 3
    return Tensor(sum(x))


@runs(())
def numpy_array_grown_until_max_breaks():
    x = np.array([1, 2, 3, 4])
    while sum(x) <= 40:
        if min(x) % 2 == 0:
            x += 1
        else:
            x += 3
        if max(x) == 8:
            break
    return Tensor(sum(x))


@runs(t32(1), t32(0))
def numpy_arrays_updated_under_tensor_counter(start):
    x = np.array([1, 2])
    y = np.array([3, 2])
    index = start
    while index < Tensor(3):
        index += 1
        if (y > x).all():
            y += x
    return Tensor(y), index


@runs(())
def abs_of_tensors_steers_nested_whiles():
    x = Tensor([-1])
    y = Tensor([-2])
    while abs(x) <= abs(y):
        z = np.array([3, 4, 5])
        index = 0
        z_sum = 0
        while index < 3:
            z_sum += z[index]
            index += 1
        x = x + Tensor(z_sum)
    while y < x:
        y += x
    return x, y


@runs(tf([2.0, -1.0]), tf([0.5, 0.5]))
def tensor_input_sum_in_for_with_if(x):
    total = Tensor(0.0)
    for i in range(4):
        if x.sum() > i:
            total += x.sum()
        else:
            total -= 1.0
    return total, x * total


@runs(t32(3), t32(-2), s32(4))
def tensor_counter_down_and_up(n):
    up = Tensor(0)
    while n > 0:
        n -= 1
        up += 2
    while up > 3:
        up = up - 3
    return n, up


# -- GradOperation wrapping control flow (inner/*.py BackwardNet, test_cont_grad.py) ---------

GRAD_ALL = amber.ops.GradOperation(get_all=True)


class WhileMultiply(nn.Cell):
    def construct(self, x, y):
        out = x
        i = 0
        while i < 3:
            out = out * y
            i += 1
        return out


class IfMultiply(nn.Cell):
    def construct(self, x, y):
        if x > y:
            return x * y
        return x + y * y


class ForBreakMultiply(nn.Cell):
    def construct(self, x, y):
        out = x
        for i in range(5):
            out = out * y + i
            if i > 2:
                break
        return out


class WhileOnInput(nn.Cell):
    def construct(self, x, y):
        while x < 10:
            x = x * 2 + y
        return x


class GradAllOf(nn.Cell):
    def __init__(self, make):
        super().__init__()
        self.net = make()

    def construct(self, x, y):
        return GRAD_ALL(self.net)(x, y)


for _net in (WhileMultiply, IfMultiply, ForBreakMultiply, WhileOnInput):
    runs((sf(1.5), sf(2.0)), (sf(3.0), sf(0.5)), init=(_net,), tag=_net.__name__)(GradAllOf)


@runs(sf(1.0), sf(4.0))
def grad_of_grad_through_while(x):
    def doubled(v):
        while v < 10:
            v = v * 2
        return v
    return amber.grad(amber.grad(doubled))(x)


@runs(sf(4.0), sf(0.5))
def grad_through_nested_single_item_loops(x):
    def shrink(v):
        for _ in [2]:
            for _ in [2]:
                while v > 1:
                    v = v / 3
                    v = v / 2
            for _ in [2]:
                v = v + 1
        for _ in [3]:
            v = v / 3 + 3
        return v
    return amber.grad(shrink)(x), shrink(x)


@runs((X23, X23B))
def value_and_grad_of_loop_with_branch(x, y):
    def loss(a, b):
        out = a
        for i in range(3):
            if (out * b).sum() > 0:
                out = out * b
            else:
                out = out - b * i
        return (out * out).sum()
    return amber.value_and_grad(loss, grad_position=(0, 1))(x, y)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
