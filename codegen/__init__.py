"""Codegen: a graph -> a standalone, readable Python/NumPy module (via the Python AST and astor),
with a map from generated lines back to the user's source."""
from .module import AMBER_VERSION, GeneratedCode, generate
from .storage import INPLACE_ATTR

__all__ = ["AMBER_VERSION", "GeneratedCode", "INPLACE_ATTR", "generate"]
