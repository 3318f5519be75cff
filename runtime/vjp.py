"""`vjp` and `linearize` with MindSpore 2.x's API, as two compiled halves.

One call compiles `fn` differentiated (reverse mode for vjp, forward mode for linearize), then
cuts the graph at the backward's inputs (graph/residuals.py): the forward half returns the
output and the residuals (saved values, loop tapes, trip counts), the backward half takes the
adjoint (or the tangents) and those residuals. `vjp_fn(v)` runs only the backward half on the
residuals of the call that made it, so a second `vjp_fn(v)` neither runs the forward again nor
sees another call's residuals (each `vjp_fn` holds its own tuple; generated code never writes
into its inputs).

The backward half is generated beside the forward's specialization and kept in this process
(the forward returns a key naming it), so these functions skip the disk cache.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np

from ..common.markers import DIRECT_ATTR
from ..common.tensor import as_results
from ..graph.jacobian import TransformRequest
from .context import CompileOptions
from .grad import _resolve_weights, _weights
from .pipeline import Artifact, _stage_files, compile_target, generate, optimize
from .transforms import TransformFunction, _flag, _tuple, differentiation_errors

VJP, LINEARIZE = "vjp", "linearize"


def vjp(fn: Any, *inputs: Any, weights: Any = None, has_aux: bool = False) -> tuple:
    """(fn(*inputs), vjp_fn) as MindSpore's `vjp`, or (output, vjp_fn, aux) with `has_aux`.
    `vjp_fn(v)` gives the inputs' gradients against the output's adjoint `v` (bare for one
    input, a tuple otherwise); with `weights` (a Parameter, a list or a ParameterTuple),
    (inputs' gradients, weights' gradients), a weight's bare when one Parameter is given."""
    if len(inputs) == 1 and isinstance(inputs[0], tuple | list):
        inputs = tuple(inputs[0])
    found, single = (None, False) if weights is None else _weights(weights)
    program = _program(fn, TransformRequest(VJP, has_aux=_flag(has_aux)), found, single)
    result, residuals, key = program(*inputs)
    out = result[0] if has_aux else result
    backward = Backward(_BACKWARDS[key], residuals, out)
    if not has_aux:
        return out, backward
    return out, backward, tuple(result[1:])


def linearize(fn: Any, inputs: Any) -> tuple[Any, Callable[..., Any]]:
    """(fn(*inputs), jvp_fn) as MindSpore's `linearize`: `jvp_fn(*v)` (one tangent per input,
    or one tuple of them) gives J v at `inputs`, running only the tangent half."""
    inputs = _tuple(inputs)
    program = _program(fn, TransformRequest(LINEARIZE), None, False)
    out, residuals, key = program(*inputs)
    return out, Backward(_BACKWARDS[key], residuals, inputs, tangents=True)


for _direct in (vjp, linearize):
    setattr(_direct, DIRECT_ATTR, _direct.__name__)


def vjp_code(fn: Any, args: tuple) -> tuple[str, str]:
    """The generated code of `ops.vjp(fn, *args)`'s two halves (what `amber dump --vjp`
    prints): (forward, backward)."""
    _, _, key = _program(fn, TransformRequest(VJP), None, False)(*args)
    half = _BACKWARDS[key]
    return half.forward_code, half.code


class Backward:
    """`vjp_fn` / `jvp_fn`: the compiled backward half bound to one forward call's residuals.
    `code`: its generated source (`forward_code`: the forward half's)."""

    def __init__(self, half: _Half, residuals: tuple, like: Any, tangents: bool = False) -> None:
        self._half, self._residuals, self._like, self._tangents = half, residuals, like, tangents
        self.code, self.forward_code = half.code, half.forward_code

    def __call__(self, *v: Any) -> Any:
        if self._tangents:
            v = v[0] if len(v) == 1 and isinstance(v[0], tuple | list) else v
            leaves = _leaves(v)
            like = _leaves(self._like)
            if len(leaves) != len(self._half.arity):
                raise ValueError(f"jvp_fn: {len(self._half.arity)} input array(s) but "
                                 f"{len(leaves)} tangent(s)")
            given = [_fitted(t, x, "jvp_fn") for t, x in zip(leaves, like)]
        else:
            if len(v) != 1:
                raise TypeError(f"vjp_fn takes one adjoint (shaped like the output), got {len(v)}")
            given = [_shaped_like(v[0], self._like)]
        # NOTE: a list residual (a tape) is handed over as a copy, so nothing a backward
        # appends reaches the next call
        residuals = [list(r) if isinstance(r, list) else r for r in self._residuals]
        return as_results(self._half.fn(*given, *residuals))

    def __repr__(self) -> str:
        return f"<amber {'jvp_fn' if self._tangents else 'vjp_fn'} of {self._half.title}>"


class _Half:
    """One compiled backward half: the function, its source, and the forward half's."""

    def __init__(self, fn: Callable[..., Any], code: str, forward_code: str, title: str,
                 arity: tuple) -> None:
        self.fn, self.code, self.forward_code, self.title, self.arity = \
            fn, code, forward_code, title, arity


_BACKWARDS: dict[int, _Half] = {}
"""Backward halves by the key their forward half returns (one per specialization compiled)."""
_keys = itertools.count(1)


class SplitFunction(TransformFunction):
    """`fn` compiled as the forward half of vjp or linearize: it returns (output, residuals,
    key of the backward half)."""

    def __init__(self, fn: Any, request: TransformRequest, weights: tuple | None,
                 single_weight: bool) -> None:
        super().__init__(fn, request)
        self._weights, self._single_weight = weights, single_weight

    def _disk_slot(self, *args: Any) -> tuple[None, None]:
        return None, None  # NOTE: the backward half lives in this process only

    def _artifact(self, instance: Any, args: tuple, kwargs: dict, options: CompileOptions,
                  title: str, signature: str, interpret: bool = False,
                  shapes: dict[str, tuple] | None = None) -> Artifact:
        made: dict[str, Any] = {}
        artifact = compile_target(
            self._forward_target(instance), args, kwargs, options, title=title,
            signature=signature, optimize_graph=not interpret, shapes=shapes,
            transform=lambda graph: made.update(self._split(graph, instance, len(args),
                                                            options, title, interpret)))
        half = made["half"]
        half.forward_code = "" if artifact.code is None else artifact.code.source
        return artifact

    def _split(self, graph: Any, instance: Any, nargs: int, options: CompileOptions,
               title: str, interpret: bool) -> dict[str, Any]:
        from ..graph import Builder, InsertPoint
        from ..graph.residuals import split_backward
        (result,) = graph.outputs
        with differentiation_errors(graph):
            back, results = self._differentiate(graph, instance, nargs)
        arity = tuple(p.type for p in back.params)
        residuals, backward = split_backward(graph, back, results)
        key = next(_keys)
        b = Builder(InsertPoint.at_end(graph.body))
        graph.body.set_results([b.op("make_tuple", result, b.op("make_tuple", *residuals),
                                     b.constant(key))])
        name = f"{title or self._title(instance)}_backward"
        backward.name = name.replace(".", "_")
        if interpret:
            from ..graph.interpreter import run_graph
            half = _Half(lambda *a: run_graph(backward, *a), "", "", name, arity)
        else:
            half = _Half(*_load(backward, options, name), "", name, arity)
        _BACKWARDS[key] = half
        return {"half": half}

    def _differentiate(self, graph: Any, instance: Any, nargs: int) -> tuple[Any, list]:
        """Append the backward (reading params of a new block) to `graph`; returns that block
        and the backward's result."""
        from ..graph import Block, Builder, InsertPoint
        from ..graph.gradient import (ALL, GradSpec, _position_inputs, as_value, gradient_of,
                                      split_aux)
        from ..graph.jacobian import _by_position, jvp_of
        (result,) = graph.outputs
        loc = result.producer.loc if result.producer is not None else graph.return_loc
        b = Builder(InsertPoint.at_end(graph.body))
        back = Block()
        if self._request.kind == VJP:
            out, _ = split_aux(b, result, self._request.has_aux)
            sens = back.add_param(out.type, "sens")
            weights = None if self._weights is None else _resolve_weights(graph, instance,
                                                                          self._weights)
            spec = GradSpec(ALL, nargs == 1, weights, False, False, True, self._single_weight)
            found = gradient_of(graph, b, out, spec, _position_inputs(graph, spec, nargs, loc),
                                None if weights is None else
                                [([dict(zip(graph.param_paths, graph.inputs))[p]
                                   for p in w.paths], w.shape, np.dtype(w.dtype))
                                 for w in weights], sens, loc)
            return back, [as_value(b, found)]
        inputs = dict(zip(graph.input_paths, graph.inputs[len(graph.param_paths):]))
        flat = [v for path, v in inputs.items() if _by_position(path)
                and int(path.partition(".")[0]) < nargs and _is_array(v)]
        tangents = [back.add_param(v.type, f"d{v.name}") for v in flat]
        return back, [jvp_of(graph, b, 0, result, flat, tangents)]

    def _token(self) -> str:
        return f"{self._request!r} weights={self._weights is not None}"


def _is_array(value: Any) -> bool:
    from ..graph.types import Tensor
    return isinstance(value.type, Tensor)


def _load(backward: Any, options: CompileOptions, title: str) -> tuple[Callable[..., Any], str]:
    """The backward half optimized and generated as NumPy code (shown under save_graphs)."""
    from .loader import fake_filename, load_function
    optimize(backward, options)
    code = generate(backward, title=title)
    files = _stage_files(title)
    if files is not None:
        files.graph("opt-ir", backward)
        files.code(code.source)
    fn = load_function(code.source, code.function_name, fake_filename(title, code.source),
                       code.externals)
    return fn, code.source


_KEPT = 32
_programs: dict[tuple, tuple[Any, tuple | None, SplitFunction]] = {}


def _program(fn: Any, request: TransformRequest, weights: tuple | None, single: bool
             ) -> SplitFunction:
    """The forward half for `fn` (made once per fn, request and weights: a loop calling
    `ops.vjp(fn, ...)` compiles once)."""
    key = (id(fn), request, None if weights is None else tuple(map(id, weights)), single)
    kept = _programs.get(key)
    if kept is not None and kept[0] is fn and (weights is None or all(
            a is b for a, b in zip(kept[1], weights))):
        return kept[2]
    made = SplitFunction(fn, request, weights, single)
    if len(_programs) >= _KEPT:
        del _programs[next(iter(_programs))]
    _programs[key] = (fn, weights, made)
    return made


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, tuple | list):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def _fitted(given: Any, like: Any, what: str) -> Any:
    """`given` as an array of `like`'s shape and dtype (a clean error when the shape differs)."""
    if not isinstance(like, np.ndarray | np.generic):
        return given
    array = np.asarray(given, dtype=like.dtype)
    if array.shape != np.shape(like):
        raise ValueError(f"{what}: got an array of shape {array.shape} where {np.shape(like)} "
                         "was expected")
    return array


def _shaped_like(v: Any, out: Any) -> Any:
    """The adjoint `v` with the output's structure, arrays cast to its dtypes."""
    if isinstance(out, tuple):
        if not isinstance(v, tuple | list) or len(v) != len(out):
            raise ValueError(f"vjp_fn: the output is a tuple of {len(out)}, so v must be one too")
        return tuple(_shaped_like(a, o) for a, o in zip(v, out))
    return _fitted(v, out, "vjp_fn")
