"""How compiled code is called and what it returns: keyword and keyword-only arguments, array
keywords, positional parameters passed by name, `*args` / `**kwargs`, containers of arrays as
arguments, a Cell passed as an argument, array defaults, jit functions calling jit functions,
dict results."""
import numpy as np

import amber
from amber import nn
from harness import Kw, f32, i64, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
BIAS = f32([0.5, 0.5, 0.5])


def _inner(v):
    if v.sum() > 0:
        return v * 2.0
    return v


INNER = amber.jit(_inner)


class Doubler(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3)

    def construct(self, x):
        return self.fc(x) * 2.0


amber.set_seed(0)
MODEL = Doubler()


@runs((POS,), (POS, Kw(scale=2.0)), (NEG, Kw(shift=POS)), (POS, Kw(shift=NEG, scale=-1.0)))
def keyword_arguments(x, scale=1.0, shift=None):
    y = x * scale
    if shift is not None:
        y = y + shift
    return y


@runs((POS,), (POS, Kw(mode="abs")), (NEG, Kw(mode="neg", times=3)))
def keyword_only_arguments(x, *, mode="id", times=1):
    for _ in range(times):
        if mode == "abs":
            x = np.abs(x)
        elif mode == "neg":
            x = -x
    return x


@runs((Kw(x=POS, y=NEG),), (POS, Kw(y=POS)))
def positional_passed_by_name(x, y):
    return x - y


@runs((POS,), (POS, NEG), (POS, NEG, Kw(scale=0.5)))
def varargs_and_keyword(*xs, scale=1.0):
    total = xs[0] * 0.0
    for t in xs:
        total = total + t * scale
    return total, len(xs)


@runs((POS,), (POS, Kw(scale=3.0)), (NEG, Kw(scale=2.0, offset=1.0)))
def kwargs_dict(x, **opts):
    y = x * opts.get("scale", 1.0)
    if "offset" in opts:
        y = y + opts["offset"]
    return y, len(opts)


@runs(([POS, NEG],), ([POS, NEG, POS * 2.0],))
def list_of_arrays_argument(items):
    out = []
    for v in items:
        out.append(np.maximum(v, 0.0))
    return np.stack(out), len(items)


@runs(((POS, (NEG, POS)),), ((NEG, (NEG, NEG)),))
def nested_tuple_argument(pair):
    a, (b, c) = pair
    return a * b + c


@runs(({"a": POS, "b": NEG},), ({"a": NEG, "b": POS * 3.0},))
def dict_of_arrays_argument(d):
    if d["a"].sum() > d["b"].sum():
        return d["a"]
    return d["b"]


@runs((MODEL, randn(2, 3)), (MODEL, randn(1, 3, seed=3)))
def cell_as_argument(model, x):
    y = model(x)
    if y.mean() > 0:
        y = y - 1.0
    return y


@runs((POS,), (NEG, BIAS * 2.0))
def array_default_argument(x, bias=BIAS):
    return x + bias


@runs(POS, NEG)
def jit_function_called_inside(x):
    return INNER(x) + INNER(-x)


@runs(POS, NEG)
def dict_result(x):
    n = 0
    if x.sum() > 0:
        n = 1
    return {"y": x * 2.0, "n": n, "parts": (x[0], x[1:])}


@runs((POS, i64(2)), (NEG, i64(0)))
def zero_d_int_array_as_index(x, i):
    return x[i], x[: i + 1]


@runs((POS, np.bool_(True)), (POS, np.bool_(False)))
def numpy_bool_flag(x, flag):
    if flag:
        return x * 2.0
    return x


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)
