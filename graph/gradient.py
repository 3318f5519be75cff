"""Gradient functions as graphs: `GradSpec` says what a MindSpore-style gradient function returns
(which inputs and parameters, the forward value, auxiliary outputs, a given sensitivity), and
`grad_graph` rewrites a forward graph into one graph computing exactly that, with
`autodiff.differentiate` appending the backward pass. `gradient_of` does the same for a forward
inlined into a larger graph (a gradient function called inside compiled code)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..common.markers import COMPILE_TIME_ATTR, GRADIENT_ATTR  # noqa: F401 (re-exported)

from .analysis import differentiable
from .autodiff import differentiate
from .builder import Builder, InsertPoint
from .ir import Graph, Loc, Node, Value
from .types import AnyType, Scalar, Tensor, TupleType, Type

ALL = "all"
"""`GradSpec.positions` for every positional argument (`GradOperation(get_all=True)`)."""
FIRST = "first"
"""`GradSpec.positions` for the first positional argument if there is one (GradOperation's
default; with no arguments the gradient is `()`)."""



@dataclass(frozen=True)
class GradRequest:
    """What the user asked a gradient function for (see `GradSpec`), with the weights still as
    the Parameter objects passed to grad/value_and_grad/GradOperation."""
    positions: tuple[int, ...] | str | None = (0,)
    single: bool = True
    weights: tuple[Any, ...] | None = None
    has_aux: bool = False
    value: bool = False
    sens: bool = False
    single_weight: bool = False


@dataclass(frozen=True)
class Weight:
    """A parameter to differentiate: the attribute paths the graph reads it by (several when
    two attributes hold the same Parameter, none when the function does not use it), its shape
    and dtype (so an unused one still gets a zero gradient of the right shape)."""
    paths: tuple[str, ...]
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class GradSpec:
    """What a gradient function returns, in MindSpore 2.x's structure.

    `positions`: argument positions whose gradients are returned (None: none; `ALL`: every
    positional argument), `single`: one position given as an int, so its gradient is returned
    bare, not in a tuple; `weights`: parameters whose gradients follow (None: none);
    `has_aux`: the function returns (output, *aux) and only the output is differentiated;
    `value`: also return the forward value (`value_and_grad`); `sens`: the last argument is
    the adjoint of the output (else the output must be a scalar, seeded with 1);
    `single_weight`: one Parameter was given as the weights, so its gradient is returned bare.
    The structure is MindSpore's: inputs' gradients (bare for an int position, a tuple for a
    tuple of positions or get_all), the weights' gradients, both as a pair when both are
    asked for; has_aux: (gradients, aux); value: (output, gradients), the output whole (with
    its aux values)."""
    positions: tuple[int, ...] | str | None = (0,)
    single: bool = True
    weights: tuple[Weight, ...] | None = None
    has_aux: bool = False
    value: bool = False
    sens: bool = False
    single_weight: bool = False

    def token(self) -> str:
        """A text standing for this spec in cache keys."""
        weights = None if self.weights is None else [
            (list(w.paths), list(w.shape), w.dtype) for w in self.weights]
        return repr((self.positions, self.single, weights, self.has_aux, self.value, self.sens,
                     self.single_weight))


class GradSpecError(ValueError):
    """The spec does not fit the function (a position out of range, an integer input, a
    non-scalar output without sens); `loc` is where the function's result is made."""

    def __init__(self, message: str, hint: str = "", loc: Loc | None = None) -> None:
        super().__init__(message)
        self.hint, self.loc = hint, loc


Structure = Any
"""A Value, or a tuple of Structures (a gradient function's result before it is one value)."""


def grad_graph(graph: Graph, spec: GradSpec, nargs: int) -> None:
    """Rewrite `graph` (the forward function, called with `nargs` positional arguments) in
    place into the gradient function `spec` describes. Raises GradSpecError or
    NotDifferentiable."""
    (result,) = graph.outputs
    loc = _loc(result) or graph.return_loc
    sens = None
    if spec.sens:
        sens = graph.body.add_param(result.type, "sens")
        graph.input_paths = (*graph.input_paths, str(nargs))
    b = Builder(InsertPoint.at_end(graph.body))
    params = dict(zip(graph.param_paths, graph.inputs))
    weights = [([params[p] for p in w.paths], w.shape, np.dtype(w.dtype))
               for w in spec.weights or ()] if spec.weights is not None else None
    inputs = _position_inputs(graph, spec, nargs, loc)
    found = gradient_of(graph, b, result, spec, inputs, weights, sens, loc)
    graph.body.set_results([as_value(b, found)])


def gradient_of(graph: Graph, b: Builder, result: Value, spec: GradSpec | GradRequest,
                inputs: list[list[Value | None]] | None,
                weights: list[tuple[list[Value], tuple[int, ...], np.dtype]] | None,
                sens: Value | None, loc: Loc | None, nodes: Sequence[Node] | None = None
                ) -> Structure:
    """Differentiate `result` (of the forward `nodes`, default the whole graph) with respect to
    `inputs` (per differentiated position, the values holding its arrays; None for a position
    without arrays) and `weights` (per weight, the values reading it, its shape and dtype), and
    return what the gradient function returns, in MindSpore's structure. `b` builds after the
    forward. Raises GradSpecError or NotDifferentiable."""
    out, aux = split_aux(b, result, spec.has_aux)
    if any(isinstance(t, AnyType) for t in _leaves(out.type)):
        raise GradSpecError("the result has a different type on different paths (e.g. an "
                            "array on one and None, or another dtype, on another), so it "
                            "has no gradient", "return values of one type and dtype on every "
                            "path", loc)
    seeds = {out: sens} if sens is not None else _seed(b, out, loc)
    inputs = inputs or []
    weights = weights or []
    wrt = list(dict.fromkeys(v for group in inputs for v in group if v is not None))
    wrt += [v for w in weights for v in w[0] if v not in wrt]
    found = dict(zip(wrt, differentiate(graph, seeds, wrt, nodes)))
    grads = _pack(spec, [_input_gradient(b, group, found) for group in inputs],
                  [_weight_gradient(b, w, found) for w in weights])
    if spec.value:
        return result, grads
    if spec.has_aux:
        return grads, aux
    return grads


def as_value(b: Builder, found: Structure) -> Value:
    """A gradient structure as one IR value (tuples become `make_tuple`)."""
    if isinstance(found, tuple):
        return b.op("make_tuple", *(as_value(b, x) for x in found))
    return found


def split_aux(b: Builder, result: Value, has_aux: bool,
              refuse: Callable[[str, Value], Exception] | None = None
              ) -> tuple[Value, Value | None]:
    """(output, aux tuple) of a function returning (output, *aux); aux has no derivative.
    `refuse(message, result)` makes the error raised when the result is no such tuple
    (default: a GradSpecError with a hint, at the line making the result)."""
    if not has_aux:
        return result, None
    t = result.type
    if not isinstance(t, TupleType) or len(t.elements) < 2:
        message = (f"has_aux=True needs a function returning more than one value (an output "
                   f"and auxiliary values), but it returns {t}")
        if refuse is not None:
            raise refuse(message, result)
        raise GradSpecError(message, "return `loss, extra` or set has_aux=False", _loc(result))
    items = [b.op("tuple_getitem", result, index=i) for i in range(len(t.elements))]
    aux = [b.op("stop_gradient", v) for v in items[1:]]
    return items[0], b.op("make_tuple", *aux)


def _seed(b: Builder, out: Value, loc: Loc | None) -> dict[Value, Value]:
    """Ones for a scalar output (a one-element array or a Python float, or a tuple of them)."""
    for t in _leaves(out.type):
        if not (isinstance(t, Tensor) and all(d == 1 for d in t.shape) or
                t == out.type and not isinstance(t, Tensor | TupleType)):
            raise GradSpecError(
                f"the gradient of a non-scalar output ({out.type}) needs a sensitivity",
                "reduce the output to a scalar (e.g. `.sum()` or a loss), or pass the output's "
                "adjoint as a last argument with GradOperation(sens_param=True)", loc)
    return {out: _ones(b, out)}


def _leaves(t: Type) -> list[Type]:
    return [x for e in t.elements for x in _leaves(e)] if isinstance(t, TupleType) else [t]


def _ones(b: Builder, value: Value) -> Value:
    t = value.type
    if isinstance(t, TupleType):
        return b.op("make_tuple", *(_ones(b, b.op("tuple_getitem", value, index=i))
                                    for i in range(len(t.elements))))
    if isinstance(t, Tensor) and t.is_static:  # NOTE: a constant, so the passes fold it
        return b.constant(np.ones(t.shape, t.dtype))
    if t == Scalar(float):
        return b.constant(1.0)
    return b.op("ones_like", value)


def _position_inputs(graph: Graph, spec: GradSpec, nargs: int, loc: Loc | None
                     ) -> list[list[Value | None]]:
    """For each differentiated position, the graph inputs holding its arrays (None for a
    position that holds no array: gets no gradient)."""
    inputs = dict(zip(graph.input_paths, graph.inputs[len(graph.param_paths):]))
    return position_groups(spec, nargs, lambda p: [
        v for path, v in inputs.items() if path == str(p) or path.startswith(f"{p}.")], loc)


def position_groups(spec: GradSpec | GradRequest, nargs: int, arrays: Any, loc: Loc | None
                    ) -> list[list[Value | None]]:
    """For each position `spec` differentiates, `arrays(p)` (the values holding argument p's
    arrays), checked: in range, and floating arrays unless every position is asked for
    (`get_all`: a position without arrays gets a zero gradient)."""
    if spec.positions is None:
        return []
    every = spec.positions == ALL
    if every:
        positions: Sequence[int] = range(nargs)
    elif spec.positions == FIRST:
        positions = (0,) if nargs else ()
    else:
        positions = spec.positions
    groups = []
    for p in positions:
        if not 0 <= p < nargs:
            raise GradSpecError(f"grad_position {p} is out of range: the function is called "
                                f"with {nargs} positional argument(s)",
                                "count positions from 0", loc)
        group = arrays(p)
        if not group and not every:
            raise GradSpecError(f"argument {p} is not an array, so it has no gradient (amber "
                                "compiles Python numbers and other non-arrays as constants)",
                                "pass a float array, or leave the position out", loc)
        for v in group:
            if not differentiable(v.type) and not every:
                raise GradSpecError(f"argument {p} is an array of {v.type}: only floating-point "
                                    "inputs have gradients", "cast it to float32 or leave the "
                                    "position out", loc)
        groups.append(group or [None])
    return groups


def _input_gradient(b: Builder, group: list[Value | None], found: dict[Value, Value | None]
                    ) -> Structure:
    """The gradient of one argument (a tuple for an argument holding several arrays): zeros
    where nothing flows."""
    parts = []
    for v in group:
        if v is None:  # (get_all) a positional argument that holds no array
            parts.append(b.constant(0))
            continue
        g = found.get(v)
        if g is None:
            g = _zeros(b, v)
        parts.append(g)
    return parts[0] if len(parts) == 1 else tuple(parts)


def _weight_gradient(b: Builder, weight: tuple[list[Value], tuple[int, ...], np.dtype],
                     found: dict[Value, Value | None]) -> Value:
    """The gradient of one weight, summed over the values that read it (zeros if none)."""
    values, shape, dtype = weight
    grads = [found[v] for v in dict.fromkeys(values) if found.get(v) is not None]
    if not grads:
        return b.op("zeros", shape=shape, dtype=dtype)
    total = grads[0]
    for g in grads[1:]:
        total = b.op("add", total, g)
    return total


def _zeros(b: Builder, v: Value) -> Value:
    t = v.type
    if isinstance(t, Tensor):
        if t.is_static:
            return b.op("zeros", shape=t.shape, dtype=t.dtype)
        return b.op("zeros_like", v)
    return b.constant(0.0)


def _pack(spec: GradSpec | GradRequest, inputs: list[Structure], weights: list[Value]
          ) -> Structure:
    """MindSpore's structure: inputs' gradients (bare for an int position), weights'
    gradients as a tuple, or (inputs, weights) when both are asked for."""
    by_input = inputs[0] if spec.single and len(inputs) == 1 else tuple(inputs)
    by_weight = weights[0] if spec.single_weight else tuple(weights)
    if spec.positions is None:
        return by_weight
    if spec.weights is None:
        return by_input
    return by_input, by_weight


def _loc(value: Value) -> Loc | None:
    return value.producer.loc if value.producer is not None else None
