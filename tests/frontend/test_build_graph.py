"""The graph `build_graph` hands on: inputs and their paths, one result, source locations on
every node, verification, guards and sources (the runtime's contract)."""
import numpy as np

from amber import nn, ops
from amber.frontend import BuildResult, Guard, build_graph, resolve_path
from amber.frontend.reference import agree
from amber.graph import AnyType, Tensor, TupleType
from amber.graph.verifier import verify

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def mixed_args(x, pair, n, flag=True, *, name="a", scale=None):
    a, b = pair
    y = x * n + a - b
    if flag:
        y = y * 2
    if scale is not None:
        y = y * scale
    return y, name


def test_argument_paths_and_compile_time_scalars():
    result = agree(mixed_args, X, (X, X + 1), 3, scale=np.float32(2))
    graph = result.graph
    assert (graph.param_paths, graph.input_paths) == ((), ("0", "1.0", "1.1", "scale"))
    types = [v.type for v in result.graph.inputs]
    assert types[:3] == [Tensor((2, 3), np.float32)] * 3
    assert types[3] == Tensor((), np.float32)
    assert [v.name for v in result.graph.inputs] == ["x", "pair_0", "pair_1", "scale"]


def test_one_result_even_for_tuples():
    result = agree(mixed_args, X, (X, X), 1)
    (out,) = result.graph.outputs
    assert isinstance(out.type, TupleType) and out.producer.name == "make_tuple"


def test_every_node_has_a_location():
    result = agree(mixed_args, X, (X, X), 2)
    for node in result.graph.walk():
        assert node.loc is not None and node.loc.file.endswith("test_build_graph.py")
        assert node.loc.text and node.loc.line > 0
    verify(result.graph)


class Normalize(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mean = np.array([1.0, 2.0, 3.0], np.float32)  # plain array: an input, not baked in
        self.w = nn.Parameter(np.ones((3, 3), np.float32))
        self.training_only = nn.Dropout(p=0.2)
        self.eps = 1e-3
        self.mode = "center"

    def construct(self, x):
        if self.mode == "center":
            x = x - self.mean
        x = self.training_only(x)
        return x @ self.w + self.eps


def test_params_lead_the_inputs_and_arrays_are_never_baked_in():
    net = Normalize()
    result = agree(net, X)
    graph = result.graph
    assert graph.param_paths == ("mean", "w") and graph.input_paths == ("0",)
    assert [v.name for v in result.graph.inputs] == ["mean", "w", "x"]
    assert not any(n.name == "constant" and isinstance(n.attrs["value"], np.ndarray)
                   for n in result.graph.walk())
    net.mean = np.array([5.0, 5.0, 5.0], np.float32)  # new data, same compiled graph
    agree(net, X)


def test_generator_parameter_is_any_typed():
    net = Normalize().set_train(True)
    result = build_graph(net, (X,))
    assert "training_only.generator" in result.graph.param_paths
    index = result.graph.param_paths.index("training_only.generator")
    assert result.graph.inputs[index].type == AnyType()


def test_guards_hold_until_an_attribute_changes():
    net = Normalize()
    result = build_graph(net, (X,))
    guards = {g.description: g for g in result.guards}
    assert isinstance(guards["self.mode"], Guard) and guards["self.mode"].expected == "center"
    assert guards["self.training_only.training"].expected is False
    assert all(g.holds(net) for g in result.guards)
    net.mode = "raw"
    assert not guards["self.mode"].holds(net)
    net.set_train(True)
    assert not guards["self.training_only.training"].holds(net)
    assert all(g.read(net) == g.read(net) for g in result.guards)  # reads have no side effects


def test_result_fields():
    result = build_graph(Normalize(), (X,))
    assert isinstance(result, BuildResult)
    assert isinstance(result.guards, tuple) and isinstance(result.sources, tuple)
    assert result.graph.name == "Normalize.construct"
    assert any("def construct(self, x):" in s for s in result.sources)


def test_resolve_path_follows_attributes_and_items():
    net = nn.SequentialCell(nn.Dense(2, 2), nn.ReLU())
    assert resolve_path(net, "0.weight") is net[0].weight
    assert resolve_path({"a": 1}, "") == {"a": 1}
    assert resolve_path(net, "cell_list.1") is net[1]


def counting(x, n):
    total = x * 0
    for i in range(n):
        total = total + x * i
    return total


def test_compile_time_does_not_grow_with_trip_count():
    small = build_graph(counting, (X, 3))
    large = build_graph(counting, (X, 3000))
    assert len(list(small.graph.walk())) == len(list(large.graph.walk()))
    agree(counting, X, 30)


def test_plain_function_and_cell_targets():
    def square(x):
        return ops.square(x)
    assert build_graph(square, (X,)).graph.name.endswith("square")
    assert build_graph(nn.ReLU(), (X,)).graph.name == "ReLU.construct"
