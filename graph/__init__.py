"""The graph IR: values, nodes, blocks with If/While/For regions, and the tools around them."""
from .dot import render, to_dot
from .interpreter import Unbound, run_graph
from .ir import TRY
from .builder import Builder, InsertPoint
from .ir import FOR, IF, INDEX_TYPE, REGION_KINDS, WHILE, Block, Graph, Loc, Node, Use, Value
from .rewriter import Rewriter
from .parser import IRParseError, parse_attr, parse_graph, parse_type
from .printer import format_attr, print_block, print_graph, print_graph_lines, print_node
from .serialize import GraphFileError, load_graph, save_graph
from .types import (AnyType, ListType, NoneType, Scalar, StrType, Tensor, TupleType, Type,
                    join_types)
from .verifier import IRVerifyError, verify

__all__ = ["TRY", "FOR", "IF", "INDEX_TYPE", "REGION_KINDS", "WHILE", "Block", "Builder", "Graph",
           "InsertPoint", "Loc", "Node", "Rewriter", "Use", "Value", "AnyType", "ListType",
           "NoneType", "Scalar", "StrType", "Tensor", "TupleType", "Type", "join_types",
           "verify", "IRVerifyError", "print_graph", "print_graph_lines", "print_block",
           "print_node", "format_attr", "parse_graph", "parse_type", "parse_attr", "IRParseError",
           "to_dot", "render", "save_graph", "load_graph", "GraphFileError", "run_graph", "Unbound"]
