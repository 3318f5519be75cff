"""The pipeline methods as MindSpore documents them: map, batch, shuffle, repeat, take, skip,
project, rename, get_dataset_size, the tuple/dict iterators (num_epochs, output_numpy), and
determinism under `dataset.config.set_seed`."""
from __future__ import annotations

import numpy as np
import pytest

import amber
import amber.dataset as ds


def numbers(n=10, **kw):
    return ds.NumpySlicesDataset({"x": np.arange(n), "y": np.arange(n) * 10}, shuffle=False,
                                 **kw)


def column(dataset, k=0):
    return [np.asarray(r[k]).tolist() for r in dataset.create_tuple_iterator(output_numpy=True)]


def test_map_one_column_in_place_with_a_list_of_operations():
    data = numbers(4).map([lambda x: x + 1, lambda x: x * 2], input_columns="x")
    assert data.get_col_names() == ["x", "y"]
    assert column(data) == [2, 4, 6, 8] and column(data, 1) == [0, 10, 20, 30]
    assert column(numbers(3).map(lambda v: -v)) == [0, -1, -2]  # default: the first column


def test_map_many_inputs_and_outputs():
    data = numbers(3).map(lambda x, y: (x + y, x - y, x * y), input_columns=["x", "y"],
                          output_columns=["s", "d", "p"])
    assert data.get_col_names() == ["s", "d", "p"]
    assert column(data, 2) == [0, 10, 40]
    data = numbers(3).map(lambda y: (y, y + 1), input_columns="y", output_columns=["a", "b"])
    assert data.get_col_names() == ["a", "b", "x"] and column(data, 1) == [1, 11, 21]
    data = numbers(3).map(lambda y, x: (y, x), input_columns=["y", "x"], output_columns=["p",
                                                                                       "q"])
    assert data.get_col_names() == ["q", "p"] and column(data, 1) == [0, 10, 20]
    with pytest.raises(ValueError, match="output_columns"):
        column(numbers(2).map(lambda x: (x, x), input_columns="x"))
    with pytest.raises(ValueError, match="no column named 'z'"):
        numbers(2).map(lambda z: z, input_columns="z")
    with pytest.raises(TypeError, match="callable"):
        numbers(2).map([1])


def test_batch_stacks_rows_and_counts_batches():
    data = numbers(10).batch(4)
    assert data.get_dataset_size() == 3
    xs = column(data)
    assert xs == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    dropped = numbers(10).batch(4, drop_remainder=True)
    assert dropped.get_dataset_size() == 2 and len(column(dropped)) == 2
    images = ds.GeneratorDataset(lambda: ((np.zeros((2, 3)), np.int32(k)) for k in range(5)),
                                 ["image", "label"]).batch(2)
    first = next(images.create_tuple_iterator(output_numpy=True))
    assert first[0].shape == (2, 2, 3) and first[1].dtype == np.int32
    ragged = ds.GeneratorDataset(lambda: (np.zeros(k + 1) for k in range(3)), ["v"]).batch(3)
    with pytest.raises(ValueError, match="different shapes"):
        column(ragged)
    with pytest.raises(NotImplementedError, match="per_batch_map"):
        numbers().batch(2, per_batch_map=lambda *a: a)


def test_shuffle_is_a_buffer_shuffle_with_a_new_order_each_pass():
    ds.config.set_seed(3)
    data = numbers(30).shuffle(30)
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=2)
    first, second = [[int(r[0]) for r in it] for _ in range(2)]
    assert sorted(first) == list(range(30)) and sorted(second) == list(range(30))
    assert first != list(range(30)) and first != second
    # a buffer of 2 emits one of the first two rows first, and row k never before k - 1 rows
    for seed in range(5):
        ds.config.set_seed(seed)
        order = column(numbers(8).shuffle(2))
        assert sorted(order) == list(range(8)) and order[0] in (0, 1)
        assert all(order.index(k) >= k - 1 for k in range(8))
    with pytest.raises(ValueError, match="buffer_size"):
        numbers().shuffle(1)


def test_repeat_take_skip_and_sizes():
    assert column(numbers(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert numbers(3).repeat(2).get_dataset_size() == 6
    assert column(numbers(10).skip(7)) == [7, 8, 9] and numbers(10).skip(12).get_dataset_size() == 0
    assert column(numbers(10).take(2)) == [0, 1] and numbers(3).take(5).get_dataset_size() == 3
    assert column(numbers(10).batch(3).take(2)) == [[0, 1, 2], [3, 4, 5]]
    endless = numbers(2).repeat()
    assert [int(r[0]) for _, r in zip(range(5), endless.create_tuple_iterator())] == [0, 1, 0, 1, 0]
    with pytest.raises(RuntimeError, match="without end"):
        endless.get_dataset_size()


def test_project_and_rename():
    data = numbers(2).project(["y", "x"])
    assert data.get_col_names() == ["y", "x"] and column(data) == [0, 10]
    data = numbers(2).rename(["x"], ["image"])
    assert data.get_col_names() == ["image", "y"]
    assert next(data.create_dict_iterator(output_numpy=True))["image"] == 0
    with pytest.raises(ValueError, match="no column named"):
        numbers().project("z")
    with pytest.raises(ValueError, match="repeat a column"):
        numbers().rename("x", "y")


def test_iterators_tensor_or_numpy_and_epoch_limit():
    data = numbers(3)
    row = next(data.create_tuple_iterator())
    assert isinstance(row, list) and type(row[0]) is amber.Tensor
    row = next(data.create_dict_iterator(output_numpy=True))
    assert set(row) == {"x", "y"} and type(row["x"]) is np.ndarray
    assert [list(map(int, r)) for r in data] == [[0, 0], [1, 10], [2, 20]]
    it = data.create_dict_iterator(num_epochs=1, output_numpy=True)
    assert [int(r["y"]) for r in it] == [0, 10, 20]
    with pytest.raises(RuntimeError, match="num_epochs"):
        next(it)
    columns = data.create_tuple_iterator(columns=["y"], output_numpy=True)
    assert [int(r[0]) for r in columns] == [0, 10, 20]


def test_set_seed_makes_pipelines_repeat_and_other_seeds_differ():
    def run(seed):
        ds.config.set_seed(seed)
        data = ds.NumpySlicesDataset(np.arange(160).reshape(40, 2, 2)).shuffle(8).map(
            ds.vision.RandomHorizontalFlip(0.5), input_columns="column_0")
        return column(data)

    assert run(11) == run(11)
    assert run(11) != run(12)
    assert ds.config.get_seed() == 12
    with pytest.raises(ValueError, match="seed"):
        ds.config.set_seed(-1)
