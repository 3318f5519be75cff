"""Errors: exceptions raised in generated code keep their type and get a note naming the user's
line; generated source is visible to tracebacks; CompileError propagates unless fallback=True."""
from __future__ import annotations

import inspect
import linecache
import traceback
import warnings

import numpy as np
import pytest

import amber
from amber import nn


class Walk(nn.Cell):
    """Adds x[1], x[2], ... until the total reaches 100: indexes past the end on small data."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        i = 0
        total = x[0]
        while total < 100:
            i = i + 1
            total = total + x[i]
        return total


class Unsupported(nn.Cell):
    """Imports inside construct, which the compiler rejects."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        import math
        y = x + math.floor(1.5)
        return y


def _line_of(cls: type, text: str) -> int:
    lines, first = inspect.getsourcelines(cls.construct)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_runtime_error_keeps_type_and_names_the_user_line() -> None:
    net = Walk()
    fast = amber.jit(net)
    x = np.ones(5, np.float32)
    with pytest.raises(IndexError) as eager:
        net.construct(x)
    with pytest.raises(IndexError) as compiled:
        fast(x)
    assert type(compiled.value) is type(eager.value)
    line = _line_of(Walk, "total = total + x[i]")
    assert compiled.value.__notes__ == [
        f"in {__file__}:{line}: total = total + x[i] (compiled by amber)"]
    np.testing.assert_allclose(fast(np.full(5, 60, np.float32)), 120)  # still usable


def test_traceback_shows_generated_lines() -> None:
    fast = amber.jit(Walk())
    with pytest.raises(IndexError) as info:
        fast(np.ones(3, np.float32))
    frames = traceback.extract_tb(info.value.__traceback__)
    generated = [f for f in frames if f.filename.startswith("<amber:Walk.construct:")]
    assert generated and generated[-1].line  # linecache serves the generated text
    assert generated[-1].line in fast.code
    assert linecache.getline(generated[-1].filename, generated[-1].lineno).strip() == \
        generated[-1].line
    text = "".join(traceback.format_exception(info.value))
    assert "compiled by amber" in text


def test_note_is_added_once_per_exception() -> None:
    fast = amber.jit(Walk())
    x = np.ones(2, np.float32)
    with pytest.raises(IndexError) as info:
        fast(x)
    fast.last.annotate(info.value)  # annotating again (e.g. nested boundaries) changes nothing
    assert len(info.value.__notes__) == 1


def test_compile_error_propagates_without_fallback() -> None:
    fast = amber.jit(Unsupported())
    with pytest.raises(amber.CompileError) as info:
        fast(np.ones(2, np.float32))
    assert "`import`" in str(info.value)
    assert f"{__file__}:{_line_of(Unsupported, 'import math')}" in str(info.value)


def test_fallback_runs_eagerly_with_one_warning() -> None:
    net = Unsupported()
    fast = amber.jit(net, fallback=True)
    x = np.arange(3, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(fast(x), x + 1)
        np.testing.assert_array_equal(fast(x), x + 1)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "runs eagerly" in messages[0] and "`import`" in messages[0]
    assert fast.stats.compiles == 0


def test_fallback_class_decorator_compiles_what_it_can() -> None:
    @amber.jit(fallback=True)
    class Fine(nn.Cell):
        def construct(self, x: np.ndarray) -> np.ndarray:
            return x * 2

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compilable code: no fallback warning
        np.testing.assert_array_equal(Fine()(np.ones(2)), np.full(2, 2.0))
    assert Fine.__call__.stats.compiles == 1


class OverBudget(RuntimeError):
    """A user exception class: generated code can only name it through the loader."""


class Budget(nn.Cell):
    """Raises a user exception when the input's total is too large."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        if x.sum() > 10:
            raise OverBudget("over budget")
        return x * 2


def test_user_exception_classes_are_raised_as_themselves() -> None:
    x = np.full(3, 5, np.float32)
    for expected_origin in ("compiled", "disk"):
        fast = amber.jit(Budget())
        with pytest.raises(OverBudget, match="over budget") as info:
            fast(x)
        assert fast.last.origin == expected_origin
        assert type(info.value) is OverBudget
        assert f"{__file__}:{_line_of(Budget, 'raise OverBudget')}" in info.value.__notes__[0]
        np.testing.assert_array_equal(fast(np.ones(3, np.float32)), np.full(3, 2, np.float32))
