"""Every op's emit template renders to a valid expression naming only what generated code has,
and every elementwise op, emitted in a one-node graph, computes what the interpreter computes."""
from __future__ import annotations

import ast
import itertools

import numpy as np
import pytest

from amber.codegen import generate, pyast
from amber.codegen.template import render
from amber.graph import Builder, Graph, InsertPoint, Tensor, run_graph
from amber.ops import OPS, REQUIRED, OpDef

# Values for required attributes, tried in order until the op's emit rule accepts them; a
# template only needs a literal to print, not one that type-checks.
SAMPLE_ATTRS = [(2, 3), 2, np.dtype(np.float32), ((0, 1), (1, 0))]


def rendered(op: OpDef) -> ast.expr:
    args = [pyast.name(f"{n.lstrip('*')}{j}") for n in op.inputs
            for j in range(2 if n.startswith("*") else 1)]
    required = [k for k, v in op.attrs.items() if v is REQUIRED]
    failure: Exception | None = None
    for values in itertools.product(SAMPLE_ATTRS, repeat=len(required)):
        attrs = {**op.attrs, **dict(zip(required, values))}
        try:
            return render(op, attrs, args, lambda value: pyast.name("BIG"))
        except NameError:
            raise
        except Exception as err:  # noqa: BLE001 (an emit rule rejecting this sample)
            failure = err
    raise AssertionError(f"{op.name}: no sample attributes render: {failure!r}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_template_renders(name: str) -> None:
    tree = rendered(OPS[name])
    compile(ast.fix_missing_locations(ast.Expression(tree)), f"<{name}>", "eval")
    assert pyast.to_source(ast.Expression(tree)).strip()


CANDIDATE_DTYPES = (np.float32, np.bool_, np.int32)


def one_node_graph(op: OpDef) -> Graph:
    """The op over (2, 3) tensors, with the first dtypes per input that its shape rule takes."""
    for dtypes in itertools.product(CANDIDATE_DTYPES, repeat=len(op.inputs)):
        g = Graph(f"one_{op.name}")
        xs = [g.body.add_param(Tensor((2, 3), d), f"x{i}") for i, d in enumerate(dtypes)]
        try:
            out = Builder(InsertPoint.at_end(g.body)).op(op, *xs)
        except (TypeError, ValueError):
            continue
        g.body.set_results([out])
        return g
    raise AssertionError(f"{op.name}: no tensor inputs of {CANDIDATE_DTYPES} fit")


def sample(t: Tensor, rng: np.random.Generator) -> np.ndarray:
    if t.dtype == np.bool_:
        return rng.random(t.shape) > 0.5
    if t.dtype.kind == "i":
        return rng.integers(1, 4, t.shape).astype(t.dtype)
    return rng.uniform(0.5, 2.0, t.shape).astype(t.dtype)


ELEMENTWISE = sorted(n for n, op in OPS.items() if op.elementwise
                     and not any(i.startswith("*") for i in op.inputs))


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_op_matches_interpreter(check_graph, name: str) -> None:
    graph = one_node_graph(OPS[name])
    rng = np.random.default_rng(len(name))
    check_graph(graph, tuple(sample(v.type, rng) for v in graph.inputs))


def test_every_elementwise_op_is_covered() -> None:
    assert len(ELEMENTWISE) >= 30, ELEMENTWISE  # the family exists and is exercised


def test_generated_module_for_all_elementwise_ops_at_once() -> None:
    """One module using many ops parses and imports only numpy (names never collide)."""
    g = Graph("many")
    x = g.body.add_param(Tensor((2, 3), np.float32), "x")
    b = Builder(InsertPoint.at_end(g.body))
    outs = []
    for name in ELEMENTWISE:
        op = OPS[name]
        if len(op.inputs) == 1:
            try:
                outs.append(b.op(op, x, name=name))
            except (TypeError, ValueError):
                continue
    g.body.set_results(outs)
    source = generate(g).source
    tree = ast.parse(source)
    assert sum(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(tree)) == 1
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102
    results = namespace["many"](np.full((2, 3), 0.5, np.float32))
    want = run_graph(g, np.full((2, 3), 0.5, np.float32))
    for got, ref in zip(results, want):
        np.testing.assert_allclose(got, ref, rtol=1e-6)
