"""MindSpore's parallel context: `set_auto_parallel_context(parallel_mode=..., gradients_mean=...,
device_num=...)`, `get_auto_parallel_context`, `reset_auto_parallel_context`, `ParallelMode`.

amber runs stand-alone or data-parallel (every rank holds the whole model and trains on its own
rows of each batch; `nn.TrainOneStepCell` then averages or sums the gradients over the ranks);
the model-sharding modes are refused.
"""
from __future__ import annotations

from typing import Any


class ParallelMode:
    """The parallel modes' names (MindSpore's `ParallelMode`); amber runs the first two."""
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL, HYBRID_PARALLEL]


SUPPORTED = (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL)
DEFAULTS = {"parallel_mode": ParallelMode.STAND_ALONE, "gradients_mean": False,
            "device_num": None}
"""The settings amber reads, with MindSpore's defaults (device_num None: the job's size)."""
IGNORED = frozenset({
    "search_mode", "auto_parallel_search_mode", "strategy_ckpt_load_file",
    "strategy_ckpt_save_file", "full_batch", "enable_parallel_optimizer", "dataset_strategy",
    "all_reduce_fusion_config", "comm_fusion", "grad_accumulation_step", "loss_repeated_mean",
    "pipeline_stages", "enable_alltoall", "parallel_optimizer_config", "strategy_ckpt_config",
    "parameter_broadcast", "global_rank",
})
"""MindSpore settings that change nothing here (one fused all-reduce per step is amber's, and a
data-parallel train step always starts from rank 0's parameters)."""

_settings: dict[str, Any] = dict(DEFAULTS)


def set_auto_parallel_context(**kwargs: Any) -> None:
    """Set `parallel_mode` (ParallelMode.STAND_ALONE or DATA_PARALLEL), `gradients_mean`
    (average the ranks' gradients instead of summing them), `device_num` (the divisor of the
    mean; default the number of ranks)."""
    for key, value in kwargs.items():
        if key in IGNORED:
            continue
        if key not in DEFAULTS:
            raise ValueError(f"set_auto_parallel_context: unknown setting {key!r}; amber reads "
                             f"{', '.join(DEFAULTS)}")
        if key == "parallel_mode" and value not in SUPPORTED:
            raise ValueError(
                f"set_auto_parallel_context: parallel_mode={value!r} is not supported: amber "
                "trains stand-alone or data-parallel (ParallelMode.DATA_PARALLEL: each rank "
                "holds the whole model); it does not shard a model across ranks")
        if key == "device_num" and value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"set_auto_parallel_context: device_num must be a positive int, "
                             f"got {value!r}")
        if key == "gradients_mean" and not isinstance(value, bool):
            raise TypeError(f"set_auto_parallel_context: {key} must be a bool, got {value!r}")
        _settings[key] = value


def get_auto_parallel_context(attr_key: str) -> Any:
    """One setting's value (`device_num` is the number of ranks unless it was set)."""
    if attr_key not in DEFAULTS:
        raise ValueError(f"get_auto_parallel_context: unknown setting {attr_key!r}")
    value = _settings[attr_key]
    if value is None and attr_key == "device_num":
        from .management import get_group_size
        return get_group_size()
    return value


def reset_auto_parallel_context() -> None:
    """Every setting back to its default (stand-alone)."""
    _settings.clear()
    _settings.update(DEFAULTS)


def device_num_setting() -> int | None:
    """`device_num` as set, None when left to the job's size (read when the step runs, so an
    exported train step divides by the size of the job that runs it)."""
    return _settings["device_num"]


def data_parallel() -> bool:
    """True in ParallelMode.DATA_PARALLEL: train steps reduce their gradients over the ranks."""
    return _settings["parallel_mode"] == ParallelMode.DATA_PARALLEL
