"""Loaders of the standard files of two datasets amber cannot ship: `MnistDataset` (the idx
files) and `Cifar10Dataset` (the CIFAR-10 binary version), read from a directory the user
gives, with MindSpore's columns (`image` uint8 HWC, `label` uint32) and sampling options.
Files are checked (magic numbers, sizes) and read whole with NumPy: nothing is executed."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from .engine import Row
from .sources import MappableDataset

__all__ = ["MnistDataset", "Cifar10Dataset"]

_MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
_CIFAR10_FILES = {"train": tuple(f"data_batch_{k}.bin" for k in range(1, 6)),
                  "test": ("test_batch.bin",)}
_CIFAR10_RECORD = 1 + 3 * 32 * 32


def _usages(what: str, usage: str | None, known: dict[str, Any]) -> list[str]:
    if usage is None or usage == "all":
        return list(known)
    if usage not in known:
        raise ValueError(f"{what}: usage must be 'train', 'test' or 'all', got {usage!r}")
    return [usage]


def _directory(what: str, dataset_dir: str | os.PathLike) -> Path:
    path = Path(dataset_dir)
    if not path.is_dir():
        raise ValueError(f"{what}: dataset_dir {str(path)!r} is not a directory")
    return path


def _read_idx(path: Path, magic: int, dims: int) -> np.ndarray:
    """One idx file (big-endian header: magic, then `dims` sizes; then unsigned bytes)."""
    if not path.is_file():
        raise ValueError(f"MnistDataset: {str(path)!r} is missing (the MNIST idx files, "
                         "uncompressed, go in dataset_dir)")
    data = path.read_bytes()
    header = 4 * (1 + dims)
    if len(data) < header or int.from_bytes(data[:4], "big") != magic:
        raise ValueError(f"MnistDataset: {str(path)!r} is not an idx file of magic number "
                         f"{magic} (gzip-compressed? decompress it first)")
    shape = tuple(int.from_bytes(data[4 + 4 * k:8 + 4 * k], "big") for k in range(dims))
    if len(data) - header != int(np.prod(shape)):
        raise ValueError(f"MnistDataset: {str(path)!r} holds {len(data) - header} bytes of "
                         f"data, but its header says {shape}")
    return np.frombuffer(data, np.uint8, offset=header).reshape(shape)


class MnistDataset(MappableDataset):
    """MindSpore's `MnistDataset(dataset_dir, usage=None, ...)`: rows (`image` uint8
    [28, 28, 1], `label` uint32) from the four uncompressed idx files in `dataset_dir`
    (`usage` "train", "test" or "all"/None: train then test). Shuffled by default."""

    def __init__(self, dataset_dir: str | os.PathLike, usage: str | None = None,
                 num_samples: int | None = None, num_parallel_workers: int | None = None,
                 shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None,
                 cache: Any = None) -> None:
        if sampler is not None or cache is not None:
            raise NotImplementedError("MnistDataset: sampler= and cache= are not supported by "
                                      "amber")
        root = _directory("MnistDataset", dataset_dir)
        images, labels = [], []
        for use in _usages("MnistDataset", usage, _MNIST_FILES):
            image_file, label_file = _MNIST_FILES[use]
            x = _read_idx(root / image_file, 2051, 3)
            y = _read_idx(root / label_file, 2049, 1)
            if len(x) != len(y):
                raise ValueError(f"MnistDataset: {image_file} has {len(x)} images but "
                                 f"{label_file} {len(y)} labels")
            images.append(x[..., None])
            labels.append(y.astype(np.uint32))
        self.images, self.labels = np.concatenate(images), np.concatenate(labels)
        super().__init__("MnistDataset", ["image", "label"], shuffle, num_samples, num_shards,
                         shard_id)

    def _source_len(self) -> int:
        return len(self.labels)

    def _source_row(self, index: int) -> Row:
        return self.images[index], self.labels[index]


class Cifar10Dataset(MappableDataset):
    """MindSpore's `Cifar10Dataset(dataset_dir, usage=None, ...)`: rows (`image` uint8
    [32, 32, 3], `label` uint32) from the CIFAR-10 binary files in `dataset_dir`
    (`data_batch_1.bin` ... `data_batch_5.bin`, `test_batch.bin`: records of one label byte and
    3072 image bytes, channel by channel). Shuffled by default."""

    def __init__(self, dataset_dir: str | os.PathLike, usage: str | None = None,
                 num_samples: int | None = None, num_parallel_workers: int | None = None,
                 shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None,
                 cache: Any = None) -> None:
        if sampler is not None or cache is not None:
            raise NotImplementedError("Cifar10Dataset: sampler= and cache= are not supported by "
                                      "amber")
        root = _directory("Cifar10Dataset", dataset_dir)
        records = []
        for use in _usages("Cifar10Dataset", usage, _CIFAR10_FILES):
            for name in _CIFAR10_FILES[use]:
                records.append(self._read(root / name))
        data = np.concatenate(records)
        self.labels = data[:, 0].astype(np.uint32)
        self.images = data[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        if self.labels.size and self.labels.max() > 9:
            raise ValueError(f"Cifar10Dataset: a label is {int(self.labels.max())}; CIFAR-10 "
                             "labels are 0-9 (is this the CIFAR-100 binary version?)")
        super().__init__("Cifar10Dataset", ["image", "label"], shuffle, num_samples, num_shards,
                         shard_id)

    @staticmethod
    def _read(path: Path) -> np.ndarray:
        if not path.is_file():
            raise ValueError(f"Cifar10Dataset: {str(path)!r} is missing (the CIFAR-10 binary "
                             "version's .bin files go in dataset_dir)")
        data = np.fromfile(path, np.uint8)
        if data.size % _CIFAR10_RECORD:
            raise ValueError(f"Cifar10Dataset: {str(path)!r} is {data.size} bytes, not a "
                             f"whole number of {_CIFAR10_RECORD}-byte records")
        return data.reshape(-1, _CIFAR10_RECORD)

    def _source_len(self) -> int:
        return len(self.labels)

    def _source_row(self, index: int) -> Row:
        return self.images[index], self.labels[index]
