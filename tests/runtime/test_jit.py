"""`jit` on a Cell class, a Cell instance, a plain function and a class defined in a function;
compiled results equal the eager `construct`; `jit_enabled=False` bypasses compilation."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn, ops


class Affine(nn.Cell):
    """y = relu(x @ w.T + b) * scale, with a Python-level branch on a config flag."""

    def __init__(self, n_in: int = 4, n_out: int = 3, negate: bool = False) -> None:
        super().__init__()
        self.fc = nn.Dense(n_in, n_out)
        self.scale = 2.0
        self.negate = negate

    def construct(self, x: np.ndarray) -> np.ndarray:
        y = ops.relu(self.fc(x)) * self.scale
        if self.negate:
            y = -y
        return y


@amber.jit
class JitAffine(Affine):
    """The same model with every call compiled."""


def scaled_sum(x: np.ndarray, k: int) -> np.ndarray:
    """A plain function: a loop whose trip count is a compile-time scalar."""
    total = x * 0
    for i in range(k):
        total = total + x * i
    return total


def _x(*shape: int) -> np.ndarray:
    return np.random.default_rng(1).standard_normal(shape).astype(np.float32)


def test_class_decorator_compiles_every_instance() -> None:
    a, b = JitAffine(), JitAffine(negate=True)
    x = _x(2, 4)
    for net in (a, b):
        out = net(x)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, net.construct(x), rtol=1e-6)
    stats = JitAffine.__call__.stats
    assert stats.compiles >= 1 and "def " in JitAffine.__call__.code
    assert np.all(b(x) <= 0) and np.all(a(x) >= 0)


def test_construct_stays_python() -> None:
    net = JitAffine()
    before = JitAffine.__call__.stats.specializations
    net.construct(_x(5, 4))  # the eager oracle never compiles
    assert JitAffine.__call__.stats.specializations == before


def test_jit_instance_exposes_code_graph_and_wrapped() -> None:
    net = Affine()
    fast = amber.jit(net)
    assert fast.__wrapped__ is net and fast.code is None
    x = _x(3, 4)
    np.testing.assert_allclose(fast(x), net.construct(x), rtol=1e-6)
    assert "import numpy as np" in fast.code
    assert fast.graph is not None and fast.graph.param_paths
    assert "fc" in fast.ir
    assert amber.jit(fast) is fast


def test_jit_function_specializes_on_scalars() -> None:
    fast = amber.jit(scaled_sum)
    assert fast.__wrapped__ is scaled_sum and fast.__name__ == "scaled_sum"
    x = _x(4)
    for k in (0, 3, 5):
        np.testing.assert_allclose(fast(x, k), scaled_sum(x, k), rtol=1e-6)
    assert fast.stats.specializations == 3
    fast(x, 3)
    assert fast.stats.specializations == 3  # memory cache hit


def test_class_defined_inside_a_function() -> None:
    @amber.jit
    class Local(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.w = amber.Parameter(np.arange(4, dtype=np.float32))

        def construct(self, x: np.ndarray) -> np.ndarray:
            if x.sum() > 0:
                return x * self.w
            return x - self.w

    net = Local()
    for sign in (1, -1):
        x = sign * np.abs(_x(4)) + sign
        np.testing.assert_allclose(net(x), net.construct(x))
    assert Local.__call__.stats.compiles == 1  # one graph holds both branches


def test_subclass_of_jit_class_compiles_its_own_construct() -> None:
    class Doubled(JitAffine):
        def construct(self, x: np.ndarray) -> np.ndarray:
            return JitAffine.construct(self, x) * 2

    base, sub = JitAffine(), Doubled()
    sub.fc = base.fc  # the same weights: the subclass doubles the base's output
    x = _x(2, 4)
    np.testing.assert_allclose(base(x), base.construct(x), rtol=1e-6)
    np.testing.assert_allclose(sub(x), 2 * base.construct(x), rtol=1e-6)
    np.testing.assert_allclose(base(x), base.construct(x), rtol=1e-6)


def test_jit_enabled_false_bypasses_compilation() -> None:
    amber.set_context(jit_enabled=False)
    fast = amber.jit(scaled_sum)
    x = _x(3)
    np.testing.assert_array_equal(fast(x, 2), scaled_sum(x, 2))
    assert fast.stats.specializations == 0 and fast.code is None
    amber.set_context(jit_enabled=True)
    fast(x, 2)
    assert fast.stats.specializations == 1


def test_pynative_mode_is_the_default_and_compiles_jit_targets() -> None:
    assert amber.get_context().mode == amber.PYNATIVE_MODE == 1
    fast = amber.jit(scaled_sum)
    fast(_x(3), 2)
    assert fast.stats.specializations == 1


def test_bad_targets_and_modes() -> None:
    with pytest.raises(TypeError, match="construct"):
        amber.jit(int)
    with pytest.raises(TypeError, match="Cell"):
        amber.jit(42)
    with pytest.raises(ValueError, match="mode"):
        amber.set_context(mode="fast")
    with pytest.raises(ValueError, match="opt_level"):
        amber.set_context(opt_level=3)


def test_opt_levels_agree() -> None:
    x = _x(2, 4)
    net = Affine()
    results = [amber.jit(net, opt_level=level)(x) for level in (0, 1, 2)]
    for out in results:
        np.testing.assert_allclose(out, net.construct(x), rtol=1e-6)
