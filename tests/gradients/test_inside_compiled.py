"""Gradient functions called inside compiled code: compiled into the caller's graph.

Grad of grad (second derivatives and Hessian-vector products, checked against finite
differences of the first derivative), `value_and_grad` inside a jitted function and inside
loops, GradOperation made in `__init__` or inside `construct`, and a training step (forward,
gradient and in-place update in one construct) against the same step run eagerly.
"""
from __future__ import annotations

import numpy as np
import pytest

import amber
import numeric
from amber import nn, ops

RNG = np.random.default_rng(0)
V = RNG.standard_normal(5)
M = RNG.standard_normal((5, 5))


def cubic(x):
    return (x * x * x).sum()


def trig(x):
    return (ops.sin(x) * ops.cos(2.0 * x) + ops.exp(-x * x)).sum()


def logs(x):
    return (ops.log(x * x + 1.0) / (1.0 + ops.sqrt(x * x + 2.0))).sum()


def squashed(x):
    return (ops.tanh(x) * ops.sigmoid(3.0 * x) - x ** 3 / 7.0).mean()


def quadratic_form(x):
    y = M @ x
    return (y * ops.tanh(y)).sum() + (x.reshape(1, 5) @ M @ x.reshape(5, 1)).sum()


def soft(x):
    z = x.reshape(1, 5) * M
    return (ops.softmax(z, axis=-1) * M).sum() + ops.log(ops.exp(x).sum())


def maxed(x):
    return (ops.maximum(x, 0.3 * x) * x + ops.abs(x - 0.1) * x).sum()


SCALAR_FUNCTIONS = [cubic, trig, logs, squashed, maxed]
VECTOR_FUNCTIONS = [cubic, trig, logs, squashed, quadratic_form, soft, maxed]


@pytest.mark.parametrize("fn", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_second_derivative_of_a_scalar_function(fn):
    x = np.array(0.7)
    first = amber.grad(fn)
    numeric.close(first(x), numeric.gradient(fn, (x,), 0))
    second = amber.grad(amber.grad(fn))
    numeric.close(second(x), numeric.gradient(first, (x,), 0, eps=1e-5), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", VECTOR_FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_vector_product(fn):
    x = RNG.standard_normal(5) * 0.5 + 0.2

    def along_v(x):
        return (amber.grad(fn)(x) * V).sum()

    want = numeric.gradient(amber.grad(fn), (x,), 0, sens=V, eps=1e-5)
    numeric.close(amber.grad(along_v)(x), want, rtol=1e-5, atol=1e-6)
    numeric.close(amber.jit(along_v)(x), along_v(x))


def test_third_derivative():
    x = np.array(0.4)
    third = amber.grad(amber.grad(amber.grad(trig)))
    second = amber.grad(amber.grad(trig))
    numeric.close(third(x), numeric.gradient(second, (x,), 0, eps=1e-4), rtol=1e-4, atol=1e-6)


def test_second_derivative_op_by_op_equals_compiled():
    x = np.array(0.3)
    compiled = amber.grad(amber.grad(logs))(x)
    amber.set_context(jit_enabled=False)
    numeric.close(amber.grad(amber.grad(logs))(x), compiled, rtol=1e-12, atol=1e-12)


def descend(x):
    """Gradient descent steps on `trig`, each step's gradient compiled into this loop."""
    for _ in range(4):
        loss, g = amber.value_and_grad(trig)(x)
        x = x - 0.1 * g
    return x, loss


def descend_until(x, tol):
    """The same, in a while loop with a data-dependent stop."""
    steps = 0
    g = amber.grad(trig)(x)
    while np.abs(g).max() > tol and steps < 20:
        x = x - 0.2 * g
        g = amber.grad(trig)(x)
        steps += 1
    return x, steps


def loss_and_norm(x):
    y = ops.tanh(x)
    return (y * y).sum(), np.abs(y).max()


def weighted(a, b):
    return (a * b * b).sum()


def with_aux(x):
    (loss, norm), g = amber.value_and_grad(loss_and_norm, has_aux=True)(x)
    return loss + norm, g


def by_positions(x, y):
    ga, gb = amber.grad(weighted, (0, 1))(x, y)
    same_a, same_b = amber.grad(weighted, (0, 1))(x, x)  # one array at both positions
    return ga, gb, same_a, same_b


@pytest.mark.parametrize("program, args", [
    (descend, (RNG.standard_normal(5),)),
    (descend_until, (RNG.standard_normal(5), 0.05)),
    (with_aux, (RNG.standard_normal(5),)),
    (by_positions, (RNG.standard_normal(5), RNG.standard_normal(5))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_inside_a_jitted_function_equals_eager(program, args):
    numeric.close(amber.jit(program)(*args), program(*args), rtol=1e-10, atol=1e-12)


def test_gradient_of_a_function_computing_a_gradient():
    """d/dx of a loss that contains the gradient of another function (a gradient penalty)."""
    def penalized(x):
        g = amber.grad(trig)(x)
        return trig(x) + 0.5 * (g * g).sum()
    x = RNG.standard_normal(5)
    numeric.close(amber.grad(penalized)(x), numeric.gradient(penalized, (x,), 0, eps=1e-5),
                  rtol=1e-5, atol=1e-6)


class Mlp(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc2(ops.tanh(self.fc1(x)))


class TrainStep(nn.Cell):
    """MindSpore's TrainOneStepCell, written out: forward, gradient by GradOperation made in
    __init__, an in-place SGD update with ops.assign; one construct."""

    def __init__(self, network, lr=0.1):
        super().__init__(auto_prefix=False)
        self.network = network
        self.weights = amber.ParameterTuple(network.trainable_params())
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        self.lr = lr

    def construct(self, x, y):
        loss = self.network(x, y)
        sens = ops.ones_like(loss)
        grads = self.grad(self.network, self.weights)(x, y, sens)
        for w, g in zip(self.weights, grads):
            ops.assign(w, w - self.lr * g)
        return loss


class ValueAndGradStep(nn.Cell):
    """The same with value_and_grad made inside construct and an in-place `-=` update."""

    def __init__(self, network, lr=0.1):
        super().__init__(auto_prefix=False)
        self.network = network
        self.weights = network.trainable_params()
        self.lr = lr

    def construct(self, x, y):
        loss, grads = amber.value_and_grad(self.network, None, self.weights)(x, y)
        for w, g in zip(self.weights, grads):
            w -= self.lr * g
        return loss


class GradOfInput(nn.Cell):
    """GradOperation made inside construct, gradient with respect to the input."""

    def __init__(self):
        super().__init__()
        self.net = Mlp()

    def construct(self, x):
        grads = ops.GradOperation(get_all=True, sens_param=True)(self.net)(x, ops.ones((3, 3)))
        return grads[0] * 2.0


def _training_case(step_class):
    amber.set_seed(0)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return step_class(nn.WithLossCell(Mlp(), loss))


@pytest.mark.parametrize("step_class", [TrainStep, ValueAndGradStep])
def test_training_step_is_one_graph_equal_to_eager(step_class):
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    y = RNG.integers(0, 3, 6).astype(np.int32)
    eager, compiled = _training_case(step_class), _training_case(step_class)
    step = amber.jit(compiled)
    for _ in range(4):
        numeric.close(step(x, y), eager.construct(x, y), rtol=1e-6, atol=1e-6)
    for a, b in zip(eager.trainable_params(), compiled.trainable_params()):
        numeric.close(b, a, rtol=1e-6, atol=1e-6)
    assert step.stats.compiles == 1
    body = step.code.split("\ndef ")[-1]
    assert body.count("np.tanh(") == 1  # the forward is shared with the gradient


def test_training_step_op_by_op_equals_compiled():
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    y = RNG.integers(0, 3, 6).astype(np.int32)
    graph_mode, pynative = _training_case(TrainStep), _training_case(TrainStep)
    step = amber.jit(graph_mode)
    losses = [step(x, y) for _ in range(3)]
    amber.set_context(jit_enabled=False)
    step = amber.jit(pynative)
    numeric.close([step(x, y) for _ in range(3)], losses, rtol=1e-6, atol=1e-7)
    for a, b in zip(graph_mode.trainable_params(), pynative.trainable_params()):
        numeric.close(b, a, rtol=1e-6, atol=1e-7)


def test_grad_operation_made_inside_construct():
    net = GradOfInput()
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    numeric.close(amber.jit(net)(x), net.construct(x), rtol=1e-6, atol=1e-7)


def test_a_weight_that_is_not_a_parameter_is_refused_at_the_users_line():
    class Bad(nn.Cell):
        def __init__(self):
            super().__init__()
            self.net = Mlp()

        def construct(self, x):
            h = x * 2.0
            return ops.GradOperation(get_by_list=True)(self.net, (h,))(x)  # line of the error

    with pytest.raises(amber.CompileError, match="not a Parameter") as info:
        amber.jit(Bad())(np.ones((2, 4), np.float32))
    assert "line of the error" in str(info.value)


def out_of_range(x):
    return amber.grad(cubic, 3)(x)  # line of the error


def test_a_bad_position_inside_compiled_code_is_refused_at_the_users_line():
    with pytest.raises(amber.CompileError, match="out of range") as info:
        amber.jit(out_of_range)(np.ones(3))
    assert "line of the error" in str(info.value)


class DropoutMlp(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.drop = nn.Dropout(p=0.5)
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc2(self.drop(ops.tanh(self.fc1(x))))


def test_training_step_through_dropout_uses_one_mask_and_equals_eager():
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    y = RNG.integers(0, 3, 6).astype(np.int32)

    def make():
        amber.set_seed(0)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = TrainStep(nn.WithLossCell(DropoutMlp(), loss))
        return step.set_train(True)

    eager, compiled = make(), make()
    step = amber.jit(compiled)
    for _ in range(3):
        numeric.close(step(x, y), eager.construct(x, y), rtol=1e-6, atol=1e-6)
    for a, b in zip(eager.trainable_params(), compiled.trainable_params()):
        numeric.close(b, a, rtol=1e-6, atol=1e-6)


amber.set_seed(3)
MODEL = Mlp()
LOSS = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
PARAMS = MODEL.trainable_params()


def forward_fn(x, y):
    logits = MODEL(x)
    return LOSS(logits, y), logits


GRAD_FN = amber.value_and_grad(forward_fn, None, PARAMS, has_aux=True)


def train_step(x, y):
    """MindSpore 2.x's functional training step: value_and_grad of a function over a model
    defined at module level, then an in-place SGD update, all in one compiled function."""
    (loss, logits), grads = GRAD_FN(x, y)
    for w, g in zip(PARAMS, grads):
        w -= 0.1 * g
    return loss, logits.argmax(-1)


def test_functional_training_step_over_a_global_model_equals_eager():
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    y = RNG.integers(0, 3, 6).astype(np.int32)
    start = [np.array(p) for p in PARAMS]
    eager = [train_step(x, y) for _ in range(3)]
    after_eager = [np.array(p) for p in PARAMS]
    for p, s in zip(PARAMS, start):
        p[...] = s
    step = amber.jit(train_step)
    compiled = [step(x, y) for _ in range(3)]
    numeric.close(compiled, eager, rtol=1e-6, atol=1e-6)
    numeric.close(list(PARAMS), after_eager, rtol=1e-6, atol=1e-6)
    assert step.stats.compiles == 1
