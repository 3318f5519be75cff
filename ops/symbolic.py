"""Symbolic sizes: a dimension known only at run time, named once at the function's entry (`N`)
and carried through shape rules as an affine expression with integer floor division, which is
what reshapes, concatenation and convolution/pooling output sizes need (`N//2-2`, `3*N`).

A `Sym` is a canonical, hashable value: equal expressions are equal objects, so shape rules
compare dims with `==` as they do ints. Two *different* expressions may still be equal at run
time (N and M may both be 5), so a rule never concludes from `a != b` that sizes differ. A `Sym`
is never a constant (arithmetic that cancels every symbol gives an int), has no truth value and
no order (`N > 1` is a run-time question), and cannot be multiplied by another `Sym`.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Mapping, Union

SYMBOL_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")
"""Symbol names are upper case (`N`, `B`, `SEQ`): never an op input, attribute or builtin."""


@dataclass(frozen=True, slots=True)
class FloorDiv:
    """The atom `num // den` of a `Sym`: `num` is not divisible through (see `floordiv`)."""
    num: Sym
    den: int

    def __str__(self) -> str:
        inner = str(self.num)
        simple = len(self.num.terms) == 1 and self.num.const == 0 and \
            isinstance(self.num.terms[0][0], str) and self.num.terms[0][1] == 1
        return f"{inner}//{self.den}" if simple else f"({inner})//{self.den}"


Atom = Union[str, FloorDiv]


def _atom_key(atom: Atom) -> tuple[int, str]:
    return (0, atom) if isinstance(atom, str) else (1, str(atom))


@dataclass(frozen=True, slots=True)
class Sym:
    """`const + sum(coef * atom)` over symbol names and floor divisions; build with `symbol`
    and arithmetic (`+ - *` by ints and Syms, `//` by positive ints), never directly."""
    terms: tuple[tuple[Atom, int], ...]
    const: int = 0

    def __str__(self) -> str:
        text = ""
        for atom, coef in self.terms:
            body = str(atom)
            # NOTE: Python reads `2*N//3` as `(2*N)//3` and a leading `-N//2` as `(-N)//2`
            if isinstance(atom, FloorDiv) and (abs(coef) != 1 or (coef < 0 and not text)):
                body = f"({body})"
            part = body if abs(coef) == 1 else f"{abs(coef)}*{body}"
            text += ("-" if coef < 0 else "+" if text else "") + part
        if self.const:
            text += f"{self.const:+d}"
        return text

    __repr__ = __str__  # NOTE: like an int's, the text is a Python expression (emit templates)

    def __bool__(self) -> bool:
        raise TypeError(f"the symbolic size {self} has no truth value while compiling")

    # -- arithmetic ------------------------------------------------------------------------
    def __add__(self, other: Any) -> Any:
        if isinstance(other, bool) or not isinstance(other, int | Sym):
            return NotImplemented
        if isinstance(other, int):
            return _make(dict(self.terms), self.const + other)
        terms = dict(self.terms)
        for atom, coef in other.terms:
            terms[atom] = terms.get(atom, 0) + coef
        return _make(terms, self.const + other.const)

    __radd__ = __add__

    def __neg__(self) -> Any:
        return _make({a: -c for a, c in self.terms}, -self.const)

    def __sub__(self, other: Any) -> Any:
        if isinstance(other, bool) or not isinstance(other, int | Sym):
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other: Any) -> Any:
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented
        return (-self) + other

    def __mul__(self, other: Any) -> Any:
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented  # NOTE: N*M is not affine; shape rules give "?" for it
        return _make({a: c * other for a, c in self.terms}, self.const * other)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Any:
        if isinstance(other, bool) or not isinstance(other, int) or other < 1:
            return NotImplemented
        return floordiv(self, other)


def _make(terms: Mapping[Atom, int], const: int) -> int | Sym:
    kept = tuple(sorted(((a, c) for a, c in terms.items() if c), key=lambda t: _atom_key(t[0])))
    return Sym(kept, const) if kept else const


def floordiv(e: int | Sym, k: int) -> int | Sym:
    """`e // k` in canonical form: multiples of `k` move out of the division, and a division
    of a division becomes one (`(N//2-1)//2` is `N//4-1`)."""
    assert isinstance(k, int) and k >= 1, f"floor division by {k!r}"
    if isinstance(e, int):
        return e // k
    if k == 1:
        return e
    outside: dict[Atom, int] = {}
    inside: dict[Atom, int] = {}
    for atom, coef in e.terms:
        q, r = divmod(coef, k)
        if q:
            outside[atom] = q
        if r:
            inside[atom] = r
    q, r = divmod(e.const, k)
    if not inside:  # NOTE: 0 <= r < k, so r // k is 0
        return _make(outside, q)
    if len(inside) == 1:
        (atom, coef), = inside.items()
        if isinstance(atom, FloorDiv) and coef == 1:  # (a//d + r)//k == (a + r*d)//(d*k)
            return _make(outside, q) + floordiv(atom.num + r * atom.den, atom.den * k)
    rest = _make(inside, r)
    assert isinstance(rest, Sym)
    return _make({**outside, FloorDiv(rest, k): 1}, q)


def symbol(name: str) -> Sym:
    """The size named `name` (upper case, e.g. `N`)."""
    if not isinstance(name, str) or not SYMBOL_NAME.match(name):
        raise ValueError(f"a symbolic size is named in upper case (N, B, SEQ), got {name!r}")
    return Sym(((name, 1),), 0)


def is_symbolic(d: Any) -> bool:
    return isinstance(d, Sym)


def free_symbols(value: Any) -> set[str]:
    """The symbol names in a dim, or in a tuple/list/dict/slice holding dims (attributes)."""
    found: set[str] = set()
    _collect(value, found)
    return found


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, Sym):
        for atom, _ in value.terms:
            if isinstance(atom, str):
                found.add(atom)
            else:
                _collect(atom.num, found)
    elif isinstance(value, tuple | list):
        for v in value:
            _collect(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, found)
    elif isinstance(value, slice):
        _collect((value.start, value.stop, value.step), found)


def holds_symbols(value: Any) -> bool:
    """True if an attribute value mentions a symbolic size anywhere."""
    if isinstance(value, Sym):
        return True
    if isinstance(value, tuple | list):
        return any(holds_symbols(v) for v in value)
    if isinstance(value, dict):
        return any(holds_symbols(v) for v in value.values())
    if isinstance(value, slice):
        return holds_symbols((value.start, value.stop, value.step))
    return False


def substitute(value: Any, sizes: Mapping[str, Any]) -> Any:
    """`value` with each symbol replaced by its size in `sizes` (ints give ints), through
    tuples, lists, dicts and slices; what `sizes` does not name stays symbolic."""
    if isinstance(value, Sym):
        total: Any = value.const
        for atom, coef in value.terms:
            if isinstance(atom, str):
                part = sizes.get(atom, symbol(atom))
            else:
                part = substitute(atom.num, sizes) // atom.den
            total = total + coef * part
        return total
    if isinstance(value, tuple):
        return tuple(substitute(v, sizes) for v in value)
    if isinstance(value, list):
        return [substitute(v, sizes) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, sizes) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(*(substitute(p, sizes) for p in (value.start, value.stop, value.step)))
    return value


def parse_sym(text: str) -> int | Sym:
    """A dim written as `str(sym)` writes it (`N`, `2*N+1`, `(N+1)//2-3`), in canonical form."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise ValueError(f"not a symbolic size: {text!r}") from None
    return _evaluate(tree, text)


def _evaluate(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return symbol(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, text)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult |
                                                  ast.FloorDiv):
        left, right = _evaluate(node.left, text), _evaluate(node.right, text)
        try:
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(right, int) and right >= 1:
                return floordiv(left, right)
        except TypeError:
            pass
    raise ValueError(f"not a symbolic size (affine in symbols, floor division by positive "
                     f"ints): {text!r}")
