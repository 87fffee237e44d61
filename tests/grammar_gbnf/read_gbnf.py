"""Reads GBNF grammars with llguidance's own GBNF reader and prints their rules as JSON.

Input (stdin): a JSON list of GBNF texts. Output (stdout): a JSON list, one entry per text:
{"rules": {name: node}} or {"error": message}. A node is ["lit", raw text], ["rx", class text],
["ref", name], ["seq", [nodes]], ["alt", [nodes]] or ["rep", node, min, max or null].
"""

import json
import sys

from llguidance.gbnf_to_lark import (
    AlternativeNode,
    GrammarParser,
    LiteralNode,
    RegexNode,
    RepetitionNode,
    RuleRefNode,
    SequenceNode,
)


def node(n):
    if isinstance(n, LiteralNode):
        return ["lit", n.value]
    if isinstance(n, RegexNode):
        return ["rx", n.rx]
    if isinstance(n, RuleRefNode):
        return ["ref", n.name]
    if isinstance(n, SequenceNode):
        return ["seq", [node(x) for x in n.nodes]]
    if isinstance(n, AlternativeNode):
        return ["alt", [node(x) for x in n.alternatives]]
    if isinstance(n, RepetitionNode):
        return ["rep", node(n.node), n.min_times, n.max_times]
    raise TypeError(type(n).__name__)


def read(text):
    try:
        rules = GrammarParser().parse(text)
        return {"rules": {name: node(r.alternatives.simplify()) for name, r in rules.items()}}
    except Exception as e:  # the reader's own errors, reported per grammar
        return {"error": str(e)}


json.dump([read(t) for t in json.load(sys.stdin)], sys.stdout)
