"""The `amber` command (`python -m amber`): `dump` a model's compile stages, `export` it as a
standalone NumPy module plus weights, and look after the disk cache (`cache path|list|clear`).

Usage errors (bad FILE.py:NAME, missing file or name, bad --input) print one line on stderr and
exit with status 2; a CompileError prints its message and exits with status 1.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import os
import re
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Sequence

import numpy as np

from .frontend.errors import CompileError
from .version import __version__
from .runtime import CompileOptions, DiskCache, get_context
from .runtime.context import BACKENDS
from .runtime import pipeline
from .runtime.keys import call_key, describe_key

STAGES = ("source", "ir", "opt-ir", "code", "all")
FORMATS = ("text", "dot", "svg")
_SHAPE = re.compile(r"^(\d+(?:x\d+)*|\(\)|scalar)?(?::([A-Za-z0-9_]+))?$")
_SCALAR = re.compile(r"^(int|float|bool)=(.+)$")


class UsageError(Exception):
    """A mistake in the command line or in what it points at (exit status 2)."""


class ToolError(Exception):
    """Something the command needs is unavailable, e.g. Graphviz for SVG (exit status 1)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (no usage dump) and status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"amber: error: {message}\n")
        raise SystemExit(2)


# -- loading the user's model ----------------------------------------------------------------

@dataclass
class Target:
    """What FILE.py:NAME named: the object to compile, its example arguments, and its module."""
    name: str
    obj: Any
    instance: Any
    args: tuple
    module: Any

    @property
    def compiled(self) -> Any:
        """What the frontend compiles: the Cell instance, or the plain function."""
        return self.instance if self.instance is not None else self.obj


def load_module(path_text: str) -> Any:
    """Import FILE.py under a private module name (its directory first on sys.path)."""
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path_text}")
    name = "amber_cli_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path_text}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's file failed while importing: say how, briefly
        raise UsageError(f"cannot import {path_text}: {type(exc).__name__}: {exc}") from exc
    return module


def split_spec(spec: str) -> tuple[str, str]:
    """`FILE.py:NAME` -> (file, name)."""
    file, sep, name = spec.rpartition(":")
    if not sep or not file or not name.isidentifier():
        raise UsageError(f"expected FILE.py:NAME (e.g. samples/lenet.py:LeNet5), got {spec!r}")
    return file, name


def load_target(spec: str, input_specs: Sequence[str] | None) -> Target:
    """Resolve FILE.py:NAME, instantiate a Cell class (after `set_seed(0)`), and find inputs."""
    from . import set_seed
    file, name = split_spec(spec)
    module = load_module(file)
    if not hasattr(module, name):
        raise UsageError(f"{file} has no name {name!r}")
    obj = getattr(module, name)
    obj = getattr(obj, "__wrapped__", obj) if not isinstance(obj, type) else obj
    set_seed(0)
    instance = None
    if isinstance(obj, type):
        if not callable(getattr(obj, "construct", None)):
            raise UsageError(f"{file}:{name} is a class without construct (not an nn.Cell)")
        try:
            instance = obj()
        except Exception as exc:
            raise UsageError(f"cannot instantiate {name}() with no arguments: "
                             f"{type(exc).__name__}: {exc}") from exc
    elif callable(getattr(obj, "construct", None)):
        instance = obj
    elif not inspect.isfunction(obj):
        raise UsageError(f"{file}:{name} is a {type(obj).__name__}, not an nn.Cell subclass or "
                         "a function")
    args = parse_inputs(input_specs) if input_specs else example_inputs(module, file, name)
    return Target(name, obj, instance, args, module)


def example_inputs(module: Any, file: str, name: str) -> tuple:
    """The arguments `example_inputs()` in the user's file gives (a tuple, one array, or a
    dict by NAME)."""
    maker = getattr(module, "example_inputs", None)
    if not callable(maker):
        raise UsageError(f"{file} defines no example_inputs(); pass --input SHAPE:DTYPE")
    value = maker()
    if isinstance(value, dict):
        if name not in value:
            raise UsageError(f"example_inputs() of {file} has no entry for {name!r}")
        value = value[name]
    return tuple(value) if isinstance(value, tuple | list) else (value,)


def parse_inputs(specs: Sequence[str]) -> tuple:
    """`1x1x32x32:float32` -> a seeded random array; `int=3` -> a Python scalar."""
    rng = np.random.default_rng(0)
    return tuple(parse_input(spec, rng) for spec in specs)


def parse_input(spec: str, rng: np.random.Generator) -> Any:
    """One --input value (see `parse_inputs`)."""
    scalar = _SCALAR.match(spec)
    if scalar:
        return _python_scalar(scalar.group(1), scalar.group(2), spec)
    match = _SHAPE.match(spec)
    if not match or spec in ("", ":"):
        raise UsageError(f"bad --input {spec!r}: expected SHAPE[:DTYPE] like 1x1x32x32:float32, "
                         "or int=3 / float=0.5 / bool=true")
    dims, dtype_name = match.group(1), match.group(2) or "float32"
    shape = () if dims in (None, "()", "scalar") else tuple(int(d) for d in dims.split("x"))
    try:
        dtype = np.dtype(dtype_name)
    except TypeError:
        raise UsageError(f"bad --input {spec!r}: unknown dtype {dtype_name!r}") from None
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 10, shape).astype(dtype)
    if dtype.kind in "fc":
        return rng.standard_normal(shape).astype(dtype)
    raise UsageError(f"bad --input {spec!r}: dtype {dtype_name} is not numeric")


def _python_scalar(kind: str, text: str, spec: str) -> Any:
    try:
        if kind == "bool":
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text.lower() in ("true", "1")
        return int(text) if kind == "int" else float(text)
    except ValueError:
        raise UsageError(f"bad --input {spec!r}: {text!r} is not a {kind}") from None


# -- dump ------------------------------------------------------------------------------------

def cmd_dump(ns: argparse.Namespace) -> int:
    stage, fmt = ns.stage, ns.format
    if fmt != "text" and stage in ("source", "code"):
        raise UsageError(f"--format {fmt} applies to the IR stages (ir, opt-ir, all), not {stage}")
    target = load_target(ns.spec, ns.input)
    options = CompileOptions(ns.opt_level)
    title = _title(target)
    result = pipeline.build(target.compiled, target.args, {})
    graph = result.graph
    out: list[str] = []
    if stage in ("source", "all"):
        out.append(_section("source", stage) + _sources_text(result, target))
    if stage in ("ir", "all"):
        out.append(_section("ir (before passes)", stage) + _render(graph, fmt))
    if stage in ("opt-ir", "code", "all"):
        def on_pass(report: Any, g: Any) -> None:
            if stage == "all":  # an unchanged graph is not printed again
                body = _render(g, fmt) if getattr(report, "changed", True) else ""
                out.append(_pass_header(report, g) + body)
        pipeline.optimize(graph, options, on_pass)
    if stage in ("opt-ir", "all"):
        out.append(_section("opt-ir (after passes)", stage) + _render(graph, fmt))
    if stage in ("code", "all"):
        signature = describe_key(call_key(target.args, {}))
        code = pipeline.generate(graph, title, signature, _backend(ns))
        out.append(_section("code", stage) + code.source)
    sys.stdout.write("\n".join(text.rstrip("\n") + "\n" for text in out))
    return 0


def _title(target: Target) -> str:
    if target.instance is not None:
        return f"{type(target.instance).__qualname__}.construct"
    return getattr(target.obj, "__qualname__", target.name)


def _section(name: str, stage: str) -> str:
    return f"# ===== {name} =====\n" if stage == "all" else ""


def _pass_header(report: Any, graph: Any) -> str:
    name = getattr(report, "name", report)
    nodes = getattr(report, "nodes", None)
    if nodes is None:
        nodes = sum(1 for _ in graph.walk())
    seconds = getattr(report, "seconds", None)
    timing = "" if seconds is None else f", {seconds * 1e3:.2f} ms"
    changed = "" if getattr(report, "changed", True) else ", unchanged: same IR as above"
    return f"# ===== after pass {name} ({nodes} nodes{timing}{changed}) =====\n"


def _sources_text(result: Any, target: Target) -> str:
    """The source of every function compiled (the frontend's `sources`), each under a header."""
    parts = []
    for item in getattr(result, "sources", ()):
        text = item if isinstance(item, str) else inspect.getsource(item)
        head = next((line.strip() for line in text.splitlines()
                     if line.lstrip().startswith("def ")), "")
        parts.append(f"# --- {head.removesuffix(':')}\n{textwrap.dedent(text)}")
    return "\n".join(parts)


def _render(graph: Any, fmt: str) -> str:
    from .graph import print_graph
    if fmt == "text":
        return print_graph(graph)
    from .graph import render, to_dot
    if fmt == "dot":
        return to_dot(graph)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.svg"
        try:
            render(graph, str(path), "svg")
        except RuntimeError as exc:  # Graphviz missing or failing
            raise ToolError(str(exc)) from exc
        return path.read_text(encoding="utf-8")


# -- export ----------------------------------------------------------------------------------

def cmd_export(ns: argparse.Namespace) -> int:
    target = load_target(ns.spec, ns.input)
    out = Path(ns.output)
    if out.suffix != ".py" or not out.stem.isidentifier():
        raise UsageError(f"-o must name a .py file with an importable name, got {ns.output!r}")
    weights = Path(ns.weights) if ns.weights else out.with_suffix(".npz")
    title = _title(target)
    signature = describe_key(call_key(target.args, {}))
    result = pipeline.build(target.compiled, target.args, {})
    graph = pipeline.optimize(result.graph, CompileOptions(ns.opt_level)) or result.graph
    code = pipeline.generate(graph, title, signature, _backend(ns))
    params = graph.param_paths
    arrays = _gather_params(target.instance, params)
    inputs = [f"{name}: {value.type}" for name, value in
              zip(code.arg_names[len(params):], graph.inputs[len(params):])]
    module_text = export_module(code, title, f"{ns.spec}", params, inputs, weights, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(module_text, encoding="utf-8")
    if params:
        np.savez(weights, **dict(zip(params, arrays)))
    print(f"wrote {out} ({len(module_text.splitlines())} lines)"
          + (f" and {weights} ({len(params)} parameters)" if params else ""))
    return 0


def _gather_params(instance: Any, paths: Sequence[str]) -> list[np.ndarray]:
    from .runtime.paths import make_param_getter
    if not paths:
        return []
    return [np.array(p) for p in make_param_getter(instance, paths)(instance)]


def export_module(code: Any, title: str, origin: str, params: Sequence[str],
                  inputs: Sequence[str], weights: Path, out: Path) -> str:
    """The text of a standalone module: a docstring on how to call it, the generated code (its
    own docstring folded into ours), and `load(weights_path)` / `run(*inputs)`."""
    body, generated_doc = _split_docstring(code.source)
    try:
        weights_ref = os.path.relpath(weights.resolve(), out.resolve().parent)
    except ValueError:  # another drive (Windows)
        weights_ref = str(weights.resolve())
    mod = out.stem
    names = ", ".join(i.split(":")[0] for i in inputs)
    doc = "\n".join([
        f"{title}: static NumPy code exported by amber {__version__}",
        f"from {origin}.",
        "",
        "Runs with only NumPy installed. Calling convention:",
        "",
        f"    import {mod}",
        f"    {mod}.load({weights_ref!r})  # optional: run() loads the file beside this module",
        f"    outputs = {mod}.run({names})",
        "",
        "`run(*inputs)` takes the array inputs in this order:",
        textwrap.indent("\n".join(inputs) or "(none)", "    "),
        "Compile-time arguments (Python scalars, tuples, None) were baked in when exporting.",
        f"`{code.function_name}(*parameters, *inputs)` is the generated function itself; `load()`",
        "returns the parameters in the order it expects (the names in PARAMETERS).",
        "", generated_doc])
    doc = '"""' + doc.rstrip().replace("\\", "\\\\").replace('"""', "'''") + '\n"""\n'
    tail = f'''

# ---- entry points added by `amber export` ----
import os as _os

PARAMETERS = {_tuple_literal(params)}
INPUTS = {_tuple_literal(inputs)}
WEIGHTS = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), {weights_ref!r})
_parameters = None


def load(weights_path=WEIGHTS):
    """Read the parameters (an .npz keyed by PARAMETERS); returns them in call order."""
    global _parameters
    if not PARAMETERS:
        _parameters = ()
        return _parameters
    with np.load(weights_path) as data:
        _parameters = tuple(data[name] for name in PARAMETERS)
    return _parameters


def run(*inputs):
    """Run the model on `inputs` (see INPUTS), loading the weights on first use."""
    if _parameters is None:
        load()
    return {code.function_name}(*_parameters, *inputs)
'''
    return doc + body.rstrip("\n") + "\n" + tail


def _tuple_literal(items: Sequence[str]) -> str:
    """A tuple of strings as source, one per line when it would not fit on one."""
    flat = repr(tuple(items))
    if len(flat) <= 80:
        return flat
    return "(\n" + "".join(f"    {item!r},\n" for item in items) + ")"


def _split_docstring(source: str) -> tuple[str, str]:
    """(source without its module docstring, the docstring's `Input signature` line)."""
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return source, ""
    lines = source.splitlines(keepends=True)
    rest = "".join(lines[:first.lineno - 1] + lines[first.end_lineno:])
    kept = [line for line in first.value.value.splitlines() if line.startswith("Input signature")]
    return rest.lstrip("\n"), "\n".join(kept)


# -- cache -----------------------------------------------------------------------------------

def cmd_cache(ns: argparse.Namespace) -> int:
    cache = DiskCache(get_context().resolved_cache_dir())
    if ns.action == "path":
        print(cache.root)
    elif ns.action == "list":
        entries = list(cache.entries())
        for e in entries:
            state = "" if e.valid else "  [damaged]"
            print(f"{e.created}  {e.size:>8} B  {e.target}{e.signature}  {e.path}{state}")
        print(f"{len(entries)} entries in {cache.root}")
    else:
        removed = cache.clear()
        print(f"removed {removed} entries from {cache.root}")
    return 0


# -- entry -----------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `amber` command."""
    parser = _Parser(prog="amber", description="amber: compile Python models to static NumPy "
                     "code.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    dump = sub.add_parser("dump", help="print a model's compile stages (the code by default)")
    _add_target_args(dump)
    dump.add_argument("--stage", choices=STAGES, default="code",
                      help="what to print: source, ir, opt-ir, code, or all of them")
    dump.add_argument("--format", choices=FORMATS, default="text", help="IR format")
    dump.set_defaults(handler=cmd_dump)
    export = sub.add_parser("export", help="write a standalone NumPy module plus weights")
    _add_target_args(export)
    export.add_argument("-o", "--output", required=True, help="the module to write (.py)")
    export.add_argument("--weights", help="the weights file (.npz; default beside the module)")
    export.set_defaults(handler=cmd_export)
    cache = sub.add_parser("cache", help="the disk cache: show its path, list or clear it")
    cache.add_argument("action", choices=("path", "list", "clear"))
    cache.set_defaults(handler=cmd_cache)
    return parser


def _backend(ns: argparse.Namespace) -> str:
    """The backend codegen writes for (`--backend`; numba without Numba is a usage error)."""
    try:
        return CompileOptions(backend=ns.backend).codegen_backend
    except ImportError as err:
        raise UsageError(str(err)) from None


def _add_target_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="FILE.py:NAME", help="a Cell subclass or function")
    parser.add_argument("--input", action="append", metavar="SHAPE[:DTYPE]",
                        help="an input like 1x1x32x32:float32 (repeat per argument; default: "
                             "the file's example_inputs())")
    parser.add_argument("-O", dest="opt_level", type=int, choices=(0, 1, 2), default=2,
                        help="optimization level (-O0, -O1, -O2)")
    parser.add_argument("--backend", choices=BACKENDS, default="numpy",
                        help="numpy (default): NumPy code only; numba: loops that can be, as "
                             "Numba kernels; auto: those the cost rule picks")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `amber` command; returns the exit status."""
    parser = build_parser()
    ns = parser.parse_args(argv)
    if ns.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return ns.handler(ns)
    except UsageError as exc:
        sys.stderr.write(f"amber: error: {exc}\n")
        return 2
    except CompileError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except ToolError as exc:
        sys.stderr.write(f"amber: error: {exc}\n")
        return 1
