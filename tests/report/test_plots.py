"""Training curves drawn to a file (matplotlib is optional: the `examples` extra)."""
from __future__ import annotations

from pathlib import Path

import pytest

from amber.train.plots import plot_curves


def test_curves_are_drawn_one_panel_per_series(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib is in the examples extra")
    from matplotlib.image import imread
    path = plot_curves({"loss": [2.0, 1.0, 0.5], "accuracy": [0.3, 0.6, 0.9]},
                       tmp_path / "curves.png")
    image = imread(path)
    assert image.shape[1] > image.shape[0] > 100  # NOTE: two panels side by side
    assert image[..., :3].std() > 0.05  # something was drawn
    with pytest.raises(ValueError, match="no values"):
        plot_curves({"loss": []}, tmp_path / "empty.png")
