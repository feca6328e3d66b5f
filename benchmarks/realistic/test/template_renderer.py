"""A tiny template engine with {{ name|filter }} substitutions and {% for %}/{% if %} blocks, built on re."""
# entry: render_page("Hello {{ user.name|title }}!\n{% for item in cart %}- {{ item.name|upper }} x{{ item.qty }}\n{% endfor %}{% if vip %}Thanks for being VIP, {{ user.name }}.\n{% endif %}Total: {{ total|money }}", {"user": {"name": "ada lovelace"}, "cart": [{"name": "tea", "qty": 2}, {"name": "scones", "qty": 6}], "vip": True, "total": 1425})
# kind: parser, interpreter
import re

VAR_RE = re.compile(r"\{\{\s*([\w.]+)\s*(?:\|\s*(\w+))?\s*\}\}")
FOR_RE = re.compile(r"\{%\s*for (\w+) in ([\w.]+)\s*%\}(.*?)\{%\s*endfor\s*%\}", re.S)
IF_RE = re.compile(r"\{%\s*if ([\w.]+)\s*%\}(.*?)\{%\s*endif\s*%\}", re.S)


class TemplateError(Exception):
    pass


def make_filters(currency):
    def money(value):
        return f"{currency}{value / 100:,.2f}"

    return {
        "upper": str.upper,
        "title": str.title,
        "money": money,
        "length": len,
    }


FILTERS = make_filters("$")


def lookup(context, dotted):
    value = context
    for part in dotted.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise TemplateError(f"undefined variable {dotted!r}")
    return value


def substitute(text, context):
    def replace(match):
        name, filter_name = match.group(1), match.group(2)
        value = lookup(context, name)
        if filter_name:
            if filter_name not in FILTERS:
                raise TemplateError(f"unknown filter {filter_name!r}")
            value = FILTERS[filter_name](value)
        return str(value)

    return VAR_RE.sub(replace, text)


def expand_loops(text, context):
    def replace(match):
        var, source, body = match.groups()
        pieces = []
        for item in lookup(context, source):
            scope = dict(context)
            scope[var] = item
            pieces.append(substitute(body, scope))
        return "".join(pieces)

    return FOR_RE.sub(replace, text)


def expand_conditions(text, context):
    def replace(match):
        name, body = match.groups()
        try:
            flag = lookup(context, name)
        except TemplateError:
            flag = False
        return body if flag else ""

    return IF_RE.sub(replace, text)


def render(template, context):
    text = expand_loops(template, context)
    text = expand_conditions(text, context)
    return substitute(text, context)


def render_page(template, context):
    output = render(template, context)
    print(output)
    return output.count("\n") + 1, len(output)
