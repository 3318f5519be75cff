"""One ONNX graph under construction (the model's main graph, or an If/Loop body): its nodes,
plus the name source and symbolic sizes the whole model shares. Nodes are made with the `onnx`
package's helpers, never as hand-written protobuf.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from onnx import helper, numpy_helper

from ...graph.ir import Loc
from ...ops.symbolic import FloorDiv, Sym


BOOL_RESULTS = frozenset({"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not",
                          "And", "Or", "Xor", "IsNaN", "IsInf"})
INT64_RESULTS = frozenset({"Shape", "Size", "ArgMax", "ArgMin"})
KEEPS_DTYPE = frozenset({
    "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh",
    "Sigmoid", "Relu", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Atan", "Sinh",
    "Cosh", "Erf", "Max", "Min", "Pow", "Mod", "Identity", "Reshape", "Transpose", "Expand",
    "Squeeze", "Unsqueeze", "Concat", "Slice", "Gather", "Tile", "Pad", "ReduceSum",
    "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "MatMul", "Conv", "ConvTranspose",
    "MaxPool", "AveragePool", "BatchNormalization", "LayerNormalization", "Softmax",
    "LogSoftmax", "CumSum"})
"""ONNX operators whose result has their first input's element type."""


class OnnxRefusal(Exception):
    """The graph has something ONNX cannot express: `message` says what, `loc` where (the
    runtime turns it into a CompileError at the user's line)."""

    def __init__(self, message: str, loc: Loc | None) -> None:
        super().__init__(message)
        self.message, self.loc = message, loc


@dataclass
class Model:
    """What every graph of one model shares: unique value names, known dtypes by name and the
    names holding each symbolic size (read from the inputs' shapes in the main graph)."""
    used: set[str] = field(default_factory=set)
    dtypes: dict[str, np.dtype] = field(default_factory=dict)
    sizes: dict[str, str] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    """The value of each Constant, by name."""

    def fresh(self, hint: str) -> str:
        """A name never used in the model: the hint, or the hint with a number."""
        base = "".join(c if c.isalnum() or c in "_." else "_" for c in hint) or "v"
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name


class Scope:
    """The nodes of one graph; `loc` is the amber node being lowered (for refusals)."""

    def __init__(self, model: Model, parent: Scope | None = None) -> None:
        self.model, self.parent = model, parent
        self.nodes: list[Any] = []
        self.loc: Loc | None = parent.loc if parent else None
        self._consts: dict[tuple, str] = {}

    def node(self, op_type: str, *inputs: str, outputs: int = 1, hint: str = "",
             dtype: Any = None, **attrs: Any) -> Any:
        """Append one node; its output name (a list of names when `outputs` > 1)."""
        names = [self.model.fresh(hint or op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names,
                                           name=self.model.fresh("n_" + op_type), **attrs))
        dtype = dtype if dtype is not None else self._result_dtype(op_type, inputs)
        if dtype is not None:
            for name in names:
                self.model.dtypes[name] = np.dtype(dtype)
        return names[0] if outputs == 1 else names

    def _result_dtype(self, op_type: str, inputs: Sequence[str]) -> Any:
        """The dtype of a node's result where the operator decides it (so no Cast to that
        dtype follows): bool for tests, int64 for shapes and indices, else the first input's
        for the operators that keep it."""
        if op_type in BOOL_RESULTS:
            return np.bool_
        if op_type in INT64_RESULTS:
            return np.int64
        if op_type in KEEPS_DTYPE and inputs and inputs[0]:
            return self.model.dtypes.get(inputs[0])
        return None

    def const(self, value: Any, dtype: Any = None, hint: str = "c") -> str:
        """A Constant node of NumPy's array of `value` (reused within this graph)."""
        array = np.asarray(value, dtype=dtype)
        if array.dtype == np.float16 or array.dtype.kind not in "biuf":
            raise OnnxRefusal(f"a constant of dtype {array.dtype} has no ONNX form here",
                              self.loc)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key in self._consts:
            return self._consts[key]
        name = self.model.fresh(hint)
        tensor = numpy_helper.from_array(np.array(array, order="C"), name)
        self.nodes.append(helper.make_node("Constant", [], [name], value=tensor,
                                           name=self.model.fresh("n_Constant")))
        self.model.dtypes[name] = array.dtype
        self.model.values[name] = array
        self._consts[key] = name
        return name

    def cast(self, x: str, dtype: Any) -> str:
        """`x` as `dtype`: itself when its dtype is known to be that already."""
        dtype = np.dtype(dtype)
        if self.model.dtypes.get(x) == dtype:
            return x
        if x in self.model.values:  # NOTE: a constant is made in the dtype wanted instead
            return self.const(self.model.values[x].astype(dtype), dtype)
        return self.node("Cast", x, to=helper.np_dtype_to_tensor_dtype(dtype), dtype=dtype)

    def size(self, d: Any) -> str:
        """An int64 0-d tensor holding size `d` (an int, a symbolic size or a value's name)."""
        if isinstance(d, str):
            return self.cast(d, np.int64)
        if isinstance(d, int | np.integer):
            return self.const(int(d), np.int64)
        if not isinstance(d, Sym):
            raise OnnxRefusal(f"a size unknown while compiling ({d}) cannot be an ONNX shape; "
                              "declare it symbolic (set_inputs, dynamic=) or make it static",
                              self.loc)
        total = self.const(d.const, np.int64)
        for atom, coef in d.terms:
            term = self._atom(atom)
            if coef != 1:
                term = self.node("Mul", term, self.const(coef, np.int64), dtype=np.int64)
            total = self.node("Add", total, term, dtype=np.int64)
        return total

    def _atom(self, atom: Any) -> str:
        if isinstance(atom, FloorDiv):
            # NOTE: sizes are never negative, so ONNX's truncating Div is floor division
            return self.node("Div", self.size(atom.num), self.const(atom.den, np.int64),
                             dtype=np.int64)
        if atom not in self.model.sizes:
            raise OnnxRefusal(f"the symbolic size {atom} is read from no input", self.loc)
        return self.model.sizes[atom]

    def shape(self, dims: Sequence[Any]) -> str:
        """A 1-d int64 tensor of sizes (a Constant when all are ints)."""
        if all(isinstance(d, int | np.integer) for d in dims):
            return self.const(np.array([int(d) for d in dims], np.int64))
        axis0 = self.const(np.array([0], np.int64))
        parts = [self.node("Unsqueeze", self.size(d), axis0, dtype=np.int64) for d in dims]
        return self.node("Concat", *parts, axis=0, dtype=np.int64)
