"""Validates new passwords against a policy and raises on the first password that breaks it."""
# entry: register_users([("ann", "Tr0ub4dor&3"), ("dan", "Blue!Sky42"), ("eli", "N0-Way-Home"), ("fay", "Sunny#Day7"), ("bob", "hunter2"), ("cy", "Correct-Horse-9")])

import re

MIN_LENGTH = 8
RULES = [
    (r"[A-Z]", "an upper-case letter"),
    (r"[a-z]", "a lower-case letter"),
    (r"[0-9]", "a digit"),
    (r"[^A-Za-z0-9]", "a symbol"),
]


class WeakPasswordError(Exception):
    def __init__(self, user, missing):
        super().__init__(f"{user}: password needs {', '.join(missing)}")
        self.user = user
        self.missing = missing


def missing_rules(password):
    missing = [label for pattern, label in RULES if not re.search(pattern, password)]
    if len(password) < MIN_LENGTH:
        missing.insert(0, f"at least {MIN_LENGTH} characters")
    return missing


def check(user, password):
    missing = missing_rules(password)
    if missing:
        raise WeakPasswordError(user, missing)
    return True


def register_users(pairs):
    accepted = []
    for user, password in pairs:
        check(user, password)
        accepted.append(user)
        print(f"registered {user}")
    return accepted
