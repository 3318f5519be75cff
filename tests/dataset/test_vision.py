"""`dataset.vision` and `dataset.transforms` operations against what MindSpore documents (and,
for Resize, OpenCV's pixel-centre sampling worked out by hand), plus the module paths older
MindSpore scripts import."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import amber.dataset as ds
from amber.dataset import transforms, vision

RNG = np.random.default_rng(0)
IMAGE = RNG.integers(0, 256, (6, 8, 3)).astype(np.uint8)


def test_rescale_and_normalize():
    out = vision.Rescale(1 / 255, -0.5)(IMAGE)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, IMAGE / 255 - 0.5, rtol=1e-6, atol=1e-6)
    mean, std = [10.0, 20.0, 30.0], [2.0, 4.0, 8.0]
    out = vision.Normalize(mean, std)(IMAGE)
    np.testing.assert_allclose(out, (IMAGE - np.array(mean)) / np.array(std), rtol=1e-6)
    chw = IMAGE.transpose(2, 0, 1)
    out = vision.Normalize(mean, std, is_hwc=False)(chw)
    np.testing.assert_allclose(out, (chw - np.array(mean)[:, None, None])
                               / np.array(std)[:, None, None], rtol=1e-6)
    with pytest.raises(ValueError, match="channel"):
        vision.Normalize([1.0, 2.0], [1.0, 1.0])(IMAGE)


def test_hwc2chw_and_to_tensor():
    assert vision.HWC2CHW()(IMAGE).shape == (3, 6, 8)
    np.testing.assert_array_equal(vision.HWC2CHW()(IMAGE)[1], IMAGE[..., 1])
    assert vision.HWC2CHW()(IMAGE[..., 0]).shape == (6, 8)  # <H, W> stays
    out = vision.ToTensor()(IMAGE)
    assert out.shape == (3, 6, 8) and out.dtype == np.float32
    np.testing.assert_allclose(out, IMAGE.transpose(2, 0, 1) / 255, rtol=1e-6)
    assert vision.ToTensor()(IMAGE[..., 0]).shape == (1, 6, 8)


def test_resize_sizes_and_nearest_blocks():
    assert vision.Resize((3, 5))(IMAGE).shape == (3, 5, 3)
    assert vision.Resize(3)(IMAGE).shape == (3, 4, 3)  # the shorter side, aspect kept
    assert vision.Resize(12)(IMAGE.transpose(1, 0, 2)).shape == (16, 12, 3)
    digit = RNG.integers(0, 17, (8, 8, 1)).astype(np.uint8)
    out = vision.Resize((32, 32), vision.Inter.NEAREST)(digit)
    np.testing.assert_array_equal(out[..., 0], np.kron(digit[..., 0], np.ones((4, 4), np.uint8)))
    with pytest.raises(ValueError, match="NEAREST and Inter.LINEAR"):
        vision.Resize(4, vision.Inter.CUBIC)


def test_resize_bilinear_samples_at_pixel_centres():
    ramp = np.array([[0.0, 4.0, 8.0, 12.0]], np.float32)
    up = vision.Resize((1, 8))(ramp)[0]
    # output centre j maps to (j + 0.5) / 2 - 0.5 in the source, clamped at the borders
    np.testing.assert_allclose(up, [0, 1, 3, 5, 7, 9, 11, 12])
    down = vision.Resize((1, 2))(ramp)[0]
    np.testing.assert_allclose(down, [2, 10])  # the mean of each pair
    flat = np.full((5, 7, 3), 77, np.uint8)
    out = vision.Resize((9, 4))(flat)
    assert out.dtype == np.uint8 and (out == 77).all()
    rounded = vision.Resize((1, 8))(np.array([[0, 1]], np.uint8))
    assert rounded.dtype == np.uint8 and rounded.tolist() == [[0, 0, 0, 0, 1, 1, 1, 1]]


def test_random_crop_is_a_window_of_the_padded_image():
    ds.config.set_seed(0)
    crop = vision.RandomCrop((4, 5), padding=2)
    padded = np.pad(IMAGE, ((2, 2), (2, 2), (0, 0)))
    offsets = set()
    for _ in range(30):
        out = crop(IMAGE)
        assert out.shape == (4, 5, 3)
        found = [(t, l) for t in range(padded.shape[0] - 3) for l in range(padded.shape[1] - 4)
                 if np.array_equal(padded[t:t + 4, l:l + 5], out)]
        assert found
        offsets.add(found[0])
    assert len(offsets) > 5
    edge = vision.RandomCrop(10, padding=2, padding_mode=vision.Border.EDGE)(IMAGE)
    assert edge.shape == (10, 10, 3)
    grown = vision.RandomCrop((8, 9), pad_if_needed=True, fill_value=255)(IMAGE)
    assert grown.shape == (8, 9, 3) and (grown == 255).any()
    with pytest.raises(ValueError, match="smaller than the crop"):
        vision.RandomCrop(7)(IMAGE)


def test_random_horizontal_flip_probabilities():
    np.testing.assert_array_equal(vision.RandomHorizontalFlip(1.0)(IMAGE), IMAGE[:, ::-1])
    np.testing.assert_array_equal(vision.RandomHorizontalFlip(0.0)(IMAGE), IMAGE)
    ds.config.set_seed(1)
    flip = vision.RandomHorizontalFlip()
    flips = sum(np.array_equal(flip(IMAGE), IMAGE[:, ::-1]) for _ in range(400))
    assert 150 < flips < 250


def test_typecast_compose_onehot():
    assert transforms.TypeCast(np.float16)(np.array([1, 2])).dtype == np.float16
    import amber
    assert transforms.TypeCast(amber.int32)(np.array([1.7])).tolist() == [1]
    composed = transforms.Compose([vision.Rescale(2.0, 0.0), vision.HWC2CHW()])
    np.testing.assert_allclose(composed(IMAGE), IMAGE.transpose(2, 0, 1) * 2.0)
    hot = transforms.OneHot(4)(np.array(2, np.int32))
    assert hot.tolist() == [0, 0, 1, 0] and hot.dtype == np.int32
    np.testing.assert_allclose(transforms.OneHot(4, smoothing_rate=0.2)(np.array([1])),
                               [[0.05, 0.85, 0.05, 0.05]], rtol=1e-6)
    with pytest.raises(ValueError, match="outside"):
        transforms.OneHot(3)(np.array(3))
    data = ds.NumpySlicesDataset({"label": [0, 2]}, shuffle=False).map(transforms.OneHot(3))
    assert [r[0].tolist() for r in data.create_tuple_iterator(output_numpy=True)] == \
        [[1, 0, 0], [0, 0, 1]]


@pytest.mark.parametrize("path,name", [
    ("amber.dataset.vision.c_transforms", "Resize"),
    ("amber.dataset.vision.c_transforms", "HWC2CHW"),
    ("amber.dataset.vision.py_transforms", "ToTensor"),
    ("amber.dataset.transforms.c_transforms", "TypeCast"),
    ("amber.dataset.transforms.py_transforms", "Compose")])
def test_older_module_paths(path, name):
    module = importlib.import_module(path)
    assert getattr(module, name) is getattr(importlib.import_module(path.rsplit(".", 1)[0]), name)
