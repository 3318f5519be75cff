"""The compile pipeline driver: frontend -> passes -> codegen, as three steps the CLI can also
run one by one (to print each stage), and `compile_target` running all three.

The stage packages are imported on first use, so a process served from the disk cache never
loads the frontend, the passes or codegen.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..common.parsing import PARSE_LOCK
from ..version import __version__
from . import recorder
from .context import CompileOptions, get_context
from .recorder import CompileTrace

PassCallback = Callable[[Any, Any], None]
"""`on_pass(report_or_name, graph)` after each pass (`report.name/.nodes/.seconds` when given)."""


@dataclass
class Artifact:
    """Everything one compile produced: the optimized graph, the generated code, and what the
    result depends on (guards, compiled sources)."""
    graph: Any
    code: Any
    guards: tuple[Any, ...]
    sources: tuple[Any, ...]
    ir: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    regenerate_code: Callable[[frozenset[int]], Any] | None = None
    generate_as: Callable[[str, frozenset[int]], Any] | None = None
    """The graph's code for another backend, with the regions in `exclude` as NumPy (tiers.py
    writes the NumPy tier first and the kernels in the background)."""
    trace: dict[str, Any] | None = None
    """The stages as the compile report records them (None when no report is recorded)."""
    backward_key: str | None = None
    """The key of the backward half this forward half returns (vjp.py), stored beside it."""

    def regenerate(self, exclude: frozenset[int]) -> Any:
        """The code, generated again with the loop regions whose ids are in `exclude` written
        as NumPy (a Numba kernel failed to compile); the code as it is when none are."""
        if not exclude or self.regenerate_code is None:
            return self.code
        return self.regenerate_code(exclude)

    @property
    def param_paths(self) -> tuple[str, ...]:
        return self.graph.param_paths

    @property
    def input_paths(self) -> tuple[str, ...]:
        return self.graph.input_paths


def build(target: Any, args: tuple, kwargs: dict | None = None, *, fallback: bool = False,
          shapes: dict[str, tuple] | None = None) -> Any:
    """Frontend: `target` (a Cell instance or a function) and example arguments -> BuildResult;
    `shapes`: symbolic shapes of array arguments by input path (see `build_graph`)."""
    from ..frontend import build_graph
    return build_graph(target, args, kwargs or {}, fallback=fallback, shapes=shapes)


def optimize(graph: Any, options: CompileOptions, on_pass: PassCallback | None = None) -> Any:
    """Passes: run the pipeline of `options.opt_level` over `graph`, in place."""
    from ..graph.passes import optimize as run_passes
    return run_passes(graph, level=options.opt_level, verify_each=options.verify,
                      on_pass=on_pass, threads=options.num_threads,
                      native=options.native_parts)


def generate(graph: Any, title: str = "", signature: str = "", backend: str = "numpy",
             exclude: frozenset[int] = frozenset(), threads: int = 1) -> Any:
    """Codegen: graph -> GeneratedCode(source, function_name, arg_names, line_map); `backend`
    as `CompileOptions.codegen_backend` gives it, `threads` as `num_threads`."""
    from ..codegen import generate as emit
    with PARSE_LOCK:  # NOTE: codegen builds and compiles `ast` trees, also on the kernel thread
        return emit(graph, title=title, signature=signature, version=__version__,
                    backend=backend, exclude=exclude, threads=threads)


def generate_onnx(graph: Any, title: str, signature: str) -> Any:
    """Codegen for backend="onnxruntime": a CompileError at the user's line for what ONNX
    cannot express."""
    from ..codegen.onnx import OnnxRefusal
    from .onnx_export import refusal_error
    try:
        return generate(graph, title=title, signature=signature, backend="onnxruntime")
    except OnnxRefusal as err:
        raise refusal_error(err, graph) from None


def onnx_inference_only(graph: Any) -> Exception:
    """The error for a gradient compiled with backend="onnxruntime"."""
    from ..frontend.errors import CompileError
    loc = graph.return_loc
    message = ("backend='onnxruntime' runs inference only: gradients and training run on the "
               "NumPy backend")
    hint = "compile this function with backend='numpy' (jit(..., backend='numpy'))"
    if loc is None:
        return CompileError(message, hint=hint)
    return CompileError(message, loc.file, loc.line, loc.col, loc.text, hint)


def print_ir(graph: Any) -> str:
    """The graph's text form (kept with each specialization for `jit(...).ir`)."""
    from ..graph import print_graph
    return print_graph(graph)


def compile_target(target: Any, args: tuple, kwargs: dict | None, options: CompileOptions, *,
                   fallback: bool = False, title: str = "", signature: str = "",
                   transform: Callable[[Any], None] | None = None,
                   optimize_graph: bool = True,
                   shapes: dict[str, tuple] | None = None) -> Artifact:
    """Run frontend, passes and codegen for one specialization. `transform(graph)` rewrites
    the built graph after the cleanup passes (differentiation); `optimize_graph=False` stops
    before the passes and codegen (a graph to interpret); `shapes` makes array arguments'
    axes symbolic (see `build_graph`)."""
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    result = build(target, args, kwargs, fallback=fallback, shapes=shapes)
    graph = result.graph
    files = _stage_files(title or graph.name) if optimize_graph else None
    trace = CompileTrace() if optimize_graph and recorder.active() is not None else None
    watchers = [w for w in (files, trace) if w is not None]
    for watcher in watchers:
        watcher.source(result.sources, getattr(result, "source_titles", ()))
        watcher.graph("ir", graph)
    if transform is not None:
        if options.backend == "onnxruntime":
            raise onnx_inference_only(graph)
        optimize(graph, CompileOptions(1, options.verify))  # NOTE: less to differentiate
        transform(graph)
        for watcher in watchers:
            watcher.graph("transformed", graph)
    seconds["frontend"] = (mid := time.perf_counter()) - start
    if not optimize_graph:
        return Artifact(graph, None, tuple(result.guards), tuple(getattr(result, "sources", ())))
    on_pass = None
    if watchers:
        def on_pass(report: Any, g: Any) -> None:
            for watcher in watchers:
                watcher.on_pass(report, g)
    graph = optimize(graph, options, on_pass) or graph
    seconds["passes"] = (mid2 := time.perf_counter()) - mid
    backend = options.codegen_backend
    if backend == "onnxruntime":
        code = generate_onnx(graph, title, signature)
    else:
        code = generate(graph, title=title, signature=signature, backend=backend,
                        threads=options.num_threads)
    seconds["codegen"] = time.perf_counter() - mid2
    if files is not None:
        files.graph("opt-ir", graph)
        files.code(code.source)
    if trace is not None:
        trace.graph("opt_ir", graph)
        trace.finish(graph, code, seconds, options.backend)
    return Artifact(graph, code, tuple(result.guards), tuple(getattr(result, "sources", ())),
                    print_ir(graph), seconds,
                    lambda exclude: generate(graph, title, signature, backend, exclude,
                                             options.num_threads),
                    lambda other, exclude: generate(graph, title, signature, other, exclude,
                                                    options.num_threads),
                    None if trace is None else trace.data)


def _stage_files(title: str) -> Any:
    """Where this compile's stages go under `set_context(save_graphs=True)`; else None."""
    ctx = get_context()
    if not ctx.save_graphs:
        return None
    from .stages import StageFiles, next_directory
    return StageFiles(next_directory(ctx.save_graphs_path, title))
