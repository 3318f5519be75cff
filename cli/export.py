"""`amber export FILE.py:NAME -o MODULE.py`: a standalone NumPy module (the generated code plus
`load()` and `run()`) and the model's weights as an .npz."""
from __future__ import annotations

import argparse
import ast
import os
import textwrap
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..graph.sizes import plain_symbol
from ..runtime import pipeline
from ..version import __version__
from . import training
from .errors import UsageError
from .target import add_target_args, compile_options, load_target

EXPORT_HELP = """\
The weights exported are those of the object FILE.py:NAME names: for a Cell subclass, a fresh
NAME() built after amber.set_seed(0) (its initial weights); to export trained weights, name a Cell
instance the file builds at its top level (e.g. `net = LeNet5(); load_checkpoint(net, ...)`,
then FILE.py:net). The module's run(*inputs) checks the inputs' number, shapes and dtypes
against the ones exported for."""


def register(sub: Any) -> argparse.ArgumentParser:
    """Add the `export` subcommand and its flags."""
    parser = sub.add_parser("export", help="write a standalone NumPy module plus weights, or "
                                             "an ONNX model (--format onnx)",
                            description="Write a standalone NumPy module plus weights, or an "
                                        "ONNX model (--format onnx; see docs/onnx.md).",
                            epilog=EXPORT_HELP + "\n\n" + training.TRAIN_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target_args(parser)
    parser.add_argument("-o", "--output", required=True,
                        help="the module to write (.py), or the model (.onnx) with --format onnx")
    parser.add_argument("--format", choices=("numpy", "onnx"), default="numpy",
                        help="numpy (default): a standalone NumPy module plus weights; onnx: an "
                             "ONNX model (opset 17) with the weights as initializers, control "
                             "flow as If/Loop")
    parser.add_argument("--weights", help="the weights file (.npz; default beside the module)")
    training.add_flags(parser)
    parser.set_defaults(handler=run)
    return parser


def run(ns: argparse.Namespace) -> int:
    if ns.format == "onnx":
        return run_onnx(ns)
    target = load_target(ns.spec, ns.input, ns.dynamic)
    training.prepare(ns, target)
    out = Path(ns.output)
    if out.suffix != ".py" or not out.stem.isidentifier():
        raise UsageError(f"-o must name a .py file with an importable name, got {ns.output!r}")
    weights = Path(ns.weights) if ns.weights else out.with_suffix(".npz")
    title = target.title
    signature = target.signature()
    result = pipeline.build(target.compiled, target.args, {}, shapes=target.shapes())
    options = compile_options(ns)
    graph = pipeline.optimize(result.graph, options) or result.graph
    code = pipeline.generate(graph, title, signature, options.codegen_backend,
                             threads=options.num_threads)
    params = graph.param_paths
    arrays = _gather_params(target.instance, params)
    inputs = [(name, value.type) for name, value in
              zip(code.arg_names[len(params):], graph.inputs[len(params):])]
    module_text = export_module(code, title, f"{ns.spec}", params, inputs, weights, out,
                                ns.train)
    if ns.train:
        names = training.checkpoint_names(target.instance, params)
        module_text += training.train_tail(code.function_name, names)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(module_text, encoding="utf-8")
    if params:
        np.savez(weights, **dict(zip(params, arrays)))
    print(f"wrote {out} ({len(module_text.splitlines())} lines)"
          + (f" and {weights} ({len(params)} parameters)" if params else ""))
    return 0


def run_onnx(ns: argparse.Namespace) -> int:
    """`--format onnx`: the optimized graph as an ONNX model, weights as initializers."""
    from ..runtime.onnx_export import OnnxProgram, lower, require_onnx
    out = Path(ns.output)
    if out.suffix != ".onnx":
        raise UsageError(f"with --format onnx, -o must name a .onnx file, got {ns.output!r}")
    if ns.train or ns.weights:
        raise UsageError("--train and --weights are for --format numpy (an ONNX model holds "
                         "its weights and runs inference only)")
    try:
        onnx = require_onnx()
    except ImportError as err:
        raise UsageError(str(err)) from None
    target = load_target(ns.spec, ns.input, ns.dynamic)
    program = OnnxProgram(target.compiled, target.instance, target.args, target.dynamic)
    exported = lower(program, compile_options(ns))
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(exported.model, str(out))
    graph = exported.model.graph
    inputs = ", ".join(f"{i.name}{_dims(i)}" for i in graph.input)
    print(f"wrote {out} (ONNX opset {exported.model.opset_import[0].version}, "
          f"{len(graph.node)} nodes, {len(graph.initializer)} initializers; inputs {inputs})")
    return 0


def _dims(value_info: Any) -> str:
    dims = value_info.type.tensor_type.shape.dim
    return "[" + ",".join(d.dim_param or str(d.dim_value) for d in dims) + "]"


def _gather_params(instance: Any, paths: Sequence[str]) -> list[np.ndarray]:
    from ..runtime.paths import make_param_getter
    if not paths:
        return []
    return [np.array(p) for p in make_param_getter(instance, paths)(instance)]


def input_spec(name: str, type_: Any) -> tuple[str, tuple | None, str | None]:
    """(name, shape, dtype name) of a tensor input: a shape item is an int, a symbolic size's
    name (`"N"`: any size, the same wherever N appears) or None (any size); shape and dtype
    None for anything else (not checked)."""
    shape, dtype = getattr(type_, "shape", None), getattr(type_, "dtype", None)
    if shape is None or dtype is None:
        return name, None, None
    return name, tuple(d if isinstance(d, int) else plain_symbol(d) for d in shape), \
        np.dtype(dtype).name


def export_module(code: Any, title: str, origin: str, params: Sequence[str],
                  inputs: Sequence[tuple[str, Any]], weights: Path, out: Path,
                  train: bool = False) -> str:
    """The text of a standalone module: a docstring on how to call it, the generated code (its
    own docstring folded into ours), and `load(weights_path)` / `run(*inputs)`."""
    body, generated_doc = _split_docstring(code.source)
    try:
        weights_ref = os.path.relpath(weights.resolve(), out.resolve().parent)
    except ValueError:  # another drive (Windows)
        weights_ref = str(weights.resolve())
    mod = out.stem
    described = [f"{name}: {type_}" for name, type_ in inputs]
    specs = tuple(input_spec(name, type_) for name, type_ in inputs)
    names = ", ".join(name for name, _ in inputs)
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
        "`run(*inputs)` takes the array inputs in this order (it checks their number, shapes",
        "and dtypes, raising TypeError or ValueError; a symbolic size such as N is any size,",
        "the same in every input it appears in):",
        textwrap.indent("\n".join(described) or "(none)", "    "),
        "Compile-time arguments (Python scalars, tuples, None) were baked in when exporting.",
        f"`{code.function_name}(*parameters, *inputs)` is the generated function itself; `load()`",
        "returns the parameters in the order it expects (the names in PARAMETERS).",
        *(training.train_doc(mod, names) if train else []),
        "", generated_doc])
    doc = '"""' + doc.rstrip().replace("\\", "\\\\").replace('"""', "'''") + '\n"""\n'
    tail = f'''

# ---- entry points added by `amber export` ----
import os as _os

PARAMETERS = {_tuple_literal(params)}
INPUTS = {_tuple_literal(described)}
INPUT_SPECS = {_tuple_literal(specs)}
"""(name, shape, dtype) of each input run() takes; in a shape, a name such as "N" is any size,
the same wherever it appears, and None is any size."""
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


def check_inputs(inputs):
    """Raise TypeError for a wrong number of inputs, ValueError for a wrong shape or dtype."""
    if len(inputs) != len(INPUT_SPECS):
        expected = ", ".join(name for name, _, _ in INPUT_SPECS) or "none"
        raise TypeError(f"run() takes {{len(INPUT_SPECS)}} inputs ({{expected}}), "
                        f"{{len(inputs)}} given")
    sizes = {{}}
    for (name, shape, dtype), value in zip(INPUT_SPECS, inputs):
        if shape is None:
            continue
        given_shape = getattr(value, "shape", None)
        given_dtype = getattr(value, "dtype", None)
        before = dict(sizes)
        fits = (given_shape is not None and len(given_shape) == len(shape)
                and all(e is None or e == g or isinstance(e, str) and sizes.setdefault(e, g)
                        == g for e, g in zip(shape, given_shape)))
        if not fits or given_dtype != np.dtype(dtype):
            want = "(" + ", ".join("?" if e is None else str(e) for e in shape) + \\
                ("," if len(shape) == 1 else "") + ")"
            given = (f"shape {{tuple(given_shape)}}, dtype {{given_dtype}}"
                     if given_shape is not None else f"a {{type(value).__name__}}")
            known = ", ".join(f"{{s}} = {{v}}" for s, v in before.items() if s in shape)
            raise ValueError(f"run(): input {{name!r}} must be an array of shape {{want}}, "
                             f"dtype {{dtype}}; given {{given}}"
                             + (f" ({{known}} from the inputs before it)" if known else ""))


def run(*inputs):
    """Run the model on `inputs` (see INPUTS), loading the weights on first use."""
    check_inputs(inputs)
    if _parameters is None:
        load()
    return {code.function_name}(*_parameters, *inputs)
'''
    return doc + body.rstrip("\n") + "\n" + tail


def _tuple_literal(items: Sequence[Any]) -> str:
    """A tuple as source, one item per line when it would not fit on one."""
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
