"""Checkpoint file formats: MindSpore's `.ckpt` (its protobuf `Checkpoint` message), safetensors,
and the `.npz` archives amber wrote before. Each reader returns name -> array (or str) and
never runs code from the file; a damaged or hostile file is a `CheckpointFileError` naming it.

`protobuf` and `safetensors` are optional (the `checkpoint` extra), imported only here, when a
file of their format is read or written.
"""
from __future__ import annotations

import math
import os
from collections import OrderedDict
from typing import Any, Iterator

import numpy as np

__all__ = ["CheckpointFileError", "read_checkpoint", "write_checkpoint", "FORMATS"]

FORMATS = ("ckpt", "safetensors", "npz")
EXTRA_HINT = 'pip install "amber-jit[checkpoint]"'

# MindSpore's `tensor_type` names (str of its dtype) <-> NumPy dtypes. BFloat16, which NumPy
# lacks, is read as float32 (exactly: its bits are float32's upper half).
_TYPE_NAMES = {
    "Bool": np.bool_, "Int8": np.int8, "UInt8": np.uint8, "Int16": np.int16,
    "UInt16": np.uint16, "Int32": np.int32, "UInt32": np.uint32, "Int64": np.int64,
    "UInt64": np.uint64, "Float16": np.float16, "Float32": np.float32, "Float64": np.float64,
}
_NAME_OF_TYPE = {np.dtype(t): name for name, t in _TYPE_NAMES.items()}
_STRING = "str"
_BFLOAT16 = "BFloat16"
_SLICE_BYTES = 512 * 1024 * 1024
"""A larger parameter is written as several Values with the same tag, split along axis 0, as
MindSpore does (one protobuf message must stay under 2 GiB)."""
_CRC_MARK = b"crc_num"
"""MindSpore's `crc_check=True` appends b'crc_num' and a 10-byte big-endian CRC-32."""
_MAX_RANK = 64


class CheckpointFileError(ValueError):
    """A checkpoint file that cannot be read: damaged, truncated, or not a checkpoint."""


def _needs(package: str, module: str) -> Any:
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"checkpoints in this format need the {package!r} package: "
                          f"{EXTRA_HINT}") from None


# -- MindSpore's protobuf ---------------------------------------------------------------------

_checkpoint_class: Any = None


def _checkpoint_message() -> Any:
    """MindSpore's `Checkpoint` message class, built from its schema (checkpoint.proto, proto2)
    in a private descriptor pool: no generated code, no clash with a MindSpore installed
    beside amber."""
    global _checkpoint_class
    if _checkpoint_class is not None:
        return _checkpoint_class
    _needs("protobuf", "google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="amber_mindspore_checkpoint.proto",
                                               package="amber_ckpt", syntax="proto2")

    def add(message: Any, name: str, number: int, label: int, kind: int,
            type_name: str = "", oneof: int | None = None) -> None:
        f = message.field.add(name=name, number=number, label=label, type=kind)
        if type_name:
            f.type_name = type_name
        if oneof is not None:
            f.oneof_index = oneof

    tensor = proto.message_type.add(name="TensorProto")
    add(tensor, "dims", 1, field.LABEL_REPEATED, field.TYPE_INT64)
    add(tensor, "tensor_type", 2, field.LABEL_REQUIRED, field.TYPE_STRING)
    add(tensor, "tensor_content", 3, field.LABEL_REQUIRED, field.TYPE_BYTES)
    map_tensor = proto.message_type.add(name="MapTensorProto")
    add(map_tensor, "tensor", 1, field.LABEL_REPEATED, field.TYPE_MESSAGE,
        ".amber_ckpt.TensorProto")
    checkpoint = proto.message_type.add(name="Checkpoint")
    value = checkpoint.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    add(value, "tag", 1, field.LABEL_REQUIRED, field.TYPE_STRING)
    add(value, "tensor", 2, field.LABEL_OPTIONAL, field.TYPE_MESSAGE,
        ".amber_ckpt.TensorProto", oneof=0)
    add(value, "maptensor", 3, field.LABEL_OPTIONAL, field.TYPE_MESSAGE,
        ".amber_ckpt.MapTensorProto", oneof=0)
    add(checkpoint, "value", 1, field.LABEL_REPEATED, field.TYPE_MESSAGE,
        ".amber_ckpt.Checkpoint.Value")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    descriptor = pool.FindMessageTypeByName("amber_ckpt.Checkpoint")
    if hasattr(message_factory, "GetMessageClass"):
        _checkpoint_class = message_factory.GetMessageClass(descriptor)
    else:  # NOTE: protobuf < 4.22
        _checkpoint_class = message_factory.MessageFactory(pool).GetPrototype(descriptor)
    return _checkpoint_class


def _slices(array: np.ndarray) -> list[np.ndarray]:
    if array.nbytes <= _SLICE_BYTES or array.ndim == 0:
        return [array]
    return np.array_split(array, math.ceil(array.nbytes / _SLICE_BYTES))


def _write_ckpt(f: Any, arrays: OrderedDict[str, Any]) -> None:
    message = _checkpoint_message()
    for name, value in arrays.items():
        if isinstance(value, str):
            dims, kind, parts = [0], _STRING, [np.array(value, "<U").tobytes()]
        else:
            dims, kind = list(value.shape), _NAME_OF_TYPE[value.dtype]
            parts = [np.ascontiguousarray(s).astype(value.dtype.newbyteorder("<"), copy=False)
                     .tobytes() for s in _slices(value)]
        for part in parts:  # NOTE: one message per slice: the file is their concatenation
            checkpoint = message()
            entry = checkpoint.value.add()
            entry.tag = name
            entry.tensor.dims.extend(dims)
            entry.tensor.tensor_type = kind
            entry.tensor.tensor_content = part
            f.write(checkpoint.SerializeToString())


def _read_ckpt(path: str, data: bytes) -> OrderedDict[str, Any]:
    message = _checkpoint_message()
    from google.protobuf.message import DecodeError
    if data[-17:-10] == _CRC_MARK:
        data = data[:-17]
    checkpoint = message()
    try:
        checkpoint.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as err:
        raise CheckpointFileError(f"{path!r} is not a readable MindSpore checkpoint (.ckpt): "
                                  f"the protobuf data is damaged or truncated ({err})") from None
    if data and not len(checkpoint.value):
        raise CheckpointFileError(f"{path!r} is not a MindSpore checkpoint (.ckpt), a "
                                  f"safetensors file or an amber .npz: it holds no parameters")
    entries: OrderedDict[str, Any] = OrderedDict()
    for tag, group in _grouped(checkpoint.value):
        if not isinstance(tag, str) or not tag:
            raise CheckpointFileError(f"{path!r}: a parameter name is not valid text: {tag!r}")
        if tag in entries:
            raise CheckpointFileError(f"{path!r}: parameter {tag!r} appears twice")
        entries[tag] = _tensor(path, tag, group)
    return entries


def _grouped(values: Any) -> Iterator[tuple[str, list[Any]]]:
    """Consecutive Values with one tag: the slices of one parameter."""
    group: list[Any] = []
    for value in values:
        if group and value.tag != group[0].tag:
            yield group[0].tag, group
            group = []
        group.append(value)
    if group:
        yield group[0].tag, group


def _tensor(path: str, tag: str, group: list[Any]) -> Any:
    first = group[0]
    if not first.HasField("tensor"):
        raise CheckpointFileError(f"{path!r}: {tag!r} is a MindSpore MapParameter, which amber "
                                  f"cannot load")
    kind, dims = first.tensor.tensor_type, list(first.tensor.dims)
    for value in group[1:]:
        if value.tensor.tensor_type != kind or list(value.tensor.dims) != dims:
            raise CheckpointFileError(f"{path!r}: the slices of {tag!r} disagree on its type "
                                      f"or shape")
    content = b"".join(v.tensor.tensor_content for v in group)
    if kind == _STRING:
        if len(content) % 4:
            raise CheckpointFileError(f"{path!r}: string {tag!r} has {len(content)} bytes, "
                                      f"not a whole number of characters")
        return str(np.frombuffer(content, f"<U{len(content) // 4}")[0]) if content else ""
    if kind not in _TYPE_NAMES and kind != _BFLOAT16:
        raise CheckpointFileError(f"{path!r}: {tag!r} has tensor type {kind!r}, which amber "
                                  f"cannot load (it reads {', '.join(_TYPE_NAMES)}, BFloat16)")
    # NOTE: a zero-size shape with huge other axes still overflows NumPy's size computation
    if len(dims) > _MAX_RANK or any(d < 0 for d in dims) or \
            math.prod(max(d, 1) for d in dims) >= 2 ** 62:
        raise CheckpointFileError(f"{path!r}: {tag!r} has the impossible shape {dims}")
    dtype = np.dtype(np.uint16 if kind == _BFLOAT16 else _TYPE_NAMES[kind]).newbyteorder("<")
    expected = math.prod(dims) * dtype.itemsize  # NOTE: Python ints: huge dims cannot wrap
    if expected != len(content):
        raise CheckpointFileError(f"{path!r}: {tag!r} has shape {dims} of {kind} "
                                  f"({expected} bytes) but holds {len(content)} bytes")
    array = np.frombuffer(content, dtype).reshape(dims)
    if kind == _BFLOAT16:
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(dtype.newbyteorder("="))  # NOTE: a writable copy in native order


# -- safetensors and .npz ---------------------------------------------------------------------

def _write_safetensors(path: str, arrays: OrderedDict[str, Any]) -> None:
    numpy_io = _needs("safetensors", "safetensors.numpy")
    for name, value in arrays.items():
        if isinstance(value, str):
            raise TypeError(f"save_checkpoint: {name!r} is a string; safetensors holds arrays "
                            f"only (save strings in a .ckpt file)")
    # NOTE: np.array, not np.ascontiguousarray, which makes a 0-d array 1-d
    numpy_io.save_file({k: np.array(v, order="C") for k, v in sorted(arrays.items())}, path,
                       metadata={"format": "ms"})


def _read_safetensors(path: str, data: bytes) -> OrderedDict[str, Any]:
    numpy_io = _needs("safetensors", "safetensors.numpy")
    try:
        loaded = numpy_io.load(data)
    except Exception as err:  # NOTE: safetensors raises its own SafetensorError
        raise CheckpointFileError(f"{path!r} is not a readable safetensors file: "
                                  f"{err}") from None
    return OrderedDict((k, np.array(v)) for k, v in loaded.items())


# NOTE: zipfile and the .npy reader raise many kinds of exception on a damaged archive
# (BadZipFile, NotImplementedError for a bad compression method, zlib.error, EOFError,
# MemoryError for a huge claimed shape, ...): all of them mean "cannot read this file".
_DAMAGED_ZIP = Exception


def _read_npz(path: str) -> OrderedDict[str, Any]:
    try:
        archive = np.load(path, allow_pickle=False)
    except _DAMAGED_ZIP as err:
        raise CheckpointFileError(f"{path!r} is not a readable amber checkpoint (.npz): "
                                  f"{err}") from None
    if not hasattr(archive, "files"):
        raise CheckpointFileError(f"{path!r} holds one array, not a checkpoint")
    entries: OrderedDict[str, Any] = OrderedDict()
    with archive:
        for name in archive.files:
            try:
                value = archive[name]
            except _DAMAGED_ZIP as err:
                raise CheckpointFileError(f"load_checkpoint: entry {name!r} of {path!r} cannot "
                                          f"be read safely: {err}") from None
            entries[name] = str(value) if value.dtype.kind == "U" else value
    return entries


# -- the entry points -------------------------------------------------------------------------

def file_format(path: str, data: bytes) -> str:
    """Which format `data` (the file's bytes) is in, from its content: a zip is amber's .npz;
    8 bytes of header length then a JSON object is safetensors; anything else is read as
    MindSpore's protobuf."""
    if data[:4] == b"PK\x03\x04":
        return "npz"
    if len(data) >= 10 and data[8:9] == b"{":
        size = int.from_bytes(data[:8], "little")
        if 8 + size <= len(data) and data[8 + size - 1:8 + size] in (b"}", b" "):
            return "safetensors"
    return "ckpt"


def read_checkpoint(path: str) -> OrderedDict[str, Any]:
    """name -> array or str, in file order, from a file in any of `FORMATS`."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise CheckpointFileError(f"cannot read checkpoint {path!r}: {err}") from None
    kind = file_format(path, data)
    if kind == "npz":
        return _read_npz(path)
    if kind == "safetensors":
        return _read_safetensors(path, data)
    return _read_ckpt(path, data)


def write_checkpoint(path: str, arrays: OrderedDict[str, Any], fmt: str) -> None:
    """Write name -> array or str to `path` in format `fmt`, atomically (write, then rename)."""
    if fmt == "ckpt":
        _checkpoint_message()  # NOTE: a missing protobuf is reported before any file exists
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        if fmt == "safetensors":
            _write_safetensors(tmp, arrays)
        else:
            with open(tmp, "wb") as f:
                if fmt == "npz":
                    np.savez(f, **arrays)
                else:
                    _write_ckpt(f, arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
