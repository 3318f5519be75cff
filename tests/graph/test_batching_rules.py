"""Every op's batching rule (vmap, graph/batching.py) against a Python loop over examples.

For each sample of tests/ops/test_registry.py and tests/graph/test_gradient_rules.py of an op
with a rule, three examples are drawn
(the sample's elements shuffled, so each stays in the op's domain) and stacked; a one-node
graph runs the op on the batch through `vectorize`, with every array input batched and with
each one alone batched, at a literal and at a symbolic batch size, and must equal the op's
kernel run on each example. A rule that declines falls back to a loop over the examples,
which must be exact too; `test_rules_are_taken` checks the rules really run."""
from __future__ import annotations

import importlib.util
import os
import numpy as np
import pytest

from amber.graph import Builder, Graph, InsertPoint, run_graph, verify
from amber.graph.batching import vectorize
from amber.graph.ir import FOR, INDEX_TYPE, Block, Node
from amber.graph.types import ListType
from amber.ops import Dyn, registry
from amber.ops.types import Tensor, type_of

_spec = importlib.util.spec_from_file_location(
    "registry_samples", os.path.join(os.path.dirname(__file__), "..", "ops", "test_registry.py"))
samples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(samples)

_spec = importlib.util.spec_from_file_location(
    "gradient_samples", os.path.join(os.path.dirname(__file__), "test_gradient_rules.py"))
gradient_samples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gradient_samples)

EXAMPLES = 3
RULED = sorted(op.name for op in registry.OPS.values()
               if op.batch is not None and not hasattr(op.batch, "loop_reason"))
"""The ops with a batched form (the others' rule is the named per-example loop)."""
_R = np.random.default_rng(0)
_IMAGES = _R.standard_normal((2, 2, 4, 4))
_POOL = registry.OPS["max_pool2d"].full_attrs({"kernel_size": (2, 2), "stride": (2, 2)})
EXTRA = {"matmul": [((_R.standard_normal((1, 3)), _R.standard_normal((1, 4))),
                     {"transpose_a": True}),  # NOTE: outer products take a rule of their own
                    ((_R.standard_normal((3, 1)), _R.standard_normal((4, 1))),
                     {"transpose_b": True})],
         "nll_loss": [((_R.standard_normal((4, 3)), np.array([0, 2, 1, 1])), {"reduction": r})
                      for r in ("none", "sum")],
         **{name: [((_IMAGES, registry.OPS["max_pool2d"].kernel(_IMAGES, **_POOL),
                     _R.standard_normal((2, 2, 2, 2))), _POOL)]
            for name in ("max_pool2d_grad", "max_pool2d_pick")}}
SAMPLES = {name: [*EXTRA.get(name, ()), *samples.SAMPLES.get(name, ()),
                  *gradient_samples.SAMPLES.get(name, ())] for name in RULED}
CASES = [(name, i) for name in RULED for i in range(min(len(SAMPLES[name]), 2))]
"""Two samples per op keep the file within its CI budget; AMBER_TRANSFORM_SWEEP=all runs all."""
if os.environ.get("AMBER_TRANSFORM_SWEEP") == "all":
    CASES = [(name, i) for name in RULED for i in range(len(SAMPLES[name]))]


def _arrays(inputs: tuple) -> list[int]:
    return [k for k, v in enumerate(inputs) if isinstance(v, np.ndarray)]


def _examples(v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """EXAMPLES variants of `v` stacked: its elements shuffled (the first is `v` itself)."""
    if v.dtype.kind in "iu" and v.ndim > 1:  # NOTE: index rows (gather_nd) stay whole rows
        return np.stack([v] + [rng.permutation(v) for _ in range(EXAMPLES - 1)])
    rows = [v] + [rng.permutation(v.reshape(-1)).reshape(v.shape) for _ in range(EXAMPLES - 1)]
    return np.stack(rows)


def _batched_graph(name: str, inputs: tuple, attrs: dict, batched: list[bool],
                   symbolic: bool) -> Graph:
    graph = Graph(name)
    b = Builder(InsertPoint.at_end(graph.body))
    params = []
    for k, (v, bt) in enumerate(zip(inputs, batched)):
        t = type_of(v)
        if bt:
            t = Tensor(("N" if symbolic else EXAMPLES, *t.shape), t.dtype)
        params.append(graph.body.add_param(t, f"x{k}"))
    first = params[batched.index(True)]
    size = b.op("tuple_getitem", b.op("shape", first), index=0) if symbolic else \
        b.constant(EXAMPLES)
    body = Block()
    index = body.add_param(INDEX_TYPE, "i")
    with b.at(InsertPoint.at_end(body)):
        sliced = [b.op("getitem", p, index, index=(Dyn(0),)) if bt else p
                  for p, bt in zip(params, batched)]
        out = b.op(name, *sliced, **attrs)
        rows = body.add_param(ListType(out.type), "rows")
        body.set_results([b.op("list_append", rows, out)])
    loop = Node(FOR, [], {}, [rows.type], ["rows"], [body])
    found = vectorize(b, loop, size)
    assert found is not None, f"{name}: a one-op loop always batches (by rule or by loop)"
    graph.body.set_results(found)
    verify(graph)
    return graph


def _patterns(inputs: tuple) -> list[list[bool]]:
    arrays = _arrays(inputs)
    every = [k in arrays for k in range(len(inputs))]
    alone = [[k == j for k in range(len(inputs))] for j in arrays] if len(arrays) > 1 else []
    return [every, *alone] if arrays else []


def _run(name: str, i: int, symbolic: bool) -> list[Graph]:
    inputs, attrs = SAMPLES[name][i]
    op = registry.OPS[name]
    full = op.full_attrs(attrs)
    try:
        single = op.kernel(*inputs, **full)
    except Exception:  # NOTE: samples that raise are checked by the registry tests
        return []
    if not isinstance(single, np.ndarray):
        return []
    rng = np.random.default_rng(abs(hash((name, i))) % 2**32)
    graphs = []
    for batched in _patterns(inputs)[:1] if symbolic else _patterns(inputs):
        stacked = [_examples(v, rng) if bt else v for v, bt in zip(inputs, batched)]
        want = [op.kernel(*[s[e] if bt else s for s, bt in zip(stacked, batched)], **full)
                for e in range(EXAMPLES)]
        graph = _batched_graph(name, inputs, attrs, batched, symbolic)
        got = run_graph(graph, *stacked)
        assert got.shape == (EXAMPLES, *np.shape(want[0])), (name, batched, got.shape)
        assert got.dtype == np.asarray(want[0]).dtype, (name, batched, got.dtype)
        np.testing.assert_allclose(got, np.stack(want), rtol=1e-6, atol=1e-6,
                                   err_msg=f"{name} batched {batched}")
        graphs.append(graph)
    return graphs


@pytest.mark.parametrize("name,i", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_batching_rule_matches_a_loop_over_examples(name: str, i: int) -> None:
    _run(name, i, symbolic=False)
    _run(name, i, symbolic=True)


def _loops(graph: Graph) -> int:
    return sum(1 for node in graph.walk() if node.op == FOR)


@pytest.mark.parametrize("name", ["add", "mul", "exp", "tanh", "gt", "select", "sum", "mean",
                                  "transpose", "matmul", "reshape", "dense", "softmax",
                                  "expand_dims", "broadcast_to", "cast", "argmax", "cumsum",
                                  "sort", "one_hot", "flip", "flatten", "tile", "pad",
                                  "getitem", "gather", "gather_nd", "copy", "embedding", "dot",
                                  "layer_norm", "mse_loss", "nll_loss", "batch_norm", "conv2d",
                                  "conv2d_nhwc", "max_pool2d", "avg_pool2d", "resize_bilinear",
                                  "conv2d_grad_input", "max_pool2d_grad", "full_like",
                                  "index_add", "index_add_into", "index_zero"])
def test_rules_are_taken(name: str) -> None:
    """With every array batched (ops with shared weights or tables: their first input alone;
    gather_nd: its indices alone), these ops run on the whole batch, no loop."""
    pattern = 2 if name == "gather_nd" else 1 if name in (
        "dense", "gather", "embedding", "dot", "layer_norm", "batch_norm", "conv2d", "conv2d_nhwc",
        "conv2d_grad_input") else 0
    taken = [_loops(g) == 0 for i in range(len(SAMPLES[name]))
             for g in _run(name, i, symbolic=False)[pattern:pattern + 1]]
    assert taken and any(taken), name


def test_rules_exist_for_the_families() -> None:
    """The elementwise family shares one rule, so every elementwise op has it."""
    missing = [op.name for op in registry.OPS.values() if op.elementwise and op.batch is None]
    assert not missing, missing


def test_every_op_has_a_rule() -> None:
    """A batched form, or the named per-example loop with a documented reason."""
    from amber.ops.batch_rules import LOOP_REASONS
    missing = [op.name for op in registry.OPS.values() if op.batch is None]
    assert not missing, f"ops without a batching rule: {missing}"
    reasons = {op.name: getattr(op.batch, "loop_reason", None) for op in registry.OPS.values()}
    assert all(r is None or r in LOOP_REASONS for r in reasons.values()), reasons


def test_the_looped_ops_are_listed_in_the_docs() -> None:
    """docs/transforms.md names every op whose rule is the per-example loop."""
    docs = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "transforms.md")
    with open(docs, encoding="utf-8") as f:
        text = f.read()
    looped = [op.name for op in registry.OPS.values() if hasattr(op.batch, "loop_reason")]
    assert looped and not [name for name in looped if f"`{name}`" not in text]
