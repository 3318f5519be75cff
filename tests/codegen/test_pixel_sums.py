"""sum over every axis but the last of a float array (a convolution's bias
gradient over channels-last pixels) is spelled as one GEMV with ones (ops/reduce.py): compiled
results equal eager ones to float rounding and the float64 sum, static and symbolic batches,
zero rows; every other sum keeps NumPy's spelling and its bits."""
import numpy as np
import pytest

import amber
from amber import nn


class Sums(nn.Cell):
    def construct(self, x):
        return (x.sum(axis=(0, 1, 2)), np.sum(x, axis=(2, 0, 1)), x.sum(axis=(0, 1)),
                x.sum(axis=(1, 2)), x.sum(axis=(0, 1, 2), keepdims=True))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dynamic", [None, {"x": 0}])
def test_pixel_sums_are_a_gemv_and_agree_with_numpy(dtype, dynamic) -> None:
    fast = amber.jit(Sums(), **({} if dynamic is None else {"dynamic": dynamic}))
    for shape in ((32, 16, 16, 24), (0, 3, 4, 5), (3, 1, 1, 1)):
        x = (np.random.default_rng(sum(shape)).standard_normal(shape) + 0.5).astype(dtype)
        got, want = fast(x), Sums().construct(x)
        exact = x.astype(np.float64).sum(axis=(0, 1, 2))
        tol = 1e-5 if dtype == np.float32 else 1e-12
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(1, x.shape[0] * 16))
        for g in got[:2]:
            np.testing.assert_allclose(g, exact, rtol=tol, atol=tol * 64)
        assert all(np.array_equal(g, w) for g, w in zip(got[2:], want[2:]))
        if dynamic is None:
            break
    lines = fast.code
    assert lines.count("np.ones(") == 2 and "x.sum(axis=(0, 1))" in lines and \
        "keepdims=True" in lines
