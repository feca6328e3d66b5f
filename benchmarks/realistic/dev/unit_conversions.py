"""A small bank of unit conversions registered by a decorator, with rounding applied by a wrapper."""
# entry: convert_all([(100, "c_to_f"), (5, "km_to_miles"), (3, "kg_to_lb"), (-40, "f_to_c"), (7, "m_to_ft"), (21.5, "c_to_f"), (42.195, "km_to_miles"), (98.6, "f_to_c")])

PRECISION = 2
REGISTRY = {}


def conversion(name, unit):
    def register(fn):
        def wrapper(value):
            result = fn(value)
            return round(result, PRECISION), unit

        REGISTRY[name] = wrapper
        return wrapper

    return register


@conversion("c_to_f", "F")
def celsius_to_fahrenheit(c):
    return c * 9 / 5 + 32


@conversion("f_to_c", "C")
def fahrenheit_to_celsius(f):
    return (f - 32) * 5 / 9


@conversion("km_to_miles", "mi")
def km_to_miles(km):
    return km * 0.621371


@conversion("kg_to_lb", "lb")
def kg_to_pounds(kg):
    return kg * 2.20462


def convert_all(requests):
    lines = []
    for value, name in requests:
        converter = REGISTRY.get(name)
        if converter is None:
            lines.append(f"{name}: unknown")
            continue
        amount, unit = converter(value)
        lines.append(f"{value} -> {amount} {unit}")
    for line in lines:
        print(line)
    return lines
