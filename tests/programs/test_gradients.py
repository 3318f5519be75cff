"""The gradient corpus: every differentiable program of the forward corpus, differentiated.

For each program and input whose floating arrays (and, for a Cell, its parameters) can be made
float64, the compiled gradient (`GradOperation(get_all=True, get_by_list=..., sens_param=True)`
with a random sensitivity shaped like the output) must equal float64 central finite differences
of the eager program. Programs that cannot be differentiated this way are counted by reason in
`test_corpus_coverage`, so a change that silently loses coverage shows.
"""
from __future__ import annotations

import contextlib
import copy
import glob
import importlib.util
import os
import re
import signal
from collections import Counter
from typing import Any

import numpy as np
import pytest

import amber
import harness

EPS = 1e-6
PROBES = 6
"""Elements of each argument and weight checked by finite differences (at random)."""
HERE = os.path.dirname(__file__)
SKIPPED_FILES = ("test_gradients.py", "test_random_programs.py", "test_bad_syntax.py",
                 "test_bad_mistakes.py", "test_bad_runtime.py")


def _programs() -> list[harness.Program]:
    found, seen = [], set()
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        if os.path.basename(path) in SKIPPED_FILES:
            continue
        name = f"gradcorpus_{os.path.basename(path)[:-3]}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for obj in list(vars(module).values()):
            programs = harness._own_attributes(obj).get(harness.PROGRAMS_ATTR, ())
            for program in programs:
                key = (program.target.__qualname__, program.tag)
                if program.origin == name and key not in seen:
                    seen.add(key)
                    found.append(program)
            if programs:  # NOTE: leave imported objects marked only as their own module did
                setattr(obj, harness.PROGRAMS_ATTR,
                        tuple(p for p in programs if p.origin != name))
    return found


PROGRAMS = _programs()


def _as64(value: Any, rng: np.random.Generator) -> Any:
    """Floating arrays as float64, nudged off the kinks corpus inputs like to sit on (0, ties),
    where finite differences and gradients rightly disagree."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64) + 1e-3 * rng.standard_normal(value.shape)
    if isinstance(value, tuple | list) and not isinstance(value, harness.Kw):
        return _same_kind(value, [_as64(v, rng) for v in value])
    return value


def _same_kind(like: tuple | list, items: list[Any]) -> Any:
    """A tuple or list of `like`'s class (a namedtuple too) holding `items`."""
    return like._make(items) if hasattr(type(like), "_make") else type(like)(items)


VIEW_WRITE = "changed in place through another name or a view"
MIXED_RESULT = "different type on different paths"
REFUSED = {
    # program: what amber's CompileError says (the gradient is refused, never made up)
    "PadModes": "np.pad in mode 'reflect'",
    "mutate_through_view": VIEW_WRITE, "inplace_on_a_view": VIEW_WRITE,
    "local_view_write_then_read": VIEW_WRITE, "mutate_input_through_reshape_view": VIEW_WRITE,
    "mutate_input_through_transpose_and_slice": VIEW_WRITE, "helper_mutates_its_argument":
    VIEW_WRITE, "inplace_in_loop_on_loop_carried-0": VIEW_WRITE,
    "write_through_view_between_equal_reads": VIEW_WRITE,
    **{f"ravel_is_a_view_of_a_contiguous_array-{k}": VIEW_WRITE for k in (0, 1)},
    "ravel_of_a_transpose_is_a_copy": VIEW_WRITE,  # NOTE: `x.T` is a view; its copy is not
    "return_value_from_for": MIXED_RESULT, "return_none_or_array": MIXED_RESULT,
    "bare_return_in_branch": MIXED_RESULT, "return_after_search_flag": MIXED_RESULT,
    "return_with_continue": MIXED_RESULT, "branch_assigns_different_shapes": MIXED_RESULT,
    "branches_assign_different_dtypes": MIXED_RESULT,
    "branches_return_different_shapes": MIXED_RESULT,
    **{f"list_items_updated_in_a_loop-{k}": "the gradient of assigning into a list item"
       for k in (0, 1)},
    **{f"list_items_augmented_in_a_loop-{k}": VIEW_WRITE for k in (0, 1)},
    "loop_else_with_return": MIXED_RESULT,
    # float64 inputs promote a float32 accumulator in the first iteration: the loop is
    # peeled, and the result is float32 when it never runs (`lam` in power_iteration)
    "count_until_threshold": MIXED_RESULT, "for_break_then_for": MIXED_RESULT,
    "power_iteration": MIXED_RESULT,
    "vector_becomes_its_sum_in_a_loop": MIXED_RESULT,
    "none_then_array_in_a_run_time_range": MIXED_RESULT,
    "max_of_a_run_time_list_of_python_floats": "over a run-time list of Python numbers",
    "sum_of_a_run_time_list_written_in_place": VIEW_WRITE,  # NOTE: the sum may be `start`
    **{f"{name}-{k}": VIEW_WRITE for k in (0, 1) for name in (
        "list_in_a_dict_augmented_in_a_run_time_loop", "list_items_updated_in_a_run_time_loop")},
    # a float32 zero Tensor plus float64 slices: float32 when the loop never runs, float64 after
    "WhileAccumulatesWithParameter-0": MIXED_RESULT, "WhileSumsSlices": MIXED_RESULT,
    # a namedtuple on one path, a plain tuple on the other; a grid written through a view of x
    "namedtuple_or_plain_tuple_returned_by_a_run_time_condition": MIXED_RESULT,
    "sparse_meshgrids_copied_or_viewed": VIEW_WRITE,

}
REFUSED_ON_NUMPY1 = {
    # `t * 2` on a float32 scalar is float64 under NumPy 1: `t` widens in the first iteration
    # that does not return, so the result's dtype depends on the data
    "temperature_search-1": MIXED_RESULT,
    # a 0-d int32 Tensor plus a Python int is int64 under NumPy 1: int32 when the loop never
    # runs (or, after an `if`, on the path without it), int64 after
    "WhileThenWhile": MIXED_RESULT, "WhileAfterWhileInIf-1": MIXED_RESULT,
    "ForAfterWhileInIf-1": MIXED_RESULT, "zero_d_tensor_threshold_while": MIXED_RESULT,
}
EXCEPT_PATH = "the gradient of an except path is not supported"
CAUGHT = {
    # an input of these programs raises inside a try statement and a handler runs: the
    # backward refuses at run time (NotImplementedError naming the try line)
    "catch_index_error-1", "catch_index_error-3", "catch_raise_on_runtime_condition-1",
    "raise_in_loop_caught_outside-1", "several_handlers_first_match_wins-1",
    "several_handlers_first_match_wins-2", "nested_try_inner_finally_outer_except-1",
    "try_inside_helper-1", "with_inside_try-1",
}
KINKS = {"pairwise_distances": "sqrt(0) on the diagonal: no derivative there",
         "errstate_around_division": "1/x and log(x) at 0 and -1: no derivative there"}


def _refusal(program: harness.Program, k: int) -> str | None:
    """What amber's CompileError says when it refuses this program's gradient (None: it is
    made, and checked)."""
    refused_here = {**REFUSED, **REFUSED_ON_NUMPY1} if harness.NUMPY_1 else REFUSED
    return refused_here.get(program.target.__name__, refused_here.get(f"{program.name}-{k}"))


def _made_or_refused(make: Any, program: harness.Program, k: int) -> Any:
    """`make()`, or None when a handler ran in the program's try statement (CAUGHT) and the
    backward refused that path at run time, as it must."""
    if f"{program.name}-{k}" not in CAUGHT:
        return make()
    with pytest.raises(NotImplementedError, match=EXCEPT_PATH):
        make()
    return None


class Unsuitable(Exception):
    """The program/input cannot be checked against finite differences (the reason says why)."""


def _leaves_ok(value: Any) -> bool:
    """True if every floating leaf of an output is float64 (finite differences need it)."""
    if isinstance(value, tuple | list):
        return all(_leaves_ok(v) for v in value)
    if isinstance(value, np.ndarray | np.generic):
        return value.dtype.kind not in "fc" or value.dtype == np.float64
    return isinstance(value, bool | int | float | str | type(None))


def _direction(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, tuple | list):
        return _same_kind(value, [_direction(v, rng) for v in value])
    if isinstance(value, np.ndarray | np.generic) and value.dtype.kind == "f":
        return np.asarray(rng.standard_normal(np.shape(value)), np.float64)
    if isinstance(value, float):
        return float(rng.standard_normal())
    if isinstance(value, np.ndarray | np.generic):
        return np.zeros_like(value)
    return value


def _dot(value: Any, direction: Any) -> float:
    if isinstance(value, tuple | list):
        return sum(_dot(v, d) for v, d in zip(value, direction))
    if isinstance(value, np.ndarray | np.generic | float) and np.asarray(value).dtype.kind == "f":
        return float(np.sum(np.asarray(value, np.float64) * direction))
    return 0.0


def _parameters_to_float64(net: Any) -> None:
    """Replace every floating Parameter by a float64 one (shared ones stay shared)."""
    made: dict[int, Any] = {}
    for _, cell in net.cells_and_names():
        for name, p in list(cell._params.items()):
            if p.dtype.kind == "f":
                if id(p) not in made:
                    made[id(p)] = amber.Parameter(p.astype(np.float64), name=p.name,
                                                  requires_grad=p.requires_grad)
                setattr(cell, name, made[id(p)])


def _setup(program: harness.Program, args: tuple) -> tuple[Any, Any, tuple, list]:
    """(eager callable, gradient target, float64 args, weights)."""
    if any(isinstance(a, harness.Kw) for a in args):
        raise Unsuitable("keyword arguments")
    args = _as64(copy.deepcopy(args), np.random.default_rng(3))
    if isinstance(program.target, type):
        amber.set_seed(0)
        net = program.target(*program.init)
        if program.train:
            raise Unsuitable("train mode (random draws)")
        _parameters_to_float64(net)
        return net.construct, net, args, net.trainable_params()
    fn = getattr(program.target, "__wrapped__", program.target)
    return fn, fn, args, []


def _suitable(program: harness.Program, args: tuple) -> Any:
    """The eager output of a program input that finite differences can check; raises
    Unsuitable otherwise."""
    if program.target.__name__ in KINKS:
        raise Unsuitable("evaluated where it has no derivative")
    eager, _, args, weights = _setup(program, args)
    floats = [a for a in args if isinstance(a, np.ndarray) and a.dtype == np.float64]
    if not floats and not weights:
        raise Unsuitable("no floating inputs")
    state = _cell_state(eager) if isinstance(program.target, type) else []
    try:
        with _time_limit(EAGER_SECONDS):
            out = eager(*copy.deepcopy(args))
    except _TooLong:
        raise Unsuitable("eager does not finish on float64 inputs") from None
    except Exception as exc:  # noqa: BLE001
        raise Unsuitable(f"eager raises {type(exc).__name__}") from None
    after = _cell_state(eager) if isinstance(program.target, type) else []
    if program.between is not None or any(
            not np.array_equal(a, b, equal_nan=True) for a, b in zip(state, after)):
        raise Unsuitable("its state changes from call to call")
    if not _leaves_ok(out):
        raise Unsuitable("a float output is not float64 (or not a tuple/array/number)")
    return out


EAGER_SECONDS = 5.0
"""A program given float64 inputs may never stop (`while x != 3` counting by ones from 5.5):
choosing the cases must not hang."""


class _TooLong(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float) -> Any:
    def stop(signum: int, frame: Any) -> None:
        raise _TooLong
    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _cell_state(construct: Any) -> list[np.ndarray]:
    net = construct.__self__
    return [np.array(p) for p in net.get_parameters()]


def _check(program: harness.Program, k: int, capsys: Any) -> None:
    args = program.inputs[k]
    out = _suitable(program, args)
    eager, target, args, weights = _setup(program, args)
    floats = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float64]
    sens = _direction(out, np.random.default_rng(7))
    op = amber.ops.GradOperation(get_all=True, get_by_list=bool(weights), sens_param=True)
    fn = op(target, weights) if weights else op(target)
    try:
        amber.jit(target)(*copy.deepcopy(args))
    except amber.CompileError:  # the forward is refused for these inputs: so is the gradient
        with pytest.raises(amber.CompileError):
            fn(*copy.deepcopy(args), sens)
        return
    refused = _refusal(program, k)
    if refused is not None:
        with pytest.raises(amber.CompileError, match=re.escape(refused)):
            fn(*copy.deepcopy(args), sens)
        return
    grads = _made_or_refused(  # NOTE: AMBER_CORPUS_LAYOUT: the arrays in another layout
        lambda: fn(*harness.relaid(copy.deepcopy(args), "compiled"), sens), program, k)
    if grads is None:
        return
    by_input, by_weight = grads if weights else (grads, ())
    capsys.readouterr()
    for i in floats:
        _compare(by_input[i], _fd(eager, args, sens, lambda a, i=i: a[i]), f"argument {i}",
                 fn)
    for k, w in enumerate(weights):
        _compare(by_weight[k], _fd(eager, args, sens, None, w), f"weight {w.name}", fn)


def _fd(eager: Any, args: tuple, sens: Any, pick: Any, weight: Any = None
        ) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """(probed indices, finite-difference derivative at each)."""
    target = weight if weight is not None else pick(args)
    shape = np.shape(target)
    every = list(np.ndindex(shape))
    rng = np.random.default_rng(len(every))
    probed = [every[i] for i in sorted(rng.choice(len(every), min(PROBES, len(every)),
                                                  replace=False))] if every else []
    grad = np.zeros(len(probed))
    for n, idx in enumerate(probed):
        values = []
        for step in (EPS, -EPS):
            trial = copy.deepcopy(args)
            cell = weight if weight is not None else pick(trial)
            old = cell[idx]
            cell[idx] = old + step * max(1.0, abs(old))
            values.append(_dot(eager(*trial), sens))
            if weight is not None:
                cell[idx] = old
        base = weight[idx] if weight is not None else pick(args)[idx]
        grad[n] = (values[0] - values[1]) / (2 * EPS * max(1.0, abs(base)))
    return probed, grad


def _compare(got: Any, probed: tuple[list, np.ndarray], what: str, fn: Any) -> None:
    where, want = probed
    got = np.asarray(got, np.float64)
    try:
        np.testing.assert_allclose([got[i] for i in where], want, rtol=1e-5, atol=1e-6)
    except AssertionError as err:
        raise AssertionError(f"{what}: gradient differs from finite differences\n{err}\n"
                             f"--- generated code ---\n{harness.code_excerpt(fn)}") from None


def _sort_cases() -> tuple[list[tuple[harness.Program, int]], Counter]:
    cases, reasons = [], Counter()
    for program in PROGRAMS:
        for k, args in enumerate(program.inputs):
            try:
                _suitable(program, args)
                cases.append((program, k))
            except Unsuitable as why:
                reasons[str(why)] += 1
            except Exception as exc:  # noqa: BLE001 (building the program itself failed)
                reasons[f"cannot instantiate: {type(exc).__name__}"] += 1
    return cases, reasons


CASES, UNSUITABLE = _sort_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{p.name}-{k}" for p, k in CASES])
def test_gradient_matches_finite_differences(case: tuple[harness.Program, int],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    program, k = case
    _check(program, k, capsys)


def test_corpus_coverage() -> None:
    """Most of the forward corpus is differentiable and checked; the rest is counted."""
    total = len(CASES) + sum(UNSUITABLE.values())
    assert len(CASES) >= 800, (len(CASES), total, UNSUITABLE)


# -- the same corpus under forward mode and Jacobians (ops.jvp, ops.jacrev, ops.jacfwd) --------

SWEEP = os.environ.get("AMBER_TRANSFORM_SWEEP") == "1"
"""Every case under the transforms; CI checks every 40th (a representative selection)."""
TRANSFORM_CASES = CASES if SWEEP else CASES[::40]


@pytest.mark.filterwarnings("ignore:.*changed between calls:RuntimeWarning")  # NOTE: the
# transform functions of one program are kept between its inputs, which differ in shape
@pytest.mark.parametrize("case", TRANSFORM_CASES,
                         ids=[f"{p.name}-{k}" for p, k in TRANSFORM_CASES])
def test_jvp_and_jacobians_match_finite_differences(case: tuple[harness.Program, int],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The output's tangent along a random direction of the float inputs against central
    differences of the eager program; both Jacobians of the first float input, applied to
    that input's tangent, against the same tangent taken along that input alone."""
    program, k = case
    eager, target, args, _ = _setup(program, program.inputs[k])
    rng = np.random.default_rng(5)  # NOTE: steps relative to each element's size
    tangents = _same_kind(args, [_direction(a, rng) * np.maximum(1.0, np.abs(a)) if _float64(a)
                                 else a for a in args])
    try:
        amber.jit(target)(*copy.deepcopy(args))
    except amber.CompileError:
        with pytest.raises(amber.CompileError):
            amber.ops.jvp(target, copy.deepcopy(args), tangents)
        return
    refused = _refusal(program, k)
    if refused is not None:
        with pytest.raises(amber.CompileError, match=re.escape(refused)):
            amber.ops.jvp(target, copy.deepcopy(args), tangents)
        return
    made = _made_or_refused(lambda: amber.ops.jvp(target, copy.deepcopy(args), tangents),
                            program, k)
    if made is None:
        return
    out, tangent = made
    capsys.readouterr()
    _close_leaves(tangent, _directional(eager, args, tangents), "jvp")
    first = next((i for i, a in enumerate(args) if isinstance(a, np.ndarray)
                  and a.dtype == np.float64 and a.ndim), None)
    if first is None or not _float64(out) or out.size * args[first].size > 400:
        return
    along = _same_kind(args, [t if i == first else np.zeros_like(a) if _float64(a) else a
                              for i, (a, t) in enumerate(zip(args, tangents))])
    _, want = amber.ops.jvp(target, copy.deepcopy(args), along)
    axes = list(range(out.ndim, out.ndim + args[first].ndim))
    for transform in (amber.ops.jacrev, amber.ops.jacfwd):
        jac = transform(target, first)(*copy.deepcopy(args))
        capsys.readouterr()
        got = np.tensordot(jac, tangents[first], axes=(axes, list(range(args[first].ndim))))
        _close_leaves(got, want, transform.__name__)


def _directional(eager: Any, args: tuple, tangents: tuple) -> Any:
    def moved(step: float) -> tuple:
        return _same_kind(args, [a + step * t if _float64(a) else copy.deepcopy(a)
                                 for a, t in zip(args, tangents)])
    return _difference(eager(*moved(EPS)), eager(*moved(-EPS)))


def _float64(a: Any) -> bool:
    """A float64 array or NumPy scalar (amber compiles both as arrays, so both get tangents)."""
    return isinstance(a, np.ndarray | np.generic) and a.dtype == np.float64


def _difference(ahead: Any, behind: Any) -> Any:
    if isinstance(ahead, tuple | list):
        return [_difference(a, b) for a, b in zip(ahead, behind)]
    if np.asarray(ahead).dtype.kind != "f":
        return None
    return (np.asarray(ahead, np.float64) - np.asarray(behind, np.float64)) / (2 * EPS)


def _close_leaves(got: Any, want: Any, what: str) -> None:
    if isinstance(want, list):
        for g, w in zip(got, want):
            _close_leaves(g, w, what)
        return
    if want is not None:
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{what} differs from finite differences")


# -- the same corpus under vmap: examples that take different branches and trip counts --------

VMAP_CASES = CASES if SWEEP else CASES[::50]
SCALES = (1.0, -0.5, 1.7)
"""Example k is the case's input with its float arrays times SCALES[k] (plus k / 10): signs and
sizes change, so data-dependent branches and loops take different paths per example."""


def _stacked(outs: list[Any]) -> Any:
    if isinstance(outs[0], tuple | list):
        return [_stacked([o[i] for o in outs]) for i in range(len(outs[0]))]
    return np.stack([np.asarray(o) for o in outs])


def _same_structure(outs: list[Any]) -> bool:
    """Every example returns arrays or numbers of one shape and dtype, nested alike."""
    def signature(o: Any) -> str | None:
        if isinstance(o, tuple | list):
            parts = [signature(x) for x in o]
            return None if None in parts else f"({','.join(parts)})"
        if isinstance(o, np.ndarray | np.generic | float | int | bool):
            return f"{np.shape(o)}{np.asarray(o).dtype}"
        return None
    found = {signature(o) for o in outs}
    return len(found) == 1 and None not in found


@pytest.mark.parametrize("case", VMAP_CASES, ids=[f"{p.name}-{k}" for p, k in VMAP_CASES])
def test_vmap_matches_a_loop_over_examples(case: tuple[harness.Program, int],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """vmap over the float arrays (the rest, and a Cell's Parameters, shared) against the
    eager program run on each example; a CompileError (a refusal at a line) is allowed, a
    different result never."""
    program, k = case
    eager, target, args, _ = _setup(program, program.inputs[k])
    batched = [_float64(a) and np.ndim(a) > 0 for a in args]
    if not any(batched):
        return
    examples = [[a * scale + e / 10 if bt else a for a, bt in zip(args, batched)]
                for e, scale in enumerate(SCALES)]
    try:
        with _time_limit(EAGER_SECONDS):
            outs = [eager(*copy.deepcopy(example)) for example in examples]
    except Exception:  # noqa: BLE001 (an example eager cannot run: nothing to compare)
        return
    if not _same_structure(outs):
        return
    stacked = [np.stack([ex[i] for ex in examples]).view(type(a)) if bt else a
               for i, (a, bt) in enumerate(zip(args, batched))]  # NOTE: Tensors stay Tensors
    in_axes = tuple(0 if bt else None for bt in batched)
    try:
        got = amber.ops.vmap(target, in_axes=in_axes)(*stacked)
    except amber.CompileError:
        return
    capsys.readouterr()
    _same_leaves(got, _stacked(outs))


def _same_leaves(got: Any, want: Any) -> None:
    if isinstance(want, list):
        assert isinstance(got, tuple | list) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _same_leaves(g, w)
        return
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=1e-9, atol=1e-9, err_msg="vmap differs from a loop")
