"""Validates a JSON service configuration against a schema; the entry's config has a bad port."""
# entry: load_config('{"name": "api", "port": 80800, "debug": false, "workers": 4, "routes": [{"path": "/", "methods": ["GET"]}, {"path": "/items", "methods": ["GET", "POST"]}], "db": {"host": "db.local", "pool": 5}}')

import json

SCHEMA = {
    "name": str,
    "port": ("int", 1, 65535),
    "debug": bool,
    "workers": ("int", 1, 64),
    "routes": [{"path": str, "methods": [str]}],
    "db": {"host": str, "pool": ("int", 1, 100)},
}


class ConfigError(Exception):
    def __init__(self, path, problem):
        super().__init__(f"{path or '<root>'}: {problem}")
        self.path = path


def check_range(value, spec, path):
    _, low, high = spec
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(path, f"expected an integer, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(path, f"{value} is outside {low}..{high}")


def validate(value, schema, path=""):
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise ConfigError(path, "expected an object")
        for key, sub in schema.items():
            if key not in value:
                raise ConfigError(path, f"missing key {key!r}")
            validate(value[key], sub, f"{path}.{key}" if path else key)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise ConfigError(path, "expected a list")
        for index, item in enumerate(value):
            validate(item, schema[0], f"{path}[{index}]")
    elif isinstance(schema, tuple):
        check_range(value, schema, path)
    elif not isinstance(value, schema):
        raise ConfigError(path, f"expected {schema.__name__}")


def collect_problems(config):
    problems = []
    for key in SCHEMA:
        try:
            validate(config.get(key), SCHEMA[key], key)
        except ConfigError as exc:
            problems.append(str(exc))
    return problems


def load_config(text):
    config = json.loads(text)
    problems = collect_problems(config)
    for problem in problems:
        print("problem:", problem)
    validate(config, SCHEMA)
    return config
