"""A SqueezeNet the model zoo's way: Fire modules (a 1x1 squeeze, then 1x1 and 3x3 expands
joined by `P.Concat(axis=1)`), `valid` max pools, a final 1x1 convolution classifier pooled by
`P.ReduceMean(keep_dims=True)` and flattened, Dropout with `keep_prob`, and weights set after
construction by walking `cells_and_names()` with `initializer(...)`."""
import amber.nn as nn
from amber.common import initializer as weight_init
from amber.ops import operations as P


class Fire(nn.Cell):
    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super(Fire, self).__init__()
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1, has_bias=True)
        self.squeeze_activation = nn.ReLU()
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1,
                                   has_bias=True)
        self.expand1x1_activation = nn.ReLU()
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3,
                                   pad_mode="same", has_bias=True)
        self.expand3x3_activation = nn.ReLU()
        self.concat = P.Concat(axis=1)

    def construct(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return self.concat((self.expand1x1_activation(self.expand1x1(x)),
                            self.expand3x3_activation(self.expand3x3(x))))


class SqueezeNet(nn.Cell):
    def __init__(self, num_classes=10):
        super(SqueezeNet, self).__init__()
        self.features = nn.SequentialCell([
            nn.Conv2d(3, 16, kernel_size=3, stride=2, pad_mode="valid", has_bias=True),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=3, stride=2),
            Fire(16, 4, 8, 8),
            Fire(16, 4, 8, 8),
            nn.MaxPool2d(kernel_size=3, stride=2),
            Fire(16, 8, 12, 12),
        ])
        self.dropout = nn.Dropout(keep_prob=0.5)
        self.final_conv = nn.Conv2d(24, num_classes, kernel_size=1, has_bias=True)
        self.relu = nn.ReLU()
        self.mean = P.ReduceMean(keep_dims=True)
        self.flatten = nn.Flatten()
        self.custom_init_weight()

    def custom_init_weight(self):
        for _, cell in self.cells_and_names():
            if isinstance(cell, nn.Conv2d):
                if cell is self.final_conv:
                    cell.weight.set_data(weight_init.initializer(
                        "normal", cell.weight.shape, cell.weight.dtype))
                else:
                    cell.weight.set_data(weight_init.initializer(
                        "XavierUniform", cell.weight.shape, cell.weight.dtype))
                if cell.bias is not None:
                    cell.bias.set_data(weight_init.initializer(
                        "zeros", cell.bias.shape, cell.bias.dtype))

    def construct(self, x):
        x = self.features(x)
        x = self.dropout(x)
        x = self.relu(self.final_conv(x))
        x = self.mean(x, (2, 3))
        return self.flatten(x)
