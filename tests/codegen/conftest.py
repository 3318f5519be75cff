"""Shared fixtures for codegen tests: compile a graph's generated module in a fresh namespace and
compare it with the reference interpreter."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

from amber.codegen import GeneratedCode, generate
from amber.graph import Graph, run_graph, verify


def load(code: GeneratedCode) -> Callable[..., Any]:
    """Execute the module text in a fresh namespace and return its entry function."""
    namespace: dict[str, Any] = {}
    exec(compile(code.source, "<generated>", "exec"), namespace)  # noqa: S102
    return namespace[code.function_name]


def outcome(fn: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """('ok', result) or ('raise', exception type): what a call did."""
    try:
        return "ok", fn(*args)
    except Exception as err:  # noqa: BLE001 (we compare which error both sides raise)
        return "raise", type(err)


def assert_same(got: Any, want: Any) -> None:
    """Exact for ints, bools and dtypes; a tight tolerance for floats."""
    if isinstance(want, tuple | list):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, np.ndarray | np.generic):
        assert isinstance(got, np.ndarray | np.generic), (got, want)
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want), (got, want)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(got, want)
    elif isinstance(want, float):
        assert type(got) is float and math.isclose(got, want, rel_tol=1e-9), (got, want)
    else:
        assert type(got) is type(want) and got == want, (got, want)


@pytest.fixture
def load_code() -> Callable[[GeneratedCode], Callable[..., Any]]:
    """`load_code(code)`: the entry function of a generated module, freshly executed."""
    return load


@pytest.fixture
def compile_graph() -> Callable[..., tuple[Callable[..., Any], GeneratedCode]]:
    """`compile_graph(graph, **generate_options) -> (function, GeneratedCode)`."""
    def run(graph: Graph, **options: Any) -> tuple[Callable[..., Any], GeneratedCode]:
        verify(graph)
        code = generate(graph, **options)
        return load(code), code
    return run


@pytest.fixture
def check_graph(compile_graph) -> Callable[..., GeneratedCode]:
    """`check_graph(graph, *calls)`: each call's args give the same result (or the same
    exception type) from the generated function as from `run_graph`."""
    def run(graph: Graph, *calls: tuple[Any, ...]) -> GeneratedCode:
        fn, code = compile_graph(graph)
        for args in calls:
            got, want = outcome(fn, *args), outcome(lambda *a: run_graph(graph, *a), *args)
            assert got[0] == want[0], f"{args}: generated {got}, interpreter {want}\n{code.source}"
            if want[0] == "ok":
                assert_same(got[1], want[1])
            else:
                assert got[1] is want[1], f"{args}: {got[1]} vs {want[1]}\n{code.source}"
        return code
    return run
