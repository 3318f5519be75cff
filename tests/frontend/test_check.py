"""check_supported: each construct outside the subset is a CompileError at its line and column,
with a hint; supported Python passes."""
from __future__ import annotations

import inspect

import gast
import pytest

from amber.frontend.check import check_supported
from amber.frontend.errors import CompileError
from amber.frontend.source import ParsedFunction, parse_function

# The functions below are never called: they only have to parse. `# <-` marks the bad line.
# ruff: noqa


def uses_yield(x):
    yield x  # <-


def uses_yield_from(xs):
    yield from xs  # <-


def uses_global(x):
    def helper():  # NOTE: `global` in the compiled function itself compiles (effects.py)
        global COUNTER  # <-
    return x


def make_nonlocal():
    total = 0

    def uses_nonlocal(x):
        nonlocal total  # <-
        return x
    return uses_nonlocal


def returns_in_finally(x):
    try:
        y = x
    finally:
        return 0  # <-


def uses_async_def(x):
    async def helper():  # <-
        return x
    return x


def uses_match(x):
    match x:  # <-
        case 1:
            return 1
    return 0


def uses_walrus(xs):
    i = 0
    while (i := i + 1) < len(xs):  # <-
        pass  # (a walrus in an if test or a while without else compiles)
    else:
        i = 0
    return i


def uses_setcomp(xs):
    return {x for x in xs}  # <-


def uses_class(x):
    class Box:  # <-
        pass
    return x


def uses_import(x):
    import math  # <-
    return math.sqrt(x)


def uses_from_import(x):
    from math import sqrt  # <-
    return sqrt(x)


def uses_reserved_name(x):
    __amber_brk0 = x  # <-
    return __amber_brk0


CASES = [
    (uses_yield, "yield", "`yield`"), (uses_yield_from, "yield from", "`yield from`"),
    (uses_global, "global", "`global`"), (make_nonlocal(), "nonlocal", "`nonlocal`"),
    (returns_in_finally, "return", "in a finally block"),
    (uses_async_def, "async", "`async def`"), (uses_match, "match", "`match`"),
    (uses_walrus, "i :=", "walrus"), (uses_setcomp, "{x for", "set comprehension"),
    (uses_class, "class", "class definition"),
    (uses_import, "import", "`import`"), (uses_from_import, "from", "`from ... import`"),
    (uses_reserved_name, "__amber_brk0", "reserved"),
]


def marked(fn, snippet: str) -> tuple[int, int]:
    """File line and column of `snippet` on the `# <-` line of `fn`."""
    lines, first = inspect.getsourcelines(fn)
    index = next(i for i, line in enumerate(lines) if line.rstrip().endswith("# <-"))
    return first + index, lines[index].index(snippet)


@pytest.mark.parametrize("fn, snippet, words", CASES, ids=[c[0].__name__ for c in CASES])
def test_rejected_construct(fn, snippet, words):
    with pytest.raises(CompileError) as info:
        check_supported(parse_function(fn))
    err = info.value
    assert (err.line, err.col) == marked(fn, snippet)
    assert words in err.message and fn.__name__ in err.message
    assert err.hint and "\n" not in err.hint and err.file == __file__
    caret_line = str(err).splitlines()[2]
    assert len(caret_line) - 4 == len(err.source_line.rstrip()[:err.col].lstrip()) + 1


def test_finally_jump_message_says_what_to_do():
    with pytest.raises(CompileError) as info:
        check_supported(parse_function(returns_in_finally))
    assert str(info.value).endswith("hint: set a variable in the finally block and act on it "
                                    "after the try statement")


def two_problems(x):
    if x:
        y = {v for v in x}
    import os
    return y, os


def test_first_problem_in_source_order_is_reported():
    with pytest.raises(CompileError, match="set comprehension"):
        check_supported(parse_function(two_problems))


def from_text(text: str) -> ParsedFunction:
    """A ParsedFunction straight from text (for code CPython itself would refuse to compile)."""
    lines = text.splitlines(True)
    return ParsedFunction(node=gast.parse(text).body[0], file="t.py", first_line=1, lines=lines,
                          source=text, globals={}, closure={}, defaults={})


@pytest.mark.parametrize("text, snippet, words", [
    ("def f(x):\n    *a = x\n", "*a", "must be in a tuple"),
    ("def f(x):\n    a, *b, *c = x\n", "*c", "one starred"),
    ("def f(x):\n    for (*a,), *b, *c in x: pass\n", "*c", "one starred"),
])
def test_bad_starred_targets(text, snippet, words):
    with pytest.raises(CompileError, match=words) as info:
        check_supported(from_text(text))
    assert (info.value.line, info.value.col) == (2, text.splitlines()[1].index(snippet))


def supported(xs, n, flag=True):
    """Everything here is inside the subset."""
    first, *rest = xs
    squares = [x * x for x in xs if x > 0]
    pairs = [(i, j) for i in range(n) for j in range(i)]
    total: int = 0
    for i, (a, b) in enumerate(zip(xs, rest)):
        if a > b:
            total += a
        elif a < b:
            continue
        else:
            break
    while n > 0 and flag:
        n -= 1
    label = "pos" if total > 0 else "neg"
    print(f"total={total!r:>4}", label)
    assert n >= 0, f"n went negative: {n}"
    if not xs:
        raise ValueError(f"empty input {xs}")
    return first, squares, pairs, total, (*rest, n)


def test_supported_subset_passes():
    check_supported(parse_function(supported))
