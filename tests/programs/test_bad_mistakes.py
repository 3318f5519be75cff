"""Bad inputs, part 2: common mistakes (undefined names, wrong arity, recursion, calling arbitrary
objects, unsupported NumPy and methods, shape errors the compiler can see) must raise a
CompileError at the line marked `# ERR`, or eager's exception type with a note naming it (see
`harness.check_rejected`); never an internal error or a silent result."""
import collections
import inspect
import random

import numpy as np
import pytest

import amber
from amber import nn
from harness import check_rejected, f32, runs

POS = f32([1.0, 2.0, 3.0])


class Plain:
    """An arbitrary Python object with a `__call__` (not a Cell, not an op)."""

    def __call__(self, v):
        return v * 2.0


PLAIN = Plain()


def _recurse(v):
    if v.sum() <= 0:
        return v
    return _recurse(v - 1.0)  # ERR


def _ping(v):
    if v.sum() <= 0:
        return v
    return _pong(v - 1.0)  # ERR


def _pong(v):
    return _ping(v * 0.5)  # ERR


def _two_args(a, b):
    return a + b


def _one_arg(v):
    return v * 2.0


@runs(POS)
def undefined_name(x):
    return x * undefined_scale  # noqa: F821  # ERR


@runs(POS)
def wrong_arity_helper(x):
    return _two_args(x)  # ERR


@runs(POS)
def recursion_on_data(x):
    return _recurse(x)


@runs(POS)
def mutual_recursion(x):
    return _ping(x)


@runs(POS)
def call_arbitrary_object(x):
    return PLAIN(x)  # ERR


@runs(POS)
def call_python_random(x):
    return x * random.random()  # ERR


@runs(POS)
def call_stdlib_class(x):
    d = collections.OrderedDict()  # ERR
    d["x"] = x
    return x


@runs(POS)
def unsupported_numpy_function(x):
    return np.fft.fft(x)  # ERR


@runs(POS)
def unsupported_array_method(x):
    return x.searchsorted(1.0)  # ERR


@runs(POS)
def unknown_array_attribute(x):
    return x.no_such_attribute  # ERR


@runs(POS)
def call_a_tensor(x):
    return x(1)  # ERR


@runs(f32(3.0))
def iterate_zero_d(x):
    for v in x:  # ERR
        x = x + v
    return x


@runs((POS, f32([1.0, 2.0])))
def static_shape_mismatch(x, y):
    return x + y  # ERR


@runs((POS, f32([[1.0, 2.0]])))
def matmul_shape_mismatch(x, m):
    return m @ x  # ERR


@runs(POS)
def impossible_reshape(x):
    return x.reshape(2, 2)  # ERR


@runs(POS)
class MissingAttribute(nn.Cell):
    def construct(self, x):
        return x * self.scale  # ERR


@runs(POS)
class RecursiveMethod(nn.Cell):
    def construct(self, x):
        return self.step(x)

    def step(self, v):
        if v.sum() < 0:
            return v
        return self.step(v - 1.0)  # ERR


def test_rejected(program, capsys):
    """A CompileError at the marked line, or eager's exception with a note there."""
    check_rejected(program, capsys)


@pytest.mark.parametrize("args, kwargs", [((), {}), ((POS, POS), {}), ((POS,), {"w": 2})],
                         ids=["missing", "extra", "unknown-keyword"])
def test_wrong_arity_at_the_call(args, kwargs):
    """Calling a compiled function with arguments that do not fit: a TypeError, as eagerly;
    a CompileError points at the call and gives the counts."""
    with pytest.raises(TypeError):
        _one_arg(*args, **kwargs)
    with pytest.raises(TypeError) as info:
        amber.jit(_one_arg)(*args, **kwargs)  # NOTE: the line a CompileError names
    if isinstance(info.value, amber.CompileError):
        lines, first = inspect.getsourcelines(test_wrong_arity_at_the_call)
        call = first + next(i for i, line in enumerate(lines) if "amber.jit(_one_arg)(" in line)
        assert info.value.line == call, str(info.value)
        assert f"but {len(args) + len(kwargs)} " in info.value.message
