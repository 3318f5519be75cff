"""Dataset sources as MindSpore documents them: GeneratorDataset over random-access, iterable
and generator-function sources; NumpySlicesDataset's column naming; shuffle, num_samples and
sharding; MnistDataset and Cifar10Dataset reading the standard files (written here)."""
from __future__ import annotations

import numpy as np
import pytest

import amber.dataset as ds


def rows(dataset, **kw):
    return [tuple(np.asarray(v).tolist() for v in r)
            for r in dataset.create_tuple_iterator(output_numpy=True, **kw)]


class Squares:
    """A random-access source: (i, i*i)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.array(i), np.array(i * i)

    def __len__(self):
        return self.n


def test_random_access_source_in_order_and_shuffled_by_default():
    data = ds.GeneratorDataset(Squares(6), ["x", "y"], shuffle=False)
    assert data.get_col_names() == ["x", "y"] and data.get_dataset_size() == 6
    assert rows(data) == [(i, i * i) for i in range(6)]
    shuffled = rows(ds.GeneratorDataset(Squares(50), ["x", "y"]))
    assert sorted(shuffled) == [(i, i * i) for i in range(50)] and shuffled != sorted(shuffled)


def test_iterable_and_generator_function_sources_are_read_in_order_every_epoch():
    def gen():
        for i in range(4):
            yield np.array([i, i]), i

    class Iterable:
        def __iter__(self):
            return gen()

    for source in (gen, Iterable()):
        data = ds.GeneratorDataset(source, column_names=["pair", "i"])
        it = data.create_tuple_iterator(output_numpy=True, num_epochs=2)
        for _ in range(2):
            assert [int(r[1]) for r in it] == [0, 1, 2, 3]
        assert data.get_dataset_size() == 4


def test_one_column_sources_and_num_samples():
    data = ds.GeneratorDataset(lambda: iter(range(10)), ["v"], num_samples=3)
    assert rows(data) == [(0,), (1,), (2,)]
    data = ds.GeneratorDataset(Squares(10), ["x", "y"], num_samples=4, shuffle=False)
    assert data.get_dataset_size() == 4 and len(rows(data)) == 4


def test_source_errors_are_clear():
    with pytest.raises(ValueError, match="column_names"):
        ds.GeneratorDataset(Squares(3))
    with pytest.raises(ValueError, match="random-access"):
        ds.GeneratorDataset(lambda: iter(range(3)), ["v"], shuffle=True)
    with pytest.raises(ValueError, match="random-access"):
        ds.GeneratorDataset(lambda: iter(range(3)), ["v"], num_shards=2, shard_id=0)
    with pytest.raises(ValueError, match="gave 2 value"):
        rows(ds.GeneratorDataset(Squares(3), ["x"], shuffle=False))
    with pytest.raises(ValueError, match="go together"):
        ds.GeneratorDataset(Squares(3), ["x", "y"], num_shards=2)
    with pytest.raises(ValueError, match="shard_id"):
        ds.GeneratorDataset(Squares(3), ["x", "y"], num_shards=2, shard_id=2)
    once = ds.GeneratorDataset(iter([1, 2]), ["v"])
    assert rows(once) == [(1,), (2,)]
    with pytest.raises(RuntimeError, match="already read"):
        rows(once)


@pytest.mark.parametrize("n,shards", [(12, 3), (10, 4), (7, 2)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_shards_split_one_order_and_each_has_ceil_n_over_shards_rows(n, shards, shuffle):
    ds.config.set_seed(7)
    parts = []
    for shard in range(shards):
        ds.config.set_seed(7)  # NOTE: every shard's process builds its pipeline from one seed
        data = ds.NumpySlicesDataset(np.arange(n), shuffle=shuffle, num_shards=shards,
                                     shard_id=shard)
        assert data.get_dataset_size() == -(-n // shards)
        parts.append([r[0] for r in rows(data)])
    seen = [v for part in parts for v in part]
    assert sorted(set(seen)) == list(range(n))  # together they cover the data
    assert len(seen) - len(set(seen)) == -(-n // shards) * shards - n  # only the padding repeats


def test_numpy_slices_column_naming():
    assert ds.NumpySlicesDataset([1, 2, 3]).get_col_names() == ["column_0"]
    data = ds.NumpySlicesDataset((np.zeros((4, 2)), np.arange(4)), shuffle=False)
    assert data.get_col_names() == ["column_0", "column_1"]
    assert rows(data)[3] == ([0.0, 0.0], 3)
    data = ds.NumpySlicesDataset({"a": [1, 2], "b": [3, 4]}, shuffle=False)
    assert data.get_col_names() == ["a", "b"] and rows(data) == [(1, 3), (2, 4)]
    data = ds.NumpySlicesDataset([[1, 2], [3, 4]], column_names=["row"], shuffle=False)
    assert rows(data) == [([1, 2],), ([3, 4],)]
    with pytest.raises(ValueError, match="different lengths"):
        ds.NumpySlicesDataset((np.zeros(3), np.zeros(4)))


def _write_idx(path, magic, array):
    header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def test_mnist_reads_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    train_x = rng.integers(0, 256, (5, 28, 28))
    test_x = rng.integers(0, 256, (3, 28, 28))
    _write_idx(tmp_path / "train-images-idx3-ubyte", 2051, train_x)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", 2049, np.arange(5))
    _write_idx(tmp_path / "t10k-images-idx3-ubyte", 2051, test_x)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte", 2049, np.array([9, 8, 7]))
    data = ds.MnistDataset(str(tmp_path), usage="train", shuffle=False)
    assert data.get_col_names() == ["image", "label"] and data.get_dataset_size() == 5
    image, label = next(data.create_tuple_iterator(output_numpy=True))
    assert image.shape == (28, 28, 1) and image.dtype == np.uint8 and label.dtype == np.uint32
    np.testing.assert_array_equal(image[..., 0], train_x[0])
    everything = ds.MnistDataset(tmp_path, shuffle=False)
    assert [int(r[1]) for r in everything.create_tuple_iterator(output_numpy=True)] == \
        [0, 1, 2, 3, 4, 9, 8, 7]
    assert ds.MnistDataset(tmp_path, usage="test", num_samples=2).get_dataset_size() == 2


def test_mnist_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="is missing"):
        ds.MnistDataset(tmp_path)
    _write_idx(tmp_path / "train-images-idx3-ubyte", 2049, np.zeros((2, 28, 28)))
    _write_idx(tmp_path / "train-labels-idx1-ubyte", 2049, np.arange(2))
    with pytest.raises(ValueError, match="magic number 2051"):
        ds.MnistDataset(tmp_path, usage="train")
    _write_idx(tmp_path / "train-images-idx3-ubyte", 2051, np.zeros((2, 28, 28)))
    truncated = (tmp_path / "train-images-idx3-ubyte").read_bytes()[:-5]
    (tmp_path / "train-images-idx3-ubyte").write_bytes(truncated)
    with pytest.raises(ValueError, match="header says"):
        ds.MnistDataset(tmp_path, usage="train")
    with pytest.raises(ValueError, match="usage"):
        ds.MnistDataset(tmp_path, usage="val")
    with pytest.raises(ValueError, match="not a directory"):
        ds.MnistDataset(tmp_path / "nowhere")


def test_cifar10_reads_binary_records(tmp_path):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (6, 3, 32, 32)).astype(np.uint8)  # CHW, as the files hold
    labels = np.array([3, 1, 4, 1, 5, 9], np.uint8)
    records = np.concatenate([labels[:, None], images.reshape(6, -1)], axis=1)
    for k in range(1, 6):
        (tmp_path / f"data_batch_{k}.bin").write_bytes(records[:1].tobytes())
    (tmp_path / "test_batch.bin").write_bytes(records[1:].tobytes())
    data = ds.Cifar10Dataset(tmp_path, usage="test", shuffle=False)
    assert data.get_dataset_size() == 5
    got = list(data.create_tuple_iterator(output_numpy=True))
    np.testing.assert_array_equal(got[0][0], images[1].transpose(1, 2, 0))  # HWC
    assert got[0][0].shape == (32, 32, 3) and [int(r[1]) for r in got] == [1, 4, 1, 5, 9]
    assert ds.Cifar10Dataset(tmp_path, usage="train").get_dataset_size() == 5
    (tmp_path / "test_batch.bin").write_bytes(records[1:].tobytes()[:-1])
    with pytest.raises(ValueError, match="whole number"):
        ds.Cifar10Dataset(tmp_path, usage="test")
