"""Inception networks the model zoo's way. A GoogLeNet: convolution + BatchNorm + ReLU blocks,
four-branch Inception blocks joined by `P.Concat(axis=1)`, `same`-padded stride-1 max pools,
`P.ReduceMean(keep_dims=True)` global pooling and Dropout written with `keep_prob` (MindSpore
1.x). An Inception-v3 in small: asymmetric (1, n) / (n, 1) kernels, `valid` and `same` padding
mixed, an average-pool branch, and an auxiliary classifier whose logits `construct` returns
beside the main ones only while training (`self.training`, set by `set_train`)."""
import amber.nn as nn
from amber.common.initializer import TruncatedNormal
from amber.ops import operations as P


def weight_variable():
    return TruncatedNormal(0.02)


class Conv2dBlock(nn.Cell):
    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=0,
                 pad_mode="same"):
        super(Conv2dBlock, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride,
                              padding=padding, pad_mode=pad_mode, weight_init=weight_variable())
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


class Inception(nn.Cell):
    def __init__(self, in_channels, n1x1, n3x3red, n3x3, n5x5red, n5x5, pool_planes):
        super(Inception, self).__init__()
        self.b1 = Conv2dBlock(in_channels, n1x1, kernel_size=1)
        self.b2 = nn.SequentialCell([Conv2dBlock(in_channels, n3x3red, kernel_size=1),
                                     Conv2dBlock(n3x3red, n3x3, kernel_size=3)])
        self.b3 = nn.SequentialCell([Conv2dBlock(in_channels, n5x5red, kernel_size=1),
                                     Conv2dBlock(n5x5red, n5x5, kernel_size=3)])
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=1, pad_mode="same")
        self.b4 = Conv2dBlock(in_channels, pool_planes, kernel_size=1)
        self.concat = P.Concat(axis=1)

    def construct(self, x):
        branch1 = self.b1(x)
        branch2 = self.b2(x)
        branch3 = self.b3(x)
        cell = self.maxpool(x)
        branch4 = self.b4(cell)
        return self.concat((branch1, branch2, branch3, branch4))


class GoogLeNet(nn.Cell):
    def __init__(self, num_classes=10, include_top=True):
        super(GoogLeNet, self).__init__()
        self.conv1 = Conv2dBlock(3, 8, kernel_size=3, stride=2)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.conv2 = Conv2dBlock(8, 16, kernel_size=3)
        self.block3a = Inception(16, 4, 4, 8, 2, 4, 4)
        self.block3b = Inception(20, 8, 8, 8, 2, 4, 4)
        self.maxpool3 = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.block4a = Inception(24, 8, 4, 8, 2, 4, 4)
        self.include_top = include_top
        if self.include_top:
            self.mean = P.ReduceMean(keep_dims=True)
            self.dropout = nn.Dropout(keep_prob=0.8)
            self.flatten = nn.Flatten()
            self.classifier = nn.Dense(24, num_classes, weight_init=weight_variable(),
                                       bias_init=weight_variable())

    def construct(self, x):
        x = self.maxpool1(self.conv1(x))
        x = self.conv2(x)
        x = self.block3b(self.block3a(x))
        x = self.block4a(self.maxpool3(x))
        if not self.include_top:
            return x
        x = self.mean(x, (2, 3))
        x = self.flatten(x)
        x = self.dropout(x)
        return self.classifier(x)


class BasicConv2d(nn.Cell):
    def __init__(self, in_channel, out_channel, kernel_size, stride=1, pad_mode="same",
                 padding=0):
        super(BasicConv2d, self).__init__()
        self.conv = nn.Conv2d(in_channel, out_channel, kernel_size=kernel_size, stride=stride,
                              pad_mode=pad_mode, padding=padding, weight_init="XavierUniform",
                              has_bias=False)
        self.bn = nn.BatchNorm2d(out_channel, eps=0.001, momentum=0.9997)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


class InceptionA(nn.Cell):
    def __init__(self, in_channels, pool_features):
        super(InceptionA, self).__init__()
        self.concat = P.Concat(axis=1)
        self.branch0 = BasicConv2d(in_channels, 8, kernel_size=1)
        self.branch1 = nn.SequentialCell([BasicConv2d(in_channels, 6, kernel_size=1),
                                          BasicConv2d(6, 8, kernel_size=5)])
        self.branch2 = nn.SequentialCell([BasicConv2d(in_channels, 8, kernel_size=1),
                                          BasicConv2d(8, 12, kernel_size=3),
                                          BasicConv2d(12, 12, kernel_size=3)])
        self.branch_pool = nn.SequentialCell([nn.AvgPool2d(kernel_size=3, pad_mode="same"),
                                              BasicConv2d(in_channels, pool_features,
                                                          kernel_size=1)])

    def construct(self, x):
        x0 = self.branch0(x)
        x1 = self.branch1(x)
        x2 = self.branch2(x)
        branch_pool = self.branch_pool(x)
        return self.concat((x0, x1, x2, branch_pool))


class InceptionC(nn.Cell):
    """The factorized 7x7 block: (1, 7) then (7, 1) kernels."""

    def __init__(self, in_channels, channels_7x7):
        super(InceptionC, self).__init__()
        self.concat = P.Concat(axis=1)
        self.branch0 = BasicConv2d(in_channels, 8, kernel_size=1)
        self.branch1 = nn.SequentialCell([
            BasicConv2d(in_channels, channels_7x7, kernel_size=1),
            BasicConv2d(channels_7x7, channels_7x7, kernel_size=(1, 7)),
            BasicConv2d(channels_7x7, 8, kernel_size=(7, 1))])
        self.branch_pool = nn.SequentialCell([nn.AvgPool2d(kernel_size=3, pad_mode="same"),
                                              BasicConv2d(in_channels, 8, kernel_size=1)])

    def construct(self, x):
        x0 = self.branch0(x)
        x1 = self.branch1(x)
        branch_pool = self.branch_pool(x)
        return self.concat((x0, x1, branch_pool))


class AuxLogits(nn.Cell):
    def __init__(self, in_channels, num_classes=10):
        super(AuxLogits, self).__init__()
        self.avg_pool = nn.AvgPool2d(3, stride=2, pad_mode="valid")
        self.conv2d_0 = nn.Conv2d(in_channels, 8, kernel_size=1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(8 * 3 * 3, num_classes)

    def construct(self, x):
        x = self.avg_pool(x)
        x = self.conv2d_0(x)
        x = self.flatten(x)
        return self.fc(x)


class InceptionV3(nn.Cell):
    def __init__(self, num_classes=10, dropout_keep_prob=0.8, has_bias=False):
        super(InceptionV3, self).__init__()
        self.Conv2d_1a = BasicConv2d(3, 8, kernel_size=3, stride=2, pad_mode="valid")
        self.Conv2d_2a = BasicConv2d(8, 8, kernel_size=3, stride=1, pad_mode="valid")
        self.Conv2d_2b = BasicConv2d(8, 16, kernel_size=3, stride=1)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Mixed_5b = InceptionA(16, pool_features=4)
        self.Mixed_6a = InceptionC(32, channels_7x7=6)
        self.aux_logits = AuxLogits(24, num_classes)
        self.mean = P.ReduceMean(keep_dims=False)
        self.dropout = nn.Dropout(keep_prob=dropout_keep_prob)
        self.logits = nn.Dense(24, num_classes, has_bias=True)

    def construct(self, x):
        x = self.Conv2d_1a(x)
        x = self.Conv2d_2a(x)
        x = self.Conv2d_2b(x)
        x = self.maxpool(x)
        x = self.Mixed_5b(x)
        x = self.Mixed_6a(x)
        aux_logits = None
        if self.training:
            aux_logits = self.aux_logits(x)
        x = self.mean(x, (2, 3))
        x = self.dropout(x)
        logits = self.logits(x)
        if self.training:
            return logits, aux_logits
        return logits
