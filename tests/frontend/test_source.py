"""parse_function / error_at: AST located in the user's file, methods, decorators, closures,
defaults, the parse cache, and clear errors when there is no source."""
from __future__ import annotations

import functools
import inspect
import math
import subprocess
import sys
import textwrap

import gast
import numpy as np
import pytest

from amber.frontend import source as source_module
from amber.frontend.errors import CompileError
from amber.frontend.source import ParsedFunction, error_at, parse_function

OFFSET = 10


def plain(x, y=2, *, scale=3.0):
    z = x + y
    return z * scale


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@traced
@functools.lru_cache(
    maxsize=None,
)
def decorated(n):
    return n + OFFSET


class Net:
    """A cell-like class: methods are parsed with their class indentation."""

    def construct(self, x):
        text = """
not indented"""
        y = x * 2  # ünïcode before nothing
        return y, text

    @staticmethod
    def helper(v):
        return v - 1


def make_closure(k):
    bias = [k]

    def inner(x):
        return x + bias[0] + k
    return inner


def file_line(fn, snippet: str) -> int:
    """The line of `fn`'s file holding `snippet` (searching from the function's first line)."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if snippet in line)


def test_plain_function():
    parsed = parse_function(plain)
    assert isinstance(parsed, ParsedFunction) and isinstance(parsed.node, gast.FunctionDef)
    assert parsed.node.name == "plain" and parsed.file == __file__
    assert parsed.first_line == plain.__code__.co_firstlineno == parsed.node.lineno
    assert parsed.globals is plain.__globals__ and parsed.closure == {}
    assert parsed.defaults == {"y": 2, "scale": 3.0}
    assert parsed.source == inspect.getsource(plain)
    assign = parsed.node.body[0]
    assert assign.lineno == file_line(plain, "z = x + y") and assign.col_offset == 4
    assert parsed.lines[assign.lineno - 1].strip() == "z = x + y"


def test_method_keeps_file_columns_and_string_literals():
    parsed = parse_function(Net.construct)
    assert parse_function(Net(). construct).node is parsed.node
    assert [a.id for a in parsed.node.args.args] == ["self", "x"]
    first, assign = parsed.node.body[0], parsed.node.body[1]
    assert first.value.value == "\nnot indented"  # not dedented: the literal is untouched
    assert (assign.lineno, assign.col_offset) == (file_line(Net.construct, "y = x * 2"), 8)
    assert parsed.node.col_offset == 4 and parsed.source.startswith("def construct(self, x):")


def test_decorators_are_stripped_and_source_less_wrappers_unwrapped():
    cached = decorated.__wrapped__  # lru_cache's wrapper has no Python source: its function
    parsed = parse_function(cached)
    assert parsed.node.name == "decorated" and parsed.node.decorator_list == []
    assert parsed.node.lineno == file_line(cached, "def decorated")
    assert parsed.first_line == file_line(cached, "@traced")
    assert parsed.source.startswith("@traced\n")
    # NOTE: a wrapper written in Python is compiled itself: its body may change the call
    wrapper = parse_function(decorated).node
    assert wrapper.name == "wrapper" and wrapper.decorator_list == []
    for helper in (Net.helper, Net.__dict__["helper"], Net().helper):
        node = parse_function(helper).node
        assert node.name == "helper" and node.decorator_list == []


def test_closure_values_and_empty_cells():
    parsed = parse_function(make_closure(5))
    assert parsed.closure == {"bias": [5], "k": 5}

    def outer():
        def uses_later(x):
            return x + later
        snapshot = parse_function(uses_later).closure
        later = 1
        return snapshot, later
    assert outer()[0] == {}


def test_parses_are_cached_by_code_object(monkeypatch):
    first = parse_function(make_closure(1))

    def no_reading(*args):
        raise AssertionError("source read again")
    monkeypatch.setattr(source_module.inspect, "getsourcelines", no_reading)
    again = parse_function(make_closure(2))  # same code object, new closure
    assert again.node is first.node and again.closure == {"bias": [2], "k": 2}


def test_lambdas_defined_outside_are_read_from_their_file():
    made = (lambda x: x + 1, lambda x: (lambda y: y * x))
    plus, times = parse_function(made[0]).node, parse_function(made[1](2)).node
    assert isinstance(plus.body[0], gast.Return) and isinstance(plus.body[0].value.op, gast.Add)
    assert isinstance(times.body[0].value.op, gast.Mult)
    assert plus.args.args[0].id == "x" and times.args.args[0].id == "y"


@pytest.mark.parametrize("fn, words", [
    (eval("lambda x: x + 1"), ["lambda", "cannot"]),
    (len, ["len", "not a Python function"]),
    (math.sqrt, ["sqrt", "built-in"]),
    (np.add, ["not a Python function"]),
])
def test_callables_without_source(fn, words):
    with pytest.raises(CompileError) as info:
        parse_function(fn)
    for word in words:
        assert word in str(info.value)
    assert ".py file" in info.value.hint


def test_function_from_python_dash_c_has_no_source():
    program = textwrap.dedent("""\
        from amber.frontend.source import parse_function
        from amber.frontend.errors import CompileError
        def typed_in(x):
            return x
        try:
            parse_function(typed_in)
        except CompileError as exc:
            print(exc)
        """)
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert "typed_in" in run.stdout and "source code is not available" in run.stdout
    assert "define the function with def in a .py file" in run.stdout


def test_async_def_is_rejected():
    async def fetch(x):
        return x
    with pytest.raises(CompileError, match="only functions defined with `def`"):
        parse_function(fetch)


def test_error_at_points_at_the_node():
    parsed = parse_function(Net.construct)
    binop = parsed.node.body[1].value
    err = error_at(parsed, binop, "bad multiply", hint="use np.multiply")
    line = file_line(Net.construct, "y = x * 2")
    assert (err.file, err.line, err.col) == (__file__, line, 12)
    assert err.source_line == parsed.lines[line - 1]
    rendered = str(err).splitlines()
    assert rendered[0] == f"{__file__}:{line}:13: bad multiply"
    assert rendered[1:] == ["    y = x * 2  # ünïcode before nothing", "        ^",
                            "hint: use np.multiply"]


def test_error_at_counts_characters_not_bytes():
    text = "    s = 'ü' + bad\n"
    node = gast.parse(text.strip()).body[0].value.right
    node.lineno, node.col_offset = 1, 4 + text.strip().encode().index(b"bad")
    parsed = ParsedFunction(node=None, file="f.py", first_line=1, lines=[text], source=text,
                            globals={}, closure={}, defaults={})
    assert error_at(parsed, node, "m").col == text.index("bad")


def edited_after_import(x):
    return x


def test_source_that_no_longer_parses(monkeypatch):
    monkeypatch.setattr(source_module, "_source_lines",
                        lambda fn: (["def edited_after_import(x:\n"], 7))
    monkeypatch.setattr(source_module, "_CACHE", {})
    with pytest.raises(CompileError, match="does not parse") as info:
        parse_function(edited_after_import)
    assert info.value.line == 7 and "reload" in info.value.hint
