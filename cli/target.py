"""What the commands compile: FILE.py:NAME resolved to a Cell instance or a function, and the
example arguments (`--input` values or the file's `example_inputs()`)."""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from .errors import UsageError

_DIM = r"(?:\d+|[A-Z][A-Z0-9_]*)"
_SHAPE = re.compile(rf"^({_DIM}(?:x{_DIM})*|\(\)|scalar)?(?::([A-Za-z0-9_]+))?$")
EXAMPLE_SIZE = 2
"""The size a symbolic axis of an --input (`Nx1x32x32`) has in the example array."""
_SCALAR = re.compile(r"^(int|float|bool)=(.+)$")

SPEC_HELP = ("NAME in FILE.py: a Cell subclass (built as NAME() after amber.set_seed(0)), a "
             "Cell instance (used as it is, weights included) or a function")
INPUT_HELP = ("one argument (repeat --input per argument; default: the file's "
              "example_inputs()). An array: SHAPE[:DTYPE] with SHAPE like 1x1x32x32 and DTYPE a "
              "NumPy dtype name (default float32), e.g. 1x1x32x32:float32, 8:int64, 2x3:bool; a "
              "0-d array: scalar:float64, ():float64 or :float64. A Python scalar: int=3, "
              "float=0.5, bool=true. Arrays are seeded random values (normal for floats, 0..9 "
              "for integers). An upper-case name for an axis (Nx1x32x32:float32) makes it a "
              "symbolic size: code for every size of it (names shared by inputs are one size)")
DYNAMIC_HELP = ("compile for every size of the leading axis (the batch) of every array input, "
                "as jit(dynamic=True) does; a Cell's set_inputs and --input names like "
                "Nx1x32x32 declare symbolic axes too")


@dataclass
class Target:
    """What FILE.py:NAME named: the object to compile, its example arguments, and its module."""
    name: str
    obj: Any
    instance: Any
    args: tuple
    module: Any
    dynamic: Any = None
    """Symbolic axes, as `jit(dynamic=...)` takes them (True: every batch; a dict by position)."""

    @property
    def compiled(self) -> Any:
        """What the frontend compiles: the Cell instance, or the plain function."""
        return self.instance if self.instance is not None else self.obj

    def shapes(self) -> dict[str, tuple]:
        """The symbolic shapes of the example arguments by input path (a Cell's set_inputs
        first, then `dynamic`): empty when everything is static."""
        from ..runtime.dynamic import DynamicShapes
        func = type(self.instance).construct if self.instance is not None else self.obj
        return DynamicShapes(self.dynamic).shapes(func, self.instance, self.args, {})

    def signature(self) -> str:
        """The input signature the generated code's docstring shows (`(f32[N,1,32,32])`)."""
        from ..runtime.keys import call_key, describe_key, shaped_key
        shapes = self.shapes()
        if not shapes:
            return describe_key(call_key(self.args, {}))
        return describe_key(shaped_key(self.args, {}, lambda p, a: shapes.get(p, a.shape)))

    @property
    def title(self) -> str:
        """`LeNet5.construct` or the function's qualified name (names the generated code)."""
        if self.instance is not None:
            return f"{type(self.instance).__qualname__}.construct"
        return getattr(self.obj, "__qualname__", self.name)


def add_target_args(parser: argparse.ArgumentParser) -> None:
    """FILE.py:NAME, --input and -O: the arguments of every command that compiles a model."""
    parser.add_argument("spec", metavar="FILE.py:NAME", help=SPEC_HELP)
    parser.add_argument("--input", action="append", metavar="SPEC", help=INPUT_HELP)
    parser.add_argument("-O", dest="opt_level", type=int, choices=(0, 1, 2), default=2,
                        help="optimization level (-O0, -O1, -O2; default 2)")
    parser.add_argument("--dynamic", action="store_true", help=DYNAMIC_HELP)


@contextlib.contextmanager
def user_output_to_stderr() -> Iterator[None]:
    """While running the user's file (its top level, NAME(), example_inputs()), what it prints
    goes to stderr: stdout carries only what the command writes (dumped code can be piped)."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


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
        with user_output_to_stderr():
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


def load_target(spec: str, input_specs: Sequence[str] | None, dynamic: bool = False) -> Target:
    """Resolve FILE.py:NAME, instantiate a Cell class (after `set_seed(0)`), and find inputs."""
    from ..common.seed import set_seed
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
            with user_output_to_stderr():
                instance = obj()
        except Exception as exc:
            raise UsageError(f"cannot instantiate {name}() with no arguments: "
                             f"{type(exc).__name__}: {exc}") from exc
    elif callable(getattr(obj, "construct", None)):
        instance = obj
    elif not inspect.isfunction(obj):
        raise UsageError(f"{file}:{name} is a {type(obj).__name__}, not an nn.Cell subclass or "
                         "a function")
    declared: dict[int, dict[int, str]] = {}
    if input_specs:
        args, declared = parse_inputs(input_specs), symbolic_axes(input_specs)
    else:
        with user_output_to_stderr():
            args = example_inputs(module, file, name)
    return Target(name, obj, instance, args, module, True if dynamic else declared or None)


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


def symbolic_axes(specs: Sequence[str]) -> dict[int, dict[int, str]]:
    """The axes --input specs name (`Nx1x32x32`: {position: {0: "N"}})."""
    declared = {}
    for i, spec in enumerate(specs):
        dims = [] if _SCALAR.match(spec) else spec.split(":")[0].split("x")
        names = {axis: d for axis, d in enumerate(dims) if re.fullmatch(r"[A-Z][A-Z0-9_]*", d)}
        if names:
            declared[i] = names
    return declared


def parse_input(spec: str, rng: np.random.Generator) -> Any:
    """One --input value (see `INPUT_HELP`)."""
    scalar = _SCALAR.match(spec)
    if scalar:
        return _python_scalar(scalar.group(1), scalar.group(2), spec)
    match = _SHAPE.match(spec)
    if not match or spec in ("", ":"):
        raise UsageError(f"bad --input {spec!r}: expected SHAPE[:DTYPE] like 1x1x32x32:float32, "
                         "scalar:float64, or int=3 / float=0.5 / bool=true")
    dims, dtype_name = match.group(1), match.group(2) or "float32"
    shape = () if dims in (None, "()", "scalar") else tuple(
        int(d) if d.isdigit() else EXAMPLE_SIZE for d in dims.split("x"))
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
