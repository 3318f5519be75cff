"""Symbolic sizes (`ops/symbolic.py`): arithmetic agrees with Python's integer arithmetic for
every value of the symbols, the canonical form prints as a Python expression that parses back
to the same object, and shape helpers over dims treat symbols soundly."""
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.ops.symbolic import (FloorDiv, Sym, floordiv, free_symbols, holds_symbols, parse_sym,
                                substitute, symbol)
from amber.ops.types import (UNKNOWN, Tensor, broadcast_shapes, dim_add, dim_divide,
                             dim_floordiv, dim_mul, join_types)

EXAMPLES = int(os.environ.get("AMBER_HYPOTHESIS_EXAMPLES", "300"))
N, M = symbol("N"), symbol("M")


def _expressions() -> st.SearchStrategy:
    """Random dims built the way shape rules build them, with the Python function computing
    the same value from the symbols' values."""
    leaves = st.one_of(
        st.sampled_from([("N", lambda v: v["N"]), ("M", lambda v: v["M"])]),
        st.integers(-6, 6).map(lambda k: (k, lambda v, k=k: k)))

    def combine(children: st.SearchStrategy) -> st.SearchStrategy:
        def build(a, b, op, k):
            (ea, fa), (eb, fb) = a, b
            ea = symbol(ea) if isinstance(ea, str) else ea
            eb = symbol(eb) if isinstance(eb, str) else eb
            if op == "+":
                return ea + eb, lambda v: fa(v) + fb(v)
            if op == "-":
                return ea - eb, lambda v: fa(v) - fb(v)
            if op == "*":
                return ea * k, lambda v: fa(v) * k
            return floordiv(ea, abs(k) + 1), lambda v: fa(v) // (abs(k) + 1)
        return st.builds(build, children, children, st.sampled_from("+-*/"), st.integers(-3, 3))
    return st.recursive(leaves, combine, max_leaves=6).map(
        lambda e: (symbol(e[0]) if isinstance(e[0], str) else e[0], e[1]))


@settings(max_examples=EXAMPLES, deadline=None)
@given(_expressions(), st.integers(0, 40), st.integers(0, 40))
def test_arithmetic_matches_python_and_text_round_trips(expr, n, m):
    dim, python = expr
    values = {"N": n, "M": m}
    assert substitute(dim, values) == python(values)
    if isinstance(dim, Sym):
        assert parse_sym(str(dim)) == dim
        assert eval(str(dim), {}, values) == python(values)  # the text is Python


def test_canonical_forms():
    assert N + 1 - 1 == N and N - N == 0 and isinstance(N - N, int)
    assert (N - 4) // 2 + 1 == N // 2 - 1            # a 5x5 valid conv, then 2x2 pooling
    assert ((N - 4) // 2 - 4) // 2 == N // 4 - 3      # floor division of a floor division
    assert (4 * N + 2) // 2 == 2 * N + 1 and (400 * N) // 400 == N
    assert str((N + 1) // 2) == "(N+1)//2" and str(2 * (N // 3)) == "2*(N//3)"
    assert str(-(N // 2)) == "-(N//2)" and str(M - N // 2) == "M-N//2"
    assert isinstance(((N + 1) // 2).terms[0][0], FloorDiv)
    assert free_symbols((N // 2 + M, 3, [N])) == {"N", "M"}
    assert holds_symbols({"s": (1, slice(None, N))}) and not holds_symbols((1, 2))


def test_symbols_refuse_what_compiling_cannot_know():
    with pytest.raises(TypeError, match="no truth value"):
        bool(N)
    with pytest.raises(TypeError):
        N * M
    with pytest.raises(TypeError):
        N < 3
    with pytest.raises(TypeError):
        N // 0
    with pytest.raises(ValueError, match="upper case"):
        symbol("n")
    with pytest.raises(ValueError, match="not a symbolic size"):
        parse_sym("N*M")


def test_dim_helpers():
    assert dim_add(N, 3, N) == 2 * N + 3 and dim_add(N, UNKNOWN) == UNKNOWN
    assert dim_mul(N, 4, 5) == 20 * N and dim_mul(N, M) == UNKNOWN and dim_mul() == 1
    assert dim_floordiv(N + 1, 2) == (N + 1) // 2 and dim_floordiv(UNKNOWN, 2) == UNKNOWN
    assert dim_divide(400 * N, N) == 400 and dim_divide(400 * N, 400) == N
    assert dim_divide(12 * N, 5) is None and dim_divide(12, N) is None
    assert dim_divide(6 * N, 2 * N) == 3 and dim_divide(N + 1, N) is None


def test_shapes_with_symbols():
    assert Tensor(("N", "N//2-2"), "f4").shape == (N, N // 2 - 2)
    assert broadcast_shapes((N, 1), (1, 4)) == (N, 4)
    assert broadcast_shapes((N,), (M,)) == (UNKNOWN,)   # N == M, or one of them is 1
    assert broadcast_shapes((N,), (N,)) == (N,) and broadcast_shapes((N,), (3,)) == (3,)
    joined = join_types([Tensor((N, 4), "f4"), Tensor((M, 4), "f4")])
    assert joined == Tensor(("?", 4), "f4")
    assert Tensor((N, 4), "f4").is_symbolic and not Tensor(("?", 4), "f4").is_symbolic
