"""The IR's type system. The types are defined beneath `ops` (every shape rule speaks them);
this module is where the graph package and its users import them from."""
from ..ops.types import (UNKNOWN, AnyType, Dim, ListType, NoneType, Scalar, StrType, Tensor,
                         TupleType, Type, broadcast_shapes, dtype_from_short, dtype_short,
                         join_types, result_dtype, type_of)

__all__ = ["UNKNOWN", "AnyType", "Dim", "ListType", "NoneType", "Scalar", "StrType", "Tensor",
           "TupleType", "Type", "broadcast_shapes", "dtype_from_short", "dtype_short",
           "join_types", "result_dtype", "type_of"]
