"""Validation of customer records with a hierarchy of custom exceptions; a strict final pass raises."""
# entry: validate_batch([{"id": 1, "email": "ann@example.com", "age": 34, "country": "NO"}, {"id": 2, "email": "bad-address", "age": 19, "country": "SE"}, {"id": 3, "email": "cy@example.org", "age": -4, "country": "DK"}, {"id": 4, "email": "dee@example.net", "age": 51}, {"id": 5, "email": "eve@example.com", "age": 28, "country": "XX"}], True)
import re

EMAIL_RE = re.compile(r"^[\w.+-]+@[\w-]+(\.[\w-]+)+$")
REQUIRED = ("id", "email", "age", "country")
COUNTRIES = ("DK", "FI", "NO", "SE")
MAX_AGE = 130


class ValidationError(Exception):
    def __init__(self, record_id, field, message):
        super().__init__(f"record {record_id}: {field}: {message}")
        self.record_id = record_id
        self.field = field


class MissingField(ValidationError):
    def __init__(self, record_id, field):
        super().__init__(record_id, field, "is required")


class BadValue(ValidationError):
    pass


class BatchRejected(Exception):
    """Raised when strict mode finds any invalid record."""


def check_required(record):
    for field in REQUIRED:
        if field not in record:
            raise MissingField(record.get("id", "?"), field)


def check_email(record):
    if not EMAIL_RE.match(record["email"]):
        raise BadValue(record["id"], "email", f"{record['email']!r} is not an address")


def check_age(record):
    age = record["age"]
    if not isinstance(age, int) or not 0 <= age <= MAX_AGE:
        raise BadValue(record["id"], "age", f"{age} is out of range")


def check_country(record):
    if record["country"] not in COUNTRIES:
        raise BadValue(record["id"], "country", f"unknown code {record['country']}")


CHECKS = [check_required, check_email, check_age, check_country]


def validate(record):
    problems = []
    for check in CHECKS:
        try:
            check(record)
        except MissingField as error:
            problems.append(str(error))
            break
        except BadValue as error:
            problems.append(str(error))
    return problems


def validate_batch(records, strict):
    valid, invalid = [], {}
    checked = 0
    try:
        for record in records:
            checked += 1
            problems = validate(record)
            if problems:
                invalid[record["id"]] = problems
            else:
                valid.append(record["id"])
    finally:
        print(f"checked {checked} records: {len(valid)} valid, {len(invalid)} invalid")
    for record_id, problems in invalid.items():
        for problem in problems:
            print("  " + problem)
    if strict and invalid:
        raise BatchRejected(f"{len(invalid)} of {checked} records failed: ids {sorted(invalid)}")
    return valid
