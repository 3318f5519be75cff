"""TrainOneStepCell: one step equals forward + gradients + the optimizer's formula; eager and
compiled training from one seed follow the same loss curve; bad batches, labels, NaN losses are
clear errors that leave every parameter and the optimizer state untouched."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "samples"))
from lenet import LeNet5  # noqa: E402

MODES = ["eager", "compiled"]


class Small(nn.Cell):
    """Dense, BatchNorm, Dropout and ReLU: the layers whose behaviour set_train switches."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(6, 8)
        self.bn = nn.BatchNorm1d(8)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(p=0.25)
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc2(self.drop(self.relu(self.bn(self.fc1(x)))))


def batch(n: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, 6), dtype=np.float32),
            rng.integers(0, 3, n).astype(np.int32))


def make_step(optimizer=None, seed: int = 0, net_type=Small, **kwargs):
    amber.set_seed(seed)
    net = net_type()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    opt = (optimizer or (lambda ps: nn.Momentum(ps, 0.1, 0.9)))(net.trainable_params())
    return net, nn.TrainOneStepCell(loss, opt, **kwargs)


def runner(step: nn.Cell, mode: str):
    if mode == "compiled":
        return amber.jit(step)

    def eager(*args):
        amber.set_context(jit_enabled=False)
        try:
            return step(*args)
        finally:
            amber.set_context(jit_enabled=True)
    return eager


def snapshot(cell: nn.Cell) -> dict[str, np.ndarray]:
    return {name: np.array(p) for name, p in cell.parameters_and_names()}


def assert_untouched(cell: nn.Cell, before: dict[str, np.ndarray]) -> None:
    after = snapshot(cell)
    assert after.keys() == before.keys()
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)


@pytest.mark.parametrize("mode", MODES)
def test_one_step_is_forward_gradient_and_update(mode):
    net, step = make_step(lambda ps: nn.SGD(ps, 0.5))
    step.set_train(False)  # no dropout, moving statistics: a deterministic function
    x, y = batch()
    start = snapshot(net)
    loss_fn = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                    reduction="mean"))
    expected_loss, grads = amber.value_and_grad(loss_fn, None, net.trainable_params())(x, y)
    loss = runner(step, mode)(x, y)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-6)
    for p, g in zip(net.trainable_params(), grads):
        np.testing.assert_allclose(p, start[p.name] - 0.5 * g, rtol=1e-5, atol=1e-6)


def test_eager_and_compiled_training_follow_the_same_loss_curve():
    """LeNet-5 from one seed, a few Adam steps on fixed batches, both ways."""
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((16, 1, 32, 32), dtype=np.float32),
                rng.integers(0, 10, 16).astype(np.int32)) for _ in range(4)]
    curves, weights = {}, {}
    for mode in MODES:
        net, step = make_step(lambda ps: nn.Adam(ps, [0.01, 0.01, 0.005, 0.005] * 2),
                              net_type=LeNet5)
        run = runner(step.set_train(), mode)
        curves[mode] = [float(run(x, y)) for _ in range(2) for x, y in batches]
        weights[mode] = snapshot(step)
    np.testing.assert_allclose(curves["compiled"], curves["eager"], rtol=1e-4, atol=1e-5)
    assert curves["eager"][-1] < curves["eager"][0]
    for name, value in weights["eager"].items():
        np.testing.assert_allclose(weights["compiled"][name], value, rtol=1e-3, atol=1e-5,
                                   err_msg=name)


@pytest.mark.parametrize("mode", MODES)
def test_set_train_switches_dropout_and_batchnorm(mode):
    net, step = make_step(lambda ps: nn.SGD(ps, 0.0))  # lr 0: only layer state changes
    run = runner(step, mode)
    x, y = batch()
    step.set_train(False)
    losses = {float(run(x, y)) for _ in range(3)}
    assert len(losses) == 1  # eval: no dropout
    np.testing.assert_array_equal(net.bn.moving_mean, 0)  # eval: statistics untouched
    step.set_train(True)
    losses = {float(run(x, y)) for _ in range(3)}
    assert len(losses) == 3  # train: a new dropout mask each step
    assert np.abs(net.bn.moving_mean).sum() > 0  # train: moving statistics updated


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("mode", MODES)
def test_nan_loss_is_reported_and_nothing_is_written(mode):
    net, step = make_step()
    run = runner(step.set_train(False), mode)
    x, y = batch()
    run(x, y)  # one good step first: the optimizer state is non-trivial
    before = snapshot(step)
    x[0, 0] = np.nan
    with pytest.raises(nn.NonFiniteLossError, match="the loss is NaN or infinite; the "
                                                    "parameters were not updated"):
        run(x, y)
    assert_untouched(step, before)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("mode", MODES)
def test_nan_is_written_only_when_asked(mode):
    net, step = make_step(update_on_nonfinite=True)
    run = runner(step.set_train(False), mode)
    x, y = batch()
    x[0, 0] = np.inf
    assert np.isnan(run(x, y))
    assert np.isnan(net.fc1.weight).any()


BAD_BATCHES = {
    "wrong feature size": (lambda x, y: (x[:, :5], y), ValueError, "Dense"),
    "wrong batch size of labels": (lambda x, y: (x, y[:5]), ValueError,
                                   r"labels have shape \(5,\), expected \(8,\)"),
    "float64 batch": (lambda x, y: (x.astype(np.float64), y), TypeError,
                      "the loss is float64 but the parameters are float32"),
    "float labels": (lambda x, y: (x, y.astype(np.float32)), ValueError,
                     "sparse labels must be integer class ids"),
    "label too large": (lambda x, y: (x, np.where(y == 0, 3, y)), ValueError,
                        r"sparse labels must be class ids in \[0, 3\)"),
    "negative label": (lambda x, y: (x, y - 1), ValueError,
                       r"sparse labels must be class ids in \[0, 3\)"),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(BAD_BATCHES))
def test_bad_batches_are_errors_with_parameters_untouched(case, mode):
    make, error, match = BAD_BATCHES[case]
    net, step = make_step()
    run = runner(step.set_train(False), mode)
    x, y = batch()
    run(x, y)
    before = snapshot(step)
    with pytest.raises((error, amber.CompileError), match=match):
        run(*make(x, y))
    assert_untouched(step, before)


def test_train_step_arguments_are_checked():
    net = Small()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(True, "mean"))
    with pytest.raises(TypeError, match="optimizer must be an optimizer Cell"):
        nn.TrainOneStepCell(loss, net.trainable_params())
    with pytest.raises(TypeError, match="network must be a Cell"):
        nn.TrainOneStepCell(lambda x: x, nn.SGD(net.trainable_params()))
    with pytest.raises(TypeError, match="sens must be a float"):
        nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params()), sens="1")


def test_functional_train_step_matches_train_one_step_cell():
    """MindSpore 2.x's functional style (value_and_grad of a forward function, then the
    optimizer, in one jit function) and TrainOneStepCell train the same."""
    def make():
        return make_step(lambda ps: nn.Momentum(ps, 0.1, 0.9))

    net, step = make()
    cell = amber.jit(step.set_train(False))
    model, step2 = make()
    step2.set_train(False)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = step2.optimizer

    def forward(x, y):
        return loss_fn(model(x), y)

    grad_fn = amber.value_and_grad(forward, None, optimizer.parameters)

    @amber.jit
    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss

    for seed in range(3):
        x, y = batch(seed=seed)
        np.testing.assert_allclose(train_step(x, y), cell(x, y), rtol=1e-6)
    for a, b in zip(net.get_parameters(), model.get_parameters()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
