"""A MobileNetV2 the model zoo's way: ConvBNReLU blocks whose features are a SequentialCell with
ReLU6 (depthwise convolutions by `group`), inverted residuals with `ops.Add`, a head whose
SequentialCell holds a Dropout, weights set after `init_parameters_data()` from NumPy and
`ms.numpy.zeros`, and a combining cell with auto_prefix=False."""
import numpy as np

import amber as ms
import amber.nn as nn
import amber.ops as ops


class GlobalAvgPooling(nn.Cell):
    def __init__(self):
        super(GlobalAvgPooling, self).__init__()
        self.mean = ops.ReduceMean(keep_dims=False)

    def construct(self, x):
        return self.mean(x, (2, 3))


class ConvBNReLU(nn.Cell):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
        super(ConvBNReLU, self).__init__()
        padding = (kernel_size - 1) // 2
        if groups == 1:
            conv = nn.Conv2d(in_planes, out_planes, kernel_size, stride, pad_mode="pad",
                             padding=padding)
        else:
            conv = nn.Conv2d(in_planes, in_planes, kernel_size, stride, pad_mode="pad",
                             padding=padding, group=in_planes)
        self.features = nn.SequentialCell([conv, nn.BatchNorm2d(out_planes), nn.ReLU6()])

    def construct(self, x):
        return self.features(x)


class InvertedResidual(nn.Cell):
    def __init__(self, inp, oup, stride, expand_ratio):
        super(InvertedResidual, self).__init__()
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
        layers.extend([ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
                       nn.Conv2d(hidden_dim, oup, kernel_size=1, stride=1, has_bias=False),
                       nn.BatchNorm2d(oup)])
        self.conv = nn.SequentialCell(layers)
        self.add = ops.Add()

    def construct(self, x):
        identity = x
        x = self.conv(x)
        if self.use_res_connect:
            return self.add(identity, x)
        return x


class Backbone(nn.Cell):
    def __init__(self, settings=((1, 8, 1, 1), (4, 12, 2, 2), (4, 16, 2, 2)), input_channel=8,
                 last_channel=32):
        super(Backbone, self).__init__()
        features = [ConvBNReLU(3, input_channel, stride=2)]
        for t, c, n, s in settings:
            for i in range(n):
                features.append(InvertedResidual(input_channel, c, s if i == 0 else 1, t))
                input_channel = c
        features.append(ConvBNReLU(input_channel, last_channel, kernel_size=1))
        self.out_channels = last_channel
        self.features = nn.SequentialCell(features)
        self._initialize_weights()

    def construct(self, x):
        return self.features(x)

    def _initialize_weights(self):
        self.init_parameters_data()
        for _, m in self.cells_and_names():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                weight = np.random.normal(0, np.sqrt(2. / n), m.weight.data.shape)
                m.weight.set_data(ms.Tensor(weight.astype("float32")))
                if m.bias is not None:
                    m.bias.set_data(ms.numpy.zeros(m.bias.data.shape, dtype="float32"))
            elif isinstance(m, nn.BatchNorm2d):
                m.gamma.set_data(ms.Tensor(np.ones(m.gamma.data.shape, dtype="float32")))
                m.beta.set_data(ms.numpy.zeros(m.beta.data.shape, dtype="float32"))


class Head(nn.Cell):
    def __init__(self, input_channel=32, num_classes=10, has_dropout=True, activation="Softmax"):
        super(Head, self).__init__()
        head = [GlobalAvgPooling(), nn.Dropout(p=0.2)] if has_dropout else [GlobalAvgPooling()]
        self.head = nn.SequentialCell(head)
        self.dense = nn.Dense(input_channel, num_classes, has_bias=True)
        self.need_activation = activation in ("Sigmoid", "Softmax")
        if activation == "Sigmoid":
            self.activation = ops.Sigmoid()
        elif activation == "Softmax":
            self.activation = ops.Softmax()

    def construct(self, x):
        x = self.dense(self.head(x))
        if self.need_activation:
            x = self.activation(x)
        return x


class Combine(nn.Cell):
    def __init__(self, backbone, head):
        super(Combine, self).__init__(auto_prefix=False)
        self.backbone = backbone
        self.head = head

    def construct(self, x):
        return self.head(self.backbone(x))


def mobilenet_small(num_classes=10):
    backbone = Backbone()
    return Combine(backbone, Head(backbone.out_channels, num_classes))
