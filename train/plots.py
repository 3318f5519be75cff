"""Training curves as a picture: `plot_curves({"loss": [...], "test accuracy": [...]}, path)`
draws each named series against the epoch, one panel each, into a PNG (or any format matplotlib
writes). matplotlib is in the `examples` extra and imported only here, when a plot is asked for.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence


def plot_curves(curves: Mapping[str, Sequence[float]], path: str | Path,
                title: str = "training",
                epochs: Mapping[str, Sequence[int]] | None = None) -> Path:
    """Draw each series of `curves` (values per epoch) in its own panel; returns the file.
    `epochs`: the epoch of each value, by series name (default 1, 2, ...)."""
    try:  # NOTE: a Figure of its own, not pyplot: no window, and the backend a user (a
        # notebook) chose for the process stays as it is
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError as err:
        raise ImportError("plotting needs matplotlib: pip install 'amber-jit[examples]'") from err
    series = {name: list(values) for name, values in curves.items() if len(values)}
    if not series:
        raise ValueError("plot_curves: no values to plot")
    xs = {name: list(range(1, len(values) + 1)) for name, values in series.items()}
    for name, given in (epochs or {}).items():
        if name in series and len(given) != len(series[name]):
            raise ValueError(f"plot_curves: {name!r} has {len(series[name])} values for "
                             f"{len(given)} epochs")
        xs[name] = list(given)
    fig = Figure(figsize=(4.5 * len(series), 3.4))
    axes = fig.subplots(1, len(series), squeeze=False)
    for ax, (name, values) in zip(axes[0], series.items()):
        ax.plot(xs[name], [float(v) for v in values], marker="o")
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(name)
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    return path
