"""Every op's shape rule over a symbolic size agrees with its kernel at concrete sizes.

For each sample of every op family (the core families' in tests/ops/test_registry.py, the nn
families' in tests/ops/test_nn_ops.py), one size present in its array inputs becomes the symbol
N wherever it occurs (as the runtime names a dynamic batch), the op's `infer` runs on those
symbolic types, and then the kernel runs on the inputs resized to several concrete N: wherever
the kernel accepts them, the inferred type with N substituted must be the result's type ("?"
matches any size). A rule may give "?" where it cannot know; it may never claim a size the
kernel does not produce. Then each operand gets a symbol of its own (N, M, L, ...: two
arguments whose sizes the runtime named apart), sized independently, 1 included, so a rule
that assumes two symbols equal, or a symbol not 1, is caught. Window ops, whose output sizes
are expressions of symbolic spatial dims, also get random geometries (hypothesis).
"""
import importlib.util
import itertools
import os
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.ops import registry, window
from amber.ops.symbolic import Sym, free_symbols, substitute, symbol
from amber.ops.types import (UNKNOWN, AnyType, ListType, Tensor, TupleType, Type, join_types,
                             type_of)



def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(
        f"symbolic_infer_{name}", os.path.join(os.path.dirname(__file__), f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLES: dict[str, list[tuple[tuple, dict]]] = {
    name: list(cases) for name, cases in _load("test_registry").SAMPLES.items()}
for _op, _inputs, _attrs in _load("test_nn_ops").samples():
    SAMPLES.setdefault(_op.name, []).append((tuple(_inputs), dict(_attrs)))

N = symbol("N")
NAMES = ("N", "M", "L", "K", "P", "Q")
SIZES = (0, 1, 2, 3, 5, 8)
EXAMPLES = int(os.environ.get("AMBER_HYPOTHESIS_EXAMPLES", "60"))

REFUSES_SYMBOLS: dict[str, str] = {
    "squeeze": "axis=None drops the dims of size 1, and a symbolic dim may or may not be 1",
    "split": "chunks of a fixed size make a number of pieces that depends on the size",
    "gather_nd": "the length of the index tuples (the last dim of indices) is how many axes are "
                 "indexed, which sets the result's rank",
}
"""Ops whose rule may refuse a symbolic size (a compile error, never a wrong result), and why."""


def _arrays(value: Any) -> list[np.ndarray]:
    """The array leaves of an input, in order."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, tuple | list):
        return [a for v in value for a in _arrays(v)]
    return []


def _sizes(value: Any) -> set[int]:
    if isinstance(value, np.ndarray):
        return {d for d in value.shape if d >= 1}
    if isinstance(value, tuple | list):
        return set().union(*map(_sizes, value)) if value else set()
    return set()


def _symbolic_type(value: Any, size: int, names: Any = None) -> Type:
    """The value's type with every axis of length `size` made N (or, with an iterator of
    `names`, the next name for each array leaf)."""
    if isinstance(value, np.ndarray):
        sym = N if names is None else symbol(next(names))
        return Tensor(tuple(sym if d == size else d for d in value.shape), value.dtype)
    if isinstance(value, tuple):
        return TupleType(tuple(_symbolic_type(v, size, names) for v in value))
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return ListType(join_types([_symbolic_type(v, size, names) for v in value]))
    if isinstance(value, np.random.Generator):
        return AnyType()
    return type_of(value)


def _resized(value: Any, size: int, n: Any) -> Any:
    """The value with every axis of length `size` made `n` long (its items repeated; with an
    iterator `n`, the next length for each array leaf). Generators restart their stream."""
    if isinstance(value, np.ndarray):
        k = n if isinstance(n, int) else next(n)
        for axis, d in enumerate(value.shape):
            if d == size:
                value = np.take(value, np.arange(k) % size, axis=axis)
        return value
    if isinstance(value, tuple):
        return tuple(_resized(v, size, n) for v in value)
    if isinstance(value, list):
        return [_resized(v, size, n) for v in value]
    if isinstance(value, np.random.Generator):
        clone = np.random.default_rng()
        clone.bit_generator.state = value.bit_generator.state
        return clone
    return value


def fits(inferred: Type, actual: Type, n: int | dict[str, int]) -> bool:
    """`actual` is what `inferred` describes when N is n (or the symbols take the values of
    the dict n); '?' matches any size."""
    env = {"N": n} if isinstance(n, int) else n
    if isinstance(inferred, Tensor) and isinstance(actual, Tensor):
        return inferred.dtype == actual.dtype and inferred.rank == actual.rank and all(
            d == UNKNOWN or substitute(d, env) == a
            for d, a in zip(inferred.shape, actual.shape))
    if isinstance(inferred, TupleType) and isinstance(actual, TupleType):
        return len(inferred.elements) == len(actual.elements) and all(
            fits(i, a, n) for i, a in zip(inferred.elements, actual.elements))
    if isinstance(inferred, ListType) and isinstance(actual, ListType):
        return fits(inferred.element, actual.element, n) or actual.element == type_of([]).element
    return inferred == actual


def _cases(operands: int = 1) -> list[tuple[str, int, int]]:
    """(op, sample, size) for every size of a sample held by at least `operands` arrays."""
    cases = []
    for name, samples in sorted(SAMPLES.items()):
        for k, (inputs, _) in enumerate(samples):
            arrays = _arrays(list(inputs))
            for size in sorted(_sizes(inputs)):
                if sum(size in a.shape for a in arrays) >= operands:
                    cases.append((name, k, size))
    return cases


def check_sample(name: str, inputs: tuple, attrs: dict, size: int, sizes: tuple[int, ...]
                 ) -> int:
    """Infer with `size` made N, then compare at each concrete n; the number of sizes the
    kernel accepted."""
    op = registry.OPS[name]
    attrs = op.full_attrs(attrs)
    types = tuple(_symbolic_type(v, size) for v in inputs)
    try:
        inferred = op.infer(*types, **attrs)
    except (TypeError, ValueError, NotImplementedError) as exc:
        concrete = tuple(map(type_of, inputs))
        with pytest.raises((TypeError, ValueError, NotImplementedError)):
            if name not in REFUSES_SYMBOLS:  # NOTE: else only symbols make it refuse
                op.infer(*concrete, **attrs)
                raise AssertionError(f"{name}: infer refuses {types} ({exc}) but not {concrete}")
            raise exc
        return 0
    assert not isinstance(inferred, Tensor) or free_symbols(inferred.shape) <= {"N"}
    accepted = 0
    for n in sizes:
        args = tuple(_resized(v, size, n) for v in inputs)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                result = op.kernel(*args, **attrs)
        except Exception:
            continue  # NOTE: eager refuses these sizes; compiled code may refuse them too
        actual = type_of(result)
        assert fits(inferred, actual, n), \
            f"{name}{types} {attrs}: inferred {inferred}, but N={n} gives {actual}"
        accepted += 1
    return accepted


@pytest.mark.parametrize("name,k,size", _cases(), ids=lambda v: str(v))
def test_infer_with_a_symbol_agrees_with_the_kernel(name: str, k: int, size: int) -> None:
    inputs, attrs = SAMPLES[name][k]
    check_sample(name, inputs, attrs, size, SIZES + (size,))


@pytest.mark.parametrize("name,k,size", _cases(operands=2), ids=lambda v: str(v))
def test_infer_with_a_symbol_per_operand_agrees_with_the_kernel(name: str, k: int,
                                                                size: int) -> None:
    """Operands sized apart (1, the sample's size, or larger): wherever the kernel accepts
    the combination, the inferred type with each symbol substituted is the result's."""
    inputs, attrs = SAMPLES[name][k]
    op = registry.OPS[name]
    attrs = op.full_attrs(attrs)
    leaves = len(_arrays(list(inputs)))
    names = NAMES[:leaves] if leaves <= len(NAMES) else tuple(f"N{i}" for i in range(leaves))
    types = _symbolic_types(inputs, size, names)
    try:
        inferred = op.infer(*types, **attrs)
    except (TypeError, ValueError, NotImplementedError):
        return  # NOTE: refusing is allowed: the one-symbol test checks it is for symbols only
    for lengths in itertools.product(sorted({1, size, size + 2}), repeat=leaves):
        args = _resized_all(inputs, size, lengths)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                result = op.kernel(*args, **attrs)
        except Exception:
            continue
        env = dict(zip(names, lengths))
        assert fits(inferred, type_of(result), env), \
            f"{name}{types} {attrs}: inferred {inferred}, but {env} gives {type_of(result)}"


def _symbolic_types(inputs: tuple, size: int, names: tuple[str, ...]) -> tuple[Type, ...]:
    it = iter(names)
    return tuple(_symbolic_type(v, size, it) for v in inputs)


def _resized_all(inputs: tuple, size: int, lengths: tuple[int, ...]) -> tuple:
    it = iter(lengths)
    return tuple(_resized(v, size, it) for v in inputs)


def test_symbols_survive_the_common_shape_rules() -> None:
    """Not just "?": the rules LeNet-like programs rely on keep N exactly."""
    f32 = np.dtype(np.float32)
    x = Tensor((N, 1, 32, 32), f32)
    conv = window.conv2d.infer(x, Tensor((6, 1, 5, 5), f32), **window.conv2d.full_attrs({}))
    assert conv.shape == (N, 6, 28, 28)
    pooled = window.max_pool2d.infer(conv, **window.max_pool2d.full_attrs(
        {"kernel_size": (2, 2), "stride": (2, 2)}))
    assert pooled.shape == (N, 6, 14, 14)
    flat = registry.OPS["flatten"].infer(pooled, start_dim=1, end_dim=-1)
    assert flat.shape == (N, 6 * 14 * 14)
    dense = registry.OPS["dense"].infer(flat, Tensor((10, 6 * 14 * 14), f32), Tensor((10,), f32),
                                        **registry.OPS["dense"].full_attrs({"has_bias": True}))
    assert dense.shape == (N, 10)
    assert registry.OPS["reshape"].infer(pooled, shape=(N, -1)).shape == (N, 1176)
    assert registry.OPS["sum"].infer(dense, axis=None, keepdims=False).shape == ()


@st.composite
def window_problems(draw):
    op = draw(st.sampled_from(["conv2d", "max_pool2d", "avg_pool2d"]))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    mode = draw(st.sampled_from(["valid", "same", "pad"]))
    pads = tuple(draw(st.integers(0, kk // 2)) for kk in (k[0], k[0], k[1], k[1])) \
        if mode == "pad" else (0, 0, 0, 0)
    mode = "valid" if mode == "pad" and not any(pads) else mode  # NOTE: the canonical form
    h, w = draw(st.integers(3, 7)), draw(st.integers(3, 7))
    return op, k, stride, mode, pads, h, w


@settings(max_examples=EXAMPLES, deadline=None)
@given(window_problems(), st.sampled_from([2, 3]))
def test_window_output_sizes_are_expressions_of_symbolic_spatial_dims(problem, axis) -> None:
    op, k, stride, mode, pads, h, w = problem
    x = np.linspace(-1, 1, 2 * 3 * h * w, dtype=np.float32).reshape(2, 3, h, w)
    attrs: dict[str, Any] = {"stride": stride, "pad_mode": mode, "padding": pads}
    if op == "conv2d":
        inputs = (x, np.ones((4, 3) + k, np.float32) / 9)
    else:
        inputs, attrs = (x,), {**attrs, "kernel_size": k}
    size = x.shape[axis]
    if size in (2, 3) or (axis == 2 and h == w):  # NOTE: keep the symbol to one axis
        return
    assert check_sample(op, inputs, attrs, size, (size, size + 1, size + 4, 9)) >= 1
    inferred = registry.OPS[op].infer(
        *(_symbolic_type(v, size) for v in inputs), **registry.OPS[op].full_attrs(attrs))
    assert isinstance(inferred.shape[axis], Sym)
