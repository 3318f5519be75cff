"""A whole optimized graph as an ONNX model: inputs (symbolic sizes as dim_params), Parameters
as initializers named by their Parameter names (or as inputs, for the onnxruntime backend, which
passes the instance's current weights on each call), outputs flattened depth-first.

Opset 17: the oldest opset with LayerNormalization, so models with it need no decomposition,
while the deployment runtimes in wide use (onnxruntime >= 1.12, TensorRT 8.6, OpenVINO 2023)
all read it. Reductions take their axes as attributes there (ReduceSum as an input).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np
from onnx import AttributeProto, helper, numpy_helper

from ...graph.ir import Graph
from ...graph.sizes import size_sources
from ...ops.onnx import dtype_of
from ...ops.types import Scalar, Tensor, TupleType, Type, tuple_of_class
from .lower import leaf_types, leaves, lower_block, type_of, value_info
from .scope import Model, OnnxRefusal, Scope

OPSET = 17
IR_VERSION = 8
"""The ONNX IR version of opset 17 (what onnxruntime >= 1.12 reads)."""


@dataclass
class Exported:
    """An ONNX model and how to call it: input names in call order (the parameters' first
    when they are inputs), and the output types to rebuild the returned structure from."""
    model: Any
    param_names: tuple[str, ...]
    input_names: tuple[str, ...]
    output_types: tuple[Type, ...]

    def unflatten(self, values: Sequence[Any]) -> Any:
        """The Python result the compiled function returns, from onnxruntime's flat outputs:
        tuples (namedtuples) rebuilt, Python scalars as Python numbers, 0-d arrays as NumPy
        scalars (as amber's NumPy code returns them)."""
        it = iter(values)
        results = [python_value(t, it) for t in self.output_types]
        return results[0] if len(results) == 1 else tuple(results)


def python_value(t: Type, arrays: Iterator[Any]) -> Any:
    """The value of type `t` whose leaves are the next arrays of `arrays`."""
    if isinstance(t, Scalar):
        return t.kind(next(arrays)[()])
    if isinstance(t, Tensor):
        # NOTE: onnxruntime's int64 arrays have dtype 'q' (longlong), whose scalars are not
        # np.int64: viewed as the exact dtype object amber typed
        array = np.asarray(next(arrays)).view(t.dtype)
        return array[()] if t.rank == 0 else array
    if isinstance(t, TupleType):
        return tuple_of_class(t.cls, [python_value(e, arrays) for e in t.elements])
    return None


def to_onnx(graph: Graph, param_names: Sequence[str],
            param_values: Sequence[np.ndarray] | None = None, name: str = "") -> Exported:
    """The ONNX model of an optimized graph. `param_names` name its leading parameter inputs;
    with `param_values` they become initializers, else inputs. OnnxRefusal where the graph has
    what ONNX cannot express."""
    model = Model()
    main = Scope(model)
    env: dict = {}
    inputs, initializers = [], []
    nparams = len(graph.param_paths)
    names = _input_names(graph, param_names)
    for k, (value, vname) in enumerate(zip(graph.inputs, names)):
        kinds = leaf_types(value.type, "model input")
        if len(kinds) != 1:
            raise OnnxRefusal(f"input {vname!r} of type {value.type} is not one tensor",
                              graph.return_loc)
        model.used.add(vname)
        model.dtypes[vname] = dtype_of(value.type)
        env[value] = vname
        if k < nparams and param_values is not None:
            array = np.asarray(param_values[k], dtype=dtype_of(value.type))
            initializers.append(numpy_helper.from_array(array, vname))
        else:
            inputs.append(value_info(vname, value.type))
    _read_sizes(main, graph, names)
    lower_block(main, graph.body, env)
    outputs, out_types = [], []
    for value in graph.outputs:
        out_type = type_of(value, "result")
        out_types.append(out_type)
        for leaf, t in zip(leaves(env[value], out_type, main), leaf_types(out_type, "result")):
            out = main.node("Identity", main.cast(leaf, dtype_of(t)),
                            hint=f"output_{len(outputs)}")
            outputs.append(value_info(out, t))
    if not outputs:
        raise OnnxRefusal("the function returns no array or number (an ONNX model needs an "
                          "output)", graph.return_loc)
    onnx_graph = helper.make_graph(main.nodes, name or graph.name or "amber", inputs, outputs,
                                   initializer=initializers)
    _drop_unused_constants(onnx_graph, _used_names(onnx_graph))
    proto = helper.make_model(onnx_graph, producer_name="amber",
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION)
    return Exported(proto, tuple(names[:nparams]),
                    tuple(n for n in names[nparams:]), tuple(out_types))


def _subgraphs(graph: Any) -> Iterator[Any]:
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield attr.g


def _used_names(graph: Any) -> set[str]:
    """Every name a node (in any subgraph) reads or a graph outputs."""
    used = {out.name for out in graph.output}
    for node in graph.node:
        used.update(node.input)
    for sub in _subgraphs(graph):
        used |= _used_names(sub)
    return used


def _drop_unused_constants(graph: Any, used: set[str]) -> None:
    """Remove Constant nodes nothing reads (made before a cast asked for another dtype)."""
    keep = [n for n in graph.node if n.op_type != "Constant" or n.output[0] in used]
    if len(keep) != len(graph.node):
        del graph.node[:]
        graph.node.extend(keep)
    for sub in _subgraphs(graph):
        _drop_unused_constants(sub, used)


def _input_names(graph: Graph, param_names: Sequence[str]) -> list[str]:
    """Parameters by their names, the other inputs by the user's argument names."""
    used: set[str] = set()
    names = []
    for k, value in enumerate(graph.inputs):
        base = param_names[k] if k < len(param_names) else (value.name or f"input_{k}")
        name, i = base, 1
        while name in used:
            name, i = f"{base}_{i}", i + 1
        used.add(name)
        names.append(name)
    return names


def _read_sizes(main: Scope, graph: Graph, names: Sequence[str]) -> None:
    """Each symbolic size as an int64 value read from the first input having it as a dim."""
    types = [v.type for v in graph.inputs]
    for symbol, source in size_sources(types).items():
        assert isinstance(types[source.input], Tensor)
        shape = main.node("Shape", names[source.input], start=source.axis, end=source.axis + 1)
        main.model.sizes[symbol] = main.node("Squeeze", shape, main.const(np.array([0])),
                                             hint=symbol, dtype=np.int64)
