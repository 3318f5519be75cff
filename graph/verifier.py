"""The IR verifier: structural invariants (ownership, links, use lists, dominance, no cycles) and
the contract of each node kind (op arity and attributes, region shapes and types, control edges).
`verify` reports every problem at once, marked in the printed IR; it never crashes on bad input.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ops import REQUIRED, OpDef
from .ir import FOR, IF, INPLACE_ATTR, REGION_KINDS, TRY, WHILE, Block, Graph, Node, Value
from .printer import iter_nodes, print_marked
from .types import AnyType, ListType, Scalar, Tensor, TupleType, Type, join_types


class IRVerifyError(Exception):
    """The graph breaks IR invariants; `problems` lists (node/block/graph, message) for each."""

    def __init__(self, message: str, problems: list[tuple[Any, str]]) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(slots=True)
class _Problem:
    """`message` may hold `{0}`, `{1}`... standing for `refs` (values or nodes) by name."""
    where: Node | Block | Graph
    message: str
    refs: tuple[Value | Node, ...] = ()


def verify(graph: Graph) -> None:
    """Raise `IRVerifyError` listing every problem in `graph`; return None if it is well formed."""
    checker = _Checker(graph)
    try:
        checker.run()
    except Exception as exc:  # NOTE: last resort; each check is guarded on its own already
        checker.report(graph, f"verifier crashed: {type(exc).__name__}: {exc}")
    if checker.problems:
        marks = [(p.where, p.message, p.refs) for p in checker.problems]
        messages, text = print_marked(graph, marks)
        head = f"IR verification failed with {len(messages)} problem(s):"
        raise IRVerifyError("\n".join([head, *(f"  - {m}" for m in messages), "", text]),
                            list(zip((p.where for p in checker.problems), messages)))


def covers(declared: Type, actual: Type) -> bool:
    """True if a value of type `actual` may flow where `declared` is expected: equal types, an
    unbound (`any`) value, or `declared` being the join of both (a widened carried value)."""
    if declared == actual or isinstance(actual, AnyType) or isinstance(declared, AnyType):
        return True
    if isinstance(declared, TupleType) and isinstance(actual, TupleType):
        return len(declared.elements) == len(actual.elements) and all(
            covers(d, a) for d, a in zip(declared.elements, actual.elements))
    if isinstance(declared, ListType) and isinstance(actual, ListType):
        return covers(declared.element, actual.element)
    try:
        return join_types([declared, actual]) == declared
    except (TypeError, ValueError):
        return False


def _is_condition(t: Type) -> bool:
    """A Python scalar, or a tensor that can hold only one element."""
    if isinstance(t, Scalar):
        return True
    return isinstance(t, Tensor) and all(d == 1 for d in t.shape if isinstance(d, int))


def _is_index(t: Type) -> bool:
    """An int-like bound or induction variable of a `for`."""
    if isinstance(t, Scalar):
        return t.kind in (int, bool)
    return isinstance(t, Tensor) and t.rank == 0 and t.dtype.kind in "biu"


def _enclosing_blocks(block: Block | None) -> list[Block]:
    """`block` and the blocks around it, innermost first; bounded on bad links."""
    chain: list[Block] = []
    while isinstance(block, Block) and block not in chain and len(chain) < 10_000:
        chain.append(block)
        block = getattr(block.parent, "parent", None)
    return chain


def _encloses(region: Node, node: Node | None) -> bool:
    """True if `node` sits (at any depth) in one of `region`'s blocks."""
    return any(b.parent is region for b in _enclosing_blocks(getattr(node, "parent", None)))


class _Checker:
    """Walks the graph once with the set of visible values, collecting problems."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.problems: list[_Problem] = []
        self.definer: dict[Value, Node | Block] = {}
        self.nodes: set[Node] = set()
        self.blocks: set[Block] = set()
        self.pending: list[tuple[Node | Block, Value, str]] = []

    def report(self, where: Node | Block | Graph, message: str, *refs: Value | Node) -> None:
        self.problems.append(_Problem(where, message, refs))

    def run(self) -> None:
        body = getattr(self.graph, "body", None)
        if not isinstance(body, Block):
            self.report(self.graph, "the graph has no body block")
            return
        if body.parent is not self.graph:
            self.report(self.graph, "graph.body.parent does not point at the graph")
        self.block(body, frozenset())
        self.unresolved_uses()
        for value, definer in list(self.definer.items()):
            self.guarded(definer, lambda: self.stale_uses(value, definer))
        if self.pending:
            for block in list(self.blocks):
                self.guarded(block, lambda: self.cycles(block))

    def guarded(self, where: Node | Block, check) -> None:
        try:
            check()
        except Exception as exc:
            self.report(where, f"could not be checked ({type(exc).__name__}: {exc})")

    # -- walking --------------------------------------------------------------------------
    def block(self, block: Block, visible: frozenset[Value]) -> None:
        if block in self.blocks:
            self.report(block, "this block appears twice in the graph (or is nested in itself)")
            return
        self.blocks.add(block)
        scope = set(visible)
        for i, param in enumerate(block.params):
            self.define(param, block, i)
            scope.add(param)
        for node in list(block.nodes):
            if not isinstance(node, Node):
                self.report(block, f"block holds {node!r}, which is not a Node")
                continue
            self.guarded(node, lambda: self.node(node, block, scope))
            scope.update(getattr(node, "outputs", ()))
        for i, value in enumerate(block.results):
            self.guarded(block, lambda: self.use(block, value, scope, f"yields #{i}"))
            self.guarded(block, lambda: self.listed_once(value, block, i, "result"))

    def node(self, node: Node, block: Block, scope: set[Value]) -> None:
        if node in self.nodes:
            self.report(node, "this node appears twice in the graph")
            return
        self.nodes.add(node)
        if node.parent is not block:
            self.report(node, "node.parent does not point at the block holding it")
        for i, value in enumerate(node.inputs):
            self.use(node, value, scope, f"input #{i}")
            self.listed_once(value, node, i, "input")
        for i, out in enumerate(node.outputs):
            self.define(out, node, i)
        self.guarded(node, lambda: self.control(node, block))
        if isinstance(node.op, OpDef):
            self.guarded(node, lambda: self.op(node))
        elif node.op in REGION_KINDS:
            self.guarded(node, lambda: _REGION_CHECKS[node.op](self, node))
        else:
            self.report(node, f"unknown node kind {node.op!r}")
        inner = frozenset(scope)
        for sub in list(node.blocks):
            if not isinstance(sub, Block):
                self.report(node, f"node holds {sub!r}, which is not a Block")
                continue
            if sub.parent is not node:
                self.report(node, "a nested block's parent does not point at this node")
            self.block(sub, inner)

    def define(self, value: Value, owner: Node | Block, index: int) -> None:
        if not isinstance(value, Value):
            self.report(owner, f"defines {value!r}, which is not a Value")
            return
        if value in self.definer:
            self.report(owner, f"defines a value already defined elsewhere (#{index})")
            return
        self.definer[value] = owner
        if value.owner is not owner or value.index != index:
            kind = "result" if isinstance(owner, Node) else "parameter"
            self.report(owner, f"{kind} #{index} has owner/index that do not point back here")

    def use(self, user: Node | Block, value: Value, scope: set[Value], what: str) -> None:
        if not isinstance(value, Value):
            self.report(user, f"{what} is {value!r}, which is not a Value")
        elif value not in scope:
            self.pending.append((user, value, what))

    def unresolved_uses(self) -> None:
        """Uses not in scope: defined later, in a block that does not enclose them, or never."""
        for user, value, what in self.pending:
            owner = self.definer.get(value)
            at = user if isinstance(user, Node) else user.parent
            home = owner.parent if isinstance(owner, Node) else owner
            if owner is None:
                why = "is not defined anywhere in this graph"
            elif isinstance(owner, Node) and _encloses(owner, at):
                why = "is a result of a region enclosing this use (a cycle)"
            elif home in _enclosing_blocks(user if isinstance(user, Block) else user.parent):
                why = "is used before its definition (out of order, or a cycle)"
            else:
                why = "is defined in a block that does not enclose this use"
            self.report(user, f"{what} {{0}} {why}", value)

    def cycles(self, block: Block) -> None:
        """Report each dependence cycle among `block`'s nodes (data or control edges)."""
        deps = {n: self.dependencies(n, block) for n in block.nodes if isinstance(n, Node)}
        state: dict[Node, int] = {}  # 1: on the DFS stack, 2: done

        def visit(node: Node, path: list[Node]) -> None:
            state[node] = 1
            for dep in deps.get(node, ()):
                if state.get(dep) == 1:
                    cycle = path[path.index(dep):] + [dep]
                    names = " -> ".join("{%d}" % i for i in range(len(cycle)))
                    self.report(dep, f"dependence cycle: {names}", *cycle)
                elif dep not in state:
                    visit(dep, path + [dep])
            state[node] = 2

        for node in deps:
            if node not in state:
                visit(node, [node])

    def dependencies(self, node: Node, block: Block) -> set[Node]:
        """The nodes of `block` whose results `node` (or anything nested in it) reads."""
        used: list[Value] = []
        deps: set[Node] = set()
        for inner in iter_nodes(node):
            used += inner.inputs
            deps.update(c for c in inner.control_inputs if getattr(c, "parent", None) is block)
            for sub in inner.blocks:
                used += sub.results
        for value in used:
            start = owner = self.definer.get(value)
            for _ in range(10_000):  # climb to the ancestor that sits in `block`
                if isinstance(owner, Block):
                    owner = owner.parent
                if not isinstance(owner, Node) or owner.parent is block:
                    break
                owner = owner.parent
            # NOTE: values made inside `node`'s own blocks are not a dependence of `node`
            if isinstance(owner, Node) and owner.parent is block and (owner is not node
                                                                     or start is node):
                deps.add(owner)
        return deps

    def listed_once(self, value: Value, user: Node | Block, index: int, what: str) -> None:
        if not isinstance(value, Value):
            return
        count = sum(1 for u in value.uses if u.user is user and u.index == index)
        if count != 1:
            self.report(user, f"{what} #{index}: the value lists this use {count} times, not once")

    def stale_uses(self, value: Value, definer: Node | Block) -> None:
        """Every use a value lists must be a real operand of a node or block in the graph."""
        for use in value.uses:
            user, i = use.user, use.index
            if isinstance(user, Node) and user in self.nodes:
                real = 0 <= i < len(user.inputs) and user.inputs[i] is value
            elif isinstance(user, Block) and user in self.blocks:
                real = 0 <= i < len(user.results) and user.results[i] is value
            else:
                self.report(definer, f"{{0}} lists a use by {user!r}, which is not in the graph",
                            value)
                continue
            if not real:
                self.report(definer, f"{{0}} lists a use as operand #{i} of {user!r}, "
                                     "which is not that operand", value)

    # -- node kinds -----------------------------------------------------------------------
    def control(self, node: Node, block: Block) -> None:
        for dep in node.control_inputs:
            if not isinstance(dep, Node) or dep.parent is not block:
                self.report(node, f"control input {dep!r} is not a node of the same block")
            elif block.index(dep) >= block.index(node):
                self.report(node, "control input {0} does not come before this node", dep)
            elif not dep.effectful:
                self.report(node, "control input {0} has no side effect", dep)

    def op(self, node: Node) -> None:
        op: OpDef = node.op
        names = op.inputs
        variadic = bool(names) and names[-1].startswith("*")
        fixed = len(names) - variadic
        if len(node.inputs) != fixed and not (variadic and len(node.inputs) > fixed):
            want = f"at least {fixed}" if variadic else str(fixed)
            self.report(node, f"{op.name} takes {want} input(s) {names}, got {len(node.inputs)}")
        # NOTE: `__`-prefixed attributes are codegen hints set by passes (INPLACE_ATTR)
        hints = {k for k in node.attrs if k.startswith("__")}
        missing = sorted(set(op.attrs) - set(node.attrs))
        unknown = sorted(set(node.attrs) - set(op.attrs) - hints)
        inplace = node.attrs.get(INPLACE_ATTR, 0)
        if type(inplace) is not int or not 0 <= inplace < max(len(node.inputs), 1):
            self.report(node, f"{op.name}: {INPLACE_ATTR} must name one of its inputs, got "
                              f"{inplace!r}")
        if missing or unknown:
            self.report(node, f"{op.name}: attributes must be exactly {sorted(op.attrs)} "
                              f"(missing {missing}, unknown {unknown})")
        required = [k for k, v in node.attrs.items() if v is REQUIRED]
        if required:
            self.report(node, f"{op.name}: attribute(s) {required} have no value")
        if len(node.outputs) != 1:
            self.report(node, f"an op node has exactly one result, not {len(node.outputs)}")
        if node.blocks:
            self.report(node, f"op {op.name} cannot own blocks")

    # -- regions --------------------------------------------------------------------------
    def arity(self, node: Node, count: int, want: int, what: str) -> bool:
        if count != want:
            self.report(node, f"{what} {count}, expected {want}")
        return count == want

    def flows(self, node: Node, declared: list[Value], actual: list[Value], what: str) -> None:
        for i, (d, a) in enumerate(zip(declared, actual)):
            if not covers(d.type, a.type):
                self.report(node, f"{what} #{i}: {{0}} has type {a.type}, "
                                  f"which {{1}} of type {d.type} does not cover", a, d)

    def check_if(self, node: Node) -> None:
        if self.arity(node, len(node.inputs), 1, "number of inputs (the condition) is"):
            cond = node.inputs[0]
            if not _is_condition(cond.type):
                self.report(node, f"condition {{0}} has type {cond.type}, expected a scalar "
                                  "or a one-element tensor", cond)
        if not self.arity(node, len(node.blocks), 2, "number of blocks (then, else) is"):
            return
        for role, block in zip(("then", "else"), node.blocks):
            self.arity(node, len(block.params), 0, f"{role} block parameter count is")
            if self.arity(node, len(block.results), len(node.outputs),
                          f"{role} block yields a number of values"):
                self.flows(node, node.outputs, list(block.results), f"{role} yield")

    def check_while(self, node: Node) -> None:
        if not self.arity(node, len(node.blocks), 2, "number of blocks (cond, body) is"):
            return
        cond, body = node.blocks
        n = len(node.inputs)
        self.arity(node, len(node.outputs), n, "number of results (one per carried value) is")
        if self.arity(node, len(cond.params), n, "cond block parameter count is"):
            self.flows(node, cond.params, list(node.inputs), "initial value")
        if self.arity(node, len(cond.results), 1, "cond block yields a number of values"):
            flag = cond.results[0]
            if not _is_condition(flag.type):
                self.report(node, f"cond yields {{0}} of type {flag.type}, expected a "
                                  "scalar or a one-element tensor", flag)
        if self.arity(node, len(body.params), n, "body block parameter count is"):
            self.flows(node, body.params, list(node.inputs), "initial value")
            self.flows(node, node.outputs, body.params, "result")
            if self.arity(node, len(body.results), n, "body block yields a number of values"):
                self.flows(node, body.params, list(body.results), "body yield")
                if len(cond.params) == n:
                    self.flows(node, cond.params, list(body.results), "body yield")

    def check_for(self, node: Node) -> None:
        if len(node.inputs) < 3:
            self.report(node, f"needs (start, stop, step, *init), got {len(node.inputs)} "
                              "inputs")
            return
        for what, bound in zip(("start", "stop", "step"), node.bounds):
            if not _is_index(bound.type):
                self.report(node, f"{what} {{0}} has type {bound.type}, expected int", bound)
        if not self.arity(node, len(node.blocks), 1, "number of blocks (body) is"):
            return
        body, inits = node.blocks[0], list(node.inits)
        self.arity(node, len(node.outputs), len(inits), "number of results (one per init) is")
        if not self.arity(node, len(body.params), 1 + len(inits),
                          "body parameter count (index + carried) is"):
            return
        index, carried = node.induction, node.carried(body)
        if not _is_index(index.type):
            self.report(node, f"index {{0}} has type {index.type}, expected int", index)
        self.flows(node, carried, inits, "initial value")
        self.flows(node, node.outputs, carried, "result")
        if self.arity(node, len(body.results), len(inits), "body block yields a number of values"):
            self.flows(node, carried, list(body.results), "body yield")

    def check_try(self, node: Node) -> None:
        catch = node.attrs.get("catch")
        if set(node.attrs) != {"catch"} or not isinstance(catch, tuple) or not all(
                isinstance(c, type) and issubclass(c, BaseException) for c in catch):
            self.report(node, "a try region has exactly one attribute, catch: a tuple of "
                              "exception classes (empty: no except block)")
            return
        self.arity(node, len(node.inputs), 0, "number of inputs is")
        handlers = 1 if catch else 0
        if len(node.blocks) not in (1 + handlers, 2 + handlers):
            self.report(node, f"number of blocks is {len(node.blocks)}, expected try"
                              f"{', except' if catch else ''} and an optional finally")
            return
        body, handler, final = node.try_body, node.handler, node.finally_
        merged = len(body.results)
        self.arity(node, len(body.params), 0, "try block parameter count is")
        if handler is not None:
            self.arity(node, len(handler.params), 1, "except block parameter count is")
            if self.arity(node, len(handler.results), merged,
                          "except block yields a number of values (as the try block)"):
                self.flows(node, node.outputs[:merged], list(handler.results), "except yield")
        tail = 0
        if final is not None:
            self.arity(node, len(final.params), 0, "finally block parameter count is")
            tail = len(final.results)
            self.flows(node, node.outputs[merged:], list(final.results), "finally yield")
        if self.arity(node, len(node.outputs), merged + tail,
                      "number of results (try yields, then finally yields) is"):
            self.flows(node, node.outputs[:merged], list(body.results), "try yield")


_REGION_CHECKS = {IF: _Checker.check_if, WHILE: _Checker.check_while, FOR: _Checker.check_for,
                  TRY: _Checker.check_try}
