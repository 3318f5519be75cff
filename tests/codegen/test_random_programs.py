"""Hypothesis-generated integer programs with nested If/For/While regions and shared name hints,
so codegen tries (and must correctly refuse) many variable merges: generated code must agree with
the reference interpreter on results and on the exception raised (ops reading unbound values)."""
from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amber.graph import Block, Builder, Graph, InsertPoint, Node, Scalar, Value
from amber.ops import lookup

INT = Scalar(int)
HINTS = ("a", "b", "c", "")
OPS = ("add", "sub", "mul", "max")


class ProgramMaker:
    """Draws a random graph statement by statement; `scope` lists the int values visible."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.unbound: set[Value] = set()
        """Values of `undefined`: only ops read them (a copy of one is Python's `x = y`, which
        raises where the IR would carry the unbound value on; see test_undefined)."""

    def hint(self) -> str:
        return self.draw(st.sampled_from(HINTS))

    def pick(self, scope: list[Value], unbound_too: bool = False) -> Value:
        return self.draw(st.sampled_from([v for v in scope
                                          if unbound_too or v not in self.unbound]))

    def graph(self) -> Graph:
        g = Graph("program")
        scope = [g.body.add_param(INT, h) for h in ("a", "b", "n")]
        b = Builder(InsertPoint.at_end(g.body))
        self.block(b, scope, depth=0)
        g.body.set_results([self.pick(scope) for _ in range(self.draw(st.integers(1, 3)))])
        return g

    def block(self, b: Builder, scope: list[Value], depth: int) -> None:
        makers = [self.op, self.op, self.if_, self.for_, self.while_, self.undefined]
        for _ in range(self.draw(st.integers(1, 4))):
            make = self.draw(st.sampled_from(makers if depth < 2 else makers[:1]))
            scope.extend(make(b, list(scope), depth))

    def op(self, b: Builder, scope: list[Value], depth: int) -> list[Value]:
        x = self.pick(scope, unbound_too=True)
        y = self.pick(scope) if self.draw(st.booleans()) else b.constant(
            self.draw(st.integers(-2, 3)))
        return [b.op(self.draw(st.sampled_from(OPS)), x, y, name=self.hint())]

    def undefined(self, b: Builder, scope: list[Value], depth: int) -> list[Value]:
        hint = self.hint()  # NOTE: typed int, like the variable it stands for
        value = b.insert(Node(lookup("undefined"), (), {"name": hint}, [INT], [hint])).output
        self.unbound.add(value)
        return [value]

    def arm(self, scope: list[Value], count: int, depth: int) -> Block:
        block = Block()
        inner = list(scope)
        self.block(Builder(InsertPoint.at_end(block)), inner, depth + 1)
        block.set_results([self.pick(inner) for _ in range(count)])
        return block

    def if_(self, b: Builder, scope: list[Value], depth: int) -> list[Value]:
        cond = b.op("gt", self.pick(scope), self.pick(scope))
        count = self.draw(st.integers(1, 3))
        then, else_ = self.arm(scope, count, depth), self.arm(scope, count, depth)
        return b.if_(cond, then, else_, [INT] * count, [self.hint() for _ in range(count)])

    def for_(self, b: Builder, scope: list[Value], depth: int) -> list[Value]:
        count = self.draw(st.integers(1, 3))
        inits = [self.pick(scope) for _ in range(count)]
        body = Block([INT] * (count + 1), ["i"] + [self.hint() for _ in range(count)])
        inner = list(scope) + body.params
        self.block(Builder(InsertPoint.at_end(body)), inner, depth + 1)
        body.set_results([self.pick(inner) for _ in range(count)])
        bounds = [b.constant(v) for v in (0, self.draw(st.integers(0, 3)), 1)]
        return b.for_(*bounds, inits, body, [self.hint() for _ in range(count)])

    def while_(self, b: Builder, scope: list[Value], depth: int) -> list[Value]:
        count = self.draw(st.integers(0, 2))
        inits = [b.constant(0)] + [self.pick(scope) for _ in range(count)]
        hints = ["k"] + [self.hint() for _ in range(count)]
        cond, body = Block([INT] * (count + 1), hints), Block([INT] * (count + 1), hints)
        cb = Builder(InsertPoint.at_end(cond))
        counter = cond.params[0]
        if self.draw(st.booleans()):  # a cond of two statements: `while True: ... break`
            counter = cb.op("add", counter, cb.constant(0), name="t")
        cond.set_results([cb.op("lt", counter, cb.constant(self.draw(st.integers(0, 3))))])
        inner = list(scope) + body.params
        bb = Builder(InsertPoint.at_end(body))
        self.block(bb, inner, depth + 1)
        step = bb.op("add", body.params[0], bb.constant(1), name="k")
        body.set_results([step] + [self.pick(inner) for _ in range(count)])
        return b.while_(inits, cond, body, hints)[1:]


@st.composite
def programs(draw: Any) -> Graph:
    return ProgramMaker(draw).graph()


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(programs(), st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(0, 3)))
def test_random_programs_match_interpreter(check_graph, graph: Graph, args: tuple) -> None:
    check_graph(graph, args)
