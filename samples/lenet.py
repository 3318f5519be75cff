"""LeNet-5 as in MindSpore's model zoo: two 5x5 valid convolutions with ReLU and 2x2 max pooling,
then three dense layers. Input: 1x1x32x32 float32.

Run `python samples/lenet.py` to build it with seed 0, run it compiled and compare with eager.
"""
from __future__ import annotations

import numpy as np

import amber
from amber import nn
from amber.common.initializer import Normal


class LeNet5(nn.Cell):
    """LeNet-5 for `num_class` classes on `num_channel`-channel 32x32 images."""

    def __init__(self, num_class: int = 10, num_channel: int = 1,
                 include_top: bool = True) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.include_top = include_top
        if self.include_top:
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
            self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
            self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))

    def construct(self, x: np.ndarray) -> np.ndarray:
        x = self.conv1(x)
        x = self.relu(x)
        x = self.max_pool2d(x)
        x = self.conv2(x)
        x = self.relu(x)
        x = self.max_pool2d(x)
        if not self.include_top:
            return x
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def example_inputs() -> tuple[np.ndarray, ...]:
    """One random 1x1x32x32 float32 image."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((1, 1, 32, 32), dtype=np.float32),)


def main() -> None:
    """Build with seed 0, run compiled and eagerly, print the output and the largest difference."""
    amber.set_seed(0)
    net = amber.jit(LeNet5())
    out = net(*example_inputs())
    eager = net.__wrapped__.construct(*example_inputs())
    print(f"LeNet5 output shape {out.shape}, dtype {out.dtype}, "
          f"checksum {float(out.sum(dtype=np.float64)):.8g}")
    print(f"compiled vs eager: max abs difference {float(np.max(np.abs(out - eager))):.3g}")
    print("generated code: python -m amber dump samples/lenet.py:LeNet5")


if __name__ == "__main__":
    main()
