"""amber against MindSpore itself (optional: needs `pip install mindspore`, CPU). The same Cells
are built in both frameworks, the weights copied by parameter name, and the outputs compared in
MindSpore's GRAPH_MODE and PYNATIVE_MODE, float32 to 1e-5 relative:

- the zoo-style model files of tests/models/amber_zoo, loaded a second time with `amber`
  replaced by `mindspore` in their import lines (nothing else changes);
- amber's samples (those whose construct MindSpore can compile);
- every layer amber maps, in eval mode and (BatchNorm) one training step;
- every op spelling amber maps, primitive and functional;
- control-flow programs (tensor conditions in if/while, loops carrying tensors).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="MindSpore is optional: pip install mindspore "
                                             "(CPU) to compare amber with it")


def _mindspore_runs() -> str | None:
    """Why MindSpore cannot run here, or None. MindSpore 2.10's native kernels are built
    against NumPy 1.x: under NumPy 2 some of them fail (integer division, resizing)."""
    try:
        ms.ops.Div()(ms.Tensor(np.array([7], np.int32)), ms.Tensor(np.array([2], np.int32)))
        ms.ops.ResizeBilinearV2()(ms.Tensor(np.ones((1, 1, 2, 2), np.float32)), (3, 3))
    except Exception as exc:  # noqa: BLE001 (any failure means: this install cannot compare)
        return (f"MindSpore {ms.__version__} fails here under NumPy {np.__version__} "
                f"({type(exc).__name__}); use numpy<2 with it")
    return None


_BROKEN = _mindspore_runs()
if _BROKEN:
    pytest.skip(_BROKEN, allow_module_level=True)

import amber  # noqa: E402
from amber.runtime.jit import plain_function  # noqa: E402
from amber_zoo import SPECS, build  # noqa: E402
from amber_zoo.control import PROGRAMS  # noqa: E402

HERE = Path(__file__).resolve().parent
ZOO = HERE / "amber_zoo"
SAMPLES = HERE.parents[1] / "samples"
MODES = {"graph": ms.GRAPH_MODE, "pynative": ms.PYNATIVE_MODE}
RTOL = ATOL = 1e-5


# -- the same source files, imported as MindSpore files ----------------------------------------

IMPORT_LINE = re.compile(r"^(\s*)(from|import)(\s+)amber\b", re.M)


def as_mindspore(source: str) -> str:
    """The file with every import of amber turned into the same import of mindspore."""
    return IMPORT_LINE.sub(r"\1\2\3mindspore", source)


class _MindSporeZoo(importlib.abc.MetaPathFinder, importlib.abc.SourceLoader):
    """Imports `ms_zoo.<name>` from amber_zoo/<name>.py with its import lines rewritten."""
    PACKAGE = "ms_zoo"

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname == self.PACKAGE:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        if fullname.startswith(self.PACKAGE + "."):
            file = ZOO / (fullname.split(".", 1)[1] + ".py")
            if file.is_file():
                return importlib.util.spec_from_file_location(fullname, file, loader=self)
        return None

    def get_filename(self, fullname: str) -> str:
        if fullname == self.PACKAGE:
            return str(ZOO / "__init__.py")
        return str(ZOO / (fullname.split(".", 1)[1] + ".py"))

    def get_data(self, path: str) -> bytes:
        if path.endswith("__init__.py"):
            return b""
        return as_mindspore(Path(path).read_text()).encode()

    def is_package(self, fullname: str) -> bool:
        return fullname == self.PACKAGE


if not any(isinstance(f, _MindSporeZoo) for f in sys.meta_path):
    sys.meta_path.insert(0, _MindSporeZoo())


def mindspore_module(name: str) -> ModuleType:
    return importlib.import_module(f"ms_zoo.{name}")


def mindspore_sample(name: str) -> ModuleType:
    module = ModuleType(f"ms_sample_{name}")
    module.__file__ = str(SAMPLES / f"{name}.py")
    sys.modules[module.__name__] = module  # MindSpore's graph mode looks classes' modules up
    exec(compile(as_mindspore((SAMPLES / f"{name}.py").read_text()), module.__file__, "exec"),
         module.__dict__)
    return module


def amber_sample(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"amber_sample_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- comparing ----------------------------------------------------------------------------------

def flat(value: Any) -> list[Any]:
    if isinstance(value, tuple | list):
        return [v for item in value for v in flat(item)]
    return [value]


def to_numpy(value: Any) -> Any:
    if isinstance(value, ms.Tensor):
        return value.asnumpy()
    return value


def assert_agree(amber_out: Any, ms_out: Any, where: str = "output") -> None:
    got, want = flat(amber_out), [to_numpy(v) for v in flat(ms_out)]
    assert len(got) == len(want), (where, len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, np.ndarray | np.generic):
            assert g == w, (where, i, g, w)
            continue
        g = np.asarray(g)
        assert g.shape == w.shape, (where, i, g.shape, w.shape)
        assert g.dtype == w.dtype, (where, i, g.dtype, w.dtype)
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w, err_msg=f"{where}[{i}]")
        else:
            scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL * scale,
                                       err_msg=f"{where}[{i}]")


def copy_weights(source: Any, target: Any) -> None:
    """Every parameter of the MindSpore cell `target` set from amber's `source`, by attribute
    path (a Parameter's own name may differ: MindSpore keeps an explicit `name=` on a root
    cell's parameters, amber names each by its attribute)."""
    amber_params = dict(source.parameters_and_names())
    ms_params = dict(target.parameters_and_names())
    assert set(amber_params) == set(ms_params), (
        sorted(set(amber_params) ^ set(ms_params))[:6])
    for name, param in ms_params.items():
        value = np.asarray(amber_params[name])
        assert tuple(param.shape) == value.shape, (name, param.shape, value.shape)
        param.set_data(ms.Tensor(value))


@pytest.fixture(autouse=True, scope="module")
def _mindspore_writes_elsewhere(tmp_path_factory):
    """MindSpore writes compile artifacts (`rank_0/`) into the working directory."""
    import os
    before = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("mindspore"))
    yield
    os.chdir(before)


@pytest.fixture(params=list(MODES))
def mode(request):
    ms.set_context(mode=MODES[request.param], device_target="CPU")
    yield request.param
    ms.set_context(mode=ms.PYNATIVE_MODE)


def to_ms(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(ms.Tensor(x) if isinstance(x, np.ndarray) else x for x in inputs)


def compare_cells(amber_net: Any, ms_net: Any, inputs: tuple[Any, ...], train: bool = False,
                  keep_modes: bool = False) -> None:
    """Outputs of one call (and, with `train`, the parameters it updated); `keep_modes` leaves
    the cells' training flags as the caller set them."""
    if not keep_modes:
        amber_net.set_train(train)
        ms_net.set_train(train)
    copy_weights(amber_net, ms_net)
    got = amber.jit(amber_net)(*[np.copy(x) if isinstance(x, np.ndarray) else x
                                 for x in inputs])
    want = ms_net(*to_ms(inputs))
    assert_agree(got, want)
    if train:  # what the step wrote: BatchNorm's moving statistics
        ms_params = {name: p.asnumpy() for name, p in ms_net.parameters_and_names()}
        for name, p in amber_net.parameters_and_names():
            assert_agree(np.asarray(p), ms_params[name], f"parameter {name}")


# -- the zoo-style models, the samples, the control-flow programs ------------------------------

@pytest.mark.parametrize("name", list(SPECS))
def test_zoo_models_agree(name, mode):
    amber_net, inputs = build(name)
    ms_net, _ = build(name, {SPECS[name][0]: mindspore_module(SPECS[name][0])})
    compare_cells(amber_net, ms_net, inputs)


def dropout_off(net: Any) -> None:
    """Every Dropout cell back in eval mode (the two frameworks draw different masks), the rest
    of the network still training: batch statistics, moving averages, training-only heads."""
    for _, cell in net.cells_and_names():
        if type(cell).__name__ == "Dropout":
            cell.set_train(False)


@pytest.mark.parametrize("name", list(SPECS))
def test_zoo_models_agree_in_training(name, mode):
    amber_net, inputs = build(name)
    ms_net, _ = build(name, {SPECS[name][0]: mindspore_module(SPECS[name][0])})
    amber_net.set_train(True)
    ms_net.set_train(True)
    dropout_off(amber_net)
    dropout_off(ms_net)
    compare_cells(amber_net, ms_net, inputs, train=True, keep_modes=True)


@pytest.mark.parametrize("name, cls", [("lenet", "LeNet5"), ("network", "Network"),
                                       ("resnet_block", "ResidualStage")])
def test_samples_agree(name, cls, mode):
    amber_mod, ms_mod = amber_sample(name), mindspore_sample(name)
    amber.set_seed(0)
    compare_cells(getattr(amber_mod, cls)(), getattr(ms_mod, cls)(), amber_mod.example_inputs())


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_control_flow_programs_agree(name, mode):
    amber.set_seed(0)
    cls, inputs = PROGRAMS[name]
    ms_cls = getattr(mindspore_module("control"), cls.__name__)
    compare_cells(cls(), ms_cls(), inputs())


# -- every layer --------------------------------------------------------------------------------

def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


LAYERS: dict[str, tuple[Callable[[Any], Any], Callable[[], tuple[Any, ...]]]] = {
    "Dense": (lambda nn: nn.Dense(5, 3), lambda: (rand(2, 5),)),
    "Dense-relu": (lambda nn: nn.Dense(5, 3, activation="relu"), lambda: (rand(2, 4, 5),)),
    "Conv2d-same-s2": (lambda nn: nn.Conv2d(3, 4, 3, stride=2, pad_mode="same", has_bias=True),
                       lambda: (rand(2, 3, 7, 6),)),
    "Conv2d-pad-dilated-grouped": (lambda nn: nn.Conv2d(4, 6, 3, pad_mode="pad",
                                                        padding=(1, 0, 2, 1), dilation=2,
                                                        group=2),
                                   lambda: (rand(1, 4, 9, 8),)),
    "Conv2d-valid-rect": (lambda nn: nn.Conv2d(3, 4, (3, 2), stride=(2, 1), pad_mode="valid"),
                          lambda: (rand(2, 3, 8, 5),)),
    "Conv2dTranspose-pad": (lambda nn: nn.Conv2dTranspose(4, 3, 4, stride=2, pad_mode="pad",
                                                          padding=1, has_bias=True),
                            lambda: (rand(2, 4, 5, 6),)),
    "Conv2dTranspose-same": (lambda nn: nn.Conv2dTranspose(4, 6, 3, stride=2, group=2),
                             lambda: (rand(1, 4, 4, 5),)),
    "Conv2dTranspose-valid": (lambda nn: nn.Conv2dTranspose(2, 3, (3, 2), stride=(2, 3),
                                                            pad_mode="valid"),
                              lambda: (rand(1, 2, 4, 3),)),
    "Conv2dTranspose-output-padding": (lambda nn: nn.Conv2dTranspose(
        2, 3, 3, stride=2, pad_mode="pad", padding=1, output_padding=1, has_bias=True),
        lambda: (rand(1, 2, 4, 4),)),
    "MaxPool2d-valid": (lambda nn: nn.MaxPool2d(3, 2), lambda: (rand(2, 3, 9, 8),)),
    "MaxPool2d-same": (lambda nn: nn.MaxPool2d(3, 2, pad_mode="same"), lambda: (rand(1, 2, 7, 8),)),
    "AvgPool2d-valid": (lambda nn: nn.AvgPool2d(2, 2), lambda: (rand(2, 3, 8, 6),)),
    "AvgPool2d-same": (lambda nn: nn.AvgPool2d(3, 2, pad_mode="same"), lambda: (rand(1, 2, 7, 8),)),
    "BatchNorm2d": (lambda nn: nn.BatchNorm2d(3, eps=1e-4, momentum=0.8),
                    lambda: (rand(4, 3, 5, 5),)),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(6), lambda: (rand(8, 6),)),
    "LayerNorm": (lambda nn: nn.LayerNorm((6,)), lambda: (rand(2, 3, 6),)),
    "LayerNorm-axis1": (lambda nn: nn.LayerNorm((3, 6), begin_norm_axis=1, begin_params_axis=1,
                                                epsilon=1e-5),
                        lambda: (rand(2, 3, 6),)),
    "Embedding": (lambda nn: nn.Embedding(10, 4),
                  lambda: (np.array([[1, 9, 0], [3, 3, 7]], np.int32),)),
    "Flatten": (lambda nn: nn.Flatten(), lambda: (rand(2, 3, 4),)),
    "Pad-constant": (lambda nn: nn.Pad(((0, 0), (1, 2))), lambda: (rand(2, 3),)),
    "Pad-reflect": (lambda nn: nn.Pad(((1, 1), (2, 1)), mode="REFLECT"), lambda: (rand(3, 4),)),
    "Pad-symmetric": (lambda nn: nn.Pad(((1, 0), (0, 2)), mode="SYMMETRIC"), lambda: (rand(3, 4),)),
    "ReLU": (lambda nn: nn.ReLU(), lambda: (rand(3, 4),)),
    "ReLU6": (lambda nn: nn.ReLU6(), lambda: (rand(3, 4) * 5,)),
    "LeakyReLU": (lambda nn: nn.LeakyReLU(0.3), lambda: (rand(3, 4),)),
    "Sigmoid": (lambda nn: nn.Sigmoid(), lambda: (rand(3, 4),)),
    "Tanh": (lambda nn: nn.Tanh(), lambda: (rand(3, 4),)),
    "GELU": (lambda nn: nn.GELU(), lambda: (rand(3, 4),)),
    "Softmax": (lambda nn: nn.Softmax(axis=0), lambda: (rand(3, 4),)),
    "LogSoftmax": (lambda nn: nn.LogSoftmax(), lambda: (rand(3, 4),)),
    "Dropout-eval": (lambda nn: nn.Dropout(p=0.3), lambda: (rand(3, 4),)),
    "SequentialCell": (lambda nn: nn.SequentialCell([nn.Dense(4, 5), nn.ReLU(), nn.Dense(5, 2)]),
                       lambda: (rand(3, 4),)),
    "LSTM-bidirectional": (lambda nn: nn.LSTM(4, 3, num_layers=2, bidirectional=True),
                           lambda: (rand(5, 2, 4),)),
    "LSTM-batch-first": (lambda nn: nn.LSTM(4, 3, batch_first=True), lambda: (rand(2, 5, 4),)),
    "RNN": (lambda nn: nn.RNN(4, 3), lambda: (rand(5, 2, 4),)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_layers_agree(name, mode):
    make, inputs = LAYERS[name]
    amber.set_seed(0)
    compare_cells(make(amber.nn), make(ms.nn), inputs())


@pytest.mark.parametrize("name", ["BatchNorm2d", "BatchNorm1d"])
def test_batchnorm_training_step_agrees(name, mode):
    make, inputs = LAYERS[name]
    amber.set_seed(0)
    compare_cells(make(amber.nn), make(ms.nn), inputs(), train=True)


# -- every op spelling --------------------------------------------------------------------------

class Dtype:
    """A dtype argument, by name: `amber.<name>` for amber, `mindspore.<name>` for MindSpore."""

    def __init__(self, name: str) -> None:
        self.name = name


def amber_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(getattr(amber, a.name) if isinstance(a, Dtype) else a for a in args)


A = rand(3, 4)
B = rand(3, 4, seed=1)
POS = np.abs(A) + 0.5
I = np.array([[3, -1, 2, 0], [5, 4, -4, 1]], np.int32)
IMG = rand(2, 3, 4, 5)

OPS: dict[str, tuple[Callable[[Any], Any], tuple[Any, ...]]] = {
    # elementwise
    **{p: (lambda o, p=p: getattr(o, p)(), (A, B)) for p in
       ("Add", "Sub", "Mul", "Div", "RealDiv", "Maximum", "Minimum", "Equal", "NotEqual",
        "Less", "LessEqual", "Greater", "GreaterEqual", "FloorDiv", "FloorMod")},
    **{p: (lambda o, p=p: getattr(o, p)(), (A,)) for p in
       ("Neg", "Abs", "Exp", "Square", "Tanh", "Sigmoid", "ReLU", "ReLU6", "Floor", "Ceil",
        "Sign", "Sin", "Cos", "Erf", "Softplus", "Round", "ZerosLike", "OnesLike")},
    **{p: (lambda o, p=p: getattr(o, p)(), (POS,)) for p in ("Log", "Sqrt", "Rsqrt",
                                                               "Reciprocal")},
    "Pow": (lambda o: o.Pow(), (POS, 1.5)),
    "Select": (lambda o: o.Select(), (A > 0, A, B)),
    "FloorDiv-int": (lambda o: o.FloorDiv(), (I, np.full_like(I, 3))),
    "FloorMod-int": (lambda o: o.FloorMod(), (I, np.full_like(I, 3))),
    "Div-int": (lambda o: o.Div(), (I, np.full_like(I, 3))),
    "RealDiv-int": (lambda o: o.RealDiv(), (I, np.full_like(I, 3))),
    "relu6": (lambda o: o.relu6, (A * 5,)),
    "leaky_relu": (lambda o: o.leaky_relu, (A, 0.1)),
    "softplus": (lambda o: o.softplus, (A * 30,)),
    "erf": (lambda o: o.erf, (A * 2,)),
    "gelu": (lambda o: o.GeLU(), (A,)),
    "clip_by_value": (lambda o: o.clip_by_value, (A, -0.5, 0.5)),
    # reductions, sorting, shapes
    **{p: (lambda o, p=p: getattr(o, p)(keep_dims=True), (A, (1,))) for p in
       ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")},
    "ReduceMean-all": (lambda o: o.ReduceMean(), (A,)),
    "Argmax": (lambda o: o.Argmax(axis=1), (A,)),
    "argmax": (lambda o: o.argmax, (A, 0)),
    "TopK": (lambda o: o.TopK(sorted=True), (A, 2)),
    "topk-smallest": (lambda o: o.topk, (A, 3, None, False)),
    "Reshape": (lambda o: o.Reshape(), (A, (2, -1))),
    "Transpose": (lambda o: o.Transpose(), (IMG, (0, 2, 3, 1))),
    "ExpandDims": (lambda o: o.ExpandDims(), (A, 1)),
    "Squeeze": (lambda o: o.Squeeze(axis=0), (A[None],)),
    "Flatten": (lambda o: o.Flatten(), (IMG,)),
    "Tile": (lambda o: o.Tile(), (A, (2, 1))),
    "Concat": (lambda o: o.Concat(axis=1), ((A, B),)),
    "Stack": (lambda o: o.Stack(axis=1), ((A, B),)),
    "Cast": (lambda o: o.Cast(), (A, Dtype("float16"))),
    "Cast-int": (lambda o: o.Cast(), (A * 3, Dtype("int32"))),
    "Shape": (lambda o: o.Shape(), (IMG,)),
    "shape": (lambda o: o.shape, (IMG,)),
    "Gather": (lambda o: o.Gather(), (A, np.array([2, 0], np.int32), 1)),
    "GatherNd": (lambda o: o.GatherNd(), (A, np.array([[0, 1], [2, 3]], np.int32))),
    "Slice": (lambda o: o.Slice(), (IMG, (0, 1, 1, 0), (2, -1, 2, 3))),
    "StridedSlice": (lambda o: o.StridedSlice(begin_mask=1, end_mask=2, shrink_axis_mask=4),
                     (IMG, (1, 1, 2, 0), (2, 3, 3, 5), (1, 2, 1, 2))),
    "strided_slice-negative": (lambda o: o.strided_slice,
                               (IMG, (0, 2, 3, 4), (2, 0, 0, 0), (1, -1, -2, -1))),
    "OneHot": (lambda o: o.OneHot(), (np.array([0, 2, 1], np.int32), 3,
                                      np.array(1.0, np.float32), np.array(0.0, np.float32))),
    "one_hot-python-values": (lambda o: o.one_hot, (np.array([0, 2, 1], np.int32), 4, 1.0, 0.0)),
    "L2Normalize": (lambda o: o.L2Normalize(axis=1), (A,)),
    "ResizeBilinearV2": (lambda o: o.ResizeBilinearV2(), (IMG, (7, 3))),
    "ResizeBilinearV2-corners": (lambda o: o.ResizeBilinearV2(align_corners=True), (IMG, (6, 8))),
    "ResizeBilinearV2-half-pixel": (lambda o: o.ResizeBilinearV2(half_pixel_centers=True),
                                    (IMG, (5, 9))),
    # nn
    "MatMul": (lambda o: o.MatMul(transpose_b=True), (A, B)),
    "BatchMatMul": (lambda o: o.BatchMatMul(transpose_a=True), (rand(2, 4, 3), rand(2, 4, 5))),
    "Softmax": (lambda o: o.Softmax(axis=0), (A,)),
    "LogSoftmax": (lambda o: o.LogSoftmax(), (A,)),
    "Conv2D": (lambda o: o.Conv2D(4, 3, pad_mode="same", stride=2), (IMG, rand(4, 3, 3, 3))),
    "Conv2DTranspose": (lambda o: o.Conv2DTranspose(3, 3, pad_mode="same", stride=2),
                        (rand(2, 3, 2, 3), rand(3, 4, 3, 3), (2, 4, 4, 6))),
    "MaxPool": (lambda o: o.MaxPool(kernel_size=2, strides=2), (IMG,)),
    "AvgPool": (lambda o: o.AvgPool(kernel_size=3, strides=1, pad_mode="same"), (IMG,)),
    # creation and composite
    "Zeros": (lambda o: o.Zeros(), ((2, 3), Dtype("float32"))),
    "Ones": (lambda o: o.Ones(), ((2, 3), Dtype("int32"))),
    "scalar_to_tensor": (lambda o: o.scalar_to_tensor, (-1.5,)),
    "tuple_to_array": (lambda o: o.tuple_to_array, ((1.0, 2.5),)),
    "tuple_to_array-int": (lambda o: o.tuple_to_array, ((1, 2),)),
}

J = np.array([[1, 2, 3, 0], [2, 1, 0, 3]], np.int32)
M = A > 0.2
NAN = np.where(M, A, np.nan).astype(np.float32)
W = rand(4, 3, 3, 3, seed=2)
KW_OPS: dict[str, tuple[Callable[[Any], Any], tuple[Any, ...], dict[str, Any]]] = {
    # the primitives not above: bitwise, logical, tests, shapes, creation, old spellings
    **{p: (lambda o, p=p: getattr(o, p)(), (I, J), {}) for p in
       ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift")},
    **{p: (lambda o, p=p: getattr(o, p)(), (M, B > 0), {}) for p in
       ("LogicalAnd", "LogicalOr", "LogicalXor")},
    "LogicalNot": (lambda o: o.LogicalNot(), (M,), {}),
    "Invert": (lambda o: o.Invert(), (I.astype(np.int16),), {}),
    "IsNan": (lambda o: o.IsNan(), (NAN,), {}),
    "IsFinite": (lambda o: o.IsFinite(), (NAN,), {}),
    "Argmin": (lambda o: o.Argmin(axis=0), (A,), {}),
    "ReduceAll": (lambda o: o.ReduceAll(keep_dims=True), (M, 1), {}),
    "ReduceAny": (lambda o: o.ReduceAny(), (M, 0), {}),
    "BroadcastTo": (lambda o: o.BroadcastTo((2, 3, 4)), (A,), {}),
    "Fill": (lambda o: o.Fill(), (Dtype("float32"), (2, 3), 1.5), {}),
    "Pad": (lambda o: o.Pad(((1, 0), (0, 2))), (A,), {}),
    "Rank": (lambda o: o.Rank(), (IMG,), {}),
    "Size": (lambda o: o.Size(), (IMG,), {}),
    "ReverseV2": (lambda o: o.ReverseV2(axis=(1, 3)), (IMG,), {}),
    "Split": (lambda o: o.Split(axis=1, output_num=2), (A,), {}),
    "StopGradient": (lambda o: o.StopGradient(), (A,), {}),
    "Conv2DBackpropInput": (lambda o: o.Conv2DBackpropInput(4, 3, pad_mode="same"),
                            (rand(2, 4, 4, 5), W, (2, 3, 4, 5)), {}),
    # functional spellings, with MindSpore's keyword names
    "sum": (lambda o: o.sum, (A,), {"dim": 1, "keepdim": True}),
    "mean": (lambda o: o.mean, (A,), {"axis": 0, "keep_dims": True}),
    "prod": (lambda o: o.prod, (A,), {"axis": 1}),
    "amax": (lambda o: o.amax, (A,), {"axis": 1, "keepdims": True}),
    "amin": (lambda o: o.amin, (A,), {"axis": 0}),
    "all": (lambda o: o.all, (M,), {"axis": 1}),
    "any": (lambda o: o.any, (M,), {"axis": 0, "keep_dims": True}),
    **{f: (lambda o, f=f: getattr(o, f), (A, 1), {}) for f in ("reduce_max", "reduce_min")},
    "reduce_sum": (lambda o: o.ReduceSum(), (A,), {}),
    "argmin": (lambda o: o.argmin, (A,), {"axis": 1, "keepdims": True}),
    "argmin-all": (lambda o: o.argmin, (A,), {}),
    "matmul": (lambda o: o.matmul, (A, B.T), {}),
    "bmm": (lambda o: o.bmm, (rand(2, 3, 4), rand(2, 4, 5)), {}),
    "dense": (lambda o: o.dense, (A, rand(5, 4), rand(5)), {}),
    "concat": (lambda o: o.concat, ((A, B),), {"axis": 1}),
    "cat": (lambda o: o.cat, ((A, B),), {}),
    "stack": (lambda o: o.stack, ((A, B),), {"axis": -1}),
    "split": (lambda o: o.split, (A,), {"split_size_or_sections": [1, 3], "axis": 1}),
    "reshape": (lambda o: o.reshape, (A, (4, 3)), {}),
    "transpose": (lambda o: o.transpose, (IMG, (3, 1, 0, 2)), {}),
    "permute": (lambda o: o.permute, (IMG, (0, 3, 1, 2)), {}),
    "expand_dims": (lambda o: o.expand_dims, (A, -1), {}),
    "unsqueeze": (lambda o: o.unsqueeze, (A,), {"dim": 0}),
    "squeeze": (lambda o: o.squeeze, (A[:, None],), {"axis": 1}),
    "flatten": (lambda o: o.flatten, (IMG,), {}),
    "flip": (lambda o: o.flip, (IMG, (0, 2)), {}),
    "tile": (lambda o: o.tile, (A, (1, 2)), {}),
    "broadcast_to": (lambda o: o.broadcast_to, (A, (2, 3, 4)), {}),
    "repeat_elements": (lambda o: o.repeat_elements, (A,), {"rep": 2, "axis": 1}),
    "repeat_interleave": (lambda o: o.repeat_interleave, (A, 3, 0), {}),
    "gather": (lambda o: o.gather, (A, np.array([3, 0, 1], np.int32), 1), {}),
    "gather_nd": (lambda o: o.gather_nd, (A, np.array([[2, 1], [0, 0]], np.int32)), {}),
    "slice": (lambda o: o.slice, (IMG, (1, 0, 1, 2), (1, 3, 2, 3)), {}),
    "cast": (lambda o: o.cast, (A * 4, Dtype("int32")), {}),
    "where": (lambda o: o.where, (M, A, B), {}),
    "select": (lambda o: o.select, (M, A, B), {}),
    "clamp": (lambda o: o.clamp, (A, -0.3, 0.4), {}),
    "clip": (lambda o: o.clip, (A,), {"min": -0.2}),
    "pow": (lambda o: o.pow, (POS, B), {}),
    "remainder": (lambda o: o.remainder, (I, 3), {}),
    "floor_mod": (lambda o: o.floor_mod, (A, POS), {}),
    "floor_div": (lambda o: o.floor_div, (I, -3), {}),
    "div": (lambda o: o.div, (A, POS), {}),
    "div-int": (lambda o: o.div, (I, J + 1), {}),
    "round-halves": (lambda o: o.round, (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5],
                                                 np.float32),), {}),
    "Round-halves": (lambda o: o.Round(), (np.array([-2.5, -0.5, 0.5, 3.5], np.float32),), {}),
    **{f: (lambda o, f=f: getattr(o, f), (A, B), {}) for f in
       ("add", "sub", "mul", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "subtract",
        "multiply")},
    **{f: (lambda o, f=f: getattr(o, f), (A,), {}) for f in
       ("abs", "absolute", "neg", "negative", "exp", "sin", "cos", "tanh", "sigmoid", "relu",
        "square", "sign", "floor", "ceil", "isnan", "isfinite", "zeros_like", "ones_like")},
    **{f: (lambda o, f=f: getattr(o, f), (POS,), {}) for f in ("log", "sqrt", "rsqrt",
                                                               "reciprocal")},
    **{f: (lambda o, f=f: getattr(o, f), (I, J), {}) for f in
       ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "bitwise_not": (lambda o: o.invert, (I.astype(np.int16),), {}),
    **{f: (lambda o, f=f: getattr(o, f), (M, B > 0), {}) for f in
       ("logical_and", "logical_or", "logical_xor")},
    "logical_not": (lambda o: o.logical_not, (M,), {}),
    "softmax": (lambda o: o.softmax, (A,), {"axis": 0}),
    "log_softmax": (lambda o: o.log_softmax, (A,), {"axis": 1}),
    "gelu": (lambda o: o.gelu, (A,), {"approximate": "none"}),
    "gelu-tanh": (lambda o: o.gelu, (A,), {"approximate": "tanh"}),
    "shape": (lambda o: o.shape, (IMG,), {}),
    "rank": (lambda o: o.rank, (IMG,), {}),
    "size": (lambda o: o.size, (IMG,), {}),
    "numel": (lambda o: o.numel, (IMG,), {}),
    "stop_gradient": (lambda o: o.stop_gradient, (A,), {}),
    "zeros": (lambda o: o.zeros, ((2, 3),), {}),
    "ones": (lambda o: o.ones, ((2, 3), Dtype("int32")), {}),
    "full": (lambda o: o.full, ((2, 3), 7), {}),
    "full-dtype": (lambda o: o.full, ((2, 3), 2.5), {"dtype": Dtype("float32")}),
    "full_like": (lambda o: o.full_like, (A, 7), {}),
    "eye": (lambda o: o.eye, (3, 4), {}),
    "arange": (lambda o: o.arange, (1, 10, 3), {}),
    "arange-float": (lambda o: o.arange, (0.5, 3.0, 0.5), {}),
    "one_hot": (lambda o: o.one_hot, (J, 4, np.array(2.0, np.float32),
                                      np.array(-1.0, np.float32)), {"axis": 0}),
    "conv2d": (lambda o: o.conv2d, (IMG[:, :, :, :4].copy(), W[:2].copy()),
               {"pad_mode": "pad", "padding": 1, "stride": 2}),
    "max_pool2d": (lambda o: o.max_pool2d, (IMG,), {"kernel_size": 2, "stride": 1}),
    "avg_pool2d": (lambda o: o.avg_pool2d, (IMG,), {"kernel_size": 2, "stride": 2}),
    "mse_loss": (lambda o: o.mse_loss, (A, B), {"reduction": "sum"}),
    "nll_loss": (lambda o: o.nll_loss, (A, np.array([0, 3, 1], np.int32)), {}),
    "batch_norm": (lambda o: o.batch_norm, (rand(4, 3), rand(3, seed=3), POS[0, :3].copy(),
                                            rand(3, seed=4), rand(3, seed=5)), {}),
    "strided_slice": (lambda o: o.strided_slice, (IMG, (0, 1, 0, 1), (2, 3, 4, 5),
                                                  (1, 1, 2, 2)), {}),
    "topk": (lambda o: o.topk, (A, 2), {"largest": False}),
    "relu6": (lambda o: o.relu6, (A * 8,), {}),
    "softplus": (lambda o: o.softplus, (A,), {"beta": 2, "threshold": 1}),
    "leaky_relu": (lambda o: o.leaky_relu, (A,), {"alpha": 0.3}),
}


class OpCell:
    """A MindSpore Cell calling one op spelling, for GRAPH_MODE."""

    @staticmethod
    def make(fn: Any, kwargs: dict[str, Any] | None = None) -> Any:
        class Wrapped(ms.nn.Cell):
            def __init__(self) -> None:
                super().__init__()
                self.fn = fn
                self.kwargs = kwargs or {}

            def construct(self, *args: Any) -> Any:
                return self.fn(*args, **self.kwargs)
        return Wrapped()


def ms_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(ms.Tensor(a) if isinstance(a, np.ndarray) else getattr(ms, a.name)
                 if isinstance(a, Dtype) else
                 tuple(ms.Tensor(v) if isinstance(v, np.ndarray) else v for v in a)
                 if isinstance(a, tuple) and any(isinstance(v, np.ndarray) for v in a) else a
                 for a in args)


def ms_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: getattr(ms, v.name) if isinstance(v, Dtype) else v for k, v in kwargs.items()}


@pytest.mark.parametrize("name", list(OPS) + list(KW_OPS))
def test_ops_agree(name, mode):
    make, raw, raw_kwargs = OPS[name] + ({},) if name in OPS else KW_OPS[name]
    args = amber_args(raw)
    kwargs = {k: getattr(amber, v.name) if isinstance(v, Dtype) else v
              for k, v in raw_kwargs.items()}
    amber_fn = make(amber.ops)
    want_eager = amber_fn(*args, **kwargs)

    arrays = [k for k, a in enumerate(args) if isinstance(a, np.ndarray)]
    fixed = tuple(None if k in arrays else a for k, a in enumerate(args))

    def compiled(*xs: Any) -> Any:  # arrays are inputs; the rest (dtypes, axes) constants
        full = list(fixed)
        for k, x in zip(arrays, xs):
            full[k] = x
        return amber_fn(*full, **kwargs)
    got = amber.jit(compiled)(*[args[k] for k in arrays])
    assert_agree(got, want_eager, "amber compiled vs eager")
    ms_fn = make(ms.ops)
    ms_kw = ms_kwargs(raw_kwargs)
    ms_out = (OpCell.make(ms_fn, ms_kw)(*ms_args(raw)) if mode == "graph" else
              ms_fn(*ms_args(raw), **ms_kw))
    assert_agree(got, ms_out)
