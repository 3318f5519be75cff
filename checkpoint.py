"""Checkpoints with MindSpore's names, signatures and files: `save_checkpoint`,
`load_checkpoint`, `load_param_into_net`.

`save_checkpoint` writes MindSpore's `.ckpt` (its protobuf `Checkpoint` message) by default,
`format="safetensors"` as MindSpore 2.3+ does, or amber's older `.npz` for a name ending in
`.npz`; `load_checkpoint` reads all three, telling them apart by content (see
common/checkpoint_files.py). Loading runs no code, whoever wrote the file. Parameters are saved
by their `name` (`fc.weight`; an optimizer's state as `moments.fc.weight`, `global_step`,
`learning_rate`, ...), as MindSpore does, so saving a `TrainOneStepCell` keeps the optimizer
state and loading it back into one (in amber or MindSpore) resumes training exactly.
"""
from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any, Callable, Iterable

import numpy as np

from .common.checkpoint_files import FORMATS, CheckpointFileError, read_checkpoint, \
    write_checkpoint
from .nn.cell import Cell, Parameter

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]

_APPENDABLE = (int, float, bool, str, np.ndarray, np.generic)


def _named_arrays(save_obj: Any) -> OrderedDict[str, np.ndarray]:
    """name -> values from a Cell (by each Parameter's name), a dict, or a list of
    Parameters / {'name', 'data'} dicts."""
    if isinstance(save_obj, Cell):
        pairs = [(p.name or path, p) for path, p in save_obj.parameters_and_names()]
    elif isinstance(save_obj, dict):
        pairs = list(save_obj.items())
    elif isinstance(save_obj, list | tuple):
        pairs = [(p["name"], p["data"]) if isinstance(p, dict) else (getattr(p, "name", None), p)
                 for p in save_obj]
    else:
        raise TypeError(f"save_checkpoint: expected a Cell, a dict or a list of Parameters, got "
                        f"{type(save_obj).__name__}")
    arrays: OrderedDict[str, np.ndarray] = OrderedDict()
    for name, value in pairs:
        if not isinstance(name, str) or not name:
            raise ValueError(f"save_checkpoint: every parameter needs a name, got {name!r}")
        if name in arrays:
            raise ValueError(f"save_checkpoint: parameter name {name!r} appears twice (give "
                             "the Parameters unique names)")
        arrays[name] = _storable(name, value)
    return arrays


def _storable(name: str, value: Any) -> np.ndarray | str:
    if isinstance(value, str):
        return value
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"save_checkpoint: {name!r} is a {array.dtype} array; a checkpoint "
                        "holds numbers, bools and strings only")
    return np.array(array.view(np.ndarray) if isinstance(array, Parameter) else array)


def _file_and_format(ckpt_file_name: str | os.PathLike, fmt: str | None) -> tuple[str, str]:
    """MindSpore's rule: the format's suffix is appended when the name lacks it; a name ending
    in `.npz` (without `format`) keeps amber's older archive."""
    path = os.fspath(ckpt_file_name)
    if not isinstance(path, str):
        raise TypeError(f"save_checkpoint: ckpt_file_name must be a path, got {path!r}")
    if fmt is None:
        fmt = "npz" if path.endswith(".npz") else "ckpt"
    if fmt not in FORMATS:
        raise ValueError(f"save_checkpoint: format must be 'ckpt' or 'safetensors', not {fmt!r}")
    if not path.endswith("." + fmt):
        path += "." + fmt
    return path, fmt


def save_checkpoint(save_obj: Any, ckpt_file_name: str | os.PathLike,
                    integrated_save: bool = True, async_save: bool = False,
                    append_dict: dict[str, Any] | None = None,
                    choice_func: Callable[[str], bool] | None = None, **kwargs: Any) -> None:
    """Write the parameters of `save_obj` (a Cell, by each Parameter's name; a name -> array
    dict; or a list of named Parameters or {'name', 'data'} dicts) to `ckpt_file_name`,
    atomically: MindSpore's `.ckpt` protobuf, or with `format="safetensors"` a safetensors
    file (both need the `checkpoint` extra); the suffix is appended when missing, as MindSpore
    does, and a name ending in `.npz` writes amber's older archive. `append_dict` adds entries
    (numbers, strings, arrays: e.g. the epoch); `choice_func(name)` keeps only the parameters
    it accepts. `integrated_save` and `async_save` are accepted for MindSpore compatibility (one
    process, saved synchronously)."""
    unknown = set(kwargs) - {"enc_key", "enc_mode", "format", "crc_check", "remove_redundancy"}
    if unknown:
        raise TypeError(f"save_checkpoint: unexpected keyword arguments {sorted(unknown)}")
    if kwargs.get("enc_key") is not None:
        raise ValueError("save_checkpoint: encrypted checkpoints are not supported")
    arrays = _named_arrays(save_obj)
    if choice_func is not None:
        arrays = OrderedDict((k, v) for k, v in arrays.items() if choice_func(k))
    for name, value in (append_dict or {}).items():
        if not isinstance(name, str) or not isinstance(value, _APPENDABLE):
            raise TypeError(f"save_checkpoint: append_dict entries must map a name to a number, "
                            f"a string or an array, got {name!r}: {type(value).__name__}")
        if name in arrays:
            raise ValueError(f"save_checkpoint: append_dict entry {name!r} is also a parameter")
        arrays[name] = _storable(name, value)
    if not writes_checkpoints():
        return
    path, fmt = _file_and_format(ckpt_file_name, kwargs.get("format"))
    write_checkpoint(path, arrays, fmt)


def writes_checkpoints() -> bool:
    """False on every rank but 0 of a data-parallel MPI job: its ranks hold the same
    parameters, so one file is written, not one per rank racing on the same path. Outside
    ParallelMode.DATA_PARALLEL each process trains a model of its own and writes its files."""
    from .communication.management import get_rank
    from .communication.parallel import data_parallel
    return not data_parallel() or get_rank() == 0


def _prefixes(arg: str, value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(p, str) and p for p in items):
        raise TypeError(f"load_checkpoint: {arg} must be a string or a list of non-empty "
                        f"strings, got {value!r}")
    return items


def load_checkpoint(ckpt_file_name: str | os.PathLike, net: Cell | None = None,
                    strict_load: bool = False, filter_prefix: str | Iterable[str] | None = None,
                    dec_key: Any = None, dec_mode: str = "AES-GCM",
                    specify_prefix: str | Iterable[str] | None = None,
                    choice_func: Callable[[str], bool] | None = None,
                    **kwargs: Any) -> dict[str, Any]:
    """name -> Parameter (a string entry stays a str) from a checkpoint, skipping names that
    start with a `filter_prefix`, keeping only those starting with a `specify_prefix` and those
    `choice_func(name)` accepts; also loads them into `net` when given. Reads MindSpore's
    `.ckpt`, safetensors and amber's `.npz` (told apart by content; `format` is accepted and
    need not be given); never runs code from the file: a damaged one is a ValueError naming
    it."""
    if dec_key is not None:
        raise ValueError("load_checkpoint: encrypted checkpoints are not supported")
    skip, keep = _prefixes("filter_prefix", filter_prefix), _prefixes("specify_prefix",
                                                                     specify_prefix)
    unknown = set(kwargs) - {"format", "crc_check", "remove_redundancy"}
    if unknown:
        raise TypeError(f"load_checkpoint: unexpected keyword arguments {sorted(unknown)}")
    path = os.fspath(ckpt_file_name)
    if not os.path.isfile(path):
        raise ValueError(f"load_checkpoint: no checkpoint file {path!r}")
    try:
        entries = read_checkpoint(path)
    except CheckpointFileError as err:
        raise ValueError(f"load_checkpoint: {err}") from None
    params: dict[str, Any] = {}
    for name, value in entries.items():
        if skip and name.startswith(skip) or keep and not name.startswith(keep):
            continue
        if choice_func is not None and not choice_func(name):
            continue
        params[name] = value if isinstance(value, str) else Parameter(value, name=name)
    if net is not None:
        load_param_into_net(net, params, strict_load)
    return params


def load_param_into_net(net: Cell, parameter_dict: dict[str, Any], strict_load: bool = False,
                        **kwargs: Any) -> tuple[list[str], list[str]]:
    """Copy values into `net`'s Parameters in place, matching each Parameter's name; returns
    (net parameters not loaded, checkpoint entries not used). Every value is checked (shape,
    dtype) before any is written, so a mismatch leaves the net untouched. `strict_load` makes
    a parameter missing from the checkpoint an error."""
    if not isinstance(net, Cell):
        raise TypeError(f"load_param_into_net: net must be a Cell, got {type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"load_param_into_net: parameter_dict must be a dict, got "
                        f"{type(parameter_dict).__name__}")
    own: OrderedDict[str, Parameter] = OrderedDict()
    for path, param in net.parameters_and_names():
        own.setdefault(param.name or path, param)
    missing = [name for name in own if name not in parameter_dict]
    if strict_load and missing:
        raise ValueError(f"load_param_into_net: the checkpoint lacks {', '.join(missing)}")
    writes = []
    for name, param in own.items():
        if name not in parameter_dict:
            continue
        value = np.asarray(parameter_dict[name])
        if value.shape != param.shape:
            raise ValueError(f"load_param_into_net: {name!r} has shape {value.shape} in the "
                             f"checkpoint but {param.shape} in the net; nothing was loaded")
        if not np.can_cast(value.dtype, param.dtype, casting="same_kind"):
            raise TypeError(f"load_param_into_net: {name!r} is {value.dtype} in the checkpoint "
                            f"but {param.dtype} in the net; nothing was loaded")
        writes.append((param, value))
    for param, value in writes:
        param.set_data(value)
    unused = [name for name in parameter_dict if name not in own]
    return missing, unused
