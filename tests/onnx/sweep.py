"""Exporting the program corpus (tests/programs) and the model zoo (tests/models) to ONNX: each
program that compiles is exported, checked by `onnx.checker.check_model(full_check=True)`,
run in onnxruntime and compared with eager (the corpus's harness and tolerances), or refused
with a CompileError naming the op or construct.

`python tests/onnx/sweep.py` runs the whole corpus and prints the counts and the refusals by
reason (what docs/onnx.md lists).
"""
from __future__ import annotations

import collections
import copy
import importlib.util
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE.parent / "programs"
MODELS = HERE.parent / "models"
for path in (PROGRAMS, MODELS):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

import amber  # noqa: E402
import harness  # noqa: E402
from amber.codegen.onnx.lower import leaf_types  # noqa: E402
from amber.runtime.context import CompileOptions  # noqa: E402
from amber.runtime.onnx_export import compile_graph, lower_graph, resolve  # noqa: E402
from amber.ops.types import same_tuple_kind  # noqa: E402
from amber.runtime.paths import make_input_gatherer  # noqa: E402

EXPORTED, REFUSED, NOT_COMPILED, EAGER_RAISES = "exported", "refused", "not compiled", \
    "eager raises"
KNOWN = "known difference"
OPTIONS = CompileOptions(opt_level=2)
KNOWN_DIFFERENCES = {
    "python_int_beyond_int64": "Python ints are int64 in ONNX: past 2**63 - 1 they wrap",
}
"""Programs whose exported model differs from eager in a way no compile-time check can see
(each listed in docs/onnx.md)."""


@dataclass
class Outcome:
    kind: str
    detail: str = ""


def corpus_files() -> list[Path]:
    """The corpus's category files (tests/programs/test_*.py)."""
    return sorted(PROGRAMS.glob("test_*.py"))


def load_programs(path: Path) -> list[harness.Program]:
    """The programs one category file marks (imported under a private module name)."""
    name = f"onnx_sweep_{path.stem}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return harness.collect(vars(module))


from amber.codegen.onnx.module import DISABLED_OPTIMIZERS  # noqa: E402


def session(model: Any) -> ort.InferenceSession:
    if os.environ.get("AMBER_ONNX_SAVE_LAST"):  # NOTE: what to look at when onnxruntime crashes
        onnx.save(model, os.environ["AMBER_ONNX_SAVE_LAST"])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"],
                                disabled_optimizers=DISABLED_OPTIMIZERS)


def region_kinds(graph: Any) -> set[str]:
    """The ONNX operators a graph's regions must become (If, Loop)."""
    kinds = {"if": "If", "while": "Loop", "for": "Loop"}
    return {kinds[n.name] for n in graph.walk() if n.is_region}


def onnx_ops(graph: Any) -> set[str]:
    """Every op type in an ONNX graph and its subgraphs."""
    found = set()
    for node in graph.node:
        found.add(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                found |= onnx_ops(attr.g)
    return found


def check_inferred_shapes(model: Any, graph: Any) -> None:
    """ONNX's shape inference, run on the model without its declared output shapes, agrees
    with amber's type of each output leaf: the same element type and rank, and each size ONNX
    infers as a number is amber's (or amber's is symbolic or unknown)."""
    bare = copy.deepcopy(model)
    for out in bare.graph.output:
        out.type.tensor_type.ClearField("shape")
    inferred = onnx.shape_inference.infer_shapes(bare, strict_mode=True)
    types = [leaf for v in graph.outputs for leaf in leaf_types(v.type)]
    infos = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out, t in zip(model.graph.output, types):
        info = infos[out.name].type.tensor_type
        assert info.elem_type == out.type.tensor_type.elem_type, (out.name, t)
        if not info.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in info.shape.dim]
        shape = getattr(t, "shape", ())
        assert len(dims) == len(shape), f"{out.name}: ONNX infers rank {len(dims)}, amber {t}"
        for got, want in zip(dims, shape):
            assert got is None or not isinstance(want, int) or got == want, \
                f"{out.name}: ONNX infers {dims}, amber {t}"


def export_and_run(target: Any, args: tuple, instance: Any = None,
                   dynamic: Any = None) -> tuple[Outcome, Any]:
    """Compile, export, check and run `target` on `args`: (outcome, onnxruntime's result)."""
    program = resolve(target, args, dynamic)
    try:
        graph = compile_graph(program, OPTIONS)
    except amber.CompileError as err:
        return Outcome(NOT_COMPILED, str(err).splitlines()[0]), None
    try:
        exported = lower_graph(graph, program.instance)
    except amber.CompileError as err:
        return Outcome(REFUSED, refusal_reason(str(err))), None
    model = exported.model
    onnx.checker.check_model(model, full_check=True)
    check_inferred_shapes(model, graph)
    missing = region_kinds(graph) - onnx_ops(model.graph)
    assert not missing, f"the graph's regions became no {missing} node"
    gather = make_input_gatherer(graph.input_paths, len(program.args))
    arrays = program.args if gather is None else gather(program.args, {})
    names = [i.name for i in model.graph.input]
    assert len(arrays) == len(names), f"inputs {names} for {len(arrays)} arrays"
    result = session(model).run(None, dict(zip(names, (np.asarray(a) for a in arrays))))
    return Outcome(EXPORTED), exported.unflatten(result)


def as_numpy_scalars(value: Any) -> Any:
    """`value` with its 0-d arrays as NumPy scalars: ONNX has one kind of 0-d value, and an
    exported model's results of shape () come back as NumPy scalars (documented)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    if isinstance(value, tuple):
        return same_tuple_kind(value, [as_numpy_scalars(v) for v in value])
    return value


def refusal_reason(message: str) -> str:
    """The reason part of a refusal (`the op 'print' has no ONNX form`)."""
    first = message.splitlines()[0]
    assert "cannot export to ONNX" in first, message
    return re.sub(r"^.*cannot export to ONNX: ", "", first)


def check_program(program: harness.Program, capsys: Any, inputs: int = 2) -> Outcome:
    """Export `program` for each of its first `inputs` argument tuples; its outcome."""
    if program.refused_on_numpy1 and harness.NUMPY_1:
        return Outcome(NOT_COMPILED, "refused under NumPy 1")
    outcome = Outcome(NOT_COMPILED)
    for k, args in enumerate(program.inputs[:inputs]):
        if args and isinstance(args[-1], harness.Kw):
            return Outcome(NOT_COMPILED, "keyword arguments")
        subject = harness.build(program)
        want = harness.call(subject.eager, args, subject.eager_net, capsys)
        if want.error is not None:
            outcome = Outcome(EAGER_RAISES, type(want.error).__name__)
            continue
        target = subject.compiled_net if subject.compiled_net is not None else \
            subject.eager
        if program.train and subject.compiled_net is not None:
            subject.compiled_net.set_train(True)
        outcome, got = export_and_run(target, copy.deepcopy(args))
        if outcome.kind != EXPORTED:
            return outcome
        assert want.printed == "", "exported a program that prints"
        if program.name in KNOWN_DIFFERENCES:
            return Outcome(KNOWN, KNOWN_DIFFERENCES[program.name])
        harness.assert_same(got, as_numpy_scalars(want.result))
    return outcome


def main() -> None:
    """Export the whole corpus; print the counts and the refusals by reason."""
    import contextlib
    import io

    class Capture:
        def readouterr(self) -> Any:
            text = buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            return collections.namedtuple("Captured", "out err")(text, "")

    buffer = io.StringIO()
    counts: collections.Counter = collections.Counter()
    reasons: dict[str, list[str]] = collections.defaultdict(list)
    failures = []
    for path in corpus_files():
        for program in load_programs(path):
            try:
                with contextlib.redirect_stdout(buffer):
                    outcome = check_program(program, Capture())
            except Exception as err:  # noqa: BLE001 (a report, not a test)
                failures.append(f"{path.stem}::{program.name}: {type(err).__name__}: "
                                f"{str(err)[:300]}")
                continue
            counts[outcome.kind] += 1
            if outcome.kind == REFUSED:
                reasons[re.sub(r"\d+", "N", outcome.detail)[:110]].append(program.name)
    print(dict(counts), f"failures: {len(failures)}")
    for reason, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(names):4d}  {reason}  (e.g. {', '.join(names[:3])})")
    for failure in failures:
        print("FAIL", failure)


if __name__ == "__main__":
    os.environ.setdefault("AMBER_CACHE", "0")
    main()
