"""The textbook `Network`: flatten a 28x28 image, then Dense-ReLU-Dense-ReLU-Dense to 10 logits.

Run `python samples/network.py` to build it with seed 0, run it compiled and compare with eager.
"""
from __future__ import annotations

import numpy as np

import amber
from amber import nn


class Network(nn.Cell):
    """A three-layer perceptron for 28x28 images (MindSpore's quick-start model)."""

    def __init__(self) -> None:
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28 * 28, 512),
            nn.ReLU(),
            nn.Dense(512, 512),
            nn.ReLU(),
            nn.Dense(512, 10),
        )

    def construct(self, x: np.ndarray) -> np.ndarray:
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


def example_inputs() -> tuple[np.ndarray, ...]:
    """One batch of two random 28x28 float32 images."""
    rng = np.random.default_rng(0)
    return (rng.random((2, 28, 28), dtype=np.float32),)


def main() -> None:
    """Build with seed 0, run compiled and eagerly, print the output and the largest difference."""
    amber.set_seed(0)
    net = amber.jit(Network())
    out = net(*example_inputs())
    eager = net.__wrapped__.construct(*example_inputs())
    print(f"Network output shape {out.shape}, dtype {out.dtype}, "
          f"checksum {float(out.sum(dtype=np.float64)):.8g}")
    print(f"compiled vs eager: max abs difference {float(np.max(np.abs(out - eager))):.3g}")


if __name__ == "__main__":
    main()
