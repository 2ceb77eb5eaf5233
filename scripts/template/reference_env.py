"""The reference environment shared by the expectation generators: Python Jinja2 configured as
Hugging Face transformers' apply_chat_template (the same setup as shared/oracle/render.py),
with strftime_now reading a settable clock."""
import json
from datetime import datetime

import jinja2
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

DEFAULT_NOW = "2026-11-30T00:00:00"
NOW = [DEFAULT_NOW]


class Generation(Extension):
    """{% generation %}...{% endgeneration %} renders its body (as render.py does)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_support"), [], [], body).set_lineno(lineno)

    def _support(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.fromisoformat(NOW[0]).strftime(fmt)


def make_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


_cache = {}


def render(template, variables, now=None):
    """{"rendered": str} or {"error": "Type: message"} as render.py reports it."""
    NOW[0] = now or DEFAULT_NOW
    try:
        t = _cache.get(template)
        if t is None:
            t = _cache[template] = make_env().from_string(template)
        return {"rendered": t.render(**variables)}
    except Exception as e:  # noqa: BLE001 - every failure is an expectation
        return {"error": f"{type(e).__name__}: {e}"}
