"""MindSpore's `ModelCheckpoint` callback and its `CheckpointConfig`: save the training network
(weights and optimizer state) every so many steps or seconds as `PREFIX-EPOCH_STEP.ckpt`,
keeping the newest few. Files are written by `amber.save_checkpoint`, whose format is its
own business."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ..checkpoint import save_checkpoint, writes_checkpoints
from ..nn.cell import Cell
from .hooks import Callback, RunContext

__all__ = ["CheckpointConfig", "ModelCheckpoint"]


def _non_negative(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"CheckpointConfig: {name} must be an int >= 0, got {value!r}")
    return value


class CheckpointConfig:
    """When and what `ModelCheckpoint` saves: every `save_checkpoint_steps` steps or
    `save_checkpoint_seconds` seconds (one of them non-zero), keeping at most
    `keep_checkpoint_max` files; `saved_network` instead of the training network;
    `append_info` ("epoch_num", "step_num" or a dict) saved beside the parameters."""

    def __init__(self, save_checkpoint_steps: int = 1, save_checkpoint_seconds: int = 0,
                 keep_checkpoint_max: int = 5, keep_checkpoint_per_n_minutes: int = 0,
                 integrated_save: bool = True, async_save: bool = False,
                 saved_network: Cell | None = None, append_info: Any = None,
                 enc_key: Any = None, enc_mode: str = "AES-GCM", exception_save: bool = False,
                 **kwargs: Any) -> None:
        self.save_checkpoint_steps = _non_negative("save_checkpoint_steps",
                                                   save_checkpoint_steps)
        self.save_checkpoint_seconds = _non_negative("save_checkpoint_seconds",
                                                     save_checkpoint_seconds)
        if not self.save_checkpoint_steps and not self.save_checkpoint_seconds:
            raise ValueError("CheckpointConfig: save_checkpoint_steps and "
                             "save_checkpoint_seconds cannot both be 0")
        self.keep_checkpoint_max = _non_negative("keep_checkpoint_max", keep_checkpoint_max)
        self.keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        if enc_key is not None or exception_save or async_save:
            raise NotImplementedError("CheckpointConfig: enc_key, async_save and "
                                      "exception_save are not supported by amber")
        if saved_network is not None and not isinstance(saved_network, Cell):
            raise TypeError(f"CheckpointConfig: saved_network must be a Cell, got "
                            f"{type(saved_network).__name__}")
        self.integrated_save, self.saved_network = integrated_save, saved_network
        self.append_info = append_info

    def get_checkpoint_policy(self) -> dict[str, int]:
        return {"save_ckpt_steps": self.save_checkpoint_steps,
                "save_ckpt_seconds": self.save_checkpoint_seconds,
                "keep_ckpt_max": self.keep_checkpoint_max,
                "keep_ckpt_per_n_minutes": self.keep_checkpoint_per_n_minutes}


class ModelCheckpoint(Callback):
    """Saves checkpoints named `PREFIX-EPOCH_STEP.ckpt` (STEP counted within the epoch) in
    `directory` (default: the current one) as `config` says, and once more at the end of
    training if the last step was not saved. If files of that prefix exist already, the
    prefix becomes `PREFIX_1`, `PREFIX_2`, ... so nothing is overwritten.

    In a data-parallel MPI job only rank 0 writes (and removes) files, in its `directory`: the
    ranks hold the same parameters. `Model.train` gives every rank rank 0's directory, prefix
    and latest file, and returns on no rank before rank 0's last file is written, so every
    rank can load it."""

    def __init__(self, prefix: str = "CKP", directory: str | os.PathLike | None = None,
                 config: CheckpointConfig | None = None) -> None:
        super().__init__()
        if not isinstance(prefix, str) or not prefix or "/" in prefix:
            raise ValueError(f"ModelCheckpoint: prefix must be a file name prefix, got "
                             f"{prefix!r}")
        if config is not None and not isinstance(config, CheckpointConfig):
            raise TypeError(f"ModelCheckpoint: config must be a CheckpointConfig, got "
                            f"{type(config).__name__}")
        self._directory = Path(directory) if directory is not None else Path(".")
        self._config = config or CheckpointConfig()
        self._prefix = prefix
        self._saved: list[Path] = []
        self._last_step = -1
        self._last_time = time.monotonic()
        self._latest: Path | None = None

    @property
    def latest_ckpt_file_name(self) -> str | None:
        """The path of the last checkpoint written."""
        return None if self._latest is None else str(self._latest)

    @property
    def files(self) -> tuple[Path, str, Path | None]:
        """(directory, prefix, latest file): where this callback writes; `Model.train` sets
        rank 0's on every rank of a data-parallel job."""
        return self._directory, self._prefix, self._latest

    @files.setter
    def files(self, files: tuple[Path, str, Path | None]) -> None:
        self._directory, self._prefix, self._latest = files

    def on_train_begin(self, run_context: RunContext) -> None:
        if writes_checkpoints():
            self._directory.mkdir(parents=True, exist_ok=True)
            self._prefix = self._free_prefix(self._prefix)
        self._last_time = time.monotonic()

    def _free_prefix(self, prefix: str) -> str:
        taken = {p.name.split("-", 1)[0] for p in self._directory.glob("*.ckpt")}
        if prefix not in taken:
            return prefix
        k = 1
        while f"{prefix}_{k}" in taken:
            k += 1
        return f"{prefix}_{k}"

    def on_train_step_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        step, config = cb_params.cur_step_num, self._config
        by_steps = config.save_checkpoint_steps and step % config.save_checkpoint_steps == 0
        by_time = (config.save_checkpoint_seconds
                   and time.monotonic() - self._last_time >= config.save_checkpoint_seconds)
        if by_steps or by_time:
            self._save(cb_params)

    def on_train_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        if cb_params.cur_step_num != self._last_step:
            self._save(cb_params)

    def _append_dict(self, cb_params: Any) -> dict[str, Any] | None:
        info = self._config.append_info
        if not info:
            return None
        out: dict[str, Any] = {}
        for item in info if isinstance(info, list) else [info]:
            if item == "epoch_num":
                out["epoch_num"] = int(cb_params.cur_epoch_num)
            elif item == "step_num":
                out["step_num"] = int(cb_params.cur_step_num)
            elif isinstance(item, dict):
                out.update(item)
            else:
                raise ValueError(f"CheckpointConfig: append_info items are 'epoch_num', "
                                 f"'step_num' or dicts, got {item!r}")
        return out

    def _save(self, cb_params: Any) -> None:
        step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        path = self._directory / f"{self._prefix}-{cb_params.cur_epoch_num}_{step_in_epoch}.ckpt"
        network = self._config.saved_network or cb_params.train_network
        save_checkpoint(network, path, append_dict=self._append_dict(cb_params))
        self._saved = [p for p in self._saved if p != path] + [path]
        limit = self._config.keep_checkpoint_max
        while limit and len(self._saved) > limit:
            oldest = self._saved.pop(0)
            if writes_checkpoints():  # NOTE: the rank that wrote it (another would race)
                oldest.unlink(missing_ok=True)
        self._last_step, self._last_time, self._latest = (cb_params.cur_step_num,
                                                          time.monotonic(), path)
