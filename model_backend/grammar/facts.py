"""What the grammar may mention about a program: `ProgramFacts`, derived from its source text alone,
never by running it. `ProgramFacts.of(program)` assembles them from the fact builders of the rule
families (model_backend/grammar/): each builder reads the parsed program once and gives its fields.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

from model_backend import safe_ast
from model_backend.grammar.calls import (
    Binding,
    CallExpression,
)
from model_backend.grammar.comprehensions import (
    ComprehensionCall,
    ComprehensionLoop,
    symbol_table,
)
from model_backend.grammar.containers import (
    AttributeUpdate,
    ItemStore,
)
from model_backend.grammar.lines import TruthTest
from model_backend.grammar.loops import ForLoop
from model_backend.grammar.objects import StableForms
from model_backend.grammar.rules import FACT_BUILDERS
from model_backend.grammar.source import Source, program_facts, uses_dynamic_lookup
from model_backend.grammar.syntax import ArgumentSource
from model_backend.program import Program
from model_backend.state import State


@dataclass(frozen=True)
class ProgramFacts:
    """What the grammar may mention: derived from the source text alone, never by running it."""

    lines: dict[int, str]  # line number -> source text (non-blank lines)
    names: frozenset[str]  # identifiers that can be variables
    functions: frozenset[str]  # code names a frame can have
    spans: dict[str, frozenset[int]]  # def name -> the lines of its definition(s), decorators included
    # def name -> the only lines a frame of it can be called from, for functions that nothing but a
    # direct call by name reaches (see `direct_call_lines`); functions not listed may be called from anywhere
    call_lines: dict[str, frozenset[int]] = field(default_factory=dict)
    # code name -> the names its frames can hold as locals (see `scope_names`); absent: any of `names`
    scopes: dict[str, frozenset[str]] = field(default_factory=dict)
    # "<listcomp>", "<setcomp>", "<dictcomp>" -> the (caller's code name, caller's line) pairs a frame of
    # that kind can be called from (see `comprehension_callers`); absent: from anywhere
    comprehension_callers: dict[str, frozenset[tuple[str, int]]] = field(default_factory=dict)
    # line -> the lines whose event can come next in the same frame (model_backend/grammar/lines.py);
    # absent: any line
    next_lines: dict[int, frozenset[int]] = field(default_factory=dict)
    ends: frozenset[int] = frozenset()  # of next_lines' lines, those a step can end the frame from
    # a function's call-event line -> (its name, the lines its first line event can be on) (lines.body_starts)
    body_starts: dict[int, tuple[str, frozenset[int]]] = field(default_factory=dict)
    # code name -> the lines its call events can be on (lines.call_event_lines); absent: any line of its defs
    call_event_lines: dict[str, frozenset[int]] = field(default_factory=dict)
    # line -> the names a step from there can bind in its frame; absent: any (bindings.line_bindings)
    binds: dict[int, frozenset[str]] = field(default_factory=dict)
    shared: frozenset[str] = frozenset()  # names any call can rebind (`global`, `nonlocal`)
    stable: StableForms = StableForms()  # the values only a new binding can change (objects.stable_forms)
    # code name -> the parameters no def of that name binds again (objects.unchanging_parameters)
    unchanging: dict[str, frozenset[str]] = field(default_factory=dict)
    # line -> (name, `<__main__.C object>`) where it is only `name = C(...)` (objects.constructed_objects;
    # trace format 2 only)
    constructed: dict[int, tuple[str, str]] = field(default_factory=dict)
    entry_function: str | None = None  # the entry call's function, where it is the only outermost frame (objects.entry_function)
    sealed: frozenset[str] = frozenset()  # its parameters whose objects no code changes (sealed.sealed_parameters)
    suspending: frozenset[str] = frozenset()  # code names whose frames can yield or await (generators, coroutines)
    # line -> (name, repr) where the line is only `name = <literal>`, and line -> (name, other) where it
    # is only `name = other` (bindings.simple_assignments)
    literals: dict[int, tuple[str, str]] = field(default_factory=dict)
    copies: dict[int, tuple[str, str]] = field(default_factory=dict)
    # No repr of the program's own can print braces as it likes (the source never names __repr__), so a
    # `{...}` in a value is a dict or a set, whose keys are distinct
    unique_keys: bool = False
    must_call: frozenset[int] = frozenset()  # lines that step_into leaves by a call (calls.must_call_lines)
    # line -> (NAME, classes): step_into leaves it by a call where NAME shows an instance of one of the
    # classes (calls.method_call_lines)
    method_calls: dict[int, tuple[tuple[str, frozenset[str]], ...]] = field(default_factory=dict)
    # line -> the names it reads, where it calls nothing and changes no object if those hold builtin
    # values (containers.inert_lines)
    inert: dict[int, frozenset[str]] = field(default_factory=dict)
    # line -> (names, expression) for `NAME = EXPR`, `A, B = EXPR`, `NAME op= EXPR`, and line -> EXPR for
    # `return EXPR`, where EXPR is made of variables, operators and builtins (bindings.computed_values)
    computed: dict[int, tuple[tuple[str, ...], ast.expr]] = field(default_factory=dict)
    computed_returns: dict[int, ast.expr] = field(default_factory=dict)
    printed: dict[int, ast.Call] = field(default_factory=dict)  # line -> `print(...)` (printing.printed_lines)
    pure: frozenset[str] = frozenset()  # functions whose calls change no object of their callers (calls.pure_functions)
    # line -> (names bound or None for `return`, the function called, the expression around its value)
    # (calls.call_expressions)
    call_expressions: dict[int, CallExpression] = field(default_factory=dict)
    # line -> (container, statement, name bound to what its method returns) (containers.mutations)
    mutations: dict[int, tuple[str, ast.stmt, str | None]] = field(default_factory=dict)
    # line -> (the names it reads, the names through which it changes objects), where it changes objects
    # only through plain names if those hold builtin values (containers.mutating_lines)
    mutating: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    returns: dict[int, str] = field(default_factory=dict)  # line -> name, where it is only `return name`
    # line -> names, where it is only `return a, b, ...` (calls.returned_tuples)
    returned_tuples: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # line -> (name, repr) pairs, where it only imports names of a known module (bindings.imported_values)
    imports: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    truths: dict[int, TruthTest] = field(default_factory=dict)  # header line -> `if NAME:`... (lines.truth_tests)
    # (line, function) -> the parameters of the one call the line makes (calls.call_bindings)
    calls: dict[tuple[int, str], Binding] = field(default_factory=dict)
    # (line, "<listcomp>"...) -> the comprehension's `.0` and free names at its call event (comprehensions.comprehension_calls)
    comprehensions: dict[tuple[int, str], ComprehensionCall] = field(default_factory=dict)
    loops: dict[int, ForLoop] = field(default_factory=dict)  # header line -> `for` loop (loops.for_loops)
    # (line, "<listcomp>"...) -> the comprehension's loop (comprehensions.comprehension_loops)
    comprehension_loops: dict[tuple[int, str], ComprehensionLoop] = field(default_factory=dict)
    # (line, inner code name) -> (outer code name, its loop) (comprehensions.nested_comprehension_loops)
    nested_loops: dict[tuple[int, str], tuple[str, ComprehensionLoop]] = field(default_factory=dict)
    appends: dict[int, tuple[str, ArgumentSource]] = field(default_factory=dict)  # containers.appended_values
    stores: dict[int, ItemStore] = field(default_factory=dict)  # line -> one item stored (containers.item_stores)
    # line -> (name, function) where the line is only `name = function(...)` (calls.call_results)
    call_results: dict[int, tuple[str, str]] = field(default_factory=dict)
    # line -> (the order of its statement's line events, the statement's lines) (lines.statement_line_orders)
    line_orders: dict[int, tuple[tuple[int, ...], tuple[int, int]]] = field(default_factory=dict)
    # Only for a model that reads trace format version 3 (objects written with their fields; `of(...,
    # objects=True)`): class name -> the names its body defines (containers.plain_classes), and line -> the one
    # attribute it sets or appends to (containers.attribute_updates)
    classes: dict[str, frozenset[str]] = field(default_factory=dict)
    attribute_updates: dict[int, AttributeUpdate] = field(default_factory=dict)

    def in_entry_frame(self, state: State | None) -> bool:
        """Whether `state` is in the entry call's frame, the only frame of the outermost depth
        (objects.entry_function): every such state is of one frame instance."""
        return (state is not None and state.exit is None and len(state.stack) == 1
                and state.stack[0].function == self.entry_function)

    def sealed_in(self, state: State | None) -> frozenset[str]:
        """The sealed parameters (`sealed`), which show one value at every stop of the entry frame, where
        `state` is in it; nothing elsewhere."""
        return self.sealed if self.in_entry_frame(state) else frozenset()

    def locals_of(self, function: str | None) -> frozenset[str]:
        """The names a frame of `function` may show among its locals."""
        scope = self.scopes.get(function) if function is not None else None
        return self.names if scope is None else scope & self.names

    @cached_property
    def frame_lines(self) -> frozenset[int]:
        return frozenset(n for n in self.lines if any(self.may_be_in(f, n) for f in self.functions))

    def may_call(self, caller: str, line: int, function: str) -> bool:
        """Whether a frame of `caller` on `line` can have a frame of `function` right above it."""
        lines = self.call_lines.get(function)
        if lines is not None and line not in lines:
            return False
        callers = self.comprehension_callers.get(function)
        return callers is None or (caller, line) in callers

    @cached_property
    def callees_at(self) -> dict[tuple[str, int], frozenset[str]]:
        """(function, line) -> the functions a frame of that function on that line can call."""
        return {(c, n): frozenset(f for f in self.functions if self.may_call(c, n, f))
                for c in self.functions for n in self.lines if self.may_be_in(c, n)}

    @cached_property
    def callees_of(self) -> dict[str, frozenset[str]]:
        """Function -> the functions a frame of it can call, from any of its lines."""
        return {f: frozenset().union(*(self.callees_at[f, n] for n in self.lines if self.may_be_in(f, n)))
                for f in self.functions}

    def may_be_in(self, function: str, line: int) -> bool:
        """Whether a frame of `function` can be on `line` (unknown names, e.g. <module>, allow any)."""
        span = self.spans.get(function)
        return span is None or line in span

    @classmethod
    def of(cls, program: Program, objects: bool = False) -> ProgramFacts:
        """The facts of `program`; `objects`: for a model that reads trace format version 3 or later,
        whose values write the program's objects with their fields."""
        try:
            tree = safe_ast.parse(program.source)
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])
        source = Source(program, tree, symbol_table(program.source), uses_dynamic_lookup(tree), objects)
        fields = program_facts(source)
        for builder in FACT_BUILDERS:
            fields.update(builder(source))
        return cls(**fields)
