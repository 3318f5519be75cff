"""The IR's type system. The types are defined beneath `ops` (every shape rule speaks them);
this module is where the graph package and its users import them from."""
from ..ops.symbolic import Sym, free_symbols, holds_symbols, parse_sym, substitute, symbol
from ..ops.types import (UNKNOWN, AnyType, Dim, ListType, NoneType, Scalar, StrType, Tensor,
                         TupleType, Type, broadcast_shapes, dtype_from_short, dtype_short,
                         is_namedtuple_class, join_types, result_dtype, same_tuple_kind,
                         tuple_class, tuple_of_class, type_of)

__all__ = ["UNKNOWN", "AnyType", "Dim", "ListType", "NoneType", "Scalar", "StrType", "Sym",
           "Tensor", "TupleType", "Type", "broadcast_shapes", "dtype_from_short", "dtype_short",
           "free_symbols", "holds_symbols", "is_namedtuple_class", "join_types", "parse_sym", "result_dtype",
           "same_tuple_kind", "substitute", "symbol", "tuple_class", "tuple_of_class", "type_of"]
