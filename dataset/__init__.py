"""MindSpore's `mindspore.dataset`, a documented subset in plain NumPy: the sources
`GeneratorDataset`, `NumpySlicesDataset`, `MnistDataset`, `Cifar10Dataset`; the pipeline
methods of `Dataset`; `vision` and `transforms` operations; `config.set_seed`. See
docs/mindspore-training.md."""
from . import config, transforms, vision
from .engine import Dataset
from .loaders import Cifar10Dataset, MnistDataset
from .sources import GeneratorDataset, MappableDataset, NumpySlicesDataset

__all__ = ["config", "transforms", "vision", "Dataset", "MappableDataset", "GeneratorDataset",
           "NumpySlicesDataset", "MnistDataset", "Cifar10Dataset"]
