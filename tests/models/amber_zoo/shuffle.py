"""A ShuffleNetV2 the model zoo's way: blocks taking keyword-only arguments, a channel shuffle
that unpacks `P.Shape()(x)` and reshapes, transposes and slices with computed sizes, primitives
created inside `construct` (`P.Concat(1)((a, b))`), and the final reshape to (-1, channels)."""
import numpy as np

import amber.nn as nn
import amber.ops.operations as P
from amber import Tensor


class ShuffleV2Block(nn.Cell):
    def __init__(self, inp, oup, mid_channels, *, ksize, stride):
        super(ShuffleV2Block, self).__init__()
        self.stride = stride
        pad = ksize // 2
        outputs = oup - inp
        self.branch_main = nn.SequentialCell([
            nn.Conv2d(inp, mid_channels, kernel_size=1, pad_mode="pad", padding=0),
            nn.BatchNorm2d(num_features=mid_channels, momentum=0.9),
            nn.ReLU(),
            nn.Conv2d(mid_channels, mid_channels, kernel_size=ksize, stride=stride,
                      pad_mode="pad", padding=pad, group=mid_channels),
            nn.BatchNorm2d(num_features=mid_channels, momentum=0.9),
            nn.Conv2d(mid_channels, outputs, kernel_size=1, pad_mode="pad", padding=0),
            nn.BatchNorm2d(num_features=outputs, momentum=0.9),
            nn.ReLU(),
        ])
        if stride == 2:
            self.branch_proj = nn.SequentialCell([
                nn.Conv2d(inp, inp, kernel_size=ksize, stride=stride, pad_mode="pad",
                          padding=pad, group=inp),
                nn.BatchNorm2d(num_features=inp, momentum=0.9),
                nn.Conv2d(inp, inp, kernel_size=1, pad_mode="pad", padding=0),
                nn.BatchNorm2d(num_features=inp, momentum=0.9),
                nn.ReLU(),
            ])
        else:
            self.branch_proj = None
        self.squeeze = P.Squeeze(axis=0)

    def construct(self, old_x):
        if self.stride == 1:
            x_proj, x = self.channel_shuffle(old_x)
            x_proj = self.squeeze(x_proj)
            x = self.squeeze(x)
            return P.Concat(1)((x_proj, self.branch_main(x)))
        return P.Concat(1)((self.branch_proj(old_x), self.branch_main(old_x)))

    def channel_shuffle(self, x):
        batchsize, num_channels, height, width = P.Shape()(x)
        x = P.Reshape()(x, (batchsize * num_channels // 2, 2, height * width,))
        x = P.Transpose()(x, (1, 0, 2,))
        x = P.Reshape()(x, (2, -1, num_channels // 2, height, width,))
        return x[0:1, :, :, :, :], x[-1:, :, :, :, :]


class ShuffleNetV2(nn.Cell):
    def __init__(self, n_class=10, channels=(-1, 8, 16, 32, 64)):
        super(ShuffleNetV2, self).__init__()
        self.stage_repeats = [2, 2]
        self.stage_out_channels = list(channels)
        input_channel = self.stage_out_channels[1]
        self.first_conv = nn.SequentialCell([
            nn.Conv2d(3, input_channel, kernel_size=3, stride=2, pad_mode="pad", padding=1),
            nn.BatchNorm2d(num_features=input_channel, momentum=0.9),
            nn.ReLU(),
        ])
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.features = []
        for idxstage in range(len(self.stage_repeats)):
            output_channel = self.stage_out_channels[idxstage + 2]
            for i in range(self.stage_repeats[idxstage]):
                if i == 0:
                    self.features.append(ShuffleV2Block(input_channel, output_channel,
                                                        mid_channels=output_channel // 2,
                                                        ksize=3, stride=2))
                else:
                    self.features.append(ShuffleV2Block(input_channel // 2, output_channel,
                                                        mid_channels=output_channel // 2,
                                                        ksize=3, stride=1))
                input_channel = output_channel
        self.features = nn.SequentialCell([*self.features])
        self.conv_last = nn.SequentialCell([
            nn.Conv2d(input_channel, self.stage_out_channels[-1], kernel_size=1, pad_mode="pad",
                      padding=0),
            nn.BatchNorm2d(num_features=self.stage_out_channels[-1], momentum=0.9),
            nn.ReLU()])
        self.globalpool = nn.AvgPool2d(kernel_size=2, stride=2, pad_mode="valid")
        self.classifier = nn.SequentialCell([nn.Dense(self.stage_out_channels[-1], n_class,
                                                      has_bias=False)])
        self._initialize_weights()

    def construct(self, x):
        x = self.maxpool(self.first_conv(x))
        x = self.features(x)
        x = self.globalpool(self.conv_last(x))
        x = P.Reshape()(x, (-1, self.stage_out_channels[-1],))
        return self.classifier(x)

    def _initialize_weights(self):
        for name, m in self.cells_and_names():
            if isinstance(m, nn.Conv2d):
                std = 0.01 if "first" in name else 1.0 / m.weight.data.shape[1]
                m.weight.set_data(Tensor(np.random.normal(0, std, m.weight.data.shape)
                                         .astype("float32")))
            if isinstance(m, nn.Dense):
                m.weight.set_data(Tensor(np.random.normal(0, 0.01, m.weight.data.shape)
                                         .astype("float32")))
