"""amber's own model files in the style of MindSpore's model zoo (see each module's docstring):
written with MindSpore's module paths under the `amber` name, so the same files run on MindSpore
with `amber` replaced by `mindspore` in their import lines (tests/models/test_vs_mindspore.py
does exactly that). `SPECS` names each model: how to build it and an input batch."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import (classic, dense, gan, inception, mobile, residual, shuffle, squeeze, text,
               transformer, vit)


def images(*shape: int) -> Callable[[], tuple[np.ndarray, ...]]:
    return lambda: (np.random.default_rng(0).standard_normal(shape).astype(np.float32),)


def ids(shape: tuple[int, ...], vocab: int) -> np.ndarray:
    return np.random.default_rng(1).integers(0, vocab, shape).astype(np.int32)


def sentiment(module: Any) -> Any:
    weight = np.random.default_rng(2).standard_normal((20, 5)).astype(np.float32)
    return module.SentimentNet(weight)


def transformer_inputs() -> tuple[np.ndarray, ...]:
    mask = np.ones((2, 5), np.int32)
    mask[1, 3:] = 0
    return ids((2, 5), 20), mask, ids((2, 4), 20)


SPECS: dict[str, tuple[str, Callable[[Any], Any], Callable[[], tuple[Any, ...]]]] = {
    # name: (module, builder given that module, inputs)
    "quickstart": ("classic", lambda m: m.Network(), images(2, 1, 28, 28)),
    "lenet5": ("classic", lambda m: m.LeNet5(), images(2, 1, 32, 32)),
    "alexnet": ("classic", lambda m: m.AlexNet(), images(2, 32, 32, 3)),
    "vgg": ("classic", lambda m: m.vgg_small(), images(2, 3, 16, 16)),
    "resnet": ("residual", lambda m: m.resnet_small(), images(2, 3, 32, 32)),
    "se_resnet": ("residual", lambda m: m.resnet_small(use_se=True), images(1, 3, 32, 32)),
    "mobilenet": ("mobile", lambda m: m.mobilenet_small(), images(2, 3, 32, 32)),
    "googlenet": ("inception", lambda m: m.GoogLeNet(), images(2, 3, 32, 32)),
    "inception_v3": ("inception", lambda m: m.InceptionV3(), images(2, 3, 35, 35)),
    "squeezenet": ("squeeze", lambda m: m.SqueezeNet(), images(2, 3, 33, 33)),
    "densenet": ("dense", lambda m: m.DenseNet(), images(2, 3, 16, 16)),
    "shufflenet": ("shuffle", lambda m: m.ShuffleNetV2(), images(1, 3, 32, 32)),
    "dcgan_g": ("gan", lambda m: m.Generator(), images(2, 8)),
    "dcgan_d": ("gan", lambda m: m.Discriminator(), images(2, 3, 16, 16)),
    "textcnn": ("text", lambda m: m.TextCNN(), lambda: (ids((2, 12), 30),)),
    "sentiment": ("text", sentiment, lambda: (ids((2, 10), 20),)),
    "transformer": ("transformer", lambda m: m.Transformer(), transformer_inputs),
    "vit": ("vit", lambda m: m.vit_small(), images(2, 3, 16, 16)),
}
"""Small sizes: each model compiles and runs in well under a second or two."""

MODULES = {"classic": classic, "dense": dense, "gan": gan, "inception": inception,
           "mobile": mobile, "residual": residual, "shuffle": shuffle, "squeeze": squeeze,
           "text": text, "transformer": transformer, "vit": vit}


def build(name: str, modules: dict[str, Any] | None = None) -> tuple[Any, tuple[Any, ...]]:
    """The model `name` (weights drawn after seeding amber's and NumPy's generators) and its
    inputs; `modules` replaces the zoo modules (the same files loaded for MindSpore)."""
    import amber
    module_name, builder, inputs = SPECS[name]
    amber.set_seed(0)
    np.random.seed(0)
    return builder((modules or MODULES)[module_name]), inputs()
