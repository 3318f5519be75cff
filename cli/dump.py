"""`amber dump FILE.py:NAME`: print a model's compile stages (the generated code by default), or
write them one file per stage into `--out-dir`."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from ..runtime import CompileOptions, pipeline
from ..runtime.stages import GRAPH_FORMATS, StageFiles, render_graph, sources_text
from .errors import ToolError, UsageError
from .target import Target, add_target_args, compile_options, load_target

STAGES = ("source", "ir", "opt-ir", "code", "all")


def register(sub: Any) -> argparse.ArgumentParser:
    """Add the `dump` subcommand and its flags."""
    parser = sub.add_parser("dump", help="print a model's compile stages (the code by default)",
                            description="Print a model's compile stages, or write them one "
                            "file per stage into --out-dir (00_source.py, 01_ir.txt, "
                            "02_fold_constants.txt, ..., NN_code.py).")
    add_target_args(parser)
    parser.add_argument("--stage", choices=STAGES, default="code",
                        help="what to print: source, ir, opt-ir, code, or all of them")
    parser.add_argument("--format", choices=GRAPH_FORMATS, default="text",
                        help="how IR stages are written: text, dot, or svg (needs Graphviz); "
                        "--stage all with dot or svg needs --out-dir")
    parser.add_argument("--out-dir", metavar="DIR",
                        help="write one numbered file per stage into DIR instead of printing")
    parser.add_argument("--grad", action="store_true",
                        help="the gradient function instead: GradOperation(get_all=True, "
                        "get_by_list=<the Cell's trainable parameters>, sens_param=<a "
                        "non-scalar output>) (ir: the forward after the cleanups, then the "
                        "backward)")
    parser.add_argument("--vjp", action="store_true",
                        help="ops.vjp's two compiled halves instead (--stage code): the forward "
                        "returning its residuals, then the backward each vjp_fn(v) runs")
    parser.set_defaults(handler=run)
    return parser


def run(ns: argparse.Namespace) -> int:
    stage, fmt = ns.stage, ns.format
    if fmt != "text" and stage in ("source", "code"):
        raise UsageError(f"--format {fmt} applies to the IR stages (ir, opt-ir, all), not {stage}")
    if fmt != "text" and stage == "all" and not ns.out_dir:
        raise UsageError(f"--stage all --format {fmt} writes one file per stage: add "
                         "--out-dir DIR")
    target = load_target(ns.spec, ns.input, ns.dynamic)
    if getattr(ns, "vjp", False):
        if stage != "code" or ns.out_dir or ns.grad:
            raise UsageError("--vjp prints the generated code of both halves: use it with "
                             "--stage code, without --grad or --out-dir")
        from ..runtime.vjp import vjp_code
        forward, backward = _tool(lambda: vjp_code(target.compiled, target.args))
        sys.stdout.write(f"# ===== vjp forward (returns the residuals) =====\n{forward}\n"
                         f"# ===== vjp backward (vjp_fn) =====\n{backward}")
        return 0
    if ns.out_dir:
        files = StageFiles(ns.out_dir, fmt)
        _stages(target, stage, compile_options(ns), _FileSink(files), ns.grad)
        sys.stdout.write("".join(f"{path}\n" for path in files.written))
    else:
        sink = _TextSink(stage, fmt)
        _stages(target, stage, compile_options(ns), sink, ns.grad)
        sys.stdout.write("\n".join(text.rstrip("\n") + "\n" for text in sink.parts))
    return 0


def _stages(target: Target, stage: str, options: CompileOptions, sink: Any,
            grad: bool = False) -> None:
    """Run the pipeline as far as `stage` needs, handing each stage to `sink` (of the gradient
    function, with `grad`: static shapes, the example arguments' own)."""
    if grad:
        from ..runtime.grad import gradient_build
        from ..runtime.keys import call_key, describe_key
        result = gradient_build(target.compiled, target.args)
        title, signature = f"grad_{target.title}", describe_key(call_key(result.args, {}))
    else:
        result = pipeline.build(target.compiled, target.args, {}, shapes=target.shapes())
        title, signature = target.title, target.signature()
    graph = result.graph
    if stage in ("source", "all"):
        sink.source(result.sources, getattr(result, "source_titles", ()))
    if stage in ("ir", "all"):
        sink.graph("ir", graph)
    if stage in ("opt-ir", "code", "all"):
        on_pass: Callable[[Any, Any], None] | None = None
        if stage == "all":
            def on_pass(report: Any, g: Any) -> None:
                sink.graph_pass(report, g)
        pipeline.optimize(graph, options, on_pass)
    if stage in ("opt-ir", "all"):
        sink.graph("opt-ir", graph)
    if stage in ("code", "all"):
        sink.code(pipeline.generate(graph, title, signature, options.codegen_backend,
                                    threads=options.num_threads).source)


class _TextSink:
    """Collects the stages as sections of one text (headers only for `--stage all`)."""

    def __init__(self, stage: str, fmt: str) -> None:
        self.all, self.fmt = stage == "all", fmt
        self.parts: list[str] = []

    def _header(self, name: str) -> str:
        return f"# ===== {name} =====\n" if self.all else ""

    def source(self, sources: Any, titles: Any) -> None:
        self.parts.append(self._header("source") + sources_text(sources, titles))

    def graph(self, name: str, graph: Any) -> None:
        label = {"ir": "ir (before passes)", "opt-ir": "opt-ir (after passes)"}[name]
        self.parts.append(self._header(label) + _render(graph, self.fmt))

    def graph_pass(self, report: Any, graph: Any) -> None:
        changed = getattr(report, "changed", True)  # an unchanged graph is not printed again
        self.parts.append(_pass_header(report, graph) + (_render(graph, self.fmt)
                                                         if changed else ""))

    def code(self, source: str) -> None:
        self.parts.append(self._header("code") + source)


class _FileSink:
    """Writes each stage as the next numbered file (one per pass run, changed or not)."""

    def __init__(self, files: StageFiles) -> None:
        self.files = files

    def source(self, sources: Any, titles: Any) -> None:
        self.files.source(sources, titles)

    def graph(self, name: str, graph: Any) -> None:
        _tool(lambda: self.files.graph(name, graph))

    def graph_pass(self, report: Any, graph: Any) -> None:
        _tool(lambda: self.files.graph(getattr(report, "name", str(report)), graph))

    def code(self, source: str) -> None:
        self.files.code(source)


def _pass_header(report: Any, graph: Any) -> str:
    name = getattr(report, "name", report)
    nodes = getattr(report, "nodes", None)
    if nodes is None:
        nodes = sum(1 for _ in graph.walk())
    seconds = getattr(report, "seconds", None)
    timing = "" if seconds is None else f", {seconds * 1e3:.2f} ms"
    changed = "" if getattr(report, "changed", True) else ", unchanged: same IR as above"
    return f"# ===== after pass {name} ({nodes} nodes{timing}{changed}) =====\n"


def _render(graph: Any, fmt: str) -> str:
    return _tool(lambda: render_graph(graph, fmt))


def _tool(action: Callable[[], Any]) -> Any:
    """Run `action`; Graphviz missing or failing is a ToolError (exit status 1)."""
    try:
        return action()
    except RuntimeError as exc:
        raise ToolError(str(exc)) from exc
