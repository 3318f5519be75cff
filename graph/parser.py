"""Parses the text IR that `printer.print_graph` writes back into a `Graph`; nodes get their
OpDefs from the registry and the types written in the text (nothing is re-inferred).

Grammar (newlines are insignificant; `;` may separate statements; `#` starts a comment, and a
comment `# file:line[:col]` on the line where a node's header ends is that node's location):

    graph     := 'graph' '@' (IDENT | STRING) params '{' ['meta' dict] stmt* 'return' [refs] '}'
    params    := '(' [VALUE ':' type (',' VALUE ':' type)*] ')'
    stmt      := [lhs '='] (op | region) [';']
    lhs       := VALUE (',' VALUE)* | LABEL            -- LABEL (`^name`) names a 0-output node
    op        := IDENT '(' [refs] [[','] kw (',' kw)*] ')' [after] [':' types]
    kw        := IDENT '=' attr                        -- an attribute; omitted ones default
    region    := ('if'|'while'|'for'|'try') [refs] ['[' kw (',' kw)* ']'] [after] [':' types]
                 '{' (ROLE [params] '{' stmt* 'yield' [refs] '}')* '}'
    after     := 'after' (VALUE | LABEL) (',' (VALUE | LABEL))*   -- control edges, by node
    refs      := VALUE (',' VALUE)*
    types     := type (',' type)*
    type      := DTYPE '[' [dim (',' dim)*] ']' | 'int' | 'float' | 'bool' | 'none' | 'str'
               | 'any' | 'list' '[' type ']' | '(' ')' | '(' type ',' ')' | '(' type (',' type)+ ')'
    dim       := INT | '?' | SIZE                      -- a known size, unknown, or symbolic
    SIZE      := an affine expression of SYMBOLs with integer floor division, as Python writes
                 it (`N`, `2*N+1`, `(N+1)//2-3`); SYMBOL := [A-Z][A-Z0-9_]*
    attr      := INT | FLOAT | ['-'] ('inf' | 'nan') | STRING | 'True' | 'False' | 'None' | '...'
               | '$' INT | 'slice' '(' attr ',' attr ',' attr ')' | tuple | list | dict
               | DTYPE | 'dtype' '(' STRING ')' | DTYPE '(' item ')'        -- np.dtype, np.generic
               | 'array' '<' type '>' '[' [item (',' item)*] ']'    -- np.ndarray, items in C order
               | builtin type name (int, ValueError, ...) | 'np.' NAME      -- type objects
               | SIZE | 'sym' '<' SIZE '>'       -- a symbolic size (bare when it starts with one)

ROLE is then/else (if), cond/body (while), body (for), try/[except]/[finally] (try, with
`[catch=(...)]` when it has an except block); for inputs are (start, stop, step, *init).
VALUE is `%name` ([A-Za-z0-9_.]; all digits, like `%3`, means no name hint); names are scoped
by block. A node's results are the `%names` left of `=`, typed by the `: types` list.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from ..ops import lookup
from .ir import REGION_KINDS, Block, Graph, Loc, Node, Value
from .literals import IRParseError, Tok, TokenStream, parse_attr, parse_type
from .printer import region_roles
from .types import Type

__all__ = ["IRParseError", "parse_attr", "parse_graph", "parse_type"]

_LOC = re.compile(r"(.*?):(\d+)(?::(\d+))?")


def parse_graph(text: str) -> Graph:
    """The graph written in `text` (see the module docstring for the grammar)."""
    parser = _Parser(text)
    graph = parser.graph()
    parser.expect_end()
    return graph


class _Parser(TokenStream):
    """Recursive descent over statements; `scopes` maps printed names to values, per block."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.scopes: list[dict[str, Value | Node]] = [{}]

    def take_loc(self) -> Loc | None:
        """The location comment on the line of the last token consumed, if any (used once)."""
        line = self.tokens[self.i - 1].line
        m = _LOC.fullmatch(self.comments.get(line, ""))
        if m is None:
            return None
        del self.comments[line]
        return Loc(m.group(1), int(m.group(2)), int(m.group(3) or 0))

    # -- names ----------------------------------------------------------------------------
    def define(self, tok: Tok, item: Value | Node) -> None:
        if any(tok.text in scope for scope in self.scopes):
            self.fail(f"{tok.text} is already defined", tok.pos)
        self.scopes[-1][tok.text] = item

    def resolve(self, tok: Tok) -> Value | Node:
        for scope in reversed(self.scopes):
            if tok.text in scope:
                return scope[tok.text]
        self.fail(f"{tok.text} is not defined here", tok.pos)

    def use(self) -> Value:
        value = self.resolve(self.expect_kind("value", "a value (%name)"))
        assert isinstance(value, Value)
        return value

    def refs(self) -> list[Value]:
        values = [self.use()]
        while self.accept(","):
            values.append(self.use())
        return values

    @staticmethod
    def hint(tok: Tok) -> str:
        name = tok.text[1:]
        return "" if name.isdigit() else name

    # -- structure ------------------------------------------------------------------------
    def graph(self) -> Graph:
        self.expect("graph")
        self.expect("@")
        tok = self.next()
        if tok.kind not in ("ident", "string"):
            self.fail("expected the graph's name after '@'", tok.pos)
        name = tok.text if tok.kind == "ident" else ast.literal_eval(tok.text)
        body = self.params_block()
        self.expect("{")
        meta: dict = {}
        if self.at("meta") and self.peek(1).text == "{":
            self.next()
            meta = self.attr()
            if not isinstance(meta, dict):
                self.fail("meta must be a dict {key: value, ...}")
        graph = Graph(name, body)
        try:
            graph.set_facts(meta)
        except ValueError as err:
            self.fail(str(err))
        self.block_body(body, "return")
        self.expect("}")
        return graph

    def params_block(self) -> Block:
        self.expect("(")
        names: list[Tok] = []
        types: list[Type] = []
        while not self.at(")"):
            names.append(self.expect_kind("value", "a parameter (%name)"))
            self.expect(":")
            types.append(self.type())
            if not self.accept(","):
                break
        self.expect(")")
        block = Block(types, [self.hint(t) for t in names])
        for tok, param in zip(names, block.params):
            self.define(tok, param)
        return block

    def block_body(self, block: Block, terminator: str) -> None:
        while not self.accept(terminator):
            if self.peek().kind == "end" or self.at("}"):
                self.fail(f"expected a statement or {terminator!r}")
            self.statement(block)
            self.accept(";")
        results = self.refs() if self.peek().kind == "value" else []
        block.set_results(results)
        self.accept(";")

    def statement(self, block: Block) -> None:
        outs: list[Tok] = []
        label = None
        if self.peek().kind == "value":
            outs.append(self.next())
            while self.accept(","):
                outs.append(self.expect_kind("value", "a result name (%name)"))
            self.expect("=")
        elif self.peek().kind == "label":
            label = self.next()
            self.expect("=")
        head = self.peek()
        if head.kind == "ident" and head.text in REGION_KINDS:
            node = self.region([self.hint(t) for t in outs])
        else:
            node = self.op([self.hint(t) for t in outs])
        if label is not None and node.outputs:
            self.fail("a label names a node without results; use %names", label.pos)
        if len(node.outputs) != len(outs):
            self.fail(f"{len(outs)} result name(s) but {len(node.outputs)} type(s)", head.pos)
        block.append(node)
        for tok, value in zip(outs, node.outputs):
            self.define(tok, value)
        if label is not None:
            self.define(label, node)

    def op(self, names: list[str]) -> Node:
        head = self.expect_kind("ident", "an op name")
        try:
            opdef = lookup(head.text)
        except KeyError:
            self.fail(f"unknown op {head.text!r}", head.pos)
        self.expect("(")
        inputs: list[Value] = []
        attrs: dict[str, Any] = {}
        while not self.at(")"):
            if self.peek().kind == "value" and not attrs:
                inputs.append(self.use())
            elif self.peek().kind == "ident" and self.peek(1).text == "=":
                self.keyword(attrs)
            else:
                self.fail("expected an input (%name) or an attribute (name=value)")
            if not self.accept(","):
                break
        self.expect(")")
        control = self.after()
        types = self.types()
        try:
            # NOTE: `__`-prefixed attributes are codegen hints a pass set; they print and parse
            hints = {k: v for k, v in attrs.items() if k.startswith("__")}
            attrs = {**opdef.full_attrs({k: v for k, v in attrs.items() if k not in hints}),
                     **hints}
        except TypeError as exc:
            self.fail(str(exc), head.pos)
        return Node(opdef, inputs, attrs, types, names, loc=self.take_loc(),
                    control_inputs=control)

    def keyword(self, attrs: dict[str, Any]) -> None:
        key = self.expect_kind("ident", "an attribute name")
        self.expect("=")
        if key.text in attrs:
            self.fail(f"attribute {key.text!r} given twice", key.pos)
        attrs[key.text] = self.attr()

    def region(self, names: list[str]) -> Node:
        kind = self.next().text
        inputs = self.refs() if self.peek().kind == "value" else []
        attrs: dict[str, Any] = {}
        if self.accept("["):
            while not self.accept("]"):
                self.keyword(attrs)
                self.accept(",")
        control = self.after()
        types = self.types()
        self.expect("{")
        loc = self.take_loc()
        blocks: list[Block] = []
        roles = region_roles(kind, attrs)
        while not self.accept("}"):
            role = self.peek()
            if len(blocks) >= len(roles) or role.text != roles[len(blocks)]:
                expected = f"a {roles[len(blocks)]!r} block" if len(blocks) < len(roles) else "'}'"
                self.fail(f"{kind}: expected {expected}, found {self.describe(role)}")
            self.next()
            self.scopes.append({})
            block = self.params_block() if self.at("(") else Block()
            self.expect("{")
            self.block_body(block, "yield")
            self.expect("}")
            self.scopes.pop()
            blocks.append(block)
        return Node(kind, inputs, attrs, types, names, blocks, loc, control)

    def after(self) -> list[Node]:
        if not self.accept("after"):
            return []
        nodes = [self.node_ref()]
        while self.accept(","):
            nodes.append(self.node_ref())
        return nodes

    def node_ref(self) -> Node:
        tok = self.next()
        if tok.kind not in ("value", "label"):
            self.fail("expected a node after 'after' (%value or ^label)", tok.pos)
        item = self.resolve(tok)
        node = item.producer if isinstance(item, Value) else item
        if node is None:
            self.fail(f"{tok.text} is a block parameter, not a node's result", tok.pos)
        return node

    def types(self) -> list[Type]:
        if not self.accept(":"):
            return []
        types = [self.type()]
        while self.accept(","):
            types.append(self.type())
        return types

