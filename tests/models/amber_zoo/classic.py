"""Classic CNNs written as MindSpore's model zoo writes them: LeNet-5 (string and Normal
initializers), an AlexNet whose first cell normalizes NHWC input and transposes it (constant
Tensors, `F.transpose`, `P.ReLU()`), and a VGG built from a configuration list (a SequentialCell
of layers, Kaiming init through an `Initializer` subclass, Dropout(p=1 - keep)), and the
quick-start tutorial's Network (Flatten, then a SequentialCell of Dense and ReLU)."""
import math

import numpy as np

import amber.common.dtype as mstype
import amber.nn as nn
from amber.common import initializer as init
from amber.common.initializer import Normal
from amber.common.tensor import Tensor
from amber.ops import functional as F
from amber.ops import operations as P

from .var_init import KaimingNormal, default_recursive_init


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1, include_top=True):
        super(LeNet5, self).__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.include_top = include_top
        if self.include_top:
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
            self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
            self.fc3 = nn.Dense(84, num_class, weight_init="xavier_uniform")

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        if not self.include_top:
            return x
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


class DataNormTranspose(nn.Cell):
    """(x - mean) / std on NHWC images, then NCHW."""

    def __init__(self):
        super(DataNormTranspose, self).__init__()
        self.mean = Tensor(np.array([0.485, 0.456, 0.406]).reshape((1, 1, 1, 3)), mstype.float32)
        self.std = Tensor(np.array([0.229, 0.224, 0.225]).reshape((1, 1, 1, 3)), mstype.float32)

    def construct(self, x):
        x = (x - self.mean) / self.std
        return F.transpose(x, (0, 3, 1, 2))


class AlexNet(nn.Cell):
    def __init__(self, num_classes=10, phase="train"):
        super(AlexNet, self).__init__()
        self.data_trans = DataNormTranspose()
        self.conv1 = nn.Conv2d(3, 8, 5, stride=2, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(8, 16, 3, pad_mode="same", has_bias=True)
        self.conv3 = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)
        self.relu = P.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="valid")
        dropout_ratio = 0.65 if phase != "test" else 1.0
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(16 * 3 * 3, 32)
        self.fc2 = nn.Dense(32, num_classes)
        self.dropout = nn.Dropout(p=1 - dropout_ratio)

    def construct(self, x):
        x = self.data_trans(x)
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.relu(self.conv3(x))
        x = self.flatten(x)
        x = self.dropout(self.relu(self.fc1(x)))
        return self.fc2(x)


def make_layers(base, batch_norm, pad_mode="same"):
    layers = []
    in_channels = 3
    for v in base:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            weight = init.initializer("XavierUniform", shape=(v, in_channels, 3, 3),
                                      dtype=mstype.float32)
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, pad_mode=pad_mode,
                               weight_init=weight)
            layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU()] if batch_norm else \
                [conv2d, nn.ReLU()]
            in_channels = v
    return nn.SequentialCell(layers)


class Vgg(nn.Cell):
    def __init__(self, base, num_classes=10, batch_norm=True, image_size=16):
        super(Vgg, self).__init__()
        self.layers = make_layers(base, batch_norm)
        self.flatten = nn.Flatten()
        side = image_size // 2 ** base.count("M")
        self.classifier = nn.SequentialCell([
            nn.Dense(base[-2] * side * side, 32), nn.ReLU(), nn.Dropout(p=0.5),
            nn.Dense(32, num_classes)])
        default_recursive_init(self)
        self.custom_init_weight()

    def construct(self, x):
        x = self.layers(x)
        x = self.flatten(x)
        return self.classifier(x)

    def custom_init_weight(self):
        for _, cell in self.cells_and_names():
            if isinstance(cell, nn.Conv2d):
                cell.weight.set_data(init.initializer(
                    KaimingNormal(a=math.sqrt(5), mode="fan_out", nonlinearity="relu"),
                    cell.weight.shape, cell.weight.dtype))
            elif isinstance(cell, nn.Dense):
                cell.weight.set_data(init.initializer(init.Normal(0.01), cell.weight.shape,
                                                      cell.weight.dtype))
                cell.bias.set_data(init.initializer("zeros", cell.bias.shape, cell.bias.dtype))


def vgg_small(num_classes=10):
    return Vgg([8, "M", 16, 16, "M"], num_classes=num_classes)


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28 * 28, 64),
            nn.ReLU(),
            nn.Dense(64, 64),
            nn.ReLU(),
            nn.Dense(64, 10)
        )

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits
