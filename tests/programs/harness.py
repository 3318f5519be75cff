"""The differential harness of the program corpus: run a program eagerly (the oracle) and compiled
on the same inputs, and assert equal results, printed output, argument mutations and errors.

Category files mark programs with `@runs(...)`; `conftest.py` collects them into the `program`
parametrization (ids = program names) and provides the `check_program` fixture.

`AMBER_CORPUS_LAYOUT=both` (a long run, not CI's) hands both sides every array argument of rank
2 or more in another memory layout, the same values: Fortran-ordered (rank 2) or a transposed
copy seen through the inverse transpose (higher ranks). Kernels that wrote through a reshape
assumed to be a view gave wrong gradients on such inputs once (cross entropy's, 2026-11-29).
`AMBER_CORPUS_LAYOUT=compiled` relays the compiled side's arguments only: then only programs
whose NumPy semantics depend on the layout (a reshape or ravel that is a view of a C-ordered
input and a copy of another) may differ.
"""
from __future__ import annotations

import copy
import hashlib
import importlib.util
import inspect
import math
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import amber
from amber.common.parsing import PARSE_LOCK
from amber.runtime import JitFunction, JitMethod

PROGRAMS_ATTR = "corpus_programs"
"""The attribute `@runs` sets on a function or Cell class: the tuple of its `Program`s."""

RTOL = ATOL = 1e-6
CODE_EXCERPT_LINES = 80
# NOTE: frames in these directories are kernels of eager ops, amber's layers (or this harness
# calling the program), not the user's line; an error's note must point at the innermost frame
# outside them (an error inside a layer is reported at the user's call of the layer).
_NOT_USER_CODE = tuple(os.path.dirname(m.__file__) + os.sep
                     for m in (np, amber.ops, amber.common, amber.nn)) + (
    __file__, "<__array_function__ internals>")  # NOTE: NumPy 1.24's dispatch frame


@dataclass(frozen=True)
class Program:
    """One corpus entry: a function or Cell class, the argument tuples it runs on, and (for a
    class) its constructor arguments and mode."""
    target: Any
    inputs: tuple[tuple[Any, ...], ...]
    init: tuple[Any, ...] = ()
    train: bool = False
    tag: str = ""
    between: Callable[[Any, int], None] | None = None
    origin: str = ""
    """The module whose `@runs` made this program (a category file can mark imported objects)."""
    refused_on_numpy1: str = ""
    """Why NumPy 1 makes this program uncompilable (then it must be refused there with a
    CompileError at one of its lines, never compiled to something else); "" if it is not."""
    compiles_on_numpy1: str = ""
    """For a program the compiler must reject: why NumPy 1 makes it compilable after all (then
    it must compile there and agree with eager); "" if it does not."""

    @property
    def name(self) -> str:
        """The test id: the program's name, plus the variant tag."""
        base = self.target.__name__
        return f"{base}-{self.tag}" if self.tag else base


def runs(*inputs: Any, init: tuple[Any, ...] = (), train: bool = False, tag: str = "",
         between: Callable[[Any, int], None] | None = None,
         refused_on_numpy1: str = "", compiles_on_numpy1: str = "") -> Callable[[Any], Any]:
    """Mark a program with the inputs to run it on. Each input is a tuple of arguments, or a
    single non-tuple argument. Stack several `@runs` on a Cell class for variants (tag them).
    `between(net, k)` changes state before input k, on each side (net is None for functions).
    `refused_on_numpy1`: why NumPy 1's promotion makes the program uncompilable (a loop
    variable's dtype depends on the branches taken): there it must be refused.
    `compiles_on_numpy1`: the converse, for a program the compiler must reject (check_rejected)."""
    args = tuple(i if isinstance(i, tuple) else (i,) for i in inputs)
    assert args, "a program needs at least one input"
    origin = sys._getframe(1).f_globals.get("__name__", "")

    def mark(target: Any) -> Any:
        program = Program(target, args, tuple(init), train, tag, between, origin,
                          refused_on_numpy1, compiles_on_numpy1)
        setattr(target, PROGRAMS_ATTR, (program, *vars(target).get(PROGRAMS_ATTR, ())))
        return target
    return mark


def collect(namespace: dict[str, Any]) -> list[Program]:
    """Every program marked in a module namespace, in definition order."""
    found: list[Program] = []
    for obj in list(namespace.values()):
        found.extend(_own_attributes(obj).get(PROGRAMS_ATTR, ()))
    names = [p.name for p in found]
    assert len(set(names)) == len(names), f"duplicate program names: {names}"
    return found


def _own_attributes(obj: Any) -> dict[str, Any]:
    try:
        return vars(obj)
    except TypeError:
        return {}


# -- input data ------------------------------------------------------------------------------

def randn(*shape: int, seed: int = 0, scale: float = 1.0, dtype: Any = np.float32) -> np.ndarray:
    """Standard-normal floats (float32 unless told), reproducible by seed."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def randint(*shape: int, low: int = -5, high: int = 6, seed: int = 0,
            dtype: Any = np.int64) -> np.ndarray:
    """Integers in [low, high) (int64 unless told), reproducible by seed."""
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


def f32(values: Any) -> np.ndarray:
    """A float32 array of literal values."""
    return np.asarray(values, dtype=np.float32)


def i32(values: Any) -> np.ndarray:
    """An int32 array of literal values."""
    return np.asarray(values, dtype=np.int32)


def i64(values: Any) -> np.ndarray:
    """An int64 array of literal values."""
    return np.asarray(values, dtype=np.int64)


def load_source(source: str, directory: str, name: str = "program") -> Any:
    """Write generated `source` to a real .py file under `directory` (the compiler reads source
    with `inspect`), import it and return its attribute `name`."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    path = os.path.join(directory, f"generated_{digest}.py")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(source)
    spec = importlib.util.spec_from_file_location(f"amber_generated_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # NOTE: an imported module, so its globals may be written
    spec.loader.exec_module(module)
    return getattr(module, name)


# -- building and calling --------------------------------------------------------------------

@dataclass
class Subject:
    """A built program: how to call it eagerly and compiled, the jit object behind the compiled
    calls, and how to reset and read each side's state (for Cells: two instances built from the
    same seed, so side effects on parameters can be compared)."""
    eager: Callable[..., Any]
    compiled: Callable[..., Any]
    jitted: Any
    eager_net: Any = None
    compiled_net: Any = None


def build(program: Program) -> Subject:
    """Wrap a function, or instantiate a Cell class twice from seed 0, for eager and compiled
    calls."""
    target = program.target
    if not isinstance(target, type):
        jitted = amber.jit(target)
        # NOTE: only amber's own wrapper is peeled: a functools.wraps decorator is the program
        eager = target.__wrapped__ if isinstance(target, JitFunction) else target
        return Subject(eager, jitted, jitted)
    eager_net, compiled_net = instantiate(program), instantiate(program)
    call = type(compiled_net).__call__
    if isinstance(call, JitMethod):
        jitted, compiled = call, compiled_net
    else:
        jitted = compiled = amber.jit(compiled_net)
    return Subject(eager_net.construct, compiled, jitted, eager_net, compiled_net)


def instantiate(program: Program) -> Any:
    """A fresh instance of the program's Cell class, its weights drawn after `set_seed(0)`."""
    amber.set_seed(0)
    net = program.target(*program.init)
    if program.train:
        net.set_train(True)
    return net


def reset_generators(net: Any) -> None:
    """Reseed the global generator and every generator a cell owns (in place, so compiled code
    holding the generator object sees the new stream): both sides draw the same numbers."""
    amber.set_seed(0)
    if net is None:
        return
    for k, (_, cell) in enumerate(net.cells_and_names()):
        for j, gen in enumerate(g for g in vars(cell).values()
                                if isinstance(g, np.random.Generator)):
            gen.bit_generator.state = np.random.default_rng([k, j]).bit_generator.state


def cell_state(net: Any) -> dict[str, np.ndarray]:
    """Every parameter of a cell (by dotted name), copied."""
    if net is None:
        return {}
    return {name: np.array(p) for name, p in net.parameters_and_names()}


@dataclass
class Outcome:
    """What one call did: its result or exception, what it printed, its arguments and the
    cell's parameters afterwards."""
    result: Any
    error: BaseException | None
    printed: str
    args: tuple[Any, ...]
    state: dict[str, np.ndarray]


class Kw(dict):
    """Keyword arguments, as the last item of an input tuple: `(x, Kw(scale=2.0))`."""


def call(fn: Callable[..., Any], args: tuple[Any, ...], net: Any, capsys: Any,
         before: Callable[[], None] = lambda: None) -> Outcome:
    """Call `fn` on a deep copy of `args` (after `before()`), capturing its output and any
    exception."""
    args = copy.deepcopy(args)
    positional, keywords = (args[:-1], args[-1]) if args and isinstance(args[-1], Kw) \
        else (args, {})
    before()
    reset_generators(net)
    capsys.readouterr()
    try:
        result, error = fn(*positional, **keywords), None
    except Exception as exc:  # noqa: BLE001 (eager and compiled must raise the same type)
        result, error = None, exc
    return Outcome(result, error, capsys.readouterr().out, args, cell_state(net))


# -- comparing -------------------------------------------------------------------------------

class Mismatch(AssertionError):
    """Compiled and eager disagree (the message says where)."""


def assert_same(got: Any, want: Any, where: str = "result") -> None:
    """Exact types, shapes and dtypes; exact values except floats (rtol = atol = 1e-6)."""
    if isinstance(want, tuple | list):
        _expect(type(got) is type(want), where, f"{type(got).__name__} != {type(want).__name__}")
        _expect(len(got) == len(want), where, f"length {len(got)} != {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, amber.nn.Cell):
        _expect(type(got) is type(want), where, f"{type(got).__name__} != {type(want).__name__}")
        assert_same(cell_state(got), cell_state(want), f"{where} parameters")
    elif isinstance(want, dict):
        _expect(type(got) is type(want), where, f"{type(got).__name__} != {type(want).__name__}")
        _expect(list(got) == list(want), where, f"keys {list(got)} != {list(want)}")
        for key, w in want.items():
            assert_same(got[key], w, f"{where}[{key!r}]")
    elif isinstance(want, np.generic):
        _expect(type(got) is type(want), where, f"{_kind(got)} != {_kind(want)}")
        _same_values(np.asarray(got), np.asarray(want), where)
    elif isinstance(want, np.ndarray):
        _expect(isinstance(got, np.ndarray), where, f"{_kind(got)} != {_kind(want)}")
        _expect(got.dtype == want.dtype, where, f"dtype {got.dtype} != {want.dtype}")
        _expect(got.shape == want.shape, where, f"shape {got.shape} != {want.shape}")
        _same_values(got, want, where)
    elif isinstance(want, float):
        _expect(type(got) is float, where, f"{_kind(got)} != float")
        _expect(math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL)
                or (math.isnan(got) and math.isnan(want)), where, f"{got!r} != {want!r}")
    else:
        _expect(type(got) is type(want), where, f"{_kind(got)} != {_kind(want)}")
        _expect(got == want, where, f"{got!r} != {want!r}")


def _same_values(got: np.ndarray, want: np.ndarray, where: str) -> None:
    if want.dtype.kind in "fc":
        try:
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        except AssertionError as err:
            raise Mismatch(f"{where}: values differ\n{err}") from None
    else:
        _expect(np.array_equal(got, want), where, f"values\n{got!r}\n!=\n{want!r}")


def _expect(ok: bool, where: str, what: str) -> None:
    if not ok:
        raise Mismatch(f"{where}: {what}")


def _kind(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"ndarray[{value.dtype}, {value.shape}]"
    return f"{type(value).__name__}({value!r})" if np.isscalar(value) else type(value).__name__


def user_line(exc: BaseException) -> tuple[str, int] | None:
    """(file basename, line) of the innermost traceback frame outside op kernels, NumPy and
    this harness."""
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if not frame.filename.startswith(_NOT_USER_CODE):
            found = (os.path.basename(frame.filename), frame.lineno)
    return found


def stack_lines(exc: BaseException) -> set[tuple[str, int]]:
    """(file basename, line) of every traceback frame of an exception."""
    return {(os.path.basename(f.filename), f.lineno)
            for f in traceback.extract_tb(exc.__traceback__)}


def assert_same_outcome(got: Outcome, want: Outcome) -> None:
    """The compiled call did what the eager call did (result or error, output, mutations).
    Where eager raises, compiled may raise the same type with a note naming the user's line,
    or (found before running) a CompileError pointing at a line of the eager traceback."""
    if want.error is not None:
        _same_error(got, want)
    elif got.error is not None:
        raise Mismatch(f"compiled raised {type(got.error).__name__}: {got.error}") from got.error
    else:
        assert_same(got.result, want.result)
    _expect(got.printed == want.printed, "printed output",
            f"\ncompiled printed:\n{got.printed}\neager printed:\n{want.printed}")
    assert_same(got.args, want.args, "arguments after the call")
    _expect(got.state.keys() == want.state.keys(), "parameters", "different parameter names")
    for name, value in want.state.items():
        assert_same(got.state[name], value, f"parameter {name} after the call")


def _same_error(got: Outcome, want: Outcome) -> None:
    _expect(got.error is not None, "error",
            f"eager raised {want.error!r}, compiled returned {got.result!r}")
    if isinstance(got.error, amber.CompileError):
        where = (os.path.basename(got.error.file), got.error.line)
        # NOTE: eager's own CompileError comes from amber compiling inside the program (a
        # `grad` of a helper): the compiled program refuses that helper at the same line
        refused_alike = isinstance(want.error, amber.CompileError) and \
            (want.error.file, want.error.line, want.error.col) == \
            (got.error.file, got.error.line, got.error.col)
        if not (refused_alike or where in stack_lines(want.error)):
            # NOTE: chained, so callers that allow refusals see this one
            raise Mismatch(f"error: compiled raised a CompileError at {where}, not a line eager "
                           f"passed through before raising {want.error!r}:\n{got.error}"
                           ) from got.error
        # NOTE: found at compile time, so nothing ran: no output or side effects to compare.
        got.printed, got.args, got.state = want.printed, want.args, want.state
        return
    _expect(type(got.error) is type(want.error), "error",
            f"compiled raised {got.error!r}, eager raised {want.error!r}")
    line = user_line(want.error)
    notes = "\n".join(getattr(got.error, "__notes__", ()))
    _expect(line is None or f"{line[0]}:{line[1]}" in notes, "error note",
            f"expected a note naming {line}, got notes {notes!r}")


def describe(args: tuple[Any, ...]) -> str:
    """A short description of an argument tuple for failure messages."""
    parts = []
    for a in args:
        if isinstance(a, Kw):
            parts.extend(f"{k}={describe((v,))[1:-1]}" for k, v in a.items())
        elif isinstance(a, np.ndarray):
            text = np.array2string(a.ravel()[:6], precision=3, separator=",")
            parts.append(f"{a.dtype}{list(a.shape)} {text}")
        else:
            parts.append(repr(a)[:60])
    return "(" + ", ".join(parts) + ")"


def code_excerpt(jitted: Any) -> str:
    """The last generated source of a jit object (first lines), or why there is none."""
    code = getattr(jitted, "code", None)
    if not code:
        return "<no generated code>"
    lines = code.splitlines()
    more = f"\n... ({len(lines) - CODE_EXCERPT_LINES} more lines)" \
        if len(lines) > CODE_EXCERPT_LINES else ""
    return "\n".join(lines[:CODE_EXCERPT_LINES]) + more


def check(program: Program, capsys: Any, subject: Subject | None = None) -> Subject:
    """Run every input eagerly and compiled and compare; re-compare every earlier compiled
    result (later calls must not overwrite buffers they handed out); then run the inputs again,
    scribbling over each compiled result (what a caller may write into its result must not
    change what later calls return). `subject` reuses an already built program."""
    subject = subject or build(program)
    if program.refused_on_numpy1 and NUMPY_1:
        _check_refused(subject, program, capsys)
        return subject
    kept = [_run(subject, program, k, args, capsys) for k, args in enumerate(program.inputs)]
    for got, want, label in kept:
        if want.error is None:
            _compare(got, want, label + " (re-checked after later calls)", subject.jitted)
    for k, args in enumerate(program.inputs):
        got, _, _ = _run(subject, program, k, args, capsys, " (second round, results scribbled)")
        scribble(got.result, subject.compiled_net)
    return subject


NUMPY_1 = int(np.__version__.split(".")[0]) < 2


def source_lines(obj: Any) -> tuple[list[str], int]:
    """`inspect.getsourcelines` under amber's parse lock: for a class, Python 3.11 parses the
    whole file, and a parse racing amber's background kernel builds on another thread can fail
    with "AST constructor recursion depth mismatch" (amber/common/parsing.py; seen once in CI,
    NumPy 1 run of 2026-11-29 22:50)."""
    with PARSE_LOCK:
        return inspect.getsourcelines(obj)


def _check_refused(subject: Subject, program: Program, capsys: Any) -> None:
    """Under NumPy 1: eager runs, compiling raises a CompileError at one of the program's own
    lines (file:line:col and a caret)."""
    lines, first = source_lines(program.target)
    own = range(first, first + len(lines))
    for args in program.inputs:
        want = call(subject.eager, args, subject.eager_net, capsys)
        got = call(subject.compiled, args, subject.compiled_net, capsys)
        assert want.error is None, f"eager raised {want.error!r}"
        err = got.error
        assert isinstance(err, amber.CompileError), f"compiled gave {got.result!r} / {err!r}"
        assert os.path.samefile(err.file, inspect.getsourcefile(program.target)) and \
            err.line in own and "^" in str(err), str(err)


LAYOUT = os.environ.get("AMBER_CORPUS_LAYOUT", "")
"""Which side's array arguments are relaid (see the module docstring): "", "compiled", "both"."""


def relaid(args: Any, side: str) -> Any:
    """`args` with every array of rank 2 or more in another memory layout (same values), on
    the sides `LAYOUT` names; else `args` itself."""
    if LAYOUT not in (side, "both"):
        return args
    if isinstance(args, np.ndarray) and args.ndim >= 2:
        reverse = tuple(range(args.ndim))[::-1]
        return np.asfortranarray(args) if args.ndim == 2 else \
            np.ascontiguousarray(args.transpose(reverse)).transpose(reverse)
    if isinstance(args, Kw):
        return Kw({k: relaid(v, side) for k, v in args.items()})
    if type(args) in (list, tuple):
        return type(args)(relaid(v, side) for v in args)
    return args


def _run(subject: Subject, program: Program, k: int, args: tuple[Any, ...], capsys: Any,
         round_name: str = "") -> tuple[Outcome, Outcome, str]:
    change = program.between or (lambda net, k: None)
    want = call(subject.eager, relaid(args, "eager"), subject.eager_net, capsys,
                lambda: change(subject.eager_net, k))
    got = call(subject.compiled, relaid(args, "compiled"), subject.compiled_net, capsys,
               lambda: change(subject.compiled_net, k))
    label = f"{program.name} input #{k} {describe(args)}{round_name}"
    _compare(got, want, label, subject.jitted)
    return got, want, label


def scribble(value: Any, net: Any) -> None:
    """Overwrite every writeable array in a result (not the cell's own parameters, which eager
    hands out live too)."""
    if isinstance(value, tuple | list):
        for v in value:
            scribble(v, net)
    elif isinstance(value, np.ndarray) and value.flags.writeable and value.size:
        params = [] if net is None else [p for _, p in net.parameters_and_names()]
        if not any(np.shares_memory(value, p) for p in params):
            value[...] = np.nan if value.dtype.kind in "fc" else 7


def _compare(got: Outcome, want: Outcome, label: str, jitted: Any) -> None:
    try:
        assert_same_outcome(got, want)
    except Mismatch as err:
        raise Mismatch(f"{label}\n{err}\neager: {_short(want)}\ncompiled: {_short(got)}\n"
                       f"--- generated code ---\n{code_excerpt(jitted)}") from err.__cause__


def _short(outcome: Outcome) -> str:
    if outcome.error is not None:
        return f"raised {type(outcome.error).__name__}: {outcome.error}"[:2000]
    return repr(outcome.result)[:1000]


# -- programs the compiler must reject ------------------------------------------------------

ERROR_MARKER = "# ERR"
"""Marks the line a rejected program's error must point at."""
NUMPY1_ERROR_MARKER = "# NUMPY1-ERR"
"""Marks a line the error may point at under NumPy 1 only (whose promotion rules find the
program's problem earlier, e.g. a loop variable that changes dtype)."""


def marked_lines(target: Any) -> set[tuple[str, int]]:
    """(file basename, line) of every `# ERR` marker in the program and in the module functions
    it reaches by name."""
    found = set()
    for obj in _reachable(target):
        lines, start = source_lines(obj)
        name = os.path.basename(inspect.getsourcefile(obj))
        markers = (ERROR_MARKER, NUMPY1_ERROR_MARKER) if NUMPY_1 else (ERROR_MARKER,)
        found.update((name, start + k) for k, text in enumerate(lines)
                     if any(m in text for m in markers))
    assert found, f"{target.__name__} has no {ERROR_MARKER} marker"
    return found


def _reachable(target: Any) -> list[Any]:
    namespace = vars(sys.modules[target.__module__])
    seen, todo = [], [target]
    while todo:
        obj = todo.pop()
        if obj in seen:
            continue
        seen.append(obj)
        code = getattr(obj, "__code__", None)
        todo.extend(f for f in map(namespace.get, code.co_names if code else ())
                    if inspect.isfunction(f))
    return seen


def check_rejected(program: Program, capsys: Any) -> None:
    """The compiled call raises a CompileError at a marked line (file:line:col and a caret in
    the message), or, when eager raises too, eager's exception type with a note naming a marked
    line; never an internal error, never a result. (Under NumPy 1, a program marked
    `compiles_on_numpy1` must instead compile and agree with eager.)"""
    if program.compiles_on_numpy1 and NUMPY_1:
        check(program, capsys)
        return
    marks = marked_lines(program.target)
    subject = build(program)
    (args,) = program.inputs
    want = call(subject.eager, args, subject.eager_net, capsys)
    got = call(subject.compiled, args, subject.compiled_net, capsys)
    err = got.error
    assert err is not None, f"compiled accepted it and returned {got.result!r}"
    if isinstance(err, amber.CompileError):
        where = (os.path.basename(err.file), err.line)
        assert where in marks, f"CompileError at {where}, expected one of {marks}:\n{err}"
        assert f"{where[0]}:{where[1]}:" in str(err) and "^" in str(err), str(err)
        return
    assert want.error is not None, f"eager ran, compiled raised {err!r}, not a CompileError"
    assert type(err) is type(want.error), f"compiled raised {err!r}, eager {want.error!r}"
    assert stack_lines(want.error) & marks, f"eager did not fail at a marked line: {want.error!r}"
    notes = "\n".join(getattr(err, "__notes__", ()))
    assert any(f"{n}:{k}" in notes for n, k in marks), f"no note naming {marks}: {notes!r}"


# -- introspection helpers for tests about the compiled code itself --------------------------

def node_count(jitted: JitFunction) -> int:
    """Number of IR nodes (at every depth) of the last specialization's graph."""
    return sum(1 for _ in jitted.graph.walk())


def specializations(jitted: Any) -> int:
    """How many specializations a jit object has made (compiled, or read from the disk cache)."""
    return jitted.stats.specializations


def same_state(got, want) -> None:
    """`got` equals `want` exactly, recursively: the same types (a list is not a tuple, a NumPy
    scalar not a Python number), keys in the same order, arrays of the same dtype and values."""
    assert type(got) is type(want), (got, want)
    if isinstance(got, dict):
        assert list(got) == list(want)
        for k in got:
            same_state(got[k], want[k])
    elif isinstance(got, list | tuple):
        assert len(got) == len(want), (got, want)
        for a, b in zip(got, want):
            same_state(a, b)
    elif isinstance(got, np.ndarray | np.generic):
        assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
    else:
        assert got == want, (got, want)
