"""MindSpore 2.x's quick-start, as its users write it (`value_and_grad` with `has_aux`, an
`@ms.jit` train step over globals, `loss.asnumpy()`, `(pred.argmax(1) == label).asnumpy()`,
checkpoints), runs unchanged through `python -m amber.compat`: compiled, and with MS_JIT=0 as
plain Python, printing the same losses and accuracies."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = '''
import numpy as np
import mindspore as ms
from mindspore import nn
from mindspore.dataset import NumpySlicesDataset

ms.set_seed(1)
rng = np.random.default_rng(0)
images = rng.standard_normal((96, 1, 8, 8)).astype(np.float32)
labels = (images.reshape(96, -1).sum(1) > 0).astype(np.int32)

def datapipe(shuffle):
    return NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(16)

class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(64, 32), nn.ReLU(), nn.Dense(32, 2))

    def construct(self, x):
        x = self.flatten(x)
        return self.dense_relu_sequential(x)

model = Network()
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.SGD(model.trainable_params(), 1e-1)

def forward_fn(data, label):
    logits = model(data)
    loss = loss_fn(logits, label)
    return loss, logits

grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

@ms.jit
def train_step(data, label):
    (loss, _), grads = grad_fn(data, label)
    optimizer(grads)
    return loss

def train(model, dataset):
    model.set_train()
    for batch, (data, label) in enumerate(dataset.create_tuple_iterator()):
        loss = train_step(data, label)
        if batch % 2 == 0:
            loss, current = loss.asnumpy(), batch
            print(f"loss: {loss:>7f}  [{current:>3d}]")

def test(model, dataset, loss_fn):
    num_batches = dataset.get_dataset_size()
    model.set_train(False)
    total, test_loss, correct = 0, 0, 0
    for data, label in dataset.create_tuple_iterator():
        pred = model(data)
        total += len(data)
        test_loss += loss_fn(pred, label).asnumpy()
        correct += (pred.argmax(1) == label).asnumpy().sum()
    test_loss /= num_batches
    correct /= total
    print(f"Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f}")

for t in range(3):
    train(model, datapipe(True))
    test(model, datapipe(False), loss_fn)
ms.save_checkpoint(model, "model.ckpt")
print("Saved", ms.load_checkpoint("model.ckpt").keys().__len__())
'''


def _run(tmp_path: Path, **env: str) -> list[str]:
    script = tmp_path / "quickstart.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "amber.compat", str(script)], cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, **env},
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_quickstart_runs_unchanged_and_compiled_equals_python(tmp_path: Path) -> None:
    pytest.importorskip("google.protobuf", reason="checkpoints need the checkpoint extra")
    compiled = _run(tmp_path)
    eager = _run(tmp_path, MS_JIT="0")
    assert sum(line.startswith("loss:") for line in compiled) == 9
    assert sum(line.startswith("Accuracy:") for line in compiled) == 3
    assert compiled[-1] == "Saved 4"
    assert compiled == eager
