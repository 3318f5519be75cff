"""Codegen: a graph -> a standalone, readable Python/NumPy module (via the Python AST and
`ast.unparse`), with a map from generated lines back to the user's source."""
from .module import GeneratedCode, generate
from ..graph.ir import INPLACE_ATTR

__all__ = ["GeneratedCode", "INPLACE_ATTR", "generate"]
