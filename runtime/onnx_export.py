"""`amber.export(net, *inputs, file_name=..., file_format="ONNX")`: compile a Cell, a jit object
or a function for example inputs and write the optimized graph as an ONNX model (codegen/onnx).
onnx is imported only here, when exporting.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .context import CompileOptions, get_context
from .paths import access

FORMATS = ("ONNX",)
"""What `export` writes. MindSpore's MINDIR and AIR are its own runtimes' formats."""
EXAMPLE_SIZE = 2
"""The size a None axis of a `Tensor(shape=[None, ...])` input has while compiling."""
INSTALL_HINT = "pip install 'amber-jit[onnx]' (or pip install onnx onnxruntime)"


@dataclass
class OnnxProgram:
    """What was compiled: the target, its example arguments and symbolic axes."""
    target: Any
    instance: Any
    args: tuple
    dynamic: Any


def require_onnx() -> Any:
    """The onnx package, or ImportError saying how to install it."""
    try:
        import onnx
    except ImportError:
        raise ImportError(f"amber: exporting ONNX needs the onnx package: {INSTALL_HINT}") \
            from None
    return onnx


def export(net: Any, *inputs: Any, file_name: str = "model", file_format: str = "ONNX",
           dynamic: Any = None, opt_level: int | None = None) -> str:
    """Write `net` (a Cell, an `amber.jit` object or a function) compiled for `inputs` as
    `file_name` + ".onnx"; returns the path written. `inputs` are arrays (or Tensors;
    `Tensor(shape=[None, ...], dtype=...)` makes an axis a symbolic size, a dim_param);
    Python scalars are compiled in. `dynamic` as `jit(dynamic=...)`; a Cell's `set_inputs`
    counts too. A construct ONNX cannot express is a CompileError at its line."""
    fmt = str(file_format).upper()
    if fmt not in FORMATS:
        raise ValueError(f"export: file_format={file_format!r} is not a format amber writes; "
                         f"amber writes {', '.join(FORMATS)} (MINDIR and AIR are MindSpore's "
                         "own runtimes' formats)")
    onnx = require_onnx()
    program = resolve(net, inputs, dynamic)
    exported = lower(program, CompileOptions(get_context().opt_level
                                             if opt_level is None else opt_level))
    path = os.fspath(file_name)
    if not path.lower().endswith(".onnx"):
        path += ".onnx"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    onnx.save(exported.model, path)
    return path


def resolve(net: Any, inputs: Sequence[Any], dynamic: Any = None) -> OnnxProgram:
    """The compile target behind `net` and example arrays for `inputs` (specs made concrete,
    their None axes symbolic)."""
    from .specializations import JitBase
    target = net
    if isinstance(net, JitBase):
        target = net.__wrapped__
        dynamic = dynamic if dynamic is not None else net.dynamic_shapes.dynamic
    if isinstance(target, type):
        raise TypeError(f"export: pass an instance of {target.__qualname__}, not the class")
    args, specs = [], {}
    for k, value in enumerate(inputs):
        example, spec = _example(value)
        args.append(example)
        if spec is not None:
            specs[k] = spec
    if specs:
        if dynamic not in (None, False) and dynamic is not True:
            raise TypeError("export: give symbolic axes by Tensor(shape=[None, ...]) inputs or "
                            "by dynamic=, not both")
        dynamic = specs if dynamic is None else dynamic
    instance = target if callable(getattr(target, "construct", None)) else None
    return OnnxProgram(target, instance, tuple(args), dynamic)


def _example(value: Any) -> tuple[Any, Any]:
    """(the argument to compile for, its spec when it declares symbolic axes)."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, np.ndarray | np.generic) and \
            any(d is None for d in shape):
        dims = tuple(EXAMPLE_SIZE if d is None else int(d) for d in shape)
        return np.zeros(dims, dtype=np.dtype(value.dtype)), value
    if shape is not None and not isinstance(value, np.ndarray | np.generic):
        return np.asarray(value), None
    return value, None


def compile_graph(program: OnnxProgram, options: CompileOptions) -> Any:
    """The optimized graph of `program`."""
    from . import pipeline
    from .dynamic import DynamicShapes
    func = type(program.instance).construct if program.instance is not None else program.target
    shapes = DynamicShapes(program.dynamic).shapes(func, program.instance, program.args, {})
    result = pipeline.build(program.target, program.args, {}, shapes=shapes)
    return pipeline.optimize(result.graph, options) or result.graph


def parameter_names(instance: Any, paths: Sequence[str]) -> list[str]:
    """Each parameter's MindSpore name (`conv1.weight`), else its attribute path."""
    names = []
    for path in paths:
        value = access(instance, path)[1] if instance is not None else None
        name = getattr(value, "name", None)
        names.append(name if isinstance(name, str) and name else path)
    return names


def parameter_values(instance: Any, paths: Sequence[str]) -> list[np.ndarray]:
    values = []
    for path in paths:
        value = access(instance, path)[1]
        array = np.asarray(getattr(value, "data", value)) if not isinstance(
            value, np.ndarray | np.generic) else np.asarray(value)
        if array.dtype == object:
            raise TypeError(f"export: {path} ({type(value).__name__}) is not an array")
        values.append(array)
    return values


def lower(program: OnnxProgram, options: CompileOptions, initializers: bool = True) -> Any:
    """The `Exported` model of `program` (Parameters as initializers, or as inputs)."""
    graph = compile_graph(program, options)
    return lower_graph(graph, program.instance, initializers)


def lower_graph(graph: Any, instance: Any, initializers: bool = True) -> Any:
    """`Exported` of an optimized graph: a CompileError at the user's line for what ONNX
    cannot express."""
    require_onnx()
    from ..codegen.onnx import OnnxRefusal, to_onnx
    paths = graph.param_paths
    names = parameter_names(instance, paths)
    try:
        values = parameter_values(instance, paths) if initializers and paths else None
        return to_onnx(graph, names, values)
    except (OnnxRefusal, TypeError) as err:
        raise refusal_error(err, graph) from None


def refusal_error(err: Exception, graph: Any) -> Exception:
    """A CompileError at the refusal's line (the user's, past amber's layers)."""
    from ..frontend.errors import CompileError
    loc = getattr(err, "loc", None) or graph.return_loc
    message = f"cannot export to ONNX: {getattr(err, 'message', str(err))}"
    hint = "keep it out of the exported model, or run it with the NumPy backend"
    if loc is None:
        return CompileError(message, hint=hint)
    user = loc.user
    return CompileError(message, user.file, user.line, user.col, user.text, hint)
