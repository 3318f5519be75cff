"""`CompileError`: the one user-facing error of the compiler, pointing at the user's source.
`CompileTypeError` and `CompileValueError` are also a TypeError / ValueError, for the mistakes
where eager Python raises those (wrong argument counts, operands that do not fit), so code
catching what eager code raises catches what compiling raises too."""
from __future__ import annotations

import inspect
from typing import Any


class CompileError(Exception):
    """The model's Python cannot be compiled: says where (file:line:col, the line and a caret),
    what is wrong, and what to write instead.

    `at_call` marks an error about how the compiled function was called (its arguments): the
    runtime reports it at the user's call instead of at the `def`."""

    at_call: bool = False

    def __init__(self, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 source_line: str = "", hint: str = "") -> None:
        self.message, self.file, self.line, self.col = message, file, line, col
        self.source_line, self.hint = source_line, hint
        super().__init__(self._render())

    def move_to(self, file: str, line: int, col: int, source_line: str) -> None:
        """Point the error at another place (the user's call of the compiled function)."""
        self.file, self.line, self.col, self.source_line = file, line, col, source_line
        self.args = (self._render(),)

    def _render(self) -> str:
        parts = [f"{self.file}:{self.line}:{self.col + 1}: {self.message}"]
        if self.source_line:
            text = self.source_line.rstrip("\n")
            stripped = text.lstrip()
            parts.append("    " + stripped)
            parts.append("    " + " " * max(0, self.col - (len(text) - len(stripped))) + "^")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class CompileTypeError(CompileError, TypeError):
    """A CompileError where eager Python raises TypeError."""


class CompileValueError(CompileError, ValueError):
    """A CompileError where eager Python raises ValueError."""


for _cls in (CompileError, CompileTypeError, CompileValueError):
    _cls.__module__ = "amber"  # NOTE: tracebacks print `amber.CompileError: ...`
del _cls


def kind_for(exc: BaseException) -> type[CompileError]:
    """The CompileError class matching what eager Python raised (TypeError, ValueError)."""
    if isinstance(exc, TypeError):
        return CompileTypeError
    if isinstance(exc, ValueError):
        return CompileValueError
    return CompileError


def arity_message(name: str, func: Any, given: int, problem: str, skip: int = 0) -> str:
    """`helper() takes 2 arguments (a, b) but 1 was given: missing a required argument: 'b'`.
    `skip` leading parameters are bound already (a method's self)."""
    try:
        params = list(inspect.signature(func).parameters.values())[skip:]
    except (TypeError, ValueError):
        return f"{name}() {problem}"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in positional)
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        count = f"at least {required}"
    elif required == len(positional):
        count = str(required)
    else:
        count = f"{required} to {len(positional)}"
    noun = "argument" if count == "1" else "arguments"
    shown = ", ".join(str(p) for p in params)
    verb = "was" if given == 1 else "were"
    return f"{name}() takes {count} {noun} ({shown}) but {given} {verb} given: {problem}"
