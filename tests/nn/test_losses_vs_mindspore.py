"""Where MindSpore is installed: the losses amber added give MindSpore 2.x's values for the
same arguments (optional: skipped without MindSpore)."""
from __future__ import annotations

import numpy as np
import pytest

from amber import nn

ms = pytest.importorskip("mindspore", reason="comparing with MindSpore needs it installed "
                         "(pip install mindspore)")

RNG = np.random.default_rng(3)
X = RNG.standard_normal((6, 4)).astype(np.float32)
Y = RNG.standard_normal((6, 4)).astype(np.float32)
IDS = np.array([0, 3, 1, 3, 2, 1], np.int32)
PROBS = RNG.dirichlet(np.ones(4), 6).astype(np.float32)
W = np.array([1.0, 2.0, 0.5, 1.5], np.float32)
P01 = RNG.uniform(0.05, 0.95, (6, 4)).astype(np.float32)
SIGNS = np.array([1, -1, 1, -1, -1, 1], np.int32)

# name -> (the class, its keyword arguments in both libraries, the inputs)
CASES = {
    "CrossEntropyLoss-ids": ("CrossEntropyLoss", {"weight": W, "ignore_index": 3,
                                                  "label_smoothing": 0.2}, (X, IDS)),
    "CrossEntropyLoss-probs": ("CrossEntropyLoss", {"weight": W, "label_smoothing": 0.1},
                               (X, PROBS)),
    "NLLLoss": ("NLLLoss", {"weight": W, "ignore_index": 1}, (X, IDS)),
    # NOTE: a full-shape weight: MindSpore's CPU kernel reads a broadcast one out of bounds
    "BCELoss": ("BCELoss", {"weight": np.tile(W, (6, 1))}, (P01, PROBS)),
    "SmoothL1Loss": ("SmoothL1Loss", {"beta": 0.5}, (X, Y)),
    "HuberLoss": ("HuberLoss", {"delta": 0.7}, (X, Y)),
    "KLDivLoss": ("KLDivLoss", {}, (X, PROBS)),
    "CosineEmbeddingLoss": ("CosineEmbeddingLoss", {"margin": 0.2}, (X, Y, SIGNS)),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_same_values_as_mindspore(case, reduction):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    name, kwargs, inputs = CASES[case]
    theirs = getattr(ms.nn, name)(**{k: ms.Tensor(v) if isinstance(v, np.ndarray) else v
                                     for k, v in kwargs.items()}, reduction=reduction)
    ours = getattr(nn, name)(**kwargs, reduction=reduction)
    want = theirs(*(ms.Tensor(a) for a in inputs)).asnumpy()
    np.testing.assert_allclose(ours(*inputs), want, rtol=1e-5, atol=1e-6)
