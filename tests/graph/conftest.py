"""Shared helpers for IR tests, as fixtures (tests have no packages, so they cannot import this
file): `check_pass` for pass tests written as IR text, `filecheck` (CHECK / CHECK-NEXT /
CHECK-NOT) for long outputs, and `samples`, hand-built graphs with plain-Python references.
"""
from __future__ import annotations

import textwrap
from types import SimpleNamespace
from typing import Callable

import numpy as np
import pytest

from amber.graph import (Block, Builder, Graph, InsertPoint, Rewriter, Scalar, Tensor, parse_graph,
                         print_graph, verify)

F32 = np.float32


def _check_pass(name: str | Callable, before: str, after: str) -> Graph:
    """Parse `before`, verify, run pass `name`, verify, and compare the printed IR with `after`.

    `name` is a key of `amber.graph.passes.PASSES` (or the pass function itself). Both texts are
    dedented and stripped of surrounding blank lines. Returns the transformed graph."""
    from amber.graph.passes import PASSES  # NOTE: lazily, so these tests never need the passes
    run = PASSES[name] if isinstance(name, str) else name
    graph = parse_graph(textwrap.dedent(before))
    verify(graph)
    printed_before = print_graph(graph)
    changed = run(graph, Rewriter())
    verify(graph)
    printed = print_graph(graph)
    expected = textwrap.dedent(after).strip("\n") + "\n"
    assert printed == expected, f"pass {name!r} gave:\n{printed}\nexpected:\n{expected}"
    assert changed or printed == printed_before, f"pass {name!r} changed the IR but returned False"
    return graph


def _filecheck(text: str, checks: str) -> None:
    """Match `checks` (lines `CHECK: s`, `CHECK-NEXT: s`, `CHECK-NOT: s`; substrings) in order
    against the lines of `text`, like LLVM's FileCheck; AssertionError says what failed where."""
    lines = text.splitlines()
    pos = 0            # first line the next CHECK may match
    last = -1          # line of the previous positive match
    forbidden: list[str] = []
    for raw in textwrap.dedent(checks).strip().splitlines():
        directive, _, pattern = raw.strip().partition(":")
        pattern = pattern.strip()
        if directive == "CHECK-NOT":
            forbidden.append(pattern)
            continue
        if directive == "CHECK":
            found = next((i for i in range(pos, len(lines)) if pattern in lines[i]), None)
        elif directive == "CHECK-NEXT":
            found = last + 1 if last + 1 < len(lines) and pattern in lines[last + 1] else None
        else:
            raise ValueError(f"unknown directive in {raw!r}")
        where = f"after line {last + 1}" if last >= 0 else "from the start"
        assert found is not None, f"{directive}: {pattern!r} not found {where} in:\n{text}"
        _check_absent(lines[pos:found], forbidden, text)
        forbidden, pos, last = [], found + 1, found
    _check_absent(lines[pos:], forbidden, text)


def _check_absent(span: list[str], forbidden: list[str], text: str) -> None:
    for pattern in forbidden:
        hit = next((line for line in span if pattern in line), None)
        assert hit is None, f"CHECK-NOT: {pattern!r} found in line {hit!r} of:\n{text}"


@pytest.fixture(scope="session")
def check_pass() -> Callable[[str | Callable, str, str], Graph]:
    """`check_pass(name, before, after)`: the IR-text-in, IR-text-out pass test."""
    return _check_pass


@pytest.fixture(scope="session")
def filecheck() -> Callable[[str, str], None]:
    """`filecheck(text, checks)`: CHECK / CHECK-NEXT / CHECK-NOT matching."""
    return _filecheck


# -- sample graphs (built with Builder) and the Python they mean ------------------------------
def _graph(name: str, types: list, names: list[str]) -> tuple[Graph, Builder]:
    graph = Graph(name, Block(types, names))
    return graph, Builder(InsertPoint.at_end(graph.body))


def straight_line() -> Graph:
    """relu(x + y) * w + 0.5, with an array constant `w`."""
    g, b = _graph("straight", [Tensor((2, 3), F32)] * 2, ["x", "y"])
    x, y = g.inputs
    h = b.op("relu", b.op("add", x, y, name="h"), name="h")
    w = b.constant(np.array([[1.5, -2.0, 0.1]], F32), name="w")
    out = b.op("add", b.op("mul", h, w, name="h"), b.constant(0.5), name="out")
    g.body.set_results([out])
    return g


def straight_line_ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.maximum(x + y, 0) * np.array([[1.5, -2.0, 0.1]], F32) + 0.5


def if_in_while() -> Graph:
    """i = 0; while i < n: (acc = acc + i if i % 2 == 0 else acc * 2); i = i + 1."""
    g, b = _graph("if_in_while", [Scalar(int), Tensor((3,), F32)], ["n", "acc"])
    n, acc0 = g.inputs
    carried = [Scalar(int), Tensor((3,), F32)]
    cond = Block(carried, ["i", "acc"])
    cb = Builder(InsertPoint.at_end(cond))
    cond.set_results([cb.op("lt", cond.params[0], n, name="go")])
    body = Block(carried, ["i", "acc"])
    bb = Builder(InsertPoint.at_end(body))
    i, acc = body.params
    even = bb.op("eq", bb.op("mod", i, bb.constant(2)), bb.constant(0), name="even")
    then, else_ = Block(), Block()
    then.set_results([Builder(InsertPoint.at_end(then)).op("add", acc, i, name="acc")])
    else_.set_results([Builder(InsertPoint.at_end(else_)).op("mul", acc, bb.constant(2.0),
                                                                name="acc")])
    merged = bb.if_(even, then, else_, names=["acc"])
    body.set_results([bb.op("add", i, bb.constant(1), name="i"), merged[0]])
    i_out, acc_out = b.while_([b.constant(0, name="i"), acc0], cond, body, names=["i", "acc"])
    g.body.set_results([acc_out])
    return g


def if_in_while_ref(n: int, acc: np.ndarray) -> np.ndarray:
    i = 0
    while i < n:
        acc = acc + i if i % 2 == 0 else acc * 2.0
        i = i + 1
    return acc


def for_carried() -> Graph:
    """s = 0.0; p = x; k = 0; for i in range(1, n, 2): s = s + p; p = p * i; k = k + 1."""
    g, b = _graph("for_carried", [Scalar(int), Tensor((2,), F32)], ["n", "x"])
    n, x = g.inputs
    vec = Tensor((2,), F32)
    body = Block([Scalar(int), vec, vec, Scalar(int)], ["i", "s", "p", "k"])
    bb = Builder(InsertPoint.at_end(body))
    i, s, p, k = body.params
    body.set_results([bb.op("add", s, p, name="s"), bb.op("mul", p, i, name="p"),
                      bb.op("add", k, bb.constant(1), name="k")])
    outs = b.for_(b.constant(1), n, b.constant(2), [b.constant(0.0, name="s"), x,
                                                    b.constant(0, name="k")], body,
                  names=["s", "p", "k"])
    g.body.set_results([b.op("make_tuple", *outs, name="result")])
    return g


def for_carried_ref(n: int, x: np.ndarray) -> tuple:
    s, p, k = 0.0, x, 0
    for i in range(1, n, 2):
        s, p, k = s + p, p * i, k + 1
    return (s, p, k)


def effects() -> Graph:
    """print(x); items = [x]; items.append(x); print(len(items), sep='|'); return items."""
    g, b = _graph("effects", [Tensor((2,), F32)], ["x"])
    (x,) = g.inputs
    p1 = b.op("print", x, name="p").producer
    items = b.op("list_new", x, name="items", control_inputs=[p1])
    appended = b.op("list_append", items, x, name="items", control_inputs=[items.producer])
    size = b.op("len", appended, name="size")
    b.op("print", b.constant("n ="), size, sep="|", control_inputs=[appended.producer])
    g.body.set_results([appended])
    return g


SAMPLES = {"straight_line": (straight_line, straight_line_ref),
           "if_in_while": (if_in_while, if_in_while_ref),
           "for_carried": (for_carried, for_carried_ref),
           "effects": (effects, None)}


@pytest.fixture(scope="session")
def samples() -> SimpleNamespace:
    """The sample graph builders and their Python references (`samples.if_in_while()`)."""
    return SimpleNamespace(**{name: fn for name, (fn, _) in SAMPLES.items()},
                           **{f"{name}_ref": ref for name, (_, ref) in SAMPLES.items() if ref},
                           all=SAMPLES)
