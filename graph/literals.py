"""The tokens of the text IR and the parsing of its types and attribute values, shared by
`parser` (whole graphs) and `serialize` (which stores types as text). The grammar is in the
docstring of `parser`.
"""
from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ops import Dyn
from ..ops.symbolic import SYMBOL_NAME
from .types import (AnyType, ListType, NoneType, Scalar, StrType, Tensor, TupleType, Type,
                    dtype_from_short, dtype_short, parse_sym)

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<comment>\#[^\n]*)
  | (?P<value>%[A-Za-z0-9_.]+)
  | (?P<label>\^[A-Za-z0-9_.]+)
  | (?P<dyn>\$\d+)
  | (?P<string>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>\.\.\.|//|[()\[\]{},:=;<>@?\-+*])
""", re.VERBOSE)

_SCALAR_TYPES = {"int": Scalar(int), "float": Scalar(float), "bool": Scalar(bool),
                 "none": NoneType(), "str": StrType(), "any": AnyType()}
_CONSTANTS = {"True": True, "False": False, "None": None, "inf": float("inf"),
              "nan": float("nan")}


class IRParseError(Exception):
    """Malformed text IR; the message shows `line:col`, the line and a caret."""

    def __init__(self, message: str, line: int, col: int, source_line: str) -> None:
        self.line, self.col = line, col
        super().__init__(f"{line}:{col}: {message}\n  {source_line}\n  {' ' * (col - 1)}^")


@dataclass(frozen=True, slots=True)
class Tok:
    """One token: its kind (a group name of `_TOKEN`), text, offset and 1-based line."""
    kind: str
    text: str
    pos: int
    line: int


def parse_type(text: str) -> Type:
    """A type written as the printer writes it (`f32[2,?]`, `(int, none)`, `list[f32[3]]`)."""
    parser = TokenStream(text)
    result = parser.type()
    parser.expect_end()
    return result


def parse_attr(text: str) -> Any:
    """An attribute value written as the printer writes it."""
    parser = TokenStream(text)
    result = parser.attr()
    parser.expect_end()
    return result


def _is_dtype_name(name: str) -> bool:
    """True for the short dtype names (`f32`, `b1`), which are attribute values on their own."""
    try:
        dtype = dtype_from_short(name)
    except (TypeError, ValueError):
        return False
    return dtype_short(dtype) == name and name != dtype.name


class TokenStream:
    """Tokens of one text with look-ahead, expectation helpers and located errors."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[Tok] = []
        self.comments: dict[int, str] = {}
        self.i = 0
        self.tokenize()

    # -- tokens ---------------------------------------------------------------------------
    def tokenize(self) -> None:
        pos, line = 0, 1
        while pos < len(self.text):
            m = _TOKEN.match(self.text, pos)
            if m is None:
                self.fail(f"unexpected character {self.text[pos]!r}", pos)
            kind, text = m.lastgroup, m.group()
            if kind == "comment":
                self.comments[line] = text[1:].strip()
            elif kind != "ws":
                self.tokens.append(Tok(kind, text, pos, line))
            line += text.count("\n")
            pos = m.end()
        self.tokens.append(Tok("end", "", len(self.text), line))

    def fail(self, message: str, pos: int | None = None) -> None:
        pos = self.peek().pos if pos is None else pos
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos)
        line_text = self.text[start:end if end >= 0 else len(self.text)]
        raise IRParseError(message, self.text.count("\n", 0, pos) + 1, pos - start + 1, line_text)

    def peek(self, ahead: int = 0) -> Tok:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def next(self) -> Tok:
        tok = self.peek()
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.text == text and tok.kind in ("punct", "ident")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.next()
            return True
        return False

    def expect(self, text: str) -> Tok:
        if not self.at(text):
            self.fail(f"expected {text!r}, found {self.describe(self.peek())}")
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Tok:
        if self.peek().kind != kind:
            self.fail(f"expected {what}, found {self.describe(self.peek())}")
        return self.next()

    def expect_end(self) -> None:
        if self.peek().kind != "end":
            self.fail(f"expected end of input, found {self.describe(self.peek())}")

    @staticmethod
    def describe(tok: Tok) -> str:
        return "end of input" if tok.kind == "end" else repr(tok.text)

    # -- types ----------------------------------------------------------------------------
    def type(self) -> Type:
        tok = self.peek()
        if self.accept("("):
            return self.tuple_type()
        if tok.kind != "ident":
            self.fail(f"expected a type, found {self.describe(tok)}")
        self.next()
        if tok.text == "list" and self.accept("["):
            element = self.type()
            self.expect("]")
            return ListType(element)
        if tok.text in _SCALAR_TYPES:
            return _SCALAR_TYPES[tok.text]
        if not self.at("["):
            self.fail(f"unknown type {tok.text!r}", tok.pos)
        dtype = self.dtype(tok)
        self.expect("[")
        dims: list[Any] = []
        while not self.accept("]"):
            dim = self.peek()
            if dim.kind == "number" and dim.text.isdigit() and self.peek(1).text in (",", "]"):
                dims.append(int(self.next().text))
            elif dim.text == "?":
                dims.append(self.next().text)
            else:
                dims.append(self.symbolic(dim, (",", "]")))
            if not self.accept(","):
                self.expect("]")
                break
        return Tensor(tuple(dims), dtype)

    def symbolic(self, first: Tok, stops: tuple[str, ...]) -> Any:
        """A symbolic size (`N`, `N//2-2`, `(N+1)//2`): the tokens up to one of `stops` outside
        parentheses."""
        depth, parts = 0, []
        while True:
            tok = self.peek()
            if tok.kind == "end" or depth == 0 and tok.text in stops:
                break
            if tok.kind not in ("ident", "number", "punct") or \
                    tok.kind == "punct" and tok.text not in "()+-*//":
                self.fail("expected a dimension (an integer, '?' or a symbolic size)", tok.pos)
            depth += {"(": 1, ")": -1}.get(tok.text, 0)
            if depth < 0:
                break
            parts.append(self.next().text)
        try:
            return parse_sym(" ".join(parts))
        except ValueError as exc:
            self.fail(f"expected a dimension (an integer, '?' or a symbolic size): {exc}",
                      first.pos)

    def tuple_type(self) -> TupleType:
        elements: list[Type] = []
        while not self.accept(")"):
            elements.append(self.type())
            if not self.accept(","):
                if len(elements) == 1:
                    self.fail("a 1-tuple type is written (t,)")
                self.expect(")")
                break
        return TupleType(tuple(elements))

    def dtype(self, tok: Tok) -> np.dtype:
        try:
            return dtype_from_short(tok.text)
        except (TypeError, ValueError):
            self.fail(f"unknown dtype {tok.text!r}", tok.pos)

    # -- attribute values -----------------------------------------------------------------
    def attr(self) -> Any:
        tok = self.peek()
        if tok.kind in ("number", "string", "dyn") or tok.text in ("-", "...", "(", "[", "{"):
            return self.literal()
        if tok.kind != "ident":
            self.fail(f"expected an attribute value, found {self.describe(tok)}")
        follow = self.peek(1).text
        if tok.text in _CONSTANTS:
            return _CONSTANTS[self.next().text]
        if tok.text == "slice" and follow == "(":
            self.next()
            self.expect("(")
            start = self.attr()
            self.expect(",")
            stop = self.attr()
            self.expect(",")
            step = self.attr()
            self.expect(")")
            return slice(start, stop, step)
        if tok.text == "dtype" and follow == "(":
            self.next()
            self.expect("(")
            tok = self.expect_kind("string", "a dtype string")
            self.expect(")")
            try:
                return np.dtype(ast.literal_eval(tok.text))
            except TypeError:
                self.fail(f"unknown dtype {tok.text}", tok.pos)
        if tok.text == "array" and follow == "<":
            return self.array()
        if tok.text == "sym" and follow == "<":
            self.next()
            self.expect("<")
            value = self.symbolic(tok, (">",))
            self.expect(">")
            return value
        if SYMBOL_NAME.match(tok.text):
            return self.symbolic(tok, (",", ")", "]", "}", ":"))
        if _is_dtype_name(tok.text):
            dtype = self.dtype(self.next())
            if not self.accept("("):
                return dtype
            item = self.item()
            self.expect(")")
            return self.to_array([item], dtype, tok)[0]
        return self.type_object(self.next())

    def literal(self) -> Any:
        tok = self.next()
        if tok.kind == "number":
            return int(tok.text) if tok.text.isdigit() else float(tok.text)
        if tok.kind == "string":
            return ast.literal_eval(tok.text)
        if tok.kind == "dyn":
            return Dyn(int(tok.text[1:]))
        if tok.text == "-":
            value = self.attr()
            if not isinstance(value, int | float) or isinstance(value, bool):
                self.fail("'-' must precede a number", tok.pos)
            return -value
        if tok.text == "...":
            return Ellipsis
        if tok.text == "(":
            return self.sequence(")", tuple, tok)
        if tok.text == "[":
            return self.sequence("]", list, tok)
        return self.dict()

    def sequence(self, close: str, kind: type, opening: Tok) -> tuple | list:
        items: list[Any] = []
        trailing = False
        while not self.accept(close):
            items.append(self.attr())
            trailing = self.accept(",")
            if not trailing:
                self.expect(close)
                break
        if kind is tuple and len(items) == 1 and not trailing:
            self.fail("a 1-tuple is written (x,)", opening.pos)
        return kind(items)

    def dict(self) -> dict:
        result: dict = {}
        while not self.accept("}"):
            tok = self.peek()
            key = self.attr()
            self.expect(":")
            try:
                result[key] = self.attr()
            except TypeError:
                self.fail("a dict key must be hashable", tok.pos)
            if not self.accept(","):
                self.expect("}")
                break
        return result

    def array(self) -> np.ndarray:
        tok = self.next()
        self.expect("<")
        kind = self.type()
        self.expect(">")
        if not isinstance(kind, Tensor) or not kind.is_static:
            self.fail("an array constant needs a tensor type of static shape", tok.pos)
        self.expect("[")
        items: list[Any] = []
        while not self.accept("]"):
            items.append(self.item())
            if not self.accept(","):
                self.expect("]")
                break
        if len(items) != int(np.prod(kind.shape)):
            self.fail(f"array<{kind}> needs {int(np.prod(kind.shape))} items, got {len(items)}",
                      tok.pos)
        return self.to_array(items, kind.dtype, tok).reshape(kind.shape)

    def item(self) -> bool | int | float:
        tok = self.peek()
        value = self.attr()
        if not isinstance(value, bool | int | float):
            self.fail("expected a number or True/False as an array item", tok.pos)
        return value

    def to_array(self, items: list[Any], dtype: np.dtype, tok: Tok) -> np.ndarray:
        """Items as an array of `dtype`, converted exactly as `printer.format_float` checked."""
        try:
            if dtype.kind == "f":  # NOTE: via float64, the conversion the printer verifies
                return np.array(items, dtype=np.float64).astype(dtype)
            return np.array(items, dtype=dtype)
        except (OverflowError, ValueError, TypeError) as exc:
            self.fail(f"items do not fit {dtype_short(dtype)}: {exc}", tok.pos)

    def type_object(self, tok: Tok) -> type:
        if tok.text.startswith("np."):
            obj = getattr(np, tok.text[3:], None)
        else:
            obj = getattr(builtins, tok.text, None)
        if not isinstance(obj, type):
            self.fail(f"expected an attribute value, found {tok.text!r}", tok.pos)
        return obj
