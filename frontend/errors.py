"""`CompileError`: the one user-facing error of the compiler, pointing at the user's source."""
from __future__ import annotations


class CompileError(Exception):
    """The model's Python cannot be compiled: says where (file:line:col, the line and a caret),
    what is wrong, and what to write instead."""

    def __init__(self, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 source_line: str = "", hint: str = "") -> None:
        self.message, self.file, self.line, self.col = message, file, line, col
        self.source_line, self.hint = source_line, hint
        super().__init__(self._render())

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
