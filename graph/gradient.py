"""Gradient functions as graphs: `GradSpec` says what a MindSpore-style gradient function returns
(which inputs and parameters, the forward value, auxiliary outputs, a given sensitivity), and
`grad_graph` rewrites a forward graph into one graph computing exactly that, with
`autodiff.differentiate` appending the backward pass."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .analysis import differentiable
from .autodiff import differentiate
from .ir import Builder, Graph, InsertPoint, Loc, Value
from .types import AnyType, Tensor, TupleType, Type

ALL = "all"
"""`GradSpec.positions` for every positional argument (`GradOperation(get_all=True)`)."""


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
    the adjoint of the output (else the output must be a scalar, seeded with 1)."""
    positions: tuple[int, ...] | str | None = (0,)
    single: bool = True
    weights: tuple[Weight, ...] | None = None
    has_aux: bool = False
    value: bool = False
    sens: bool = False

    def token(self) -> str:
        """A text standing for this spec in cache keys."""
        weights = None if self.weights is None else [
            (list(w.paths), list(w.shape), w.dtype) for w in self.weights]
        return repr((self.positions, self.single, weights, self.has_aux, self.value, self.sens))


class GradSpecError(ValueError):
    """The spec does not fit the function (a position out of range, an integer input, a
    non-scalar output without sens); `loc` is where the function's result is made."""

    def __init__(self, message: str, hint: str = "", loc: Loc | None = None) -> None:
        super().__init__(message)
        self.hint, self.loc = hint, loc


def grad_graph(graph: Graph, spec: GradSpec, nargs: int) -> None:
    """Rewrite `graph` (the forward function, called with `nargs` positional arguments) in
    place into the gradient function `spec` describes. Raises GradSpecError or
    NotDifferentiable."""
    b = Builder(InsertPoint.at_end(graph.body))
    (result,) = graph.outputs
    out, aux = _split_aux(b, result, spec.has_aux)
    loc = result.producer.loc if result.producer is not None else graph.return_loc
    seeds = _seeds(graph, b, out, spec, nargs, loc)
    inputs = _position_inputs(graph, spec, nargs, loc)
    weights = _weight_inputs(graph, spec)
    wrt = [v for group in (*inputs, *weights) for v in group if v is not None]
    found = dict(zip(wrt, differentiate(graph, seeds, wrt)))
    grads = _pack(b, spec, [_gradient(b, group, found) for group in inputs],
                  [_gradient(b, group, found, w) for group, w in zip(weights, spec.weights or ())])
    if spec.has_aux:
        grads = b.op("make_tuple", grads, aux)
    if spec.value:
        grads = b.op("make_tuple", result, grads)
    graph.body.set_results([grads])


def _split_aux(b: Builder, result: Value, has_aux: bool) -> tuple[Value, Value | None]:
    if not has_aux:
        return result, None
    t = result.type
    if not isinstance(t, TupleType) or len(t.elements) < 2:
        raise GradSpecError(f"has_aux=True needs a function returning more than one value "
                            f"(an output and auxiliary values), but it returns {t}",
                            "return `loss, extra` or set has_aux=False", _loc(result))
    items = [b.op("tuple_getitem", result, index=i) for i in range(len(t.elements))]
    aux = [b.op("stop_gradient", v) for v in items[1:]]
    return items[0], b.op("make_tuple", *aux)


def _seeds(graph: Graph, b: Builder, out: Value, spec: GradSpec, nargs: int,
           loc: Loc | None) -> dict[Value, Value]:
    if any(isinstance(t, AnyType) for t in _leaves(out.type)):
        raise GradSpecError("the result has a different type on different paths (e.g. an "
                            "array on one and None, or another dtype, on another), so it "
                            "has no gradient", "return values of one type and dtype on every "
                            "path", loc)
    if spec.sens:
        sens = graph.body.add_param(out.type, "sens")
        graph.input_paths = (*graph.input_paths, str(nargs))
        return {out: sens}
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
    return b.op("ones_like", value)


def _position_inputs(graph: Graph, spec: GradSpec, nargs: int, loc: Loc | None
                     ) -> list[list[Value | None]]:
    """For each differentiated position, the graph inputs holding its arrays (None for a
    position that holds no array: gets no gradient)."""
    if spec.positions is None:
        return []
    positions = range(nargs) if spec.positions == ALL else spec.positions
    groups = []
    inputs = dict(zip(graph.input_paths, graph.inputs[len(graph.param_paths):]))
    for p in positions:
        if not -nargs <= p < nargs:
            raise GradSpecError(f"grad_position {p} is out of range: the function is called "
                                f"with {nargs} positional argument(s)",
                                "count positions from 0", loc)
        p %= nargs
        group = [v for path, v in inputs.items() if path == str(p) or path.startswith(f"{p}.")]
        if not group and spec.positions != ALL:
            raise GradSpecError(f"argument {p} is not an array, so it has no gradient (amber "
                                "compiles Python numbers and other non-arrays as constants)",
                                "pass a float array, or leave the position out", loc)
        for v in group:
            if not differentiable(v.type) and spec.positions != ALL:
                raise GradSpecError(f"argument {p} is an array of {v.type}: only floating-point "
                                    "inputs have gradients", "cast it to float32 or leave the "
                                    "position out", loc)
        groups.append(group or [None])
    return groups


def _weight_inputs(graph: Graph, spec: GradSpec) -> list[list[Value]]:
    params = dict(zip(graph.param_paths, graph.inputs))
    return [[params[p] for p in w.paths] for w in spec.weights or ()]


def _gradient(b: Builder, group: list[Value | None], found: dict[Value, Value | None],
              weight: Weight | None = None) -> Value:
    """The gradient of one argument (a tuple for an argument holding several arrays) or of
    one weight (summed over the paths that read it): zeros where nothing flows."""
    if weight is not None:
        grads = [found[v] for v in group if found.get(v) is not None]
        if not grads:
            return b.op("zeros", shape=weight.shape, dtype=np.dtype(weight.dtype))
        total = grads[0]
        for g in grads[1:]:
            total = b.op("add", total, g)
        return total
    parts = []
    for v in group:
        if v is None:  # (get_all) a positional argument that holds no array
            parts.append(b.constant(0))
            continue
        g = found.get(v)
        if g is None:
            g = b.op("zeros_like", v) if isinstance(v.type, Tensor) else b.constant(0.0)
        parts.append(g)
    return parts[0] if len(parts) == 1 else b.op("make_tuple", *parts)


def _pack(b: Builder, spec: GradSpec, inputs: list[Value], weights: list[Value]) -> Value:
    """MindSpore's structure: inputs' gradients (bare for an int position), weights'
    gradients as a tuple, or (inputs, weights) when both are asked for."""
    by_input = inputs[0] if spec.single and len(inputs) == 1 else b.op("make_tuple", *inputs)
    by_weight = b.op("make_tuple", *weights)
    if spec.positions is None:
        return by_weight
    if spec.weights is None:
        return by_input
    return b.op("make_tuple", by_input, by_weight)


def _loc(value: Value) -> Loc | None:
    return value.producer.loc if value.producer is not None else None

