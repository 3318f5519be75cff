"""A DCGAN the model zoo's way: the generator appends transposed convolutions to an empty
SequentialCell, BatchNorm's gamma comes from a custom `Initializer` (reseeding NumPy in
`_initialize`, with `_assignment`), the discriminator uses LeakyReLU(0.2) and a Sigmoid, and a
Reshape cell calls `ops.operations.Reshape()` through the `ops` module."""
import numpy as np

from amber import nn, ops
from amber.common.initializer import Initializer, _assignment

FEATURES, LATENT, CHANNELS = 4, 8, 3


class Reshape(nn.Cell):
    def __init__(self, shape, auto_prefix=True):
        super().__init__(auto_prefix=auto_prefix)
        self.shape = shape

    def construct(self, x):
        return ops.operations.Reshape()(x, self.shape)


class Normal(Initializer):
    def __init__(self, mean=0.0, sigma=0.01):
        super(Normal, self).__init__()
        self.sigma = sigma
        self.mean = mean

    def _initialize(self, arr):
        np.random.seed(999)
        _assignment(arr, np.random.normal(self.mean, self.sigma, arr.shape))


def convt(in_channels, out_channels, kernel_size, stride=1, padding=0, pad_mode="pad"):
    return nn.Conv2dTranspose(in_channels, out_channels, kernel_size=kernel_size, stride=stride,
                              padding=padding, weight_init=Normal(0, 0.02), has_bias=False,
                              pad_mode=pad_mode)


def conv(in_channels, out_channels, kernel_size, stride=1, padding=0, pad_mode="pad"):
    return nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride,
                     padding=padding, weight_init=Normal(0, 0.02), has_bias=False,
                     pad_mode=pad_mode)


def bm(num_features):
    return nn.BatchNorm2d(num_features=num_features, gamma_init=Normal(1, 0.02))


class Generator(nn.Cell):
    def __init__(self):
        super(Generator, self).__init__()
        self.generator = nn.SequentialCell()
        self.generator.append(Reshape((-1, LATENT, 1, 1)))
        self.generator.append(convt(LATENT, FEATURES * 4, 4, 1, 0))
        self.generator.append(bm(FEATURES * 4))
        self.generator.append(nn.ReLU())
        self.generator.append(convt(FEATURES * 4, FEATURES * 2, 4, 2, 1))
        self.generator.append(bm(FEATURES * 2))
        self.generator.append(nn.ReLU())
        self.generator.append(convt(FEATURES * 2, CHANNELS, 4, 2, 1))
        self.generator.append(nn.Tanh())

    def construct(self, x):
        return self.generator(x)


class Discriminator(nn.Cell):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.discriminator = nn.SequentialCell()
        self.discriminator.append(conv(CHANNELS, FEATURES * 2, 4, 2, 1))
        self.discriminator.append(nn.LeakyReLU(0.2))
        self.discriminator.append(conv(FEATURES * 2, FEATURES * 4, 4, 2, 1))
        self.discriminator.append(bm(FEATURES * 4))
        self.discriminator.append(nn.LeakyReLU(0.2))
        self.discriminator.append(conv(FEATURES * 4, 1, 4, 1))
        self.discriminator.append(nn.Sigmoid())

    def construct(self, x):
        return self.discriminator(x)
