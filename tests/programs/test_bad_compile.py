"""Bad inputs the compiler must reject cleanly: every unsupported statement and expression, and
the common mistakes (undefined names, wrong arity, recursion, calling arbitrary objects,
unsupported NumPy, shape errors known at compile time).

The line marked `# ERR` is where the problem is. The compiled call must raise a CompileError
pointing at it (file, line, caret), or, when eager raises too, the same exception type with a
note naming that line; never an internal error, never a silent result.
"""
import collections
import inspect
import os
import random

import numpy as np
import pytest

import amber
from amber import nn
from harness import build, call, f32, runs, stack_lines

POS = f32([1.0, 2.0, 3.0])
COUNTER = 0


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


def _helper_with_yield(v):
    yield v  # ERR


@runs(POS)
def try_except(x):
    try:  # ERR
        y = x * 2.0
    except ValueError:
        y = x
    return y


@runs(POS)
def with_statement(x):
    with np.errstate(all="ignore"):  # ERR
        y = np.log(x)
    return y


@runs(POS)
def yield_in_body(x):
    yield x * 2.0  # ERR


@runs(POS)
def global_statement(x):
    global COUNTER  # ERR
    COUNTER = 1
    return x


@runs(POS)
def lambda_expression(x):
    f = lambda v: v * 2.0  # ERR  # noqa: E731
    return f(x)


@runs(POS)
def del_statement(x):
    y = x * 2.0
    del y  # ERR
    return x


@runs(POS)
def nested_def(x):
    def inner(v):  # ERR
        return v * 2.0
    return inner(x)


@runs(POS)
def class_in_body(x):
    class Box:  # ERR
        pass
    return x


@runs(POS)
def import_in_body(x):
    import math  # ERR
    return x * math.pi


@runs(POS)
def match_statement(x):
    match x.shape[0]:  # ERR
        case 3:
            return x
    return -x


@runs(POS)
def walrus(x):
    if (s := x.sum()) > 0:  # ERR
        return s
    return x


@runs(POS)
def generator_expression(x):
    return sum(x * k for k in range(3))  # ERR


@runs(POS)
def set_comprehension(x):
    return len({k for k in range(3)}), x  # ERR


@runs(POS)
def dict_comprehension(x):
    d = {k: x * k for k in range(3)}  # ERR
    return d[1]


@runs(POS)
def while_else(x):
    i = 0
    while i < 2:
        i += 1
    else:  # ERR
        x = x + 1.0
    return x


@runs(POS)
def for_else(x):
    for i in range(2):
        x = x + i
    else:  # ERR
        x = -x
    return x


@runs(POS)
def reserved_name(x):
    __amber_tmp = x * 2.0  # ERR
    return __amber_tmp


@runs(POS)
def undefined_name(x):
    return x * undefined_scale  # ERR  # noqa: F821


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
def helper_with_yield(x):
    return list(_helper_with_yield(x))


@runs(POS)
def call_arbitrary_object(x):
    return PLAIN(x)  # ERR


@runs(POS)
def call_python_random(x):
    return x * random.random()  # ERR


@runs(POS)
def call_stdlib_class(x):
    d = collections.OrderedDict()  # ERR
    return x


@runs(POS)
def unsupported_numpy_function(x):
    return np.linalg.norm(x)  # ERR


@runs(POS)
def unsupported_array_method(x):
    return x.tolist()  # ERR


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


def marked_lines(target) -> set[int]:
    """The absolute line numbers of `# ERR` markers in the program and the functions it calls."""
    found = set()
    for obj in _marker_candidates(target):
        lines, start = inspect.getsourcelines(obj)
        found.update(start + k for k, text in enumerate(lines) if "# ERR" in text)
    assert found, f"{target.__name__} has no # ERR marker"
    return found


def _marker_candidates(target):
    """The target and every module function reachable from it by name."""
    seen, todo = [], [target]
    while todo:
        obj = todo.pop()
        if obj in seen:
            continue
        seen.append(obj)
        code = getattr(obj, "__code__", None)
        todo.extend(f for f in map(globals().get, code.co_names if code else ())
                    if inspect.isfunction(f))
    return seen


def test_rejected(program, capsys):
    """Compiled: a CompileError at a marked line, or eager's exception with a note there."""
    lines = marked_lines(program.target)
    here = os.path.basename(__file__)
    subject = build(program)
    (args,) = program.inputs
    want = call(subject.eager, args, subject.eager_net, capsys)
    got = call(subject.compiled, args, subject.compiled_net, capsys)
    assert got.error is not None, f"compiled accepted it and returned {got.result!r}"
    err = got.error
    if isinstance(err, amber.CompileError):
        assert os.path.basename(err.file) == here and err.line in lines, str(err)
        text = str(err)
        assert f"{here}:{err.line}:" in text and "^" in text, text
        return
    assert want.error is not None, f"eager ran, compiled raised {err!r} instead of CompileError"
    assert type(err) is type(want.error), f"compiled raised {err!r}, eager {want.error!r}"
    eager_lines = {line for name, line in stack_lines(want.error) if name == here}
    assert eager_lines & lines, "the marker is not where eager failed"
    notes = "\n".join(getattr(err, "__notes__", ()))
    assert any(f"{here}:{line}" in notes for line in lines), f"no note at {lines}: {notes!r}"


@pytest.mark.parametrize("args, kwargs", [((), {}), ((POS, POS), {}), ((POS,), {"w": 2})],
                         ids=["missing", "extra", "unknown-keyword"])
def test_wrong_arity_at_the_call(args, kwargs):
    """Calling a compiled function with arguments that do not fit: eager's TypeError, or a
    CompileError pointing at the function's `def`."""
    with pytest.raises(TypeError):
        _one_arg(*args, **kwargs)
    with pytest.raises((TypeError, amber.CompileError)) as info:
        amber.jit(_one_arg)(*args, **kwargs)
    if isinstance(info.value, amber.CompileError):
        assert info.value.line == inspect.getsourcelines(_one_arg)[1], str(info.value)
