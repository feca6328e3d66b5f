"""Retries flaky service calls with a retry decorator, custom exceptions and exponential backoff."""
# entry: sync_all(["users", "orders", "invoices", "audit"], {"users": 0, "orders": 2, "invoices": 5, "audit": 1})

BASE_DELAY = 0.5


class ServiceError(Exception):
    pass


class TransientError(ServiceError):
    pass


class GiveUp(ServiceError):
    """Raised as GiveUp(name, attempts) once a call has used up its attempts."""

    @property
    def attempts(self):
        return self.args[1]

    def __str__(self):
        name, attempts = self.args
        return f"{name} failed after {attempts} attempts"


def retry(max_attempts, delays):
    def decorate(fn):
        def wrapper(name, *args):
            attempt = 0
            while True:
                attempt += 1
                try:
                    return fn(name, *args)
                except TransientError as exc:
                    if attempt >= max_attempts:
                        raise GiveUp(name, attempt) from exc
                    delays.append(BASE_DELAY * 2 ** (attempt - 1))
                finally:
                    print(f"{name}: attempt {attempt} done")

        return wrapper

    return decorate


class FlakyService:
    def __init__(self, failures):
        self.failures = dict(failures)
        self.calls = 0

    def fetch(self, name):
        self.calls += 1
        if self.failures.get(name, 0) > 0:
            self.failures[name] -= 1
            raise TransientError(f"{name} timed out")
        return f"{name}:ok"


def sync_all(names, failures):
    service = FlakyService(failures)
    delays = []

    @retry(3, delays)
    def fetch(name):
        return service.fetch(name)

    results = {}
    for name in names:
        try:
            results[name] = fetch(name)
        except GiveUp as exc:
            results[name] = f"gave up ({exc.attempts})"
    return {"results": results, "calls": service.calls, "waited": sum(delays)}
