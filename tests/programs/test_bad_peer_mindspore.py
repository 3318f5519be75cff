"""MindSpore graph-mode control-flow tests amber refuses, each at the line marked `# ERR` with
the reason: an in-place operator on a 0-d value that is the caller's array on the first
iteration and a NumPy scalar after (a plain 0-d NumPy input; the same program on 0-d amber
Tensors compiles, see test_peer_mindspore.py), recursion whose depth depends on run-time
values, a function chosen by a run-time condition. Under NumPy 1,
where a 0-d int32 plus a Python int is int64, one of them compiles (`compiles_on_numpy1`) and
another is refused at another line (`# NUMPY1-ERR`)."""
import numpy as np

from amber import Parameter, Tensor, nn
from amber.common import dtype as mstype
from amber.ops import operations as P
from harness import check_rejected, i32, runs


def s32(v):
    return np.array(v, np.int32)


@runs(s32(4), compiles_on_numpy1=(
    "`x + 1` is int64 under NumPy 1 (a 0-d int32 plus a Python int), so the first iteration is "
    "peeled: its `x -= 2` writes the caller's array, later ones rebind an int64 NumPy scalar"))
def counter_written_in_place_then_rebound(x):
    while x < 5:
        if x > 3:
            x -= 2  # ERR
        elif x == 3:
            break
        else:
            break
        x = x + 1
    return x


class InputCountedInPlaceInNestedWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.add = P.Add()
        self.mul = P.Mul()
        self.level = Parameter(Tensor(8, mstype.int32), name="level")

    def construct(self, x, y):
        out = self.mul(y, y)
        while x != 3:
            while self.level > 5:
                self.level -= 1
                x += 1  # ERR
                if x > 3:
                    self.level -= x
                    return out
                out = self.add(out, y)
            x = x + 1  # NUMPY1-ERR: int64 there, int32 where the inner while returned
        out = self.mul(out, y)
        return out


runs((s32(2), s32(1)))(InputCountedInPlaceInNestedWhile)


def _run_time_recursion(x):
    y = x * 0
    if x < 0:
        y = y + 1
    elif x < 3:
        y = x * _run_time_recursion(x - 1)  # ERR
    else:
        y = x * _run_time_recursion(x - 2)  # ERR
    return y + 1


@runs(i32([5]))
def recursion_steered_by_run_time_values(x):
    return _run_time_recursion(x)  # ERR


def _plus_three(x):
    return x + 3


def _minus_one(x):
    return x - 1


def _pick(x):
    if x < 5:  # ERR
        return _plus_three
    return _minus_one  # ERR


@runs(i32([10]))
def function_chosen_by_a_run_time_condition(x):
    return _pick(x)(x)  # ERR


def test_rejected(program, capsys):
    """A CompileError at the marked line, or eager's exception with a note there."""
    check_rejected(program, capsys)
