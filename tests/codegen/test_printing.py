"""Printing generated code with the standard library (`ast.unparse`, no astor): the text parses
back to the same tree, boolean operators print without needless parentheses, and long lines are
wrapped after commas inside brackets, never inside strings."""
from __future__ import annotations

import ast
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.codegen.pyast import MAX_COLUMNS, to_source, wrap_lines


@pytest.mark.parametrize("source, printed", [
    ("a and not b", "a and not b"),
    ("a and b and not c", "a and b and not c"),
    ("a and (b or c)", "a and (b or c)"),
    ("a or b and c", "a or b and c"),
    ("a and (not b or c)", "a and (not b or c)"),
    ("(a or b) and not (c or d)", "(a or b) and not (c or d)"),
    ("not (a and b)", "not (a and b)"),
    ("f(a and b, not c)", "f(a and b, not c)"),
    ("(not a) + 1", "(not a) + 1"),
    ("return a, b", "return a, b"),
    ("x = a, (b, c)", "x = a, (b, c)"),
    ("return ()", "return ()"),
    ("x = (yield a, b)", "x = (yield (a, b))"),
    ("x = yield a", "x = (yield a)"),
    ("x, y = f(a, b), (lambda: 1)", "x, y = f(a, b), lambda: 1"),
    ("x = (y := 1), 2", "x = (y := 1), 2"),
])
def test_operators_and_tuples_print_as_written(source: str, printed: str) -> None:
    assert to_source(ast.parse(source)).strip() == printed


_NAMES = st.sampled_from(["a", "b", "c", "x1"])


def _expressions() -> st.SearchStrategy[str]:
    def combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.builds(lambda a, op, b: f"({a} {op} {b})", inner,
                      st.sampled_from(["and", "or", "+", "-", "*", "**", "<", "==", "@"]), inner),
            st.builds(lambda op, a: f"({op}{a})", st.sampled_from(["not ", "-", "~"]), inner),
            st.builds(lambda a, b, c: f"({a} if {b} else {c})", inner, inner, inner),
            st.builds(lambda f, args: f"{f}({', '.join(args)})", _NAMES,
                      st.lists(inner, max_size=3)))
    return st.recursive(st.one_of(_NAMES, st.integers(0, 9).map(str)), combine, max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(_expressions())
def test_printed_code_parses_back_to_the_same_tree(source: str) -> None:
    tree = ast.parse(source)
    assert ast.dump(ast.parse(to_source(tree))) == ast.dump(tree)


def test_long_lines_wrap_after_commas_inside_brackets() -> None:
    args = ", ".join(f"argument_{k}" for k in range(20))
    source = f"def f({args}):\n    return g({args}, 'a, b, c')\n"
    wrapped = wrap_lines(source)
    assert ast.dump(ast.parse(wrapped)) == ast.dump(ast.parse(source))
    assert max(len(line) for line in wrapped.splitlines()) <= MAX_COLUMNS
    assert "'a, b, c'" in wrapped and len(wrapped.splitlines()) > 2
    assert all(line.startswith("    ") for line in wrapped.splitlines()[1:])


def test_a_line_without_a_place_to_break_stays_whole() -> None:
    source = f"x = {'y' * 120!r}\nz = 1\n"
    assert wrap_lines(source) == source


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(string.ascii_letters + ", ()[]{}'", max_size=30), min_size=1,
                max_size=12), st.integers(0, 3))
def test_wrapping_keeps_strings_and_meaning(items: list[str], depth: int) -> None:
    call = "f(" * depth + ", ".join(repr(s) for s in items) + ")" * depth
    source = f"value = [{call}, {call}]\n"
    wrapped = wrap_lines(source)
    assert ast.dump(ast.parse(wrapped)) == ast.dump(ast.parse(source))


def test_a_long_condition_breaks_next_to_a_keyword() -> None:
    source = ("while (index_of_the_range < 0 if the_step_of_the_range > 0 else "
              "index_of_the_range > 0) and not broken_out:\n    pass\n")
    wrapped = wrap_lines(source)
    assert ast.dump(ast.parse(wrapped)) == ast.dump(ast.parse(source))
    first, second = wrapped.splitlines()[:2]
    assert first.endswith(" else") and second.strip().startswith("index_of_the_range > 0)")
