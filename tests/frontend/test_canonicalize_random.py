"""canonicalize on random programs: nested if/while/for with break/continue/return over a few int
variables must behave exactly like the original (value, error, printed trace)."""
from __future__ import annotations

import contextlib
import io
import itertools
import linecache

import gast
from hypothesis import given, settings, strategies as st

from amber.frontend.canonicalize import canonicalize
from amber.frontend.check import check_supported
from amber.frontend.names import live_in
from amber.frontend.source import parse_function

INPUTS = [(0, 0, 0), (1, 2, 3), (5, -1, 2), (3, 3, 7), (-2, 4, 1), (10, 6, -3)]
VARS = ("a", "b", "c")
TARGETS = ("i", "j", "a", "b")
CONDITIONS = ("{v} > {k}", "{v} % 2 == 0", "{v} < {w}", "{v} == {k}", "{v} != {w} and {v} > 0")
EXPRESSIONS = ("{v} + {k}", "({v} + {w}) % 97", "({v} * 3) % 11", "{k}", "{w} - {v}")
RETURNS = ("{v}", "({v}, {w})", "({v}, {w}, {k})", "None", "", "[{v}, {k}]")
RANGES = ("{n}", "{v} % 5", "{k}, {n}", "{n}, {k}, -1", "{k}, {n}, 2", "6, -6, -3",
          "{v} % 4, 5", "5, {k}, -(({v} % 3) + 1)", "-{n}, {n}, ({v} % 3) + 1")
SEQUENCES = ("(a, b, c)", "[1, 2, 3, 4]", "[]", "range(0)")
_files = itertools.count()


class Generator:
    """Draws one random function, line by line."""

    def __init__(self, draw) -> None:
        self.draw, self.lines, self.loops, self.prints = draw, [], 0, 0

    def fill(self, template: str) -> str:
        pick = self.draw
        return template.format(v=pick(st.sampled_from(VARS)), w=pick(st.sampled_from(VARS)),
                               k=pick(st.integers(-3, 6)), n=pick(st.integers(0, 5)))

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def block(self, indent: int, depth: int, in_loop: bool) -> None:
        for _ in range(self.draw(st.integers(1, 3))):
            kinds = ["assign", "assign", "print", "return_"]
            kinds += ["break_", "continue_"] if in_loop else []
            kinds += ["if_", "if_", "while_", "for_range", "for_seq"] if depth < 3 else []
            getattr(self, self.draw(st.sampled_from(kinds)))(indent, depth, in_loop)

    def assign(self, indent: int, depth: int, in_loop: bool) -> None:
        op = self.draw(st.sampled_from(["=", "+="]))
        value = self.fill(self.draw(st.sampled_from(EXPRESSIONS)))
        self.emit(indent, f"{self.draw(st.sampled_from(VARS))} {op} {value}")

    def print(self, indent: int, depth: int, in_loop: bool) -> None:
        self.prints += 1
        self.emit(indent, f"print({self.prints}, a, b, c)")

    def return_(self, indent: int, depth: int, in_loop: bool) -> None:
        self.emit(indent, "return " + self.fill(self.draw(st.sampled_from(RETURNS))))

    def break_(self, indent: int, depth: int, in_loop: bool) -> None:
        self.emit(indent, "break")

    def continue_(self, indent: int, depth: int, in_loop: bool) -> None:
        self.emit(indent, "continue")

    def if_(self, indent: int, depth: int, in_loop: bool) -> None:
        self.emit(indent, f"if {self.fill(self.draw(st.sampled_from(CONDITIONS)))}:")
        self.block(indent + 1, depth + 1, in_loop)
        if self.draw(st.booleans()):
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, in_loop)

    def while_(self, indent: int, depth: int, in_loop: bool) -> None:
        counter, limit = f"w{self.loops}", self.draw(st.integers(0, 4))
        self.loops += 1
        self.emit(indent, f"{counter} = 0")
        if self.draw(st.booleans()):
            self.emit(indent, "while True:")
            self.emit(indent + 1, f"{counter} += 1")
            self.emit(indent + 1, f"if {counter} > {limit}:")
            self.emit(indent + 2, "break")
        else:
            cond = self.fill(self.draw(st.sampled_from(CONDITIONS)))
            self.emit(indent, f"while {counter} < {limit} and ({cond}):")
            self.emit(indent + 1, f"{counter} += 1")  # first, so `continue` cannot skip it
        self.block(indent + 1, depth + 1, True)

    def for_range(self, indent: int, depth: int, in_loop: bool) -> None:
        target = self.draw(st.sampled_from(TARGETS))
        bounds = self.fill(self.draw(st.sampled_from(RANGES)))
        self.emit(indent, f"for {target} in range({bounds}):")
        self.block(indent + 1, depth + 1, True)
        if self.draw(st.booleans()):
            self.emit(indent, f"print('after', {target})")

    def for_seq(self, indent: int, depth: int, in_loop: bool) -> None:
        seq = self.draw(st.sampled_from(SEQUENCES))
        if self.draw(st.booleans()):
            self.emit(indent, f"for i, j in zip({seq}, (7, 8, 9)):")
        else:
            self.emit(indent, f"for {self.draw(st.sampled_from(TARGETS))} in {seq}:")
        self.block(indent + 1, depth + 1, True)


@st.composite
def programs(draw) -> str:
    gen = Generator(draw)
    gen.block(1, 0, False)
    if draw(st.booleans()):
        gen.return_(1, 0, False)
    return "\n".join(["def generated(a, b, c):"] + gen.lines) + "\n"


def define(source: str):
    """exec `source` under a fresh file name that inspect can read back through linecache."""
    filename = f"<amber-random-{next(_files)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["generated"], filename


def outcome(fn, args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = ("value", fn(*args))
        except Exception as exc:  # e.g. an unbound loop variable: the twin must agree
            result = ("raises", type(exc).__name__, str(exc))
    return result, out.getvalue()


@settings(max_examples=200, deadline=None)
@given(programs())
def test_random_program_twin_behaves_like_original(source):
    original, filename = define(source)
    try:
        parsed = parse_function(original)
        check_supported(parsed)
        tree = canonicalize(parsed)
        returns = [n for n in gast.walk(tree) if isinstance(n, gast.Return)]
        assert returns == [tree.body[-1]]
        assert not any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(tree))
        namespace: dict = {}
        exec(compile(gast.gast_to_ast(gast.Module(body=[tree], type_ignores=[])), filename,
                     "exec"), namespace)
        for args in INPUTS:
            assert outcome(namespace["generated"], args) == outcome(original, args), args
    finally:
        del linecache.cache[filename]


@settings(max_examples=100, deadline=None)
@given(programs())
def test_random_program_live_names_are_sound(source):
    """A parameter that live_in says is not live can take any value without changing anything,
    in the original and in the canonical form."""
    original, filename = define(source)
    try:
        parsed = parse_function(original)
        tree = canonicalize(parsed)
        for body in (parsed.node.body, tree.body):
            dead = {"a", "b", "c"} - live_in(body, set())
            for args in INPUTS[:3]:
                other = tuple(99 if name in dead else value
                              for name, value in zip("abc", args))
                assert outcome(original, other) == outcome(original, args), (dead, args)
    finally:
        del linecache.cache[filename]
