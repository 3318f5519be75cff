"""The generated code for a small model with nested control flow, compared line for line with
what a careful person would write by hand (and run against the interpreter)."""
from __future__ import annotations

import numpy as np

from amber.graph import Block, Builder, Graph, InsertPoint, Loc, Scalar, Tensor

SOURCE = """\
def construct(self, x, n):
    h = relu(x)
    s = 0.0
    i = 0
    while i < n:
        if h.sum() > i:
            s = s + float(h.mean())
        else:
            s = s - 1.0
        for j in range(3):
            h = h * 0.5
        i = i + 1
    return s, h
""".splitlines()

EXPECTED = '''\
def Net_construct(x, n):
    # net.py:2: h = relu(x)
    h = np.maximum(x, 0)
    # net.py:3: s = 0.0
    s = 0.0
    # net.py:4: i = 0
    i = 0
    # net.py:5: while i < n:
    while i < n:
        # net.py:6: if h.sum() > i:
        if h.sum() > i:
            # net.py:7: s = s + float(h.mean())
            s = s + float(h.mean())
        else:
            # net.py:9: s = s - 1.0
            s = s - 1.0
        # net.py:10: for j in range(3):
        for _ in range(3):
            # net.py:11: h = h * 0.5
            h = h * F32_0_5
        # net.py:12: i = i + 1
        i = i + 1
    return s, h
'''

F, INT, FLOAT = Tensor(("B", 4), np.float32), Scalar(int), Scalar(float)


def at(line: int) -> Loc:
    return Loc("/models/net.py", line, 4, SOURCE[line - 1])


def model() -> Graph:
    """The graph the frontend builds for SOURCE (temporaries have no name hint)."""
    g = Graph("Net.construct")
    x, n = g.body.add_param(F, "x"), g.body.add_param(INT, "n")
    b = Builder(InsertPoint.at_end(g.body))
    h = b.op("relu", x, name="h", loc=at(2))
    s, i = b.op("constant", name="s", loc=at(3), value=0.0), b.op("constant", name="i",
                                                                  loc=at(4), value=0)
    cond, body = Block([F, FLOAT, INT], ["h", "s", "i"]), Block([F, FLOAT, INT], ["h", "s", "i"])
    cond.set_results([Builder(InsertPoint.at_end(cond), at(5)).op("lt", cond.params[2], n)])
    hb, sb, ib = body.params
    bb = Builder(InsertPoint.at_end(body), at(6))
    test = bb.op("gt", bb.op("sum", hb), ib)
    then, else_ = Block(), Block()
    tb, eb = Builder(InsertPoint.at_end(then), at(7)), Builder(InsertPoint.at_end(else_), at(9))
    then.set_results([tb.op("add", sb, tb.op("float", tb.op("mean", hb)), name="s")])
    else_.set_results([eb.op("sub", sb, eb.constant(1.0), name="s")])
    (s2,) = bb.if_(test, then, else_, names=["s"])
    inner = Block([INT, F], ["j", "h"])
    fb = Builder(InsertPoint.at_end(inner), at(11))
    inner.set_results([fb.op("mul", inner.params[1], fb.constant(0.5), name="h")])
    bb.loc = at(10)
    (h2,) = bb.for_(bb.constant(0), bb.constant(3), bb.constant(1), [hb], inner, names=["h"])
    bb.loc = at(12)
    body.set_results([h2, s2, bb.op("add", ib, bb.constant(1), name="i")])
    b.loc = at(5)
    h_out, s_out, _ = b.while_([h, s, i], cond, body, names=["h", "s", "i"])
    g.body.set_results([s_out, h_out])
    return g


def test_nested_model_reads_like_hand_written_code(check_graph) -> None:
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    code = check_graph(model(), (x, 0), (x, 1), (x, 5))
    assert code.source[code.source.index("def Net_construct"):] == EXPECTED
    assert code.arg_names == ("x", "n") and code.function_name == "Net_construct"
