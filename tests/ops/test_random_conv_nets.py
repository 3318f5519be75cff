"""Random convolution nets (`random_conv_nets.py`) compiled against eager: every lowering path
(channels-last chains, the few-channel stem, pixel pairs, row taps, strided input gradients,
bias sums, threads, gradient pairs, kept buffers) where the generator makes two rules meet.

For each net:
- the forward compiled with a symbolic batch (three sizes) and with static shapes (two calls,
  whose temporaries are kept across calls) at `num_threads` 1 and 2 equals `net.construct` at
  the dtype's tolerance; with BLAS held at one thread the two thread counts agree bit for bit
  (the promise of `test_conv_threads.py`); a result the caller holds is not changed by the next
  call;
- (float64) `amber.grad` of a loss through the net, compiled, equals the eager gradient and
  central differences along random directions of the input and of all weights together;
- a compiled `TrainOneStepCell` (momentum, symbolic batch, one compile) stepped three times on
  different batch sizes makes the updates eager steps make from the same state, and the
  losses it returned stay as returned.

CI checks a fixed sample of small nets. The long run (nice it; about 1-3 s a net):
    AMBER_CONV_FUZZ=2000 nice python -m pytest tests/ops/test_random_conv_nets.py -q
draws that many nets from `AMBER_CONV_FUZZ_SEED` (default 0) on, with larger convolutions
(`AMBER_CONV_FUZZ_WORK` multiply-adds a batch, default 3e7, enough to split over threads),
one test per net (`-x` stops at the first failure, `-k 1234` reruns seed 1234). A failure
prints its net as the layers a user writes.
"""
from __future__ import annotations

import copy
import os
import sys

import numpy as np
import pytest

import amber
from amber import nn
from amber.ops.parallel import hold_blas, kernel_threads

sys.path.insert(0, os.path.dirname(__file__))
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(__file__)), "graph", "passes"))
from central_differences import SquaredSum, finite_difference  # noqa: E402
from random_conv_nets import Spec, build, random_spec  # noqa: E402

LONG_RUN = int(os.environ.get("AMBER_CONV_FUZZ", "0"))
FIRST_SEED = int(os.environ.get("AMBER_CONV_FUZZ_SEED", "0"))
LONG_WORK = int(float(os.environ.get("AMBER_CONV_FUZZ_WORK", "3e7")))
NETS = [(seed, LONG_WORK) for seed in range(FIRST_SEED, FIRST_SEED + LONG_RUN)] or \
    [(seed, 400_000) for seed in range(1000, 1012)] + [(1153, 12_000_000)]
"""(seed, multiply-adds a batch at most). CI's sample: a dozen small nets, and one whose
16-channel 5x5 gradients are paired on two threads (static shapes, 8.6M multiply-adds)."""
STEPS = (1e-8, 3e-9)
"""Central differences' steps: float64 rounding stays under 1e-6 relative, and a step this
small seldom moves a ReLU's or a max's input across its kink (1e-6 did, in 1 of 20 nets; 1e-8
in 1 of 200); the second step is tried only when the first disagrees."""
BLAS_HELD = kernel_threads().blas is not None


def tolerance(dtype) -> float:
    return 1e-9 if dtype == np.float64 else 2e-4


def assert_close(got, want, dtype, what: str) -> None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, eager {want.shape}"
    tol = tolerance(dtype)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)


def inputs(spec: Spec, batch: int, salt: int = 0) -> np.ndarray:
    rng = np.random.default_rng([spec.seed, batch, salt])
    return rng.standard_normal((batch, *spec.in_shape)).astype(spec.dtype)


def eager(fn, *args):
    amber.set_context(jit_enabled=False)
    try:
        return fn(*args)
    finally:
        amber.set_context(jit_enabled=True)


def check_forward(spec: Spec) -> None:
    """Symbolic batch over three sizes, then static shapes (whose temporaries are kept across
    calls) twice: each equal to eager, at 1 and 2 threads, and what a call returned unchanged by
    the later ones; bit for bit across the thread counts with BLAS at one thread."""
    net = build(spec)
    results = {}
    for threads in (1, 2):
        amber.set_context(num_threads=threads)
        symbolic, static = amber.jit(net, dynamic={"x": 0}), amber.jit(net)
        held = []
        runs = [(symbolic, batch, 0) for batch in spec.batches] + \
            [(static, spec.batches[-1], salt) for salt in (1, 2)]
        for fast, batch, salt in runs:
            x = inputs(spec, batch, salt)
            got = fast(x)
            assert_close(got, net.construct(x), spec.dtype, f"forward, {threads} threads, "
                         f"batch {batch}{'' if fast is symbolic else ' (static)'}")
            for before, kept in held:
                np.testing.assert_array_equal(before, kept, err_msg="an earlier result changed")
            held.append((got, np.array(got, copy=True)))
        if BLAS_HELD:
            hold_blas(kernel_threads(), 1)  # NOTE: one thread's bits are at one BLAS thread
            try:
                results[threads] = [fast(inputs(spec, batch, salt)) for fast, batch, salt in runs]
            finally:
                hold_blas(kernel_threads(), -1)
    for one, two in zip(results.get(1, ()), results.get(2, ())):
        np.testing.assert_array_equal(one, two, err_msg="2 threads differ from 1 in bits")


def assert_differences(derivative: float, fn, scale: float, what: str) -> None:
    """`derivative` == d fn(t) / dt at 0 by central differences, at either step."""
    for step in STEPS:
        along = finite_difference(fn, (np.zeros(1),), 0, step)[0]
        if np.isclose(derivative, along, rtol=1e-5, atol=1e-6 * scale):
            return
    raise AssertionError(f"{what}: {derivative!r}, central differences {along!r}")


def check_gradients(spec: Spec, threads: int) -> None:
    """float64: compiled gradients == eager ones == central differences along directions;
    at 1 and 2 threads bit for bit."""
    spec = copy.copy(spec)
    spec.dtype = np.float64
    net = build(spec)
    weights = net.trainable_params()
    loss = SquaredSum(net)
    amber.set_context(num_threads=threads)
    grad = amber.grad(loss, grad_position=0, weights=weights)
    # NOTE: static shapes (kept temporaries; gradient pairs at 2 threads need them) for half
    # the nets, two sizes of a symbolic batch for the others
    static = spec.seed % 4 in (1, 2)
    dynamic = None if static else {"x": 0}
    fast = amber.jit(grad, dynamic=dynamic)
    rng = np.random.default_rng(spec.seed)
    held = []
    for call, batch in enumerate(spec.batches[:1] * 2 if static else spec.batches[:2]):
        x = inputs(spec, batch, 3 + call)
        dx, dws = fast(x)
        for before, kept in held:
            np.testing.assert_array_equal(before, kept, err_msg="an earlier gradient changed")
        held += [(g, np.array(g, copy=True)) for g in (dx, *dws)]
        want_dx, want_dws = eager(grad, x)
        assert_close(dx, want_dx, np.float64, f"input gradient, batch {batch}")
        for w, got, want in zip(weights, dws, want_dws):
            assert_close(got, want, np.float64, f"gradient of {w.name}, batch {batch}")
        scale = max(1.0, abs(float(loss.construct(x))))
        d = rng.standard_normal(x.shape)
        assert_differences((dx * d).sum(), lambda t: loss.construct(x + t[0] * d), scale,
                           "input gradient")
        starts = [np.array(w, copy=True) for w in weights]
        moves = [rng.standard_normal(s.shape) for s in starts]

        def moved(t):
            for w, s, m in zip(weights, starts, moves):
                w[...] = s + t[0] * m
            return loss.construct(x)
        try:
            assert_differences(sum((g * m).sum() for g, m in zip(dws, moves)), moved, scale,
                               "weight gradients")
        finally:
            for w, s in zip(weights, starts):
                w[...] = s
    if BLAS_HELD:  # NOTE: and the other thread count's bit for bit, BLAS at one thread
        results = []
        for count in (threads, 3 - threads):
            amber.set_context(num_threads=count)  # NOTE: before the call: a jit compiles again
            # when the setting changed
            run = fast if count == threads else amber.jit(grad, dynamic=dynamic)
            hold_blas(kernel_threads(), 1)
            try:
                dx, dws = run(x)
                results.append((dx, *dws))
            finally:
                hold_blas(kernel_threads(), -1)
        for one, two in zip(*results):
            np.testing.assert_array_equal(one, two, err_msg="gradients at 1 and 2 threads differ")


def train_step(net: nn.Cell) -> nn.Cell:
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.Momentum(net.trainable_params(), 0.002, 0.9))


def assert_same_update(got, want, exact, start, dtype, what: str) -> None:
    """`got - start` == `want - start` at the dtype's tolerance of the update's size (plus the
    rounding of storing it into `start`'s magnitude), or == `exact - start`, the float64 step
    from the same state: float32 eager can round a ReLU's input to the other side of 0 (seed
    116: one channel's weight gradient 1e-3 off float64, compiled 2e-7)."""
    got, want, exact, start = (np.asarray(a, np.float64) for a in (got, want, exact, start))
    update = float(np.abs(want - start).max(initial=0.0))
    atol = tolerance(dtype) * update + 8 * np.finfo(dtype).eps * float(np.abs(start).max())
    if not np.allclose(got - start, exact - start, rtol=tolerance(dtype), atol=atol):
        np.testing.assert_allclose(got - start, want - start, rtol=tolerance(dtype), atol=atol,
                                   err_msg=what)


def check_train_steps(spec: Spec, threads: int) -> None:
    """Three compiled steps (one compile, three batch sizes) against eager steps, each from
    the state the compiled step left (its parameters and momenta): a step that drives the loss
    up makes rounding differences grow step after step (float32 weights 1e-7 apart after one
    step were 4e-2 apart after the third, the loss at 1e5; eager float32 as far from float64).
    Eager steps in float64 too, the judge where float32 eager and compiled part."""
    exact_spec = copy.copy(spec)
    exact_spec.dtype = np.float64
    nets = [build(spec), build(spec), build(exact_spec)]
    step, reference, exact = (train_step(net) for net in nets)
    dtype = amber.float32 if spec.dtype == np.float32 else amber.float64
    step.set_inputs(amber.Tensor(shape=[None, *spec.in_shape], dtype=dtype),
                    amber.Tensor(shape=[None, *spec.out_shape], dtype=dtype))
    amber.set_context(num_threads=threads)
    fast = amber.jit(step)
    held = []
    for k, batch in enumerate(spec.batches):
        x = inputs(spec, batch, 2)
        y = np.random.default_rng([spec.seed, k]).standard_normal(
            (batch, *spec.out_shape)).astype(spec.dtype)
        state = [(name, p, q, r, np.array(p, copy=True)) for (name, p), (_, q), (_, r) in zip(
            *(cell.parameters_and_names() for cell in (step, reference, exact)))]
        got = fast(x, y)
        assert_close(got, eager(reference, x, y), spec.dtype, f"loss of step {k}, batch {batch}")
        eager(exact, x.astype(np.float64), y.astype(np.float64))
        for name, p, q, r, start in state:
            assert_same_update(p, q, r, start, spec.dtype, f"{name} after step {k}, batch {batch}")
            q[...] = p
            r[...] = p
        for before, kept in held:
            np.testing.assert_array_equal(before, kept, err_msg="an earlier loss changed")
        held.append((got, np.array(got, copy=True)))
    assert fast.stats.specializations == 1


def check_net(spec: Spec) -> None:
    before = amber.get_context().options.num_threads
    try:
        check_forward(spec)
        check_gradients(spec, 1 + spec.seed % 2)  # NOTE: static at 2 threads when seed % 4 == 1
        check_train_steps(spec, 2 - spec.seed % 2)
    finally:
        amber.set_context(num_threads=before)


@pytest.mark.parametrize("seed, work", NETS)
def test_random_conv_net(seed: int, work: int) -> None:
    spec = random_spec(np.random.default_rng(seed), seed, work)
    try:
        check_net(spec)
    except AssertionError as error:
        raise AssertionError(f"{spec.source()}\n{error}") from None
