"""Checkpoint files: MindSpore's .ckpt (protobuf), safetensors and amber's older .npz round-trip
every dtype, strings and optimizer state; damaged, truncated and hostile files (flipped bytes,
wrong sizes, huge dims) are a clean ValueError naming the file, never a crash or a hang."""
from __future__ import annotations

import os
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest

import amber
from amber import nn
from amber.common import checkpoint_files
from amber.common.checkpoint_files import _checkpoint_message

pytest.importorskip("google.protobuf", reason="the .ckpt format needs protobuf (the "
                    "'checkpoint' extra)")

MUTATIONS = int(os.environ.get("AMBER_FUZZ_CHECKPOINTS", "60"))
"""Fuzzed variants per kind and format; CI runs 60 (a few seconds), a longer sweep sets more."""

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64]


def _values() -> OrderedDict:
    rng = np.random.default_rng(0)
    values: OrderedDict = OrderedDict()
    for k, dtype in enumerate(DTYPES):
        values[f"p{k}.{np.dtype(dtype).name}"] = (rng.standard_normal((2, 3)) * 50).astype(dtype)
    values["scalar"] = np.array(2.5, np.float32)
    values["empty"] = np.zeros((0, 4), np.float32)
    return values


@pytest.mark.parametrize("fmt", ["ckpt", "safetensors", "npz"])
def test_every_dtype_round_trips(tmp_path, fmt):
    values = _values()
    path = tmp_path / f"all.{fmt}"
    amber.save_checkpoint(values, path, format=fmt)
    loaded = amber.load_checkpoint(path)
    assert sorted(loaded) == sorted(values)
    for name, value in values.items():
        assert loaded[name].dtype == value.dtype and loaded[name].shape == value.shape, name
        np.testing.assert_array_equal(loaded[name], value)


def test_ckpt_is_the_default_and_the_suffix_is_appended(tmp_path):
    amber.save_checkpoint({"w": np.ones(3, np.float32)}, tmp_path / "plain",
                          append_dict={"epoch": 4, "note": "ünïcode"})
    path = tmp_path / "plain.ckpt"
    assert path.exists() and not (tmp_path / "plain").exists()
    assert checkpoint_files.file_format(str(path), path.read_bytes()) == "ckpt"
    loaded = amber.load_checkpoint(path)
    assert loaded["note"] == "ünïcode" and int(loaded["epoch"]) == 4
    with pytest.raises(TypeError, match="safetensors holds arrays only"):
        amber.save_checkpoint({"note": "x"}, tmp_path / "s.safetensors", format="safetensors")


def test_the_ckpt_bytes_are_mindsporess_message(tmp_path):
    """Parsed back with the message class: one Value per parameter, MindSpore's type names."""
    amber.save_checkpoint({"fc.weight": np.arange(6, dtype=np.float32).reshape(2, 3),
                           "global_step": np.array([7], np.int32)}, tmp_path / "m.ckpt")
    message = _checkpoint_message()()
    message.ParseFromString((tmp_path / "m.ckpt").read_bytes())
    got = [(v.tag, list(v.tensor.dims), v.tensor.tensor_type) for v in message.value]
    assert got == [("fc.weight", [2, 3], "Float32"), ("global_step", [1], "Int32")]
    assert message.value[0].tensor.tensor_content == np.arange(6, dtype="<f4").tobytes()


def test_a_large_parameter_is_split_into_slices_and_joined(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint_files, "_SLICE_BYTES", 64)
    weight = np.arange(100, dtype=np.float32).reshape(25, 4)
    amber.save_checkpoint({"big": weight, "after": np.ones(2, np.int8)}, tmp_path / "s.ckpt")
    message = _checkpoint_message()()
    message.ParseFromString((tmp_path / "s.ckpt").read_bytes())
    assert [v.tag for v in message.value].count("big") > 1
    loaded = amber.load_checkpoint(tmp_path / "s.ckpt")
    np.testing.assert_array_equal(loaded["big"], weight)


def test_train_state_resumes_from_each_format(tmp_path):
    x = np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32)
    y = np.random.default_rng(2).standard_normal((8, 2)).astype(np.float32)

    def make():
        amber.set_seed(5)
        net = nn.Dense(4, 2)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                   nn.Adam(net.trainable_params(), 0.05))
        return step.set_train()

    first = make()
    for _ in range(3):
        first(x, y)
    for fmt in ("ckpt", "safetensors"):
        amber.save_checkpoint(first, tmp_path / f"state.{fmt}", format=fmt)
    want = [float(first(x, y)) for _ in range(2)]
    for fmt in ("ckpt", "safetensors"):
        resumed = make()
        missing, unused = amber.load_param_into_net(
            resumed, amber.load_checkpoint(tmp_path / f"state.{fmt}"))
        assert missing == [] and unused == []
        assert [float(resumed(x, y)) for _ in range(2)] == want


def test_old_npz_checkpoints_still_load(tmp_path):
    """What amber wrote before: an .npz archive, even under a .ckpt name."""
    path = tmp_path / "old.ckpt"
    with open(path, "wb") as f:
        np.savez(f, **{"fc.weight": np.ones((2, 2), np.float32), "note": np.array("x")})
    loaded = amber.load_checkpoint(path)
    np.testing.assert_array_equal(loaded["fc.weight"], np.ones((2, 2)))
    assert loaded["note"] == "x"


def _hostile(tmp_path, name, dims, kind, content):
    message = _checkpoint_message()()
    value = message.value.add()
    value.tag = "w"
    value.tensor.dims.extend(dims)
    value.tensor.tensor_type = kind
    value.tensor.tensor_content = content
    path = tmp_path / name
    path.write_bytes(message.SerializeToString())
    return path


@pytest.mark.parametrize("dims, kind, content, message", [
    ([2 ** 20, 2 ** 20], "Float32", b"\0" * 8, "holds 8 bytes"),
    ([2 ** 40, 2 ** 40], "Float32", b"\0" * 8, "impossible shape"),
    ([-1, 2], "Float32", b"\0" * 8, "impossible shape"),
    ([0, 2 ** 62, 2 ** 62], "Float32", b"", "impossible shape"),
    ([3], "Float32", b"\0" * 8, "holds 8 bytes"),
    ([1] * 100, "Float32", b"\0" * 4, "impossible shape"),
    ([2], "Complex64", b"\0" * 16, "cannot load"),
    ([0], "str", b"abc", "whole number of characters"),
])
def test_hostile_files_are_clean_errors(tmp_path, dims, kind, content, message):
    path = _hostile(tmp_path, "hostile.ckpt", dims, kind, content)
    with pytest.raises(ValueError, match=message) as info:
        amber.load_checkpoint(path)
    assert "hostile.ckpt" in str(info.value)


def test_bfloat16_loads_as_float32_exactly(tmp_path):
    floats = np.array([1.0, -2.5, 3.140625], np.float32)
    bits = (floats.view(np.uint32) >> 16).astype("<u2").tobytes()
    loaded = amber.load_checkpoint(_hostile(tmp_path, "bf16.ckpt", [3], "BFloat16", bits))
    assert loaded["w"].dtype == np.float32
    np.testing.assert_array_equal(loaded["w"], floats)


@pytest.mark.parametrize("fmt", ["ckpt", "safetensors", "npz"])
def test_fuzzed_files_load_or_fail_cleanly(tmp_path, fmt):
    """Every truncation and a few hundred flipped, inserted or deleted bytes: either the file
    still loads (a flipped byte inside the numbers cannot be noticed) or a ValueError names it."""
    values = {"fc.weight": np.arange(12, dtype=np.float32).reshape(3, 4),
              "fc.bias": np.arange(3, dtype=np.float64), "global_step": np.array([3], np.int32)}
    good = tmp_path / f"good.{fmt}"
    amber.save_checkpoint(values, good, format=fmt)
    data = good.read_bytes()
    rng = np.random.default_rng(0)
    variants = [data[:n] for n in range(0, len(data), max(1, len(data) // MUTATIONS))]
    for _ in range(MUTATIONS):
        where = int(rng.integers(len(data)))
        flipped = bytearray(data)
        flipped[where] ^= 1 << int(rng.integers(8))
        variants += [bytes(flipped), data[:where] + data[where + 1:],
                     data[:where] + bytes([int(rng.integers(256))]) + data[where:]]
    bad = tmp_path / f"bad.{fmt}"
    for variant in variants:
        bad.write_bytes(variant)
        try:
            loaded = amber.load_checkpoint(bad)
        except ValueError as err:
            assert "bad." in str(err), err
        else:
            assert all(isinstance(v, np.ndarray | str) for v in loaded.values())


def test_a_missing_package_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint_files, "_checkpoint_class", None)
    monkeypatch.setitem(sys.modules, "google.protobuf", None)
    with pytest.raises(ImportError, match=r"amber-jit\[checkpoint\]"):
        amber.save_checkpoint({"w": np.ones(2, np.float32)}, tmp_path / "w.ckpt")
    assert not list(tmp_path.iterdir())
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=r"amber-jit\[checkpoint\]"):
        amber.save_checkpoint({"w": np.ones(2, np.float32)}, tmp_path / "w", format="safetensors")


def test_import_amber_imports_no_checkpoint_package():
    code = ("import sys, amber; bad = [m for m in ('google.protobuf', 'safetensors') "
            "if m in sys.modules]; print(bad)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert run.stdout.strip() == "[]", run.stderr
