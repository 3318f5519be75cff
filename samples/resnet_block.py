"""The ResNet bottleneck block from MindSpore's model zoo (1x1 -> 3x3 -> 1x1 convolutions with
BatchNorm and a residual add), whose shortcut is down-sampled `if self.down_sample:`.

Run `python samples/resnet_block.py` to build two blocks with seed 0, run them compiled and compare with eager.
"""
from __future__ import annotations

import numpy as np

import amber
from amber import nn, ops


def _conv1x1(in_channel: int, out_channel: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_channel, out_channel, kernel_size=1, stride=stride, pad_mode="same",
                     weight_init="he_normal")


def _conv3x3(in_channel: int, out_channel: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_channel, out_channel, kernel_size=3, stride=stride, pad_mode="same",
                     weight_init="he_normal")


def _bn(channel: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(channel, eps=1e-5, momentum=0.9)


class ResidualBlock(nn.Cell):
    """Bottleneck block: out = relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + shortcut),
    the shortcut a strided 1x1 conv + BN when the shape changes."""
    expansion = 4

    def __init__(self, in_channel: int, out_channel: int, stride: int = 1) -> None:
        super().__init__()
        channel = out_channel // self.expansion
        self.conv1 = _conv1x1(in_channel, channel)
        self.bn1 = _bn(channel)
        self.conv2 = _conv3x3(channel, channel, stride=stride)
        self.bn2 = _bn(channel)
        self.conv3 = _conv1x1(channel, out_channel)
        self.bn3 = _bn(out_channel)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_channel != out_channel
        self.down_sample_layer = None
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([_conv1x1(in_channel, out_channel, stride),
                                                        _bn(out_channel)])

    def construct(self, x: np.ndarray) -> np.ndarray:
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)
        out = self.conv3(out)
        out = self.bn3(out)
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        out = out + identity
        out = self.relu(out)
        return out


class ResidualStage(nn.Cell):
    """Two blocks (the first down-samples), global average pooling and a classifier."""

    def __init__(self, in_channel: int = 16, out_channel: int = 32, num_class: int = 10) -> None:
        super().__init__()
        self.block1 = ResidualBlock(in_channel, out_channel, stride=2)
        self.block2 = ResidualBlock(out_channel, out_channel, stride=1)
        self.head = nn.Dense(out_channel, num_class)

    def construct(self, x: np.ndarray) -> np.ndarray:
        x = self.block1(x)
        x = self.block2(x)
        x = ops.reduce_mean(x, (2, 3))
        return self.head(x)


def example_inputs() -> tuple[np.ndarray, ...]:
    """Two random 16-channel 16x16 float32 feature maps."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((2, 16, 16, 16), dtype=np.float32),)


def main() -> None:
    """Build with seed 0, run compiled and eagerly, print the output and the largest difference."""
    amber.set_seed(0)
    net = amber.jit(ResidualStage())
    out = net(*example_inputs())
    eager = net.__wrapped__.construct(*example_inputs())
    print(f"ResidualStage output shape {out.shape}, dtype {out.dtype}, "
          f"checksum {float(out.sum(dtype=np.float64)):.8g}")
    print(f"compiled vs eager: max abs difference {float(np.max(np.abs(out - eager))):.3g}")


if __name__ == "__main__":
    main()
