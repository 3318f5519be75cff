"""samples/train_lenet.py on the real digits (needs the `examples` extra: scikit-learn, tqdm)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def test_three_epochs_learn_the_digits():
    pytest.importorskip("sklearn", reason="the digits come with scikit-learn (pip install "
                        "-e '.[examples]')")
    pytest.importorskip("tqdm", reason="the sample shows a tqdm bar (pip install -e '.[examples]')")
    sys.path.insert(0, str(SAMPLES))
    try:
        import train_lenet
    finally:
        sys.path.remove(str(SAMPLES))
    history, accuracy, net = train_lenet.train(epochs=3, progress=False)
    assert history == sorted(history, reverse=True)  # the loss falls epoch by epoch
    assert accuracy > 0.85

