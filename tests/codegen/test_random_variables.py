"""Hypothesis-generated programs over Python-like variables, built the way the frontend builds
SSA: a variable assigned on some paths only is `undefined` on the others, every region carries
or merges variables by name. Generated code must agree with the interpreter, including raising
UnboundLocalError exactly when a program reads a variable its path never bound."""
from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amber.graph import Block, Builder, Graph, InsertPoint, Node, Scalar, Value
from amber.ops import lookup

INT = Scalar(int)
VARIABLES = ("a", "b", "c", "d")
Env = dict[str, Value]


class VariableProgramMaker:
    """Draws statements over `VARIABLES`; `env` maps each bound variable to its SSA value."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw

    def graph(self) -> Graph:
        g = Graph("variables")
        env = {v: g.body.add_param(INT, v) for v in ("a", "b")}
        b = Builder(InsertPoint.at_end(g.body))
        self.block(b, env, 0)
        names = self.draw(st.lists(st.sampled_from(VARIABLES), min_size=1, max_size=2))
        g.body.set_results([self.read(b, env, v) for v in names])
        return g

    def read(self, b: Builder, env: Env, name: str) -> Value:
        """The variable's value, or `undefined` where this path never bound it."""
        if name in env:
            return env[name]
        return b.insert(Node(lookup("undefined"), (), {"name": name}, [INT], [name])).output

    def operand(self, b: Builder, env: Env) -> Value:
        bound = sorted(env)
        if bound and self.draw(st.integers(0, 9)) > 0:  # NOTE: mostly bound variables
            return env[self.draw(st.sampled_from(bound))]
        return self.read(b, env, self.draw(st.sampled_from(VARIABLES)))

    def block(self, b: Builder, env: Env, depth: int) -> None:
        makers = [self.assign, self.assign, self.if_, self.for_, self.while_]
        for _ in range(self.draw(st.integers(1, 4))):
            self.draw(st.sampled_from(makers if depth < 2 else makers[:1]))(b, env, depth)

    def assign(self, b: Builder, env: Env, depth: int) -> None:
        target = self.draw(st.sampled_from(VARIABLES))
        x = self.operand(b, env)
        y = self.operand(b, env) if self.draw(st.booleans()) else b.constant(
            self.draw(st.integers(-2, 3)))
        env[target] = b.op(self.draw(st.sampled_from(("add", "sub", "mul", "max"))), x, y,
                           name=target)

    def if_(self, b: Builder, env: Env, depth: int) -> None:
        cond = b.op("gt", self.operand(b, env), self.operand(b, env))
        arms = []
        for _ in range(2):
            block, arm_env = Block(), dict(env)
            self.block(Builder(InsertPoint.at_end(block)), arm_env, depth + 1)
            arms.append((block, arm_env))
        merged = sorted(v for v in VARIABLES if any(e.get(v) is not env.get(v) for _, e in arms))
        for block, arm_env in arms:
            block.set_results([self.read(Builder(InsertPoint.at_end(block)), arm_env, v)
                               for v in merged])
        outs = b.if_(cond, arms[0][0], arms[1][0], [INT] * len(merged), merged)
        env.update(zip(merged, outs))

    def loop_body(self, block: Block, names: list[str], depth: int) -> Builder:
        """Fill a loop body whose params are the carried variables; yields them by name."""
        body_env = dict(zip(names, block.params[-len(names):]))
        bb = Builder(InsertPoint.at_end(block))
        self.block(bb, body_env, depth + 1)
        return bb, body_env

    def for_(self, b: Builder, env: Env, depth: int) -> None:
        names = list(VARIABLES)
        inits = [self.read(b, env, v) for v in names]
        body = Block([INT] * (len(names) + 1), ["i", *names])
        _, body_env = self.loop_body(body, names, depth)
        body.set_results([body_env[v] for v in names])
        bounds = [b.constant(v) for v in (0, self.draw(st.integers(0, 3)), 1)]
        env.update(zip(names, b.for_(*bounds, inits, body, names)))

    def while_(self, b: Builder, env: Env, depth: int) -> None:
        names = list(VARIABLES)
        inits = [b.constant(0)] + [self.read(b, env, v) for v in names]
        hints = ["k", *names]
        cond, body = Block([INT] * len(hints), hints), Block([INT] * len(hints), hints)
        cb = Builder(InsertPoint.at_end(cond))
        cond.set_results([cb.op("lt", cond.params[0], cb.constant(self.draw(st.integers(0, 3))))])
        bb, body_env = self.loop_body(body, names, depth)
        step = bb.op("add", body.params[0], bb.constant(1), name="k")
        body.set_results([step] + [body_env[v] for v in names])
        env.update(zip(names, b.while_(inits, cond, body, hints)[1:]))


@st.composite
def variable_programs(draw: Any) -> Graph:
    return VariableProgramMaker(draw).graph()


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(variable_programs(), st.tuples(st.integers(-3, 3), st.integers(-3, 3)))
def test_variable_programs_match_interpreter(check_graph, graph: Graph, args: tuple) -> None:
    check_graph(graph, args)
