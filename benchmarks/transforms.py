"""Function transforms: a Hessian by `jacfwd(jacrev(f))` (amber vs JAX vs the Hessian written
out in NumPy), and per-example gradients of an MLP (batch 64): a Python loop of amber `grad`
calls vs amber's `vmap(grad)` vs JAX's `vmap(grad)` vs them written out in NumPy. amber's `vmap`
and Jacobians batch by per-op rules (graph/batching.py): both run on the whole batch here. JAX
runs where installed (`pip install jax`)."""
from __future__ import annotations

from typing import Any

import numpy as np

import amber
from amber import nn, ops
from harness import Workload

TITLE = "Transforms: Hessian by jacfwd(jacrev) and per-example gradients (MLP, batch 64)"

N_IN, N_HIDDEN = 16, 32
BATCH, FEATURES, HIDDEN, CLASSES = 64, 784, 128, 10


def _hessian_workload(quick: bool) -> Workload:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N_HIDDEN, N_IN)) / np.sqrt(N_IN)
    x = rng.standard_normal(N_IN)

    def f(x):
        return ops.tanh(a @ x).sum() + 0.5 * (x * x).sum()

    def written_out(x):
        t = np.tanh(a @ x)
        return (a.T * (-2.0 * t * (1.0 - t * t))) @ a + np.eye(N_IN)

    versions = {"eager": written_out, "amber": ops.jacfwd(ops.jacrev(f))}
    jax = _jax()
    if jax is not None:
        jnp = jax.numpy
        aj = jnp.asarray(a)
        hessian = jax.jit(jax.jacfwd(jax.jacrev(
            lambda x: jnp.tanh(aj @ x).sum() + 0.5 * (x * x).sum())))
        versions["jax"] = lambda x: np.asarray(hessian(x))
    return Workload(f"hessian {N_IN}x{N_IN}", versions, (x,), 20 if quick else 100)


class _Mlp(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(FEATURES, HIDDEN)
        self.fc2 = nn.Dense(HIDDEN, CLASSES)
        self.relu = nn.ReLU()

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.fc2(self.relu(self.fc1(x)))


def _per_example_workload(quick: bool) -> Workload:
    rng = np.random.default_rng(1)
    amber.set_seed(0)
    net = _Mlp()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                 reduction="mean"))
    weights = net.trainable_params()
    x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, BATCH).astype(np.int32)
    grad_fn = amber.grad(loss, None, weights)

    def loop(x, labels):
        rows = [grad_fn(x[i:i + 1], labels[i:i + 1]) for i in range(BATCH)]
        return [np.stack([r[k] for r in rows]) for k in range(len(weights))]

    w1, b1, w2, b2 = (np.asarray(w) for w in weights)

    def written_out(x, labels):
        h = np.maximum(x @ w1.T + b1, 0)
        z = h @ w2.T + b2
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(BATCH), labels] -= 1.0
        dh = (p @ w2) * (h > 0)
        return [dh[:, :, None] * x[:, None, :], dh, p[:, :, None] * h[:, None, :], p]

    def one_example(x, label):
        return loss(x.reshape(1, FEATURES), label.reshape(1))
    per_example = ops.vmap(amber.grad(one_example, None, weights))

    versions: dict[str, Any] = {"eager": written_out, "amber": per_example,
                                "amber loop of grad": loop}  # NOTE: "amber" is vmap(grad)
    jax = _jax()
    if jax is not None:
        jnp = jax.numpy

        def one_loss(params, x, label):
            w1, b1, w2, b2 = params
            z = jnp.maximum(x @ w1.T + b1, 0) @ w2.T + b2
            return -jax.nn.log_softmax(z)[label]
        jax_per_example = jax.jit(jax.vmap(jax.grad(one_loss), in_axes=(None, 0, 0)))
        params = tuple(jnp.asarray(w) for w in (w1, b1, w2, b2))
        versions["jax vmap(grad)"] = lambda x, labels: [
            np.asarray(g) for g in jax_per_example(params, x, labels)]
    return Workload(f"per-example grads MLP {FEATURES}-{HIDDEN}-{CLASSES} batch {BATCH}",
                    versions, (x, labels), 2 if quick else 5, compare=lambda out: list(out),
                    rtol=1e-3, atol=1e-5)


def _jax() -> Any:
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


def workloads(quick: bool) -> list[Workload]:
    return [_hessian_workload(quick), _per_example_workload(quick)]
