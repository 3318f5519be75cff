"""Run a built graph with the reference interpreter on a call's own arguments: the graph's
inputs are gathered exactly as the runtime gathers them (parameters by attribute path from the
instance, then arrays by argument path). `agree` checks a program against eager execution."""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..graph.interpreter import run_graph
from ..nn.cell import Cell
from .builder import BuildResult, build_graph
from .guards import resolve_path


def gather_inputs(result: BuildResult, instance: Any, args: tuple, kwargs: dict) -> list[Any]:
    """The values of the graph's inputs for this call, in order."""
    values = [resolve_path(instance, path) for path in result.graph.param_paths]
    for path in result.graph.input_paths:
        head, _, rest = path.partition(".")
        value = args[int(head)] if head.isdigit() else kwargs[head]
        values.append(resolve_path(value, rest))  # NOTE: items of tuples and dicts, cells' arrays
    return values


def run_compiled(target: Any, *args: Any, **kwargs: Any) -> Any:
    """Build `target` for this call and run the graph on the call's values."""
    result = build_graph(target, args, kwargs)
    instance = target if isinstance(target, Cell) else None
    return run_graph(result.graph, *gather_inputs(result, instance, args, kwargs))


def run_eager(target: Any, *args: Any, **kwargs: Any) -> Any:
    """The oracle: the original Python, run as written."""
    if isinstance(target, Cell):
        return target.construct(*args, **kwargs)
    return target(*args, **kwargs)


def agree(target: Any, *args: Any, rtol: float = 1e-6, **kwargs: Any) -> BuildResult:
    """Assert the compiled graph gives what eager execution gives (the same value, or the same
    exception type) on copies of the target and arguments; returns the build for IR checks."""
    result = build_graph(target, args, kwargs)
    eager_target, eager_args, eager_kwargs = copy.deepcopy((target, args, kwargs))
    instance = target if isinstance(target, Cell) else None
    try:
        expected: Any = run_eager(eager_target, *eager_args, **eager_kwargs)
    except Exception as exc:  # NOTE: the program's own error is part of its behaviour
        expected = exc
    inputs = gather_inputs(result, instance, args, kwargs)
    try:
        got: Any = run_graph(result.graph, *inputs)
    except Exception as exc:  # NOTE: compared with the eager outcome below
        got = exc
    assert_same(got, expected, rtol)
    return result


def assert_same(got: Any, expected: Any, rtol: float = 1e-6, where: str = "result") -> None:
    """Equal structure and values: exact for ints, bools and strings, `rtol` for floats."""
    if isinstance(expected, BaseException):
        assert isinstance(got, type(expected)), f"{where}: expected {expected!r}, got {got!r}"
        return
    if isinstance(got, BaseException):
        raise AssertionError(f"{where}: expected {expected!r}, but it raised {got!r}") from got
    if isinstance(expected, tuple | list):
        assert type(got) is type(expected) and len(got) == len(expected), \
            f"{where}: expected {expected!r}, got {got!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, rtol, f"{where}[{i}]")
        return
    if isinstance(expected, dict):
        assert type(got) is dict and list(got) == list(expected), \
            f"{where}: expected {expected!r}, got {got!r}"
        for key, e in expected.items():
            assert_same(got[key], e, rtol, f"{where}[{key!r}]")
        return
    if isinstance(expected, np.ndarray | np.generic):
        got_a, exp_a = np.asarray(got), np.asarray(expected)
        assert got_a.shape == exp_a.shape and got_a.dtype == exp_a.dtype, \
            f"{where}: expected {exp_a.dtype}{exp_a.shape}, got {got_a.dtype}{got_a.shape}"
        if exp_a.dtype.kind in "fc":
            np.testing.assert_allclose(got_a, exp_a, rtol=rtol, atol=rtol, err_msg=where)
        else:
            np.testing.assert_array_equal(got_a, exp_a, err_msg=where)
        return
    same = got == expected or (got != got and expected != expected)  # NaN equals NaN here
    assert type(got) is type(expected) and same, f"{where}: expected {expected!r}, got {got!r}"
