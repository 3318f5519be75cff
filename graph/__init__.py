"""The graph IR: values, nodes, blocks with If/While/For regions, and the tools around them."""
from .ir import (FOR, IF, INDEX_TYPE, REGION_KINDS, WHILE, Block, Builder, Graph, InsertPoint, Loc,
                 Node, Rewriter, Use, Value)
from .types import (AnyType, ListType, NoneType, Scalar, StrType, Tensor, TupleType, Type,
                    join_types)

__all__ = ["FOR", "IF", "INDEX_TYPE", "REGION_KINDS", "WHILE", "Block", "Builder", "Graph",
           "InsertPoint", "Loc", "Node", "Rewriter", "Use", "Value", "AnyType", "ListType",
           "NoneType", "Scalar", "StrType", "Tensor", "TupleType", "Type", "join_types"]
