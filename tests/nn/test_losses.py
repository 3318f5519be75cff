"""Loss cells added for training: L1Loss and BCEWithLogitsLoss (values against float64 formulas,
compiled equal to eager, gradients against finite differences), and sparse labels out of range."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn

RNG = np.random.default_rng(0)
LOGITS = (RNG.standard_normal((4, 3)) * 3).astype(np.float32)
TARGETS = RNG.random((4, 3)).astype(np.float32)


def reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def bce_reference(x, y, weight=None, pos_weight=None):
    x, y = x.astype(np.float64), y.astype(np.float64)
    sig = 1 / (1 + np.exp(-x))
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * y * np.log(sig) + (1 - y) * np.log(1 - sig))
    return loss * (1.0 if weight is None else weight)


CASES = {
    "l1": (lambda r: nn.L1Loss(r), lambda x, y: np.abs(x.astype(np.float64) - y)),
    "bce": (lambda r: nn.BCEWithLogitsLoss(r), bce_reference),
    "bce-weights": (
        lambda r: nn.BCEWithLogitsLoss(r, weight=np.array([1.0, 0.5, 2.0], np.float32),
                                       pos_weight=np.array([3.0, 1.0, 0.5], np.float32)),
        lambda x, y: bce_reference(x, y, np.array([1.0, 0.5, 2.0]), np.array([3.0, 1.0, 0.5]))),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_values_eager_and_compiled(case, reduction):
    make, reference = CASES[case]
    loss = make(reduction)
    expected = reduce(reference(LOGITS, TARGETS), reduction)
    eager = loss(LOGITS, TARGETS)
    np.testing.assert_allclose(eager, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(amber.jit(loss)(LOGITS, TARGETS), eager, rtol=1e-6, atol=1e-7)
    assert np.asarray(eager).dtype == np.float32


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_gradients_match_finite_differences(case):
    make, _ = CASES[case]
    loss = make("mean")
    x = LOGITS.astype(np.float64) + 0.1  # away from |x - y| == 0 for L1
    y = TARGETS.astype(np.float64)
    grad = amber.grad(loss)(x, y)
    eps, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (loss.construct(up, y) - loss.construct(down, y)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_bce_with_logits_does_not_overflow():
    x = np.array([[-200.0, 200.0, 0.0]], np.float32)
    y = np.array([[1.0, 0.0, 0.5]], np.float32)
    out = nn.BCEWithLogitsLoss("none")(x, y)
    np.testing.assert_allclose(out, [[200.0, 200.0, np.log(2.0)]], rtol=1e-6)
    assert np.isfinite(amber.grad(nn.BCEWithLogitsLoss())(x, y)).all()


def test_loss_arguments_and_inputs_are_checked():
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.L1Loss("avg")
    with pytest.raises(TypeError, match="pos_weight must be an array or None"):
        nn.BCEWithLogitsLoss(pos_weight=[1.0])
    with pytest.raises(ValueError, match="logits shape \\(4, 3\\) and labels shape \\(4, 2\\)"):
        nn.BCEWithLogitsLoss()(LOGITS, TARGETS[:, :2])
    with pytest.raises(ValueError, match="do not broadcast"):
        nn.L1Loss()(LOGITS, TARGETS[:, :2])


@pytest.mark.parametrize("labels", [[0, 1, 3], [-1, 0, 1]])
def test_sparse_labels_out_of_range_are_an_error_not_a_wrap(labels):
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    logits = LOGITS[:3]
    labels = np.array(labels, np.int32)
    with pytest.raises(ValueError, match=r"sparse labels must be class ids in \[0, 3\)"):
        loss(logits, labels)
    with pytest.raises(ValueError, match=r"sparse labels must be class ids in \[0, 3\)"):
        amber.jit(loss)(logits, labels)


class LossStep(nn.Cell):
    """The loss and its gradient in one compiled function: `fuse_loss_grad` makes them the
    fused kernel, whose gather checks the labels."""

    def __init__(self) -> None:
        super().__init__()
        self.loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        self.grad = amber.ops.GradOperation()

    def construct(self, logits, labels):
        return self.loss(logits, labels), self.grad(self.loss)(logits, labels)


LABEL_CASES = [(dtype, bad) for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint32")
               for bad in (3, 127, -1, -128)
               if np.iinfo(dtype).min <= bad <= np.iinfo(dtype).max]


@pytest.mark.parametrize("dtype, bad", LABEL_CASES)
def test_sparse_labels_of_every_width_are_checked(dtype, bad):
    """Below 64 bits the gather itself checks the class ids (viewed as unsigned); 64-bit ids
    take the reduction. Either way a bad id raises at the user's line, in the loss alone, its
    gradient alone and the fused pair; good ids of the same width give the float64 values."""
    logits = LOGITS[:3].astype(np.float64)
    good = np.array([0, 2, 1], dtype)
    step = amber.jit(LossStep())
    loss, grad = step(logits, good)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    np.testing.assert_allclose(loss, -np.log(probs[[0, 1, 2], [0, 2, 1]]).mean(), rtol=1e-12)
    np.testing.assert_allclose(grad, (probs - np.eye(3)[[0, 2, 1]]) / 3, rtol=1e-12)
    labels = np.array([0, bad, 1], dtype)
    alone = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum")
    for compiled in (step, amber.jit(alone), amber.jit(amber.grad(alone))):
        with pytest.raises(ValueError, match=r"sparse labels must be class ids in \[0, 3\)") \
                as info:
            compiled(logits, labels)
        assert any("(compiled by amber)" in note and ".py:" in note
                   for note in getattr(info.value, "__notes__", ())), info.value


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_sparse_cross_entropy_gradient_and_its_derivative(reduction):
    """The fused gradient kernel equals softmax minus one-hot (times the adjoint), and
    differentiating it again (through its expansion) matches finite differences."""
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction=reduction)
    x = LOGITS.astype(np.float64)
    labels = np.array([0, 2, 1, 2], np.int32)
    sens = np.linspace(0.5, 1.5, 4) if reduction == "none" else np.float64(1.0)
    grad = amber.ops.GradOperation(sens_param=True)(loss)(x, labels, sens)
    probs = np.exp(x - x.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    per = sens[:, None] if reduction == "none" else sens / (4 if reduction == "mean" else 1)
    np.testing.assert_allclose(grad, (probs - np.eye(3)[labels]) * per, rtol=1e-12)

    v = np.cos(np.arange(12.0)).reshape(4, 3)

    def directional(x):  # <d loss / d x, v>, differentiated again below
        g = amber.ops.GradOperation(sens_param=True)(loss)(x, labels, sens)
        return (g * v).sum()

    second = amber.grad(directional)(x)
    eps, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (directional(up) - directional(down)) / (2 * eps)
    np.testing.assert_allclose(second, numeric, rtol=1e-5, atol=1e-8)
