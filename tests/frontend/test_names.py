"""names: bound names, read names and liveness over structured statements."""
from __future__ import annotations

import textwrap

import gast
import pytest

from amber.frontend.names import (BREAK_FLAG, RETURN_VALUE, SYNTHETIC_PREFIX, Namer,
                                  assigned_names, is_synthetic, live_in, mutated_names,
                                  read_names, value_hint)


def body(text: str) -> list[gast.stmt]:
    return gast.parse(textwrap.dedent(text)).body


@pytest.mark.parametrize("text, names", [
    ("x = 1", {"x"}),
    ("a, (b, *c) = t\n[d, e] = f = g", {"a", "b", "c", "d", "e", "f"}),
    ("x += 1\ny: int = 2\nz: int", {"x", "y"}),
    ("for i, (j, k) in pairs:\n    s = i", {"i", "j", "k", "s"}),
    ("if c:\n    a = 1\nelse:\n    while d:\n        b = 2", {"a", "b"}),
    ("xs = [v for v in range(3)]\nys = [w for u in xs for w in u]", {"xs", "ys"}),
    ("x[i] = 1\nself.w = 2\nx[0] += 1", set()),
    ("print(n)\nassert m", set()),
])
def test_assigned_names(text, names):
    assert assigned_names(body(text)) == names


def test_mutated_names_are_roots_of_subscript_and_attribute_targets():
    stmts = body("x[i] = 1\nself.w.b = 2\nif c:\n    y[0][1] += 1\na, z[0] = t\nq = 1")
    assert mutated_names(stmts) == {"x", "self", "y", "z"}


@pytest.mark.parametrize("text, names", [
    ("x = a + b", {"a", "b"}),
    ("x += y", {"x", "y"}),
    ("x[i] = v", {"x", "i", "v"}),
    ("self.w = f(self.b, k=z)", {"self", "f", "z"}),
    ("ys = [v * s for v in xs if v > t]", {"xs", "s", "t"}),
    ("ys = [(a, b) for a in xs for b in a]", {"xs"}),
    ("ys = [v for v in v]", {"v"}),  # the first iterable is read in the enclosing scope
    ("print(f'{x!r}')", {"print", "x"}),
    ("for i in range(n):\n    s = s + i", {"range", "n", "s", "i"}),
])
def test_read_names(text, names):
    assert read_names(body(text)) == names


def test_read_names_of_one_expression():
    assert read_names(body("a if b else c(d)")[0].value) == {"a", "b", "c", "d"}


@pytest.mark.parametrize("text, live_out, live", [
    ("y = x + 1\nz = y", {"z"}, {"x"}),
    ("y = x + 1\nz = y", {"z", "y"}, {"x"}),
    ("x = 1", {"x", "w"}, {"w"}),
    ("x = x + 1", set(), {"x"}),
    ("x += 1", {"x"}, {"x"}),
    ("x: int\ny = x", {"y"}, {"x"}),
    ("x: int = a\ny = x", {"y"}, {"a"}),
    ("if c:\n    y = a\nelse:\n    y = b", {"y"}, {"a", "b", "c"}),
    ("if c:\n    y = a", {"y"}, {"a", "c", "y"}),
    ("return a\nb = 1", {"b", "q"}, {"a"}),
    ("if c:\n    raise E(m)\ny = 1", {"y", "q"}, {"c", "E", "m", "q"}),
    # loops: a name each iteration assigns before reading it is not live in
    ("while i < n:\n    i = i + 1\n    t = 5\n    u = t", set(), {"i", "n"}),
    ("while c:\n    t = 5\n    u = t", {"t"}, {"c", "t"}),
    ("while c:\n    u = t\n    t = 5", set(), {"c", "t"}),
    ("while c:\n    if p:\n        t = 1\n    u = t", set(), {"c", "p", "t"}),
    ("while c:\n    c = d\n    d = e", set(), {"c", "d", "e"}),  # e reaches c in 2 trips
    ("while c:\n    if p:\n        break\n    x = y", {"q"}, {"c", "p", "q", "y"}),
    ("while c:\n    if p:\n        continue\n    x = y\nz = x", {"z"}, {"c", "p", "x", "y"}),
    # a for target is bound before its body runs; it stays live if live after (zero trips)
    ("for i in range(n):\n    s = s + i", {"s"}, {"range", "n", "s"}),
    ("for i in xs:\n    s = i", {"i"}, {"xs", "i"}),
    ("x[i] = v", set(), {"x", "i", "v"}),
])
def test_live_in(text, live_out, live):
    assert live_in(body(text), set(live_out)) == live


def test_live_in_does_not_mutate_live_out():
    live_out = {"y"}
    live_in(body("y = x"), live_out)
    assert live_out == {"y"}


def test_namer_numbers_loops_and_synthetic_names_are_recognised():
    namer = Namer()
    assert [namer.loop(), namer.loop(), namer.loop()] == [0, 1, 2]
    assert is_synthetic(SYNTHETIC_PREFIX + "brk0") and not is_synthetic("brk0")


def test_value_hints_prefer_the_users_names_over_synthetic_ones():
    brk = BREAK_FLAG.format(0)
    assert value_hint(brk) == brk and value_hint(RETURN_VALUE) == ""  # a result keeps its own
    assert value_hint("h", brk) == "h" and value_hint(brk, "h") == "h"
    assert value_hint("_", brk) == brk and value_hint("_") == "_"
    assert value_hint("logits", "x") == "x" and value_hint("logits", "x", replace=True) == "logits"


def _fixpoint_live_loop(loop, done, after):
    """The textbook way: iterate the loop head's live set until it stops changing."""
    from amber.frontend import names
    head = set(done)
    while True:
        exits = names._Exits(frozenset(after), frozenset(head))
        found = names._live_block(loop.body, head, exits)
        if isinstance(loop, gast.For):
            new = done | (found - names.target_names(loop.target)) | read_names(loop.target)
        else:
            new = done | found | read_names(loop.test)
        if new == head:
            return head | read_names(loop.iter) if isinstance(loop, gast.For) else head
        head = new


NESTED = """
while a:
    if p:
        continue
    for i in range(n):
        while b:
            x = y
            if q:
                break
            y = z
            z = w
        if r:
            continue
        w = v
    v = u
    if s:
        break
    u = t
out = x + i
"""


@pytest.mark.parametrize("live_out", [set(), {"out"}, {"x", "w"}, {"a", "b", "t"}])
def test_one_pass_loop_liveness_is_the_fixpoint(live_out, monkeypatch):
    from amber.frontend import names
    fast = live_in(body(NESTED), set(live_out))
    monkeypatch.setattr(names, "_live_loop", _fixpoint_live_loop)
    assert fast == live_in(body(NESTED), set(live_out))


def test_liveness_of_nested_loops_takes_linear_work(monkeypatch):
    from amber.frontend import names
    depth = 12
    text = "".join("    " * d + f"while c{d}:\n" for d in range(depth)) + "    " * depth + "x = y"
    calls = []
    original = names._live_block
    monkeypatch.setattr(names, "_live_block", lambda *a: calls.append(1) or original(*a))
    assert live_in(body(text), {"x"}) == {f"c{d}" for d in range(depth)} | {"x", "y"}
    assert len(calls) <= 2 * depth + 1
