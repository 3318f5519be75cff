"""`vjp` and `linearize` with MindSpore 2.x's API, as two compiled halves.

One call compiles `fn` differentiated (reverse mode for vjp, forward mode for linearize), then
cuts the graph at the backward's inputs (graph/residuals.py): the forward half returns the
output and the residuals (saved values, loop tapes, trip counts), the backward half takes the
adjoint (or the tangents) and those residuals. `vjp_fn(v)` runs only the backward half on the
residuals of the call that made it, so a second `vjp_fn(v)` neither runs the forward again nor
sees another call's residuals (each `vjp_fn` holds its own tuple; generated code never writes
into its inputs).

The backward half is generated beside the forward's specialization; the forward returns a key
naming it (a digest of its code). Both halves go to the disk cache together (the backward as an
entry of its own, under a key made from that digest, checked against the same sources), so a
new process runs both without compiling; a backward evicted since is recompiled with its
forward. With `weights` both stay in this process (which Parameters were chosen is in no key).
"""
from __future__ import annotations

import hashlib
import itertools
from typing import Any, Callable

import numpy as np

from ..common.markers import DIRECT_ATTR
from ..common.tensor import as_results
from ..graph.jacobian import TransformRequest
from . import context as _ctx
from .compiled import CompiledFunction
from .context import CompileOptions
from .diskcache import DiskCache
from .grad import _resolve_weights, _weights
from .pipeline import Artifact, _stage_files, compile_target, generate, optimize
from .specializations import Store, _source_file
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
    result, residuals, half = _run(program, inputs)
    out = result[0] if has_aux else result
    backward = Backward(half, residuals, out)
    if not has_aux:
        return out, backward
    return out, backward, tuple(result[1:])


def linearize(fn: Any, inputs: Any) -> tuple[Any, Callable[..., Any]]:
    """(fn(*inputs), jvp_fn) as MindSpore's `linearize`: `jvp_fn(*v)` (one tangent per input,
    or one tuple of them) gives J v at `inputs`, running only the tangent half."""
    inputs = _tuple(inputs)
    program = _program(fn, TransformRequest(LINEARIZE), None, False)
    out, residuals, half = _run(program, inputs)
    return out, Backward(half, residuals, inputs, tangents=True)


for _direct in (vjp, linearize):
    setattr(_direct, DIRECT_ATTR, _direct.__name__)


def vjp_code(fn: Any, args: tuple) -> tuple[str, str]:
    """The generated code of `ops.vjp(fn, *args)`'s two halves (what `amber dump --vjp`
    prints): (forward, backward)."""
    _, _, half = _run(_program(fn, TransformRequest(VJP), None, False), args)
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
            if len(leaves) != self._half.inputs:
                raise ValueError(f"jvp_fn: {self._half.inputs} input array(s) but "
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
    """One compiled backward half: the function, its source, and the forward half's; `inputs`
    is how many adjoint or tangent arrays it takes before the residuals; `generated` (codegen's
    GeneratedCode) is kept to write it to the disk cache."""

    def __init__(self, fn: Callable[..., Any], code: str, forward_code: str, title: str,
                 inputs: int, generated: Any = None) -> None:
        self.fn, self.code, self.forward_code, self.title, self.inputs = \
            fn, code, forward_code, title, inputs
        self.generated = generated


_BACKWARDS: dict[str, _Half] = {}
"""Backward halves by the key their forward half returns: "<inputs>:<digest of the code>"."""
_keys = itertools.count(1)


def _run(program: SplitFunction, inputs: tuple) -> tuple[Any, tuple, _Half]:
    """(output, residuals, backward half) of one forward call. A forward read from disk whose
    backward is gone (evicted) is compiled again in this process, both halves."""
    result, residuals, key = program(*inputs)
    half = _BACKWARDS.get(key) or _half_from_disk(key)
    if half is None:
        program.memory_only = True
        program.cache_clear()
        result, residuals, key = program(*inputs)
        half = _BACKWARDS[key]
    half.forward_code = half.forward_code or program.code or ""  # NOTE: read from disk
    return result, residuals, half


def _disk() -> DiskCache | None:
    ctx = _ctx.get_context()
    if not ctx.disk_cache_enabled():
        return None
    disk = DiskCache(ctx.resolved_cache_dir())
    return disk if disk.trusted() else None


def _half_first_key(disk: DiskCache, key: str) -> str:
    return disk.first_key(f"amber backward half {key}", key, "", "")


def _half_from_disk(key: str) -> _Half | None:
    disk = _disk()
    entry = None if disk is None else disk.lookup(_half_first_key(disk, key), None, 0)
    if entry is None:
        return None
    half = _Half(entry.fn, entry.source, "", entry.function_name, int(key.partition(":")[0]))
    _BACKWARDS[key] = half
    return half


def _store_half(disk: DiskCache, key: str, half: _Half, artifact: Artifact, title: str,
                signature: str, files: list) -> bool:
    """Write the backward half under its own disk key, valid while the forward's sources are
    unchanged; False if it cannot be kept (warned about under the forward's title)."""
    code = half.generated
    entry = CompiledFunction(fn=half.fn, source=code.source, filename="",
                             function_name=code.function_name, line_map=dict(code.line_map),
                             externals=dict(code.externals))
    return disk.store(_half_first_key(disk, key), entry, artifact.sources, title, signature,
                      files) is not None


class SplitFunction(TransformFunction):
    """`fn` compiled as the forward half of vjp or linearize: it returns (output, residuals,
    key of the backward half)."""

    def __init__(self, fn: Any, request: TransformRequest, weights: tuple | None,
                 single_weight: bool) -> None:
        super().__init__(fn, request)
        self._weights, self._single_weight = weights, single_weight

        self.memory_only = weights is not None  # NOTE: the chosen weights are in no disk key

    def _disk_slot(self, ctx: Any, *args: Any) -> tuple[DiskCache | None, str | None]:
        if self.memory_only:
            return None, None
        return super()._disk_slot(ctx, *args)

    def _store(self, disk: DiskCache, first: str, instance: Any, title: str,
               signature: str) -> Store:
        """Writes the backward half, then (if it could be kept) the forward half."""
        forward = super()._store(disk, first, instance, title, signature)
        files = [_source_file(self._function(instance))]

        def store(entry: CompiledFunction, artifact: Artifact) -> str | None:
            key = artifact.backward_key
            if key is None or not _store_half(disk, key, _BACKWARDS[key], artifact, title,
                                              signature, files):
                return None
            return forward(entry, artifact)
        return store

    def _artifact(self, instance: Any, args: tuple, kwargs: dict, options: CompileOptions,
                  title: str, signature: str, interpret: bool = False,
                  shapes: dict[str, tuple] | None = None) -> Artifact:
        made: dict[str, Any] = {}
        artifact = compile_target(
            self._forward_target(instance), args, kwargs, options, title=title,
            signature=signature, optimize_graph=not interpret, shapes=shapes,
            transform=lambda graph: made.update(self._split(graph, instance, len(args),
                                                            options, title, interpret)))
        half = _BACKWARDS[made["key"]]
        half.forward_code = "" if artifact.code is None else artifact.code.source
        artifact.backward_key = made["key"]
        return artifact

    def _split(self, graph: Any, instance: Any, nargs: int, options: CompileOptions,
               title: str, interpret: bool) -> dict[str, Any]:
        from ..graph import Builder, InsertPoint
        from ..graph.residuals import split_backward
        (result,) = graph.outputs
        with differentiation_errors(graph):
            back, results = self._differentiate(graph, instance, nargs)
        inputs = len(back.params)
        residuals, backward = split_backward(graph, back, results)
        name = f"{title or self._title(instance)}_backward"
        backward.name = name.replace(".", "_")
        if interpret:
            from ..graph.interpreter import run_graph
            half = _Half(lambda *a: run_graph(backward, *a), "", "", name, inputs)
            key = f"{inputs}:interpreted {next(_keys)}"
        else:
            fn, code = _load(backward, options, name)
            half = _Half(fn, code.source, "", name, inputs, code)
            key = f"{inputs}:{hashlib.sha256(code.source.encode()).hexdigest()[:40]}"
        b = Builder(InsertPoint.at_end(graph.body))
        graph.body.set_results([b.op("make_tuple", result, b.op("make_tuple", *residuals),
                                     b.constant(key))])
        _BACKWARDS[key] = half
        return {"key": key}

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


def _load(backward: Any, options: CompileOptions, title: str) -> tuple[Callable[..., Any], Any]:
    """The backward half optimized and generated as NumPy code (shown under save_graphs)."""
    from .loader import fake_filename, load_function
    optimize(backward, options)
    code = generate(backward, title=title, threads=options.num_threads)
    files = _stage_files(title)
    if files is not None:
        files.graph("opt-ir", backward)
        files.code(code.source)
    fn = load_function(code.source, code.function_name, fake_filename(title, code.source),
                       code.externals)
    return fn, code


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
