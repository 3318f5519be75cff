"""Eager values and model state: `Tensor` (an ndarray constructor), the global seed, and
checkpoints (`save_checkpoint` / `load_checkpoint` / `load_param_into_net`) stored as `.npz`."""
from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

import numpy as np

from .common.dtype import to_array
from .common.initializer import initializer
from .common.seed import get_generator, get_seed, set_seed
from .nn.cell import Cell, Parameter

__all__ = ["Tensor", "set_seed", "get_seed", "get_generator", "save_checkpoint",
           "load_checkpoint", "load_param_into_net"]


class _TensorMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, np.ndarray)


class Tensor(metaclass=_TensorMeta):
    """`Tensor(data, dtype=None)` builds a new `np.ndarray` (amber's eager tensor).

    Python floats default to float32, ints to int64. `Tensor(shape=s, dtype=d, init=i)` draws
    from an initializer. `isinstance(x, Tensor)` holds for every ndarray."""

    def __new__(cls, input_data: Any = None, dtype: Any = None, shape: Any = None,
                init: Any = None) -> np.ndarray:  # type: ignore[misc]
        if input_data is not None:
            if shape is not None or init is not None:
                raise TypeError("Tensor: give either input_data or (shape, init), not both")
            return to_array(input_data, dtype)
        if shape is None or init is None:
            raise TypeError("Tensor: needs input_data, or both shape and init")
        return initializer(init, shape, np.float32 if dtype is None else dtype)


def _named_arrays(save_obj: Any) -> OrderedDict[str, np.ndarray]:
    """name -> values from a Cell, a dict, or a list of Parameters / {'name', 'data'} dicts."""
    if isinstance(save_obj, Cell):
        pairs = list(save_obj.parameters_and_names())
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
            raise ValueError(f"save_checkpoint: parameter name {name!r} appears twice")
        arrays[name] = np.asarray(value)
    return arrays


def save_checkpoint(save_obj: Any, ckpt_file_name: str | os.PathLike) -> None:
    """Write the parameters of a Cell (by dotted name), or a name -> array dict, or a list of
    named Parameters, to `ckpt_file_name` (an `.npz` archive, written atomically)."""
    arrays = _named_arrays(save_obj)
    path = os.fspath(ckpt_file_name)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def load_checkpoint(ckpt_file_name: str | os.PathLike, net: Cell | None = None,
                    strict_load: bool = False) -> dict[str, Parameter]:
    """name -> Parameter from a checkpoint; also loads them into `net` when given."""
    with np.load(os.fspath(ckpt_file_name), allow_pickle=False) as archive:
        params = {name: Parameter(archive[name], name=name) for name in archive.files}
    if net is not None:
        load_param_into_net(net, params, strict_load)
    return params


def load_param_into_net(net: Cell, parameter_dict: dict[str, Any],
                        strict_load: bool = False) -> tuple[list[str], list[str]]:
    """Copy values into `net`'s Parameters in place, matching dotted names; returns
    (net parameters not loaded, checkpoint entries not used). `strict_load` makes a missing
    parameter an error."""
    if not isinstance(net, Cell):
        raise TypeError(f"load_param_into_net: net must be a Cell, got {type(net).__name__}")
    own = net.parameters_dict()
    missing = [name for name in own if name not in parameter_dict]
    if strict_load and missing:
        raise ValueError(f"load_param_into_net: checkpoint lacks {', '.join(missing)}")
    for name, param in own.items():
        if name in parameter_dict:
            param.set_data(parameter_dict[name])
    unused = [name for name in parameter_dict if name not in own]
    return missing, unused
