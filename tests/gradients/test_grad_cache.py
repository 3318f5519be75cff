"""A gradient function is cached like any compiled function: in memory by signature (a second
call compiles nothing; a new shape compiles once more) and on disk (a fresh process is served
its code from the disk cache without running the compiler)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import amber
from amber import nn, ops

SCRIPT = """
import json, sys
import numpy as np
import amber
from amber import nn, ops
from amber.runtime import pipeline

ran = []
original = pipeline.build
pipeline.build = lambda *a, **k: ran.append(1) or original(*a, **k)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        h = ops.tanh(self.fc(x))
        i = 0
        while i < 3 and h.sum() < 5.0:
            h = h * 1.5 + 0.1
            i += 1
        return (h * h).sum()


amber.set_seed(0)
net = Net()
grad = amber.value_and_grad(net, 0, net.trainable_params())
x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
loss, (dx, dws) = grad(x)
print(json.dumps({"loss": float(loss), "dx": dx.tolist(), "dw": [w.tolist() for w in dws],
                  "compiles": grad.stats.compiles, "disk_hits": grad.stats.disk_hits,
                  "frontend_ran": bool(ran)}))
"""


def _run(cache_dir: Path, script_dir: Path) -> dict:
    path = script_dir / "grad_script.py"
    path.write_text(SCRIPT)
    env = {**os.environ, "AMBER_CACHE_DIR": str(cache_dir)}
    env.pop("AMBER_CACHE", None)
    proc = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_fresh_process_reads_the_gradient_from_the_disk_cache(tmp_path: Path):
    cold = _run(tmp_path / "cache", tmp_path)
    warm = _run(tmp_path / "cache", tmp_path)
    assert (cold["compiles"], cold["disk_hits"], cold["frontend_ran"]) == (1, 0, True)
    assert (warm["compiles"], warm["disk_hits"], warm["frontend_ran"]) == (0, 1, False)
    assert warm["loss"] == cold["loss"] and warm["dx"] == cold["dx"] and warm["dw"] == cold["dw"]


class Small(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        return ops.tanh(self.fc(x)).sum()


def test_the_gradient_is_kept_in_memory_by_signature():
    net = Small()
    grad = amber.grad(net, 0, net.trainable_params())
    x = np.ones((2, 4), np.float32)
    first = grad(x)
    second = grad(x * 2)
    assert grad.stats.compiles + grad.stats.disk_hits == 1  # same signature: one compile
    grad(np.ones((5, 4), np.float32))
    assert grad.stats.specializations == 2  # a new batch size: one more
    assert not np.allclose(first[0], second[0])


def test_differently_asked_gradients_of_one_function_are_different_entries():
    net = Small()
    x = np.ones((2, 4), np.float32)
    by_input = amber.grad(net, 0)(x)
    by_weight = amber.grad(net, None, net.trainable_params())(x)
    assert by_input.shape == (2, 4) and len(by_weight) == 2


def test_a_grad_operation_keeps_the_gradient_function_it_made():
    """MindSpore's training idiom `self.grad(self.network, self.weights)(...)` asks for the
    gradient function on every step: the same (fn, weights) gives the same function, whose
    compiled code is then reused; other weights or another fn get their own."""
    net = Small()
    op = ops.GradOperation(get_by_list=True)
    first = op(net, net.trainable_params())  # NOTE: a new list, the same Parameters
    assert op(net, net.trainable_params()) is first
    assert op(net, net.trainable_params()[:1]) is not first
    assert op(Small(), net.trainable_params()) is not first
    assert ops.GradOperation(get_by_list=True)(net, net.trainable_params()) is not first


def test_an_eager_train_step_compiles_its_gradient_once():
    amber.set_seed(3)
    net = Small()
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), learning_rate=0.1))
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    w0 = np.array(net.fc.weight)
    losses = [float(step(x)) for _ in range(4)]
    grad = step.grad(step.network, step.weights)
    assert grad.stats.compiles + grad.stats.disk_hits == 1
    assert losses[-1] < losses[0] and not np.allclose(net.fc.weight, w0)  # it did train


def test_a_copied_train_step_differentiates_its_own_network():
    import copy
    net = Small()
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), learning_rate=0.1))
    x = np.ones((2, 4), np.float32)
    step(x)
    twin = copy.deepcopy(step)
    w = np.array(twin.network.fc.weight)
    twin(x)
    assert not np.allclose(twin.network.fc.weight, w)  # the copy's own weights moved
    assert twin.grad(twin.network, twin.weights) is not step.grad(step.network, step.weights)
