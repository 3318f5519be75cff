"""MindSpore API pieces model files use: module paths, initializers written MindSpore's way,
Tensor and Parameter methods, the Cell configuration calls, the new layers, ops with MindSpore
semantics where they differ from NumPy's, `constexpr` and `Tensor(...)` inside construct, and
the optional `mindspore` import alias."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import amber
from amber import nn, ops
from amber.common import initializer as init
from amber.common.initializer import Initializer, _assignment

X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 2, 2)


# -- module paths -----------------------------------------------------------------------------

def test_mindspore_module_paths_import():
    import amber.common.dtype as mstype
    import amber.context as context
    import amber.numpy as mnp
    from amber.common.parameter import Parameter, ParameterTuple
    from amber.common.tensor import Tensor
    from amber.nn.cell import Cell
    from amber.ops import functional as F
    from amber.ops import operations as P
    from amber.ops.primitive import constexpr
    from amber.train.callback import Callback, RunContext
    assert P.ReLU is ops.ReLU and F.reshape is ops.reshape and F.tensor_add is ops.add
    assert mstype.float32 == np.float32 and context.GRAPH_MODE == amber.GRAPH_MODE
    assert Parameter is nn.Parameter and ParameterTuple is nn.ParameterTuple
    assert Tensor is amber.Tensor and Cell is nn.Cell and constexpr is ops.constexpr
    assert mnp is amber.numpy and mnp.zeros((2,)).dtype == np.float32
    Callback().epoch_end(RunContext(3))  # a no-op hook
    with pytest.raises(AttributeError, match="no primitive"):
        P.NoSuchPrimitive


# -- initializers -----------------------------------------------------------------------------

class Halves(Initializer):
    """MindSpore style: `_initialize(arr)` fills in place."""

    def __init__(self, value=0.5):
        super().__init__(value=value)
        self.value = value

    def _initialize(self, arr):
        _assignment(arr, np.full(arr.shape, self.value))


def test_initializer_subclasses_with_initialize_work_everywhere():
    got = init.initializer(Halves(), (2, 3), np.float32)
    assert got.dtype == np.float32 and (got == 0.5).all()
    dense = nn.Dense(3, 2, weight_init=Halves(0.25))
    assert (dense.weight == 0.25).all()
    arr = np.zeros(4, np.float64)
    assert Halves(2.0)(arr) is arr and (arr == 2.0).all()
    scalar = np.zeros((), np.float32)
    assert _assignment(scalar, 3.0) is scalar and scalar == 3.0


def test_amber_initializers_fill_arrays_as_mindspore_calls_them():
    amber.set_seed(0)
    arr = np.zeros((3, 4), np.float32)
    init.Normal(sigma=2.0)(arr)
    assert arr.std() > 0.5
    assert (init.initializer("ones", (2,)) == 1).all()
    assert init.initializer("XavierUniform", (3, 4)).shape == (3, 4)
    with pytest.raises(NotImplementedError, match="neither values"):
        init.initializer(Initializer(), (2,))


# -- Tensor, Parameter, Cell ------------------------------------------------------------------

def test_tensor_and_parameter_methods():
    t = amber.Tensor([[1.5, 2.0], [3.0, 4.0]])
    assert t.dtype == np.float32 and type(t.asnumpy()) is np.ndarray
    assert t.view(-1).shape == (4,) and t.view(4, 1).shape == (4, 1) and t.dim() == 2
    assert (t + 1).asnumpy().tolist() == [[2.5, 3.0], [4.0, 5.0]]
    p = nn.Parameter(np.ones(3, np.float32), name="w")
    assert p.data is p and type(p.value()) is np.ndarray
    assert np.shares_memory(p.value(), p) and p.init_data() is p


def test_cell_configuration_calls():
    net = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])
    assert net.add_flags(loop_can_unroll=True) is net and net.get_flags()["loop_can_unroll"]
    assert net.add_flags_recursive(x=1) is net and net[0].flags["x"] == 1
    assert net.to_float(amber.float32) is net
    with pytest.raises(NotImplementedError, match="to_float"):
        net.to_float(amber.float16)
    assert set(net.init_parameters_data()) == set(net.get_parameters())


# -- layers -----------------------------------------------------------------------------------

@pytest.mark.parametrize("layer, ref", [
    (nn.ReLU6(), lambda x: np.minimum(np.maximum(x, 0), 6)),
    (nn.LeakyReLU(), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.LeakyReLU(0.05), lambda x: np.where(x > 0, x, 0.05 * x)),
])
def test_activation_layers(layer, ref):
    x = X * 3
    np.testing.assert_allclose(layer(x), ref(x), rtol=1e-6)
    np.testing.assert_allclose(amber.jit(layer)(x), ref(x), rtol=1e-6)
    assert layer(x).dtype == np.float32
    assert isinstance(nn.get_activation("relu6"), nn.ReLU6)


@pytest.mark.parametrize("size, kwargs", [
    (8, dict(stride=2, pad_mode="same")), (7, dict(stride=2, pad_mode="valid")),
    (7, dict(stride=2, pad_mode="pad", padding=1)), (8, dict(stride=1, pad_mode="same",
                                                             dilation=2))])
def test_conv2d_transpose_inverts_conv2d_shapes_and_is_its_adjoint(size, kwargs):
    """For input sizes the stride divides as the mode expects, Conv2dTranspose maps back to the
    input's shape and is the adjoint of Conv2d with the same weights."""
    amber.set_seed(0)
    conv = nn.Conv2d(3, 4, 3, **kwargs)
    deconv = nn.Conv2dTranspose(4, 3, 3, **kwargs)
    deconv.weight.set_data(np.array(conv.weight))
    x = np.random.default_rng(1).standard_normal((1, 3, size, size)).astype(np.float32)
    y = conv(x)
    g = np.random.default_rng(2).standard_normal(y.shape).astype(np.float32)
    back = deconv(g)
    assert back.shape == x.shape
    # <conv(x), g> == <x, conv_transpose(g)>
    np.testing.assert_allclose(np.sum(y * g), np.sum(x * back), rtol=1e-4)
    np.testing.assert_allclose(amber.jit(deconv)(g), back, rtol=1e-6, atol=1e-6)


def test_conv2d_transpose_output_padding_adds_zero_rows():
    deconv = nn.Conv2dTranspose(2, 3, 3, stride=2, pad_mode="pad", padding=1, output_padding=1,
                                has_bias=True, bias_init="ones")
    out = deconv(X[:, :2])
    assert out.shape == (2, 3, 4, 4)
    assert (out[:, :, -1, :] == 0).all() and (out[:, :, :, -1] == 0).all()
    with pytest.raises(ValueError, match="output_padding"):
        nn.Conv2dTranspose(2, 3, 3, stride=2, output_padding=1)


# -- MindSpore semantics where NumPy's differ --------------------------------------------------

def test_division_spellings_follow_mindspore_for_integers():
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    assert ops.Div()(a, b).dtype == np.float32 and ops.div(a, b).tolist() == [3.5, -3.5, -3.5, 3.5]
    assert ops.RealDiv()(a, b).tolist() == [3, -3, -3, 3]  # toward zero, as C
    assert ops.floor_div(a, b).tolist() == [3, -4, -4, 3]
    assert (a / b).dtype == np.float64  # Python's `/` stays NumPy's

    def both(a, b):
        return ops.Div()(a, b), ops.RealDiv()(a, b), a / b
    for got, want in zip(amber.jit(both)(a, b), both(a, b)):
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_mindspore_float_defaults():
    assert ops.one_hot(np.array([0, 2]), 3, 1.0, 0.0).dtype == np.float32
    assert amber.numpy.arange(5).dtype == np.int32 and amber.numpy.arange(0.5, 2).dtype == \
        np.float32
    assert ops.tuple_to_array((1, 2)).dtype == np.int32
    assert ops.tuple_to_array((1.0, 2)).dtype == np.float32
    assert ops.scalar_to_tensor(2).dtype == np.float32 and ops.scalar_to_tensor(2).shape == ()


# -- constexpr, Tensor(...) and DType inside construct -----------------------------------------

@ops.constexpr
def lower_triangle(n):
    return amber.Tensor(np.tril(np.ones((n, n))), amber.float32)


class Masked(nn.Cell):
    def __init__(self):
        super().__init__()
        self.get_dtype = ops.DType()
        self.cast = ops.Cast()

    def construct(self, x):
        n = ops.shape(x)[-1]
        scale = amber.Tensor([0.5, 2.0], amber.float32)
        mask = self.cast(lower_triangle(n), self.get_dtype(x))
        return ops.matmul(x, mask) * scale[1] + amber.Tensor(x, amber.float32) * scale[0]


def test_constexpr_tensor_and_dtype_inside_construct():
    net = Masked()
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    fast = amber.jit(net)
    got = fast(x)
    np.testing.assert_array_equal(got, net.construct(x))
    assert got.dtype == np.float64
    assert "tril" not in fast.code  # the mask is a constant of the program


# -- the optional `mindspore` alias ------------------------------------------------------------

def test_alias_imports_amber_under_mindspore_names_in_a_fresh_process(tmp_path):
    model = tmp_path / "ms_model.py"
    model.write_text(textwrap.dedent("""
        import numpy as np
        import mindspore as ms
        import mindspore.nn as nn
        from mindspore.ops import operations as P
        from mindspore.common.initializer import Normal

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(4, 2, weight_init=Normal(0.02))
                self.relu = P.ReLU()

            def construct(self, x):
                return self.relu(self.fc(x))

        ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
        net = ms.jit(Net())
        x = np.ones((3, 4), np.float32)
        assert np.array_equal(net(x), net.__wrapped__.construct(x))
        print("ran", ms.__name__, net.stats.compiles)
    """))
    run = subprocess.run([sys.executable, "-m", "amber.compat", str(model)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "ran amber 1" in run.stdout
    missing = tmp_path / "needs_mindrecord.py"
    missing.write_text("import mindspore.mindrecord\n")
    run = subprocess.run([sys.executable, "-m", "amber.compat", str(missing)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "amber has no counterpart of mindspore.mindrecord" in run.stderr
