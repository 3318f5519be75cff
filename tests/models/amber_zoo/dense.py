"""A DenseNet the model zoo's way: dense layers looped over a CellList and concatenated with
`P.Concat`, transitions as a SequentialCell of an OrderedDict, global pooling that unpacks
`P.Shape()` and reshapes with `P.Reshape()`, and the zoo's Kaiming initialization."""
import math
from collections import OrderedDict

import amber.nn as nn
from amber.common import initializer as init
from amber.ops import operations as P

from .var_init import KaimingNormal, default_recursive_init


class GlobalAvgPooling(nn.Cell):
    def __init__(self):
        super(GlobalAvgPooling, self).__init__()
        self.mean = P.ReduceMean(True)
        self.shape = P.Shape()
        self.reshape = P.Reshape()

    def construct(self, x):
        x = self.mean(x, (2, 3))
        b, c, _, _ = self.shape(x)
        return self.reshape(x, (b, c))


def conv(in_channels, out_channels, kernel, stride=1):
    return nn.Conv2d(in_channels, out_channels, kernel_size=kernel, stride=stride,
                     padding=kernel // 2, pad_mode="pad")


class DenseLayer(nn.Cell):
    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate):
        super(DenseLayer, self).__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU()
        self.conv1 = conv(num_input_features, bn_size * growth_rate, 1)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU()
        self.conv2 = conv(bn_size * growth_rate, growth_rate, 3)
        self.keep_prob = 1.0 - drop_rate
        self.dropout = nn.Dropout(p=1 - self.keep_prob)

    def construct(self, features):
        bottleneck = self.conv1(self.relu1(self.norm1(features)))
        new_features = self.conv2(self.relu2(self.norm2(bottleneck)))
        if self.keep_prob < 1:
            new_features = self.dropout(new_features)
        return new_features


class DenseBlock(nn.Cell):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate):
        super(DenseBlock, self).__init__()
        self.cell_list = nn.CellList()
        for i in range(num_layers):
            self.cell_list.append(DenseLayer(num_input_features + i * growth_rate, growth_rate,
                                             bn_size, drop_rate))
        self.concate = P.Concat(axis=1)

    def construct(self, init_features):
        features = init_features
        for layer in self.cell_list:
            new_features = layer(features)
            features = self.concate((features, new_features))
        return features


class Transition(nn.Cell):
    def __init__(self, num_input_features, num_output_features):
        super(Transition, self).__init__()
        self.features = nn.SequentialCell(OrderedDict([
            ("norm", nn.BatchNorm2d(num_input_features)),
            ("relu", nn.ReLU()),
            ("conv", conv(num_input_features, num_output_features, 1)),
            ("pool", nn.AvgPool2d(kernel_size=2, stride=2)),
        ]))

    def construct(self, x):
        return self.features(x)


class DenseNet(nn.Cell):
    def __init__(self, num_classes=10, growth_rate=4, block_config=(2, 3), drop_rate=0.25):
        super(DenseNet, self).__init__()
        layers = OrderedDict()
        layers["conv0"] = conv(3, growth_rate * 2, 3)
        layers["norm0"] = nn.BatchNorm2d(growth_rate * 2)
        layers["relu0"] = nn.ReLU()
        num_features = growth_rate * 2
        for i, num_layers in enumerate(block_config):
            layers["denseblock%d" % (i + 1)] = DenseBlock(num_layers, num_features, 2,
                                                          growth_rate, drop_rate)
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                layers["transition%d" % (i + 1)] = Transition(num_features, num_features // 2)
                num_features = num_features // 2
        layers["norm5"] = nn.BatchNorm2d(num_features)
        layers["relu5"] = nn.ReLU()
        self.features = nn.SequentialCell(layers)
        self.pool = GlobalAvgPooling()
        self.fc = nn.Dense(num_features, num_classes)
        default_recursive_init(self)
        for _, cell in self.cells_and_names():
            if isinstance(cell, nn.Conv2d):
                cell.weight.set_data(init.initializer(KaimingNormal(a=math.sqrt(5),
                                                                    mode="fan_out",
                                                                    nonlinearity="relu"),
                                                      cell.weight.shape, cell.weight.dtype))
            elif isinstance(cell, nn.BatchNorm2d):
                cell.gamma.set_data(init.initializer("ones", cell.gamma.shape))
                cell.beta.set_data(init.initializer("zeros", cell.beta.shape))

    def construct(self, x):
        return self.fc(self.pool(self.features(x)))
