"""Convolutions split over threads (`set_context(num_threads=...)`, ops/parallel.py): the NHWC
kernels at 2-4 threads against one thread bit for bit and against float64 loops over the
definition (strides, padding modes, dilation, odd sizes, one image in bands, fewer images than
threads, 1x1 projections); a compiled residual block, symbolic batch, forward and gradients
equal to one thread's and to eager / finite differences; BLAS's thread count put back."""
import os
import sys

import numpy as np
import pytest

import amber
from amber import nn
from amber.ops.conv_nhwc import (conv2d_nhwc_grad_input_kernel, conv2d_nhwc_grad_weight_kernel,
                                 conv2d_nhwc_kernel)
from amber.ops.parallel import (even_step, hold_blas, kernel_threads, one_blas_thread, run_parts,
                                 splits, thread_ranges, worker_pool)
from amber.runtime.context import CompileOptions, default_threads

sys.path.insert(0, os.path.dirname(__file__))
from test_conv_rows import conv_loops, weight_grad_loops  # noqa: E402

NHWC, NCHW = (0, 2, 3, 1), (0, 3, 1, 2)
needs_blas_control = pytest.mark.skipif(
    kernel_threads().blas is None,
    reason="NumPy's BLAS is not an OpenBLAS amber can hold at one thread: kernels keep one part")

# (x NCHW, w OIHW, stride, pads, dilation): each large enough to be split over two threads
# (over 2 * 2**22 multiply-adds, `thread_ranges`), but the small 1x1 projection
CASES = [
    ((16, 16, 16, 16), (16, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((17, 16, 31, 29), (24, 16, 3, 3), (2, 2), (1, 0, 1, 2), (1, 1)),
    ((6, 32, 14, 14), (32, 32, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1)),  # one part
    ((9, 32, 24, 22), (64, 32, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),  # 1x1: parts of images
    ((1, 16, 64, 60), (16, 16, 3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),
    ((1, 32, 49, 45), (32, 32, 3, 3), (2, 1), (1, 1, 1, 1), (1, 1)),
    ((23, 16, 16, 16), (16, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # blocks of 7 and the rest
    ((2, 32, 40, 41), (24, 32, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # row taps, two images
    ((10, 24, 16, 15), (20, 24, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # row taps, images
    ((8, 64, 9, 7), (64, 64, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # blocks of 7 and a lone one
    ((4, 64, 6, 17), (40, 64, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # row taps, 64 channels
    ((19, 16, 24, 27), (40, 16, 3, 3), (2, 3), (1, 1, 0, 2), (2, 1)),  # phase rows, 16 + 3
]


def test_the_cases_split() -> None:
    for x, w, stride, pads, dilation in CASES:
        out = [(x[2 + a] + pads[2 * a] + pads[2 * a + 1] - (w[2 + a] - 1) * dilation[a] - 1) //
               stride[a] + 1 for a in (0, 1)]
        work = x[0] * out[0] * out[1] * w[0] * w[1] * w[2] * w[3]
        assert splits(work, 2) == (x != (6, 32, 14, 14))


@needs_blas_control
@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation", CASES)
def test_threaded_kernels_equal_one_thread_and_the_definition(x_shape, w_shape, stride, pads,
                                                              dilation) -> None:
    rng = np.random.default_rng(sum(x_shape))
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bias = rng.standard_normal(w_shape[0]).astype(np.float32)
    attrs = {"stride": stride, "padding": pads, "pad_mode": "pad", "dilation": dilation}
    xh = x.transpose(NHWC)
    blas_before = kernel_threads().blas[0]()
    hold_blas(kernel_threads(), 1)  # NOTE: the same bits as one thread at one BLAS thread
    try:
        one = conv2d_nhwc_kernel(xh, w, bias, **attrs)
        g = rng.standard_normal(one.shape).astype(np.float32)
        dw_one = conv2d_nhwc_grad_weight_kernel(xh, g, w_shape=w_shape, **attrs)
        dx_one = conv2d_nhwc_grad_input_kernel(g, w, x_shape=x_shape, **attrs)
    finally:
        hold_blas(kernel_threads(), -1)
    for threads in (2, 3, 4):
        assert np.array_equal(conv2d_nhwc_kernel(xh, w, bias, threads=threads, **attrs), one)
        assert np.array_equal(conv2d_nhwc_grad_weight_kernel(
            xh, g, w_shape=w_shape, threads=threads, **attrs), dw_one)
        assert np.array_equal(conv2d_nhwc_grad_input_kernel(
            g, w, x_shape=x_shape, threads=threads, **attrs), dx_one)
    assert kernel_threads().blas[0]() == blas_before and kernel_threads().regions == 0
    np.testing.assert_allclose(one.transpose(NCHW), conv_loops(x, w, stride, pads, dilation) +
                               bias[:, None, None], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw_one, weight_grad_loops(x, g.transpose(NCHW), w_shape, stride,
                                                         pads, dilation), rtol=1e-4, atol=1e-3)


def test_thread_ranges_cover_the_range_once() -> None:
    for count, threads, align in ((32, 2, 1), (32, 3, 5), (7, 4, 2), (1, 2, 1), (0, 2, 1)):
        parts = thread_ranges(count, threads, 1 << 30, align)
        assert [i for a, b in parts for i in range(a, b)] == list(range(count))
        assert all(a % align == 0 for a, _ in parts) and len(parts) <= threads
    assert thread_ranges(32, 2, 1000) == [(0, 32)]  # NOTE: too little work to hand over


def test_even_step_halves_the_images_at_block_bounds() -> None:
    """even_step: at most `step` images a block and at least half of it; two threads' parts
    never less even than `step`'s blocks gave, within a block's slack of half."""
    def longest(count: int, step: int) -> int:
        parts = thread_ranges(count, 2, 1 << 30, step)
        return max(b - a for a, b in parts)
    assert even_step(32, 9) == 8 and longest(32, 8) == 16  # NOTE: 18 + 14 at blocks of 9
    assert longest(32, even_step(32, 7)) == 17 and longest(32, 7) == 18
    for count in range(1, 70):
        for step in range(1, 40):
            size = even_step(count, step)
            if count <= step:
                assert size == step
                continue
            assert max(1, (step + 1) // 2, step - 15) <= size <= step
            assert longest(count, size) <= longest(count, step)
            assert longest(count, size) <= -(-count // 2) + max(count // 32, size)


@needs_blas_control
def test_an_error_in_a_worker_reaches_the_caller_and_blas_is_put_back() -> None:
    before = kernel_threads().blas[0]()

    def task(start: int, stop: int) -> int:
        if start:
            raise ValueError("part failed")
        return stop

    with pytest.raises(ValueError, match="part failed"):
        run_parts(task, [(0, 1), (1, 2)], 2)
    assert kernel_threads().blas[0]() == before and kernel_threads().regions == 0
    assert run_parts(lambda a, b: a * 10 + b, [(0, 1), (1, 2), (2, 3)], 3) == [1, 12, 23]


@needs_blas_control
def test_run_parts_takes_the_parts_a_busy_worker_has_not() -> None:
    """The caller and the workers take the parts in order, each the next one not taken: with
    every worker busy elsewhere the caller takes them all and returns without waiting."""
    import threading
    shared = kernel_threads()
    pool = worker_pool(shared, 1)
    release = threading.Event()
    busy = [pool.submit(release.wait, 30) for _ in range(shared.workers)]
    caller, ran = threading.get_ident(), []

    def task(start: int, stop: int) -> int:
        ran.append(threading.get_ident())
        return start * 10 + stop
    try:
        assert run_parts(task, [(k, k + 1) for k in range(6)], 2) == [11 * k + 1 for k in range(6)]
        assert ran == [caller] * 6
    finally:
        release.set()
    assert all(future.result() for future in busy) and shared.regions == 0
    ran.clear()
    assert run_parts(task, [(k, k + 1) for k in range(40)], 2) == [11 * k + 1 for k in range(40)]
    assert len(ran) == 40  # NOTE: who took which depends on when the worker woke


@needs_blas_control
def test_a_thread_marked_fine_cuts_up_to_four_parts_a_thread() -> None:
    """`kernel_threads().local.fine` (set by a gradient pair around its longer gradient): up
    to 4 parts a thread at block bounds, still no more than the work pays for."""
    local = kernel_threads().local
    assert thread_ranges(64, 2, 1 << 30, 4) == [(0, 32), (32, 64)]
    local.fine = True
    try:
        parts = thread_ranges(64, 2, 1 << 30, 4)
        fewer = thread_ranges(64, 2, 5 << 22, 4)
    finally:
        local.fine = False
    assert parts == [(k * 8, k * 8 + 8) for k in range(8)]
    assert len(fewer) == 5 and [i for a, b in fewer for i in range(a, b)] == list(range(64))
    assert all(a % 4 == 0 for a, _ in fewer)


def test_the_thread_count_setting(monkeypatch) -> None:
    for env, expected in (("3", 3), ("4,2", 4), (" 2 ", 2)):
        monkeypatch.setenv("OMP_NUM_THREADS", env)
        assert default_threads() == expected
    monkeypatch.setenv("OMP_NUM_THREADS", "many")
    monkeypatch.setenv("NUMBA_NUM_THREADS", "5")
    assert default_threads() == 5
    with pytest.raises(ValueError, match="num_threads must be an int >= 1"):
        amber.set_context(num_threads=0)
    one, two = CompileOptions(num_threads=1), CompileOptions(num_threads=2)
    assert one.cache_token() != two.cache_token()


class Residual(nn.Cell):
    def __init__(self, dtype) -> None:
        super().__init__()
        conv = lambda cin, cout, k, s: nn.Conv2d(cin, cout, k, stride=s, pad_mode="same",  # noqa
                                                 has_bias=True, weight_init="he_normal")
        self.conv1, self.conv2, self.down = conv(16, 16, 3, 1), conv(16, 32, 3, 2), \
            conv(16, 32, 1, 2)
        self.relu = nn.ReLU()
        for p in self.trainable_params():
            p.set_data(np.asarray(p, dtype))

    def construct(self, x: np.ndarray) -> np.ndarray:
        h = self.relu(self.conv1(x)) + x
        return self.relu(self.conv2(h) + self.down(h))


class Loss(nn.Cell):
    def __init__(self, net: nn.Cell) -> None:
        super().__init__()
        self.net = net

    def construct(self, x: np.ndarray) -> np.ndarray:
        return (np.sin(self.net(x)) * 1.5).sum()


@pytest.fixture
def restore_threads():
    before = amber.get_context().options.num_threads
    yield
    amber.set_context(num_threads=before)


@needs_blas_control
def test_a_residual_block_on_two_threads(restore_threads) -> None:
    """Symbolic batch; forward and input/weight gradients on two threads equal one thread's
    bit for bit, eager's within rounding, and (float64) central differences."""
    amber.set_seed(0)
    net = Residual(np.float64)
    weights = [net.conv1.weight, net.conv2.weight, net.down.bias]
    results = {}
    for threads in (1, 2):
        amber.set_context(num_threads=threads)
        fast = amber.jit(net, dynamic={"x": 0})
        grad = amber.jit(amber.grad(Loss(net), grad_position=0, weights=weights),
                         dynamic={"x": 0})
        hold_blas(kernel_threads(), 1)  # NOTE: one thread's bits are at one BLAS thread
        try:
            results[threads] = [(fast(x), *grad(x)) for x in
                                (np.random.default_rng(b).standard_normal((b, 16, 16, 16))
                                 for b in (16, 3))]
        finally:
            hold_blas(kernel_threads(), -1)
        assert ("threads=2" in fast.code and "threads=2" in grad.code) == (threads == 2)
    for one, two in zip(results[1], results[2]):
        assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
        assert all(np.array_equal(a, b) for a, b in zip(one[2], two[2]))
    x = np.random.default_rng(16).standard_normal((16, 16, 16, 16))
    out, dx, _ = results[2][0]
    np.testing.assert_allclose(out, net.construct(x), rtol=1e-10, atol=1e-10)
    loss, d, eps = Loss(net).construct, np.random.default_rng(1).standard_normal(x.shape), 1e-7
    np.testing.assert_allclose((dx * d).sum(), (loss(x + eps * d) - loss(x - eps * d)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)


@needs_blas_control
def test_threaded_code_holds_blas_at_one_thread_for_the_whole_call(restore_threads) -> None:
    """A GEMM on BLAS's own threads between two threaded kernels would leave OpenBLAS's
    worker spinning on the core amber's pool needs: code with threaded kernels runs every
    GEMM at one BLAS thread (`@one_blas_thread`), and puts the count back after, after an
    error too; errors still name the user's line."""
    get, set_count = kernel_threads().blas
    before = get()
    set_count(2)
    try:
        seen = []
        held = one_blas_thread(lambda fail: seen.append(get()) or (1 / 0 if fail else 7))
        assert held(False) == 7 and get() == 2
        with pytest.raises(ZeroDivisionError):
            held(True)
        assert seen == [1, 1] and get() == 2 and kernel_threads().regions == 0

        class Checked(nn.Cell):
            def __init__(self) -> None:
                super().__init__()
                self.conv = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)

            def construct(self, x: np.ndarray) -> np.ndarray:
                y = self.conv(x)
                if y.max() > 1e6:
                    raise ValueError("activations too large")
                return y

        x = np.random.default_rng(0).standard_normal((8, 16, 16, 16)).astype(np.float32)
        for threads in (1, 2):
            amber.set_context(num_threads=threads)
            fast = amber.jit(Checked())
            fast(x)
            assert ("@one_blas_thread\ndef " in fast.code) == (threads == 2)
            with pytest.raises(ValueError, match="too large") as info:
                fast(x * 1e9)
            assert get() == 2 and kernel_threads().regions == 0
            assert any("test_conv_threads.py" in note and "raise ValueError" in note
                       for note in getattr(info.value, "__notes__", ()))
    finally:
        set_count(before)


@needs_blas_control
@pytest.mark.parametrize("n, stride, pads", [(23, (1, 1), (1, 1, 1, 1)), (24, (2, 1), (0, 2, 1, 0))])
def test_a_three_channel_stem_on_threads(n, stride, pads, restore_threads) -> None:
    """The column kernels the layout pass leaves NCHW (a 3-channel stem) split whole blocks
    over threads: forward and weight gradient equal one thread's bit for bit, and the
    definition; compiled code passes `threads` to them."""
    from amber.ops.conv_kernels import conv2d_gemm, conv2d_grad_weight
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 3, 32, 30)).astype(np.float32)
    w = rng.standard_normal((32, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    out_size = ((32 + pads[0] + pads[1] - 3) // stride[0] + 1, (30 + pads[2] + pads[3] - 3) //
                stride[1] + 1)
    assert len(thread_ranges(n, 2, n * 32 * out_size[0] * out_size[1] * 27, 3)) == 2
    forward = {"kernel": (3, 3), "out_size": out_size, "step": 3, "stride": stride, "pads": pads}
    attrs = {"stride": stride, "padding": pads, "pad_mode": "pad"}
    hold_blas(kernel_threads(), 1)
    try:
        one = conv2d_gemm(x, w, bias, **forward)
        g = rng.standard_normal(one.shape).astype(np.float32)
        dw_one = conv2d_grad_weight(x, g, w_shape=w.shape, **attrs)
    finally:
        hold_blas(kernel_threads(), -1)
    for threads in (2, 3, 4):
        assert np.array_equal(conv2d_gemm(x, w, bias, threads=threads, **forward), one)
        assert np.array_equal(conv2d_grad_weight(x, g, w_shape=w.shape, threads=threads,
                                                 **attrs), dw_one)
    np.testing.assert_allclose(one, conv_loops(x, w, stride, pads, (1, 1)) +
                               bias[:, None, None], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw_one, weight_grad_loops(x, g, w.shape, stride, pads, (1, 1)),
                               rtol=1e-4, atol=1e-3)

    class Stem(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 32, 3, pad_mode="same", has_bias=True)

        def construct(self, x: np.ndarray) -> np.ndarray:
            return (self.conv(x) ** 2).sum()
    stem = Stem()
    results = {}
    for threads in (1, 2):
        amber.set_context(num_threads=threads)
        grad = amber.jit(amber.grad(stem, grad_position=None, weights=[stem.conv.weight]))
        hold_blas(kernel_threads(), 1)
        try:
            results[threads] = grad(x)
        finally:
            hold_blas(kernel_threads(), -1)
        assert ("threads=2" in grad.code) == (threads == 2)
    assert all(np.array_equal(a, b) for a, b in zip(results[1], results[2]))
