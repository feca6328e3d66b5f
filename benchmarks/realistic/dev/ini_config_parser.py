"""A line-oriented INI parser driven by a small state machine, with continuation lines and interpolation."""
# entry: parse_ini("; service settings\n[server]\nhost = example.org\nport = 8080\nbanner = Welcome to\n  ${server:host}\n\n[paths]\nroot = /srv/app\nlogs = ${paths:root}/logs\ncache = ${paths:tmp}/cache\n\n[server]\nport = 9090\n[broken\nkey without value\n")
# kind: parser, state_machine

import json
import re
from collections import OrderedDict

START, IN_SECTION, CONTINUATION = "start", "in_section", "continuation"
REFERENCE = re.compile(r"\$\{(\w+):(\w+)\}")


class IniSyntaxError(Exception):
    def __init__(self, number, line, reason):
        super().__init__(f"line {number}: {reason}: {line!r}")
        self.number = number


class IniParser:
    def __init__(self):
        self.sections = OrderedDict()
        self.state = START
        self.section = None
        self.key = None
        self.problems = []

    def feed(self, number, line):
        stripped = line.strip()
        if self.state == CONTINUATION:
            if line[:1] in (" ", "\t") and stripped:
                self.sections[self.section][self.key] += " " + stripped
                return
            self.state = IN_SECTION
        if not stripped or stripped[0] in ";#":
            return
        if stripped.startswith("["):
            if not stripped.endswith("]"):
                raise IniSyntaxError(number, line, "unclosed section header")
            self.section = stripped[1:-1].strip()
            self.sections.setdefault(self.section, OrderedDict())
            self.state = IN_SECTION
            return
        if self.state == START:
            raise IniSyntaxError(number, line, "key before any section")
        if "=" not in stripped:
            raise IniSyntaxError(number, line, "expected key = value")
        key, value = (part.strip() for part in stripped.split("=", 1))
        self.sections[self.section][key] = value
        self.key = key
        self.state = CONTINUATION

    def parse(self, text):
        for number, line in enumerate(text.split("\n"), start=1):
            try:
                self.feed(number, line)
            except IniSyntaxError as exc:
                self.problems.append(str(exc))
        return self.sections


def interpolate(sections):
    missing = []

    def lookup(match):
        section, key = match.groups()
        if key in sections.get(section, {}):
            return sections[section][key]
        missing.append(match.group(0))
        return match.group(0)

    resolved = OrderedDict()
    for name, values in sections.items():
        resolved[name] = OrderedDict((k, REFERENCE.sub(lookup, v)) for k, v in values.items())
    return resolved, missing


def parse_ini(text):
    parser = IniParser()
    sections = parser.parse(text)
    resolved, missing = interpolate(sections)
    for problem in parser.problems:
        print(problem)
    if missing:
        print("unresolved:", ", ".join(missing))
    return json.loads(json.dumps(resolved))
