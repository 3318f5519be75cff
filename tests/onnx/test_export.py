"""`amber.export`: a Cell, a jit object and a function exported to an ONNX model file that
onnxruntime runs with eager's results; run-time control flow kept as If/Loop; a symbolic batch
as a dim_param; what ONNX cannot express refused with a CompileError at the user's line."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import amber
from amber import nn, ops
from amber.samples.lenet import LeNet5
from amber.samples.rnn import EarlyStopRNN, example_inputs
from sweep import onnx_ops


def run(path, *arrays):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, map(np.asarray, arrays))))


def images(n):
    return np.random.default_rng(n).standard_normal((n, 1, 32, 32)).astype(np.float32)


def test_lenet_exports_with_named_initializers(tmp_path):
    amber.set_seed(0)
    net = LeNet5()
    path = amber.export(net, images(2), file_name=str(tmp_path / "lenet"))
    assert path.endswith("lenet.onnx")
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    names = {t.name for t in model.graph.initializer}
    assert names == {p.name for p in net.trainable_params()}
    assert model.opset_import[0].version == 17
    np.testing.assert_allclose(run(path, images(2))[0], net.construct(images(2)),
                               rtol=1e-5, atol=1e-6)


def test_symbolic_batch_exports_once_and_runs_at_any_batch(tmp_path):
    amber.set_seed(0)
    net = LeNet5()
    spec = amber.Tensor(shape=[None, 1, 32, 32], dtype=amber.float32)
    path = amber.export(net, spec, file_name=str(tmp_path / "lenet_n"))
    model = onnx.load(path)
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param and [d.dim_value for d in dims[1:]] == [1, 32, 32]
    assert model.graph.output[0].type.tensor_type.shape.dim[0].dim_param == dims[0].dim_param
    for batch in (1, 7, 64):
        got = run(path, images(batch))[0]
        np.testing.assert_allclose(got, net.construct(images(batch)), rtol=1e-5, atol=1e-6)


def test_while_with_break_becomes_a_loop(tmp_path):
    amber.set_seed(0)
    net = EarlyStopRNN()
    (x,) = example_inputs()
    path = amber.export(amber.jit(net), x, file_name=str(tmp_path / "rnn"))
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert {"Loop", "If"} <= onnx_ops(model.graph)
    h, steps = run(path, x)
    want_h, want_steps = net.construct(x)
    assert int(steps) == want_steps < x.shape[0]  # NOTE: the break happened
    np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-6)


def clipped_sum(x, n):
    total = np.zeros_like(x)
    for i in range(n):
        if total.sum() > 10.0:
            break
        total = total + x * i
    return total


def test_function_with_for_and_branch(tmp_path):
    x = np.arange(4, dtype=np.float32)
    path = amber.export(clipped_sum, x, np.int64(6), file_name=str(tmp_path / "fn"))
    model = onnx.load(path)
    assert {"Loop", "If"} <= onnx_ops(model.graph)
    for n in (0, 2, 6):
        np.testing.assert_allclose(run(path, x, np.int64(n))[0], clipped_sum(x, n))


def test_other_formats_are_refused_naming_the_formats_amber_writes(tmp_path):
    with pytest.raises(ValueError, match=r"MINDIR.*amber writes ONNX"):
        amber.export(LeNet5(), images(1), file_name=str(tmp_path / "m"), file_format="MINDIR")


class Printing(nn.Cell):
    def construct(self, x):
        print("x is", x)  # the line the error names
        return ops.relu(x)


def test_an_op_without_onnx_form_is_a_compile_error_at_the_users_line(tmp_path):
    with pytest.raises(amber.CompileError) as info:
        amber.export(Printing(), np.ones(3, np.float32), file_name=str(tmp_path / "p"))
    err = info.value
    assert err.file == __file__ and "print" in str(err) and "cannot export to ONNX" in str(err)
    assert "the line the error names" in err.source_line
