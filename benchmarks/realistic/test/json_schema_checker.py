"""A checker for a subset of JSON Schema (types, required, properties, items, enum, ranges, patterns, $ref)."""
# entry: check_documents('{"title": "order", "type": "object", "required": ["id", "customer", "lines"], "properties": {"id": {"type": "integer", "minimum": 1}, "customer": {"$ref": "#/definitions/customer"}, "lines": {"type": "array", "minItems": 1, "items": {"$ref": "#/definitions/line"}}, "status": {"enum": ["new", "paid", "shipped"]}}, "additionalProperties": false, "definitions": {"customer": {"type": "object", "required": ["name", "email"], "properties": {"name": {"type": "string", "minLength": 2}, "email": {"type": "string", "pattern": "^[^@ ]+@[^@ ]+$"}}}, "line": {"type": "object", "required": ["sku", "qty"], "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-\\\\d{3}$"}, "qty": {"type": "integer", "minimum": 1, "maximum": 99}, "price": {"type": "number", "minimum": 0}}}}}', ['{"id": 7, "customer": {"name": "Ida", "email": "ida@shop.io"}, "lines": [{"sku": "TEA-001", "qty": 2, "price": 3.5}], "status": "paid"}', '{"id": 0, "customer": {"name": "J", "email": "not an email"}, "lines": [{"sku": "tea-1", "qty": 120}, {"qty": 1}], "status": "lost", "notes": "x"}', '{"id": 9, "customer": {"name": "Kim", "email": "k@x.org"}, "lines": []}', '{"id": 3, "lines": [1, 2'])
# kind: parser
import json
import re
from collections import OrderedDict

TYPE_CHECKS = OrderedDict([
    ("null", lambda v: v is None),
    ("boolean", lambda v: isinstance(v, bool)),
    ("integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    ("number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
    ("string", lambda v: isinstance(v, str)),
    ("array", lambda v: isinstance(v, list)),
    ("object", lambda v: isinstance(v, dict)),
])
MAX_ERRORS = 10
KNOWN_KEYWORDS = {"title", "type", "required", "properties", "items", "enum", "minimum", "maximum",
                  "minLength", "pattern", "minItems", "additionalProperties", "definitions", "$ref"}


class SchemaError(Exception):
    """The schema itself is broken (for instance a $ref that points nowhere)."""


class Violation:
    def __init__(self, path, message):
        self.path = path
        self.message = message

    def __str__(self):
        where = "/".join(str(part) for part in self.path) or "(root)"
        return f"{where}: {self.message}"


def type_name(value):
    for name, check in TYPE_CHECKS.items():
        if name != "number" and check(value):
            return name
    return "number"


class Validator:
    def __init__(self, schema):
        self.root = schema
        self.errors = []

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise SchemaError(f"only local references are supported: {ref}")
        node = self.root
        for part in ref[2:].split("/"):
            if part not in node:
                raise SchemaError(f"unresolvable reference {ref}")
            node = node[part]
        return node

    def report(self, path, message):
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(Violation(path, message))

    def validate(self, value, schema, path):
        if "$ref" in schema:
            schema = self.resolve(schema["$ref"])
        expected = schema.get("type")
        if expected is not None and not TYPE_CHECKS[expected](value):
            self.report(path, f"expected {expected}, got {type_name(value)}")
            return
        if "enum" in schema and value not in schema["enum"]:
            self.report(path, f"{value!r} is not one of {schema['enum']}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.check_range(value, schema, path)
        if isinstance(value, str):
            self.check_string(value, schema, path)
        if isinstance(value, list):
            self.check_array(value, schema, path)
        if isinstance(value, dict):
            self.check_object(value, schema, path)

    def check_range(self, value, schema, path):
        if "minimum" in schema and value < schema["minimum"]:
            self.report(path, f"{value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            self.report(path, f"{value} is above the maximum {schema['maximum']}")

    def check_string(self, value, schema, path):
        if len(value) < schema.get("minLength", 0):
            self.report(path, f"{value!r} is shorter than {schema['minLength']}")
        pattern = schema.get("pattern")
        if pattern and not re.search(pattern, value):
            self.report(path, f"{value!r} does not match {pattern}")

    def check_array(self, value, schema, path):
        if len(value) < schema.get("minItems", 0):
            self.report(path, f"needs at least {schema['minItems']} items")
        item_schema = schema.get("items")
        if item_schema is None:
            return
        for index, item in enumerate(value):
            self.validate(item, item_schema, path + [index])

    def check_object(self, value, schema, path):
        for name in schema.get("required", []):
            if name not in value:
                self.report(path, f"missing required property {name!r}")
        properties = schema.get("properties", {})
        for name, item in value.items():
            if name in properties:
                self.validate(item, properties[name], path + [name])
            elif schema.get("additionalProperties", True) is False:
                self.report(path, f"unexpected property {name!r}")


def check_schema(schema, where="#"):
    """Walk the schema tree and reject unknown keywords, unknown types and bad patterns."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object")
    unknown = sorted(set(schema) - KNOWN_KEYWORDS)
    if unknown:
        raise SchemaError(f"{where}: unknown keywords {unknown}")
    if "type" in schema and schema["type"] not in TYPE_CHECKS:
        raise SchemaError(f"{where}: unknown type {schema['type']!r}")
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except re.error as error:
            raise SchemaError(f"{where}: bad pattern: {error}") from None
    count = 1
    for keyword in ("properties", "definitions"):
        for name, child in schema.get(keyword, {}).items():
            count += check_schema(child, f"{where}/{keyword}/{name}")
    if "items" in schema:
        count += check_schema(schema["items"], f"{where}/items")
    return count


def check_document(schema, text):
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        return [f"invalid JSON at column {error.colno}: {error.msg}"]
    validator = Validator(schema)
    validator.validate(document, schema, [])
    return [str(violation) for violation in validator.errors]


def check_documents(schema_text, documents):
    schema = json.loads(schema_text)
    try:
        nodes = check_schema(schema)
    except SchemaError as error:
        print(f"schema rejected: {error}")
        return None, []
    print(f"schema has {nodes} nodes")
    results = []
    for number, text in enumerate(documents, start=1):
        problems = check_document(schema, text)
        verdict = "valid" if not problems else f"{len(problems)} problem(s)"
        print(f"document {number}: {verdict}")
        for problem in problems:
            print(f"    {problem}")
        results.append(problems)
    summary = json.dumps({"checked": len(documents), "valid": sum(1 for r in results if not r)}, sort_keys=True)
    return summary, results
