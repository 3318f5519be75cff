"""LeNet-5 on scikit-learn's handwritten digits, written as a MindSpore 2.x user writes it:
`import mindspore...`, a `mindspore.dataset` pipeline, `Model.train` with callbacks and a
checkpoint, `Model.eval` with a metric. It runs unchanged on amber:

    pip install -e ".[examples]"
    python -m amber.compat samples/ms_train_lenet.py --epochs 5

and on MindSpore itself (`python samples/ms_train_lenet.py` where mindspore is installed).
The 8x8 digits are resized to LeNet's 32x32 (nearest: each pixel a 4x4 block), rescaled and
normalized; 80% train (shuffled, batches of 32), 20% test. The last line is the test accuracy.
"""
import argparse
import os
import tempfile

import numpy as np

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
from mindspore import nn
from mindspore.common.initializer import Normal
from mindspore.train import (Accuracy, CheckpointConfig, LossMonitor, Model, ModelCheckpoint,
                             TimeMonitor)

BATCH = 32


class LeNet5(nn.Cell):
    """LeNet-5 as in MindSpore's model zoo."""

    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
        self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def load_digits(train_size=None):
    """(train images, train labels, test images, test labels): uint8 [N, 8, 8, 1] images in
    0-255 and int32 labels, a seeded 80/20 split; `train_size` keeps only the first ones."""
    from sklearn.datasets import load_digits as sklearn_digits
    digits = sklearn_digits()
    images = np.clip(np.rint(digits.images * (255 / 16)), 0, 255).astype(np.uint8)[..., None]
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(0).permutation(len(labels))
    cut = int(len(labels) * 0.8)
    train, test = order[:cut][:train_size], order[cut:]
    return images[train], labels[train], images[test], labels[test]


def create_dataset(images, labels, training):
    """The pipeline: resize to 32x32, scale to [0, 1], normalize, HWC -> CHW, int32 labels."""
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=training)
    image_ops = [vision.Resize((32, 32), vision.Inter.NEAREST), vision.Rescale(1.0 / 255, 0.0),
                 vision.Normalize(mean=[0.3], std=[0.4]), vision.HWC2CHW()]
    data = data.map(image_ops, input_columns="image")
    data = data.map(transforms.TypeCast(ms.int32), input_columns="label")
    return data.batch(BATCH, drop_remainder=training)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--train-size", type=int, default=None,
                        help="train on the first N training images only")
    parser.add_argument("--ckpt-dir", default=None, help="default: a temporary directory")
    args = parser.parse_args()

    ms.set_seed(1)
    ds.config.set_seed(1)
    x_train, y_train, x_test, y_test = load_digits(args.train_size)
    train_data = create_dataset(x_train, y_train, training=True)
    test_data = create_dataset(x_test, y_test, training=False)
    steps = train_data.get_dataset_size()

    net = LeNet5()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Adam(net.trainable_params(), learning_rate=0.003)
    model = Model(net, loss_fn=loss, optimizer=opt, metrics={"accuracy": Accuracy()})

    ckpt_dir = args.ckpt_dir or tempfile.mkdtemp(prefix="lenet_ckpt_")
    config = CheckpointConfig(save_checkpoint_steps=steps, keep_checkpoint_max=2)
    ckpt = ModelCheckpoint(prefix="lenet", directory=ckpt_dir, config=config)
    model.train(args.epochs, train_data, dataset_sink_mode=False,
                callbacks=[LossMonitor(per_print_times=steps), TimeMonitor(), ckpt])

    # the last checkpoint, loaded into a fresh network, predicts what the trained one does
    restored = LeNet5()
    ms.load_param_into_net(restored, ms.load_checkpoint(ckpt.latest_ckpt_file_name))
    batch = next(test_data.create_tuple_iterator(output_numpy=True))[0]
    same = np.allclose(model.predict(ms.Tensor(batch)).asnumpy(),
                       Model(restored).predict(ms.Tensor(batch)).asnumpy(), atol=1e-5)
    print(f"checkpoint {os.path.basename(ckpt.latest_ckpt_file_name)} restores the network: "
          f"{same}")
    accuracy = model.eval(test_data, dataset_sink_mode=False)["accuracy"]
    print(f"test accuracy: {accuracy:.3f}")


if __name__ == "__main__":
    main()
