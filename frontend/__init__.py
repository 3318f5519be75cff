"""Python source -> graph IR."""
from .errors import CompileError

__all__ = ["CompileError"]
