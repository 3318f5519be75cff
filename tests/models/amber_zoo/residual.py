"""A ResNet written the model zoo's way: weights from NumPy drawn into Tensors, blocks stacked by
`_make_layer` into SequentialCells of cells that hold SequentialCells (nested), a squeeze-and-
excitation path reshaping with `ops.shape(x) + (1, 1)`, `nn.Pad` before a valid max pool, and
`ReduceMean(keep_dims=True)` pooling."""
import math

import numpy as np

import amber.common.dtype as mstype
import amber.nn as nn
import amber.ops as ops
from amber.common.tensor import Tensor


def kaiming_normal(shape, mode="fan_in"):
    fan = shape[1] * shape[2] * shape[3] if mode == "fan_in" else shape[0] * shape[2] * shape[3]
    return np.random.normal(0, math.sqrt(2.0) / math.sqrt(fan), size=shape).astype(np.float32)


def conv(in_channel, out_channel, kernel, stride=1, res_base=False):
    weight = Tensor(kaiming_normal((out_channel, in_channel, kernel, kernel), mode="fan_out"))
    if res_base:
        return nn.Conv2d(in_channel, out_channel, kernel_size=kernel, stride=stride,
                         padding=kernel // 2, pad_mode="pad", weight_init=weight)
    return nn.Conv2d(in_channel, out_channel, kernel_size=kernel, stride=stride,
                     pad_mode="same", weight_init=weight)


def bn(channel, last=False):
    return nn.BatchNorm2d(channel, eps=1e-4, momentum=0.9, gamma_init=0 if last else 1,
                          beta_init=0, moving_mean_init=0, moving_var_init=1)


def fc(in_channel, out_channel):
    weight = Tensor(np.random.normal(0, 0.01, (out_channel, in_channel)), dtype=mstype.float32)
    return nn.Dense(in_channel, out_channel, has_bias=True, weight_init=weight, bias_init=0)


class ResidualBlock(nn.Cell):
    expansion = 4

    def __init__(self, in_channel, out_channel, stride=1, se_block=False):
        super(ResidualBlock, self).__init__()
        self.se_block = se_block
        channel = out_channel // self.expansion
        self.conv1 = conv(in_channel, channel, 1)
        self.bn1 = bn(channel)
        self.conv2 = conv(channel, channel, 3, stride=stride)
        self.bn2 = bn(channel)
        self.conv3 = conv(channel, out_channel, 1)
        self.bn3 = bn(out_channel)
        if self.se_block:
            self.se_global_pool = ops.ReduceMean(keep_dims=False)
            self.se_dense_0 = fc(out_channel, int(out_channel / 4))
            self.se_dense_1 = fc(int(out_channel / 4), out_channel)
            self.se_sigmoid = nn.Sigmoid()
            self.se_mul = ops.Mul()
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_channel != out_channel
        self.down_sample_layer = None
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([conv(in_channel, out_channel, 1, stride),
                                                        bn(out_channel)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.se_block:
            out_se = out
            out = self.se_global_pool(out, (2, 3))
            out = self.relu(self.se_dense_0(out))
            out = self.se_sigmoid(self.se_dense_1(out))
            out = ops.reshape(out, ops.shape(out) + (1, 1))
            out = self.se_mul(out, out_se)
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        return self.relu(out + identity)


class ResNet(nn.Cell):
    def __init__(self, layer_nums, in_channels, out_channels, strides, num_classes,
                 use_se=False):
        super(ResNet, self).__init__()
        self.conv1 = conv(3, 8, 3, stride=2, res_base=True)
        self.bn1 = bn(8)
        self.relu = ops.ReLU()
        self.pad = nn.Pad(paddings=((0, 0), (0, 0), (1, 1), (1, 1)))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="valid")
        self.layer1 = self._make_layer(layer_nums[0], in_channels[0], out_channels[0],
                                       strides[0])
        self.layer2 = self._make_layer(layer_nums[1], in_channels[1], out_channels[1],
                                       strides[1], se_block=use_se)
        self.mean = ops.ReduceMean(keep_dims=True)
        self.flatten = nn.Flatten()
        self.end_point = fc(out_channels[1], num_classes)

    def _make_layer(self, layer_num, in_channel, out_channel, stride, se_block=False):
        layers = [ResidualBlock(in_channel, out_channel, stride=stride)]
        for _ in range(1, layer_num - 1):
            layers.append(ResidualBlock(out_channel, out_channel))
        layers.append(ResidualBlock(out_channel, out_channel, se_block=se_block))
        return nn.SequentialCell(layers)

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        c1 = self.maxpool(self.pad(x))
        c2 = self.layer1(c1)
        c3 = self.layer2(c2)
        out = self.mean(c3, (2, 3))
        out = self.flatten(out)
        return self.end_point(out)


def resnet_small(num_classes=10, use_se=False):
    return ResNet([2, 3], [8, 16], [16, 32], [1, 2], num_classes, use_se=use_se)
