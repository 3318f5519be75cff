"""What `amber export` adds for training: `--checkpoint FILE` (export those weights) and
`--train` (the module performs train steps: parameters and optimizer state updated in place,
`save()` writes them as an amber checkpoint)."""
from __future__ import annotations

import argparse
from typing import Any, Sequence

from .errors import UsageError

TRAIN_HELP = """\
--checkpoint FILE loads an amber checkpoint (amber.save_checkpoint) into the model before
exporting, so the module carries those weights. --train exports a train step: NAME must be an
nn.TrainOneStepCell (a subclass built with no arguments, or an instance the file builds); run(*batch)
then performs one step, updating the parameters and the optimizer state in place, and returns
the loss; save(path) writes them as a checkpoint amber.load_checkpoint reads."""


def add_flags(parser: argparse.ArgumentParser) -> None:
    """The training flags of `amber export`."""
    parser.add_argument("--checkpoint", metavar="FILE",
                        help="load these weights (an amber checkpoint) before exporting")
    parser.add_argument("--train", action="store_true",
                        help="export a train step (NAME is an nn.TrainOneStepCell)")


def prepare(ns: argparse.Namespace, target: Any) -> None:
    """Check `--train`'s target and load `--checkpoint` into it, before compiling."""
    from ..nn import TrainOneStepCell
    instance = target.instance
    if ns.train and not isinstance(instance, TrainOneStepCell):
        raise UsageError(f"--train needs an nn.TrainOneStepCell, but {ns.spec} is a "
                         f"{type(instance if instance is not None else target.obj).__name__} "
                         "(wrap it: nn.TrainOneStepCell(nn.WithLossCell(net, loss), "
                         "nn.SGD(net.trainable_params())))")
    if ns.checkpoint:
        if instance is None:
            raise UsageError(f"--checkpoint needs a Cell, but {ns.spec} is a function")
        from ..checkpoint import load_checkpoint, load_param_into_net
        try:
            params = load_checkpoint(ns.checkpoint)
            missing, _ = load_param_into_net(instance, params)
        except (TypeError, ValueError) as err:
            raise UsageError(f"--checkpoint {ns.checkpoint}: {err}") from None
        if missing:
            raise UsageError(f"--checkpoint {ns.checkpoint} lacks {len(missing)} parameter(s) of "
                             f"{ns.spec}: {', '.join(missing[:5])}"
                             f"{', ...' if len(missing) > 5 else ''}")


def checkpoint_names(instance: Any, paths: Sequence[str]) -> tuple[str, ...]:
    """The Parameter name (the checkpoint key) of each exported parameter path."""
    from ..runtime.paths import access
    return tuple(getattr(access(instance, path)[1], "name", None) or path for path in paths)


def train_tail(function_name: str, names: Sequence[str]) -> str:
    """Module text after `run()`: `save()` and what a train-step module documents."""
    listed = "(\n" + "".join(f"    {n!r},\n" for n in names) + ")" if names else "()"
    return f'''

# ---- a train step: run(*batch) updates the parameters in place ----
CHECKPOINT_NAMES = {listed}
"""The checkpoint name (amber Parameter name) of each entry of PARAMETERS."""


def parameters():
    """name -> array of the current parameters and optimizer state (updated by each run())."""
    if _parameters is None:
        load()
    return dict(zip(CHECKPOINT_NAMES, _parameters))


def save(path):
    """Write the current parameters and optimizer state as an amber checkpoint (.npz keyed by
    CHECKPOINT_NAMES): amber.load_checkpoint(path) reads it back."""
    import tempfile
    directory = _os.path.dirname(_os.path.abspath(path))
    with tempfile.NamedTemporaryFile(dir=directory, suffix=".tmp", delete=False) as f:
        np.savez(f, **parameters())
    _os.replace(f.name, path)
'''


def train_doc(module: str, names: str) -> list[str]:
    """Docstring lines for a train-step module."""
    return [
        "",
        "A train step: each run(*batch) performs one step of training (forward, gradients,",
        "optimizer update) and returns the loss; the parameters and optimizer state are NumPy",
        "arrays updated in place. save(path) writes them as an amber checkpoint:",
        "",
        f"    for batch in batches:",
        f"        loss = {module}.run({names})",
        f"    {module}.save('trained.ckpt')   # amber.load_checkpoint('trained.ckpt')",
    ]
