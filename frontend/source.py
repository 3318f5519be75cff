"""Python function object -> gast `FunctionDef` located in the user's file, plus `error_at`.

Parses are cached per code object, so compiling the same function again never re-reads its file.
"""
from __future__ import annotations

import inspect
import linecache
import types
from dataclasses import dataclass
from typing import Any, Callable

import gast

from ..common.parsing import PARSE_LOCK
from .errors import CompileError

NO_SOURCE_HINT = ("define the function with def in a .py file (functions typed into `python -c`, "
                  "exec or a plain REPL have no source)")


class SourceText(str):
    """A function's dedented source text that remembers where it was read (`file`, 1-based
    `first_line`), so the disk cache can record every inlined function by its location, even one
    that contributes no node of its own (a container's `construct`)."""
    file: str
    first_line: int

    def __new__(cls, text: str, file: str, first_line: int) -> SourceText:
        obj = super().__new__(cls, text)
        obj.file, obj.first_line = file, first_line
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (SourceText, (str(self), self.file, self.first_line))


@dataclass(frozen=True)
class ParsedFunction:
    """A function's AST and everything needed to resolve its names and report errors.

    NOTE: `node` is shared by every parse of the same code object: treat it as read-only
    (`canonicalize` deep-copies it).
    """

    node: gast.FunctionDef          # decorators stripped; line/col are those of `file`
    file: str                       # the file the function was defined in
    first_line: int                 # file line (1-based) of the first line of `source`
    lines: list[str]                # all lines of `file`, for error carets
    source: SourceText              # the function's own dedented source text (cache keys)
    globals: dict[str, Any]         # fn.__globals__
    closure: dict[str, Any]         # free variable name -> cell contents (empty cells left out)
    defaults: dict[str, Any]        # parameter name -> default value (positional and kw-only)


@dataclass(frozen=True)
class _Source:
    """The code-object-dependent part of a parse: what the cache keeps."""

    node: gast.FunctionDef
    file: str
    first_line: int
    lines: list[str]
    source: SourceText


_CACHE: dict[tuple[str, types.CodeType], _Source] = {}


def parse_function(fn: Callable[..., Any]) -> ParsedFunction:
    """Parse a Python function (plain, method, decorated or closure) into a `ParsedFunction`."""
    func = _python_function(fn)
    code = func.__code__
    # NOTE: equal code objects from different files compare equal, so the file is in the key.
    key = (code.co_filename, code)
    cached = _CACHE.get(key)
    if cached is None:
        cached = _CACHE[key] = _read_source(func)
    return ParsedFunction(
        node=cached.node, file=cached.file, first_line=cached.first_line, lines=cached.lines,
        source=cached.source, globals=func.__globals__, closure=_closure(func),
        defaults=_defaults(func))


def error_at(parsed: ParsedFunction, node: gast.AST, message: str, hint: str = "") -> CompileError:
    """A `CompileError` at `node` of `parsed`: file, line, column and the source line."""
    line = getattr(node, "lineno", None) or parsed.first_line
    text = parsed.lines[line - 1] if 0 < line <= len(parsed.lines) else ""
    return CompileError(message, file=parsed.file, line=line,
                        col=_char_column(text, getattr(node, "col_offset", 0) or 0),
                        source_line=text, hint=hint)


def _char_column(text: str, byte_col: int) -> int:
    """AST columns count UTF-8 bytes; carets need characters."""
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _python_function(fn: Any) -> types.FunctionType:
    """Unwrap bound methods, static/class methods and wrappers without Python source of their
    own (`functools.lru_cache`, amber's jit objects) down to a def'd function. A wrapper
    written in Python (`functools.wraps`) is that function: its body may change the call."""
    func = _peel(fn)
    while isinstance(func, (types.MethodType, staticmethod, classmethod)):
        func = _peel(func.__func__)
    name = getattr(func, "__qualname__", None) or repr(func)
    if not isinstance(func, types.FunctionType):
        raise CompileError(f"cannot compile {name}: it is not a Python function (built-in and C "
                           "functions have no source)", hint=NO_SOURCE_HINT)
    return func


def _peel(fn: Any) -> Any:
    """`fn` without the wrappers (`__wrapped__`) that are not Python functions themselves."""
    while not isinstance(fn, types.FunctionType) and getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
    return fn


def _read_source(func: types.FunctionType) -> _Source:
    """Read, parse and relocate the source of `func`; raises CompileError when it is missing."""
    code = func.__code__
    if func.__name__ == "<lambda>":
        return _read_lambda(func)
    try:
        block, first_line = _source_lines(func)
    except (OSError, TypeError) as exc:
        raise CompileError(f"cannot compile {func.__qualname__}: its source code is not available"
                           f" ({code.co_filename} cannot be read)", file=code.co_filename,
                           line=code.co_firstlineno, hint=NO_SOURCE_HINT) from exc
    try:
        node = _parse_block("".join(block), first_line)
    except SyntaxError as exc:  # the file changed since import, or inspect cut a bad block
        raise CompileError(f"cannot compile {func.__qualname__}: its source does not parse "
                           f"({exc.msg})", file=code.co_filename, line=first_line,
                           hint="reload the module after editing its file") from exc
    if not isinstance(node, gast.FunctionDef):
        raise CompileError(f"cannot compile {func.__qualname__}: only functions defined with "
                           "`def` can be compiled", file=code.co_filename, line=first_line,
                           source_line=block[0], hint="write it as a plain (not async) def")
    node.decorator_list = []
    lines = linecache.getlines(code.co_filename, func.__globals__) or block
    return _Source(node=node, file=code.co_filename, first_line=first_line, lines=lines,
                   source=SourceText(_dedent(block), code.co_filename, first_line))


def _read_lambda(func: types.FunctionType) -> _Source:
    """A lambda defined outside compiled code (passed in, or a global) as `def <lambda>(args):
    return body`: found in its file's syntax tree by the lines and columns its code spans."""
    code = func.__code__
    lines = linecache.getlines(code.co_filename, func.__globals__)
    found = _lambda_in(lines, code) if lines else None
    if found is None:
        raise CompileError("cannot compile a lambda: its source cannot be told apart (several "
                           "lambdas on one line, or no readable file)", file=code.co_filename,
                           line=code.co_firstlineno, hint=NO_SOURCE_HINT)
    body = gast.Return(value=found.body)
    node = gast.FunctionDef(name="<lambda>", args=found.args, body=[body], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    for n in (node, body):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            setattr(n, attr, getattr(found, attr, None))
    text = "".join(lines[found.lineno - 1:found.end_lineno])
    return _Source(node=node, file=code.co_filename, first_line=found.lineno, lines=lines,
                   source=SourceText(text, code.co_filename, found.lineno))


def _lambda_in(lines: list[str], code: types.CodeType) -> gast.Lambda | None:
    """The lambda of the file starting on `code`'s first line whose body spans every position
    `code`'s instructions have: the innermost one (a lambda inside another's body is within
    both); None if there is none or two equally deep."""
    try:
        with PARSE_LOCK:
            tree = gast.parse("".join(lines))
    except SyntaxError:
        return None
    spots = [(line, col) for line, _, col, end in code.co_positions()
             if line is not None and col is not None and (col, end) != (0, 0)]
    found = [n for n in gast.walk(tree) if isinstance(n, gast.Lambda)
             and n.lineno == code.co_firstlineno and all(
                 (n.body.lineno, n.body.col_offset) <= spot
                 <= (n.body.end_lineno, n.body.end_col_offset) for spot in spots)]
    spans = sorted(((n.body.end_lineno - n.body.lineno, n.body.end_col_offset - n.body.col_offset),
                    k) for k, n in enumerate(found))
    if not spans or len(spans) > 1 and spans[0][0] == spans[1][0]:
        return None
    return found[spans[0][1]]


def _source_lines(func: types.FunctionType) -> tuple[list[str], int]:
    """The lines of `func`'s def and its first line number: from the file's cached lines up to
    the last line its code spans (the code object knows), which is many times cheaper than
    `inspect.getsourcelines` tokenizing the file. Falls back to inspect when unsure."""
    code = func.__code__
    lines = linecache.getlines(code.co_filename, func.__globals__)
    first = code.co_firstlineno
    if not hasattr(code, "co_positions") or not 0 < first <= len(lines) \
            or not lines[first - 1].lstrip().startswith(("def ", "@")):  # NOTE: Python 3.10
        with PARSE_LOCK:  # NOTE: inspect parses the file when a class is involved
            return inspect.getsourcelines(func)
    return lines[first - 1:max(_last_line(code), first)], first


def _last_line(code: types.CodeType) -> int:
    """The last source line any instruction of `code` (or of a function nested in it) spans."""
    ends = [end for _, end, _, _ in code.co_positions() if end is not None]
    nested = [_last_line(c) for c in code.co_consts if isinstance(c, types.CodeType)]
    return max(ends + nested, default=code.co_firstlineno)


def _dedent(block: list[str]) -> str:
    """Remove the def's own indentation (`textwrap.dedent` gives up when a multi-line string
    literal is less indented than the def)."""
    indent = block[0][:len(block[0]) - len(block[0].lstrip())]
    return "".join(line[len(indent):] if line.startswith(indent) else line for line in block)


def _parse_block(text: str, first_line: int) -> gast.AST:
    """Parse the source block of one def; line numbers and columns end up those of the file."""
    # NOTE: an indented def (a method) is parsed under `if 1:` instead of dedenting it, which
    # keeps columns exact and leaves multi-line string literals untouched.
    indented = text[:1].isspace()
    with PARSE_LOCK:
        module = gast.parse("if 1:\n" + text if indented else text)
    node = module.body[0].body[0] if indented else module.body[0]
    shift = first_line - (2 if indented else 1)
    for child in gast.walk(node):
        if getattr(child, "lineno", None) is not None:
            child.lineno += shift
        if getattr(child, "end_lineno", None) is not None:
            child.end_lineno += shift
    return node


def _closure(func: types.FunctionType) -> dict[str, Any]:
    """Free variable name -> the value in its cell (cells not yet assigned are left out)."""
    values = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell: the outer variable is not assigned yet
            pass
    return values


def _defaults(func: types.FunctionType) -> dict[str, Any]:
    """Parameter name -> default value, for positional and keyword-only parameters."""
    code = func.__code__
    positional = code.co_varnames[:code.co_argcount]
    values = dict(zip(positional[len(positional) - len(func.__defaults__ or ()):],
                      func.__defaults__ or ()))
    values.update(func.__kwdefaults__ or {})
    return values
