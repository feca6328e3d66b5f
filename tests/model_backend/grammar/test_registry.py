"""The registry of the frame grammar's rules: each rule is declared once, with a priority of its own in
its slot, a test that exists and makes the rule win, and a row in docs/grammar.md."""

from __future__ import annotations

import ast
import importlib

import pytest

from model_backend.grammar import registry
from tests.support import REPO


def test_rules_have_distinct_names_and_priorities_in_known_slots() -> None:
    names = [rule.name for rule in registry.RULES]
    assert len(names) == len(set(names))
    for slot in registry.SLOTS:
        priorities = [rule.priority for rule in registry.rules_of(slot)]
        assert priorities and len(priorities) == len(set(priorities)) and priorities == sorted(priorities)
    assert {rule.slot for rule in registry.RULES} == set(registry.SLOTS)
    assert all(rule.behaviour and rule.test for rule in registry.RULES)


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda rule: rule.name)
def test_each_rule_names_a_test_that_exists_and_makes_it_win(rule: registry.Rule) -> None:
    path, _, function = rule.test.partition("::")
    source = (REPO / path).read_text()
    defined = {node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}
    assert function.startswith("test_") and function in defined, rule.test
    test = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), function)
    with registry.recording() as won:
        test()
    assert rule.name in won, f"{rule.test} does not make {rule.name} win"


def test_docs_list_every_rule_once() -> None:
    rows = [line for line in (REPO / "docs" / "grammar.md").read_text().splitlines() if line.startswith("| `")]
    listed = [row.split("|")[1].strip().strip("`") for row in rows]
    assert sorted(listed) == sorted(rule.name for rule in registry.RULES)
    for rule in registry.RULES:
        row = rows[listed.index(rule.name)]
        assert f"| {rule.priority} |" in row and f"`{rule.slot}`" in row and rule.behaviour.replace("|", "\\|") in row
        path, _, function = rule.test.partition("::")
        assert f"(../{path})::`{function}`" in row
