"""A tool's JSON schema from a Python function, as transformers' `get_json_schema` builds it, for
when transformers is not installed (with it, its own function is called: _compat). Checked
against transformers' on the functions of tests/transformers_matrix.py.

The function's Google-style docstring gives the description (the text before `Args:`,
`Returns:` or `Raises:`) and one description per argument (a trailing `(choices: [...])` becomes
`enum`); the type hints give the types; parameters without a default are `required`; a return
hint becomes `return` (with the `Returns:` text). A function without a docstring, an argument
without a hint or a description, or a hint with no JSON equivalent is DT_INVALID_TOOLS.
"""
from __future__ import annotations

import inspect
import json
import re
import types
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._errors import DeltatokInputError

__all__ = ["json_schema"]

_SECTION_END = r"(Args:|Returns:|Raises:|\Z)"
_DESCRIPTION = re.compile(r"^(.*?)[\n\s]*" + _SECTION_END, re.DOTALL)
_ARGS = re.compile(r"\n\s*Args:\n\s*(.*?)[\n\s]*(Returns:|Raises:|\Z)", re.DOTALL)
_RETURNS = re.compile(r"\n\s*Returns:\n\s*(.*?)[\n\s]*(Raises:|\Z)", re.DOTALL)
# one `name: text` entry of the Args block, its text running to the next entry
_ARG = re.compile(r"(?:^|\n)\s*(\w+):\s*(.*?)\s*(?=\n\s*\w+:|\Z)", re.DOTALL)
_CHOICES = re.compile(r"\(choices:\s*(.*?)\)\s*$", re.IGNORECASE)

_PLAIN = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null", list: "array", tuple: "array", dict: "object"}


def _fail(name: str, why: str) -> DeltatokInputError:
    return DeltatokInputError("DT_INVALID_TOOLS", "cannot build the JSON schema of %s: %s" % (name, why), "tools")


def _docstring(doc: str) -> Tuple[Optional[str], Dict[str, str], Optional[str]]:
    head = _DESCRIPTION.search(doc)
    args = _ARGS.search(doc)
    ret = _RETURNS.search(doc)
    described: Dict[str, str] = {}
    if args is not None:
        block = "\n".join(line for line in args.group(1).strip().split("\n") if line.strip())
        for name, text in _ARG.findall(block):
            described[name] = re.sub(r"\s*\n+\s*", " ", text.strip())
    return (head.group(1).strip() if head else None), described, (ret.group(1).strip() if ret else None)


def _type(hint: Any, name: str) -> Dict[str, Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is None:
        if hint is Any:
            return {}
        t = _PLAIN.get(hint)
        return {"type": t} if t is not None else {"type": "object"}
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is getattr(types, "UnionType")):
        parts = [_type(a, name) for a in args if a is not type(None)]
        if len(parts) == 1:
            out = parts[0]
        elif all(set(p) == {"type"} and isinstance(p["type"], str) for p in parts):
            names = sorted({p["type"] for p in parts})
            out = {"type": names[0] if len(names) == 1 else names}
        else:
            out = {"anyOf": parts}
        if type(None) in args:
            out["nullable"] = True
        return out
    if origin is typing.Literal and args:
        kinds: List[str] = []
        for a in args:
            if type(a) not in (int, float, str, bool, type(None)):
                raise _fail(name, "only Python literals may be listed in typing.Literal")
            k = _PLAIN[type(a)]
            if k not in kinds:
                kinds.append(k)
        return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": list(args)}
    if origin is list:
        return {"type": "array", "items": _type(args[0], name)} if args else {"type": "array"}
    if origin is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 1 or ... in args:
            raise _fail(name, "a tuple hint needs two or more element types and no '...' (use list[...])")
        return {"type": "array", "prefixItems": [_type(a, name) for a in args]}
    if origin is dict:
        out = {"type": "object"}
        if len(args) == 2:
            out["additionalProperties"] = _type(args[1], name)
        return out
    raise _fail(name, "the type hint %r has no JSON equivalent" % (hint,))


def json_schema(fn: Callable[..., Any]) -> Dict[str, Any]:
    """{"type": "function", "function": {"name", "description", "parameters", "return"?}}."""
    name = getattr(fn, "__name__", "operation")
    doc = inspect.getdoc(fn)
    if not doc:
        raise _fail(name, "it has no docstring")
    description, described, returns = _docstring(doc.strip())
    hints = typing.get_type_hints(fn)
    params = inspect.signature(fn).parameters
    first = next(iter(params), None)
    receiver = first if first in ("self", "cls") and params[first].annotation is inspect.Parameter.empty else None
    required = []
    for p in params.values():
        if p.name == receiver:
            continue
        if p.annotation is inspect.Parameter.empty:
            raise _fail(name, "argument %s has no type hint" % p.name)
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
    properties = {k: _type(h, name) for k, h in hints.items() if k != receiver}
    parameters: Dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    ret = properties.pop("return", None)
    if ret is not None and returns is not None:
        ret["description"] = returns
    for arg, schema in properties.items():
        if arg not in described:
            raise _fail(name, "the docstring has no description for the argument %r" % arg)
        text = described[arg]
        m = _CHOICES.search(text)
        if m:
            schema["enum"] = [c.strip() if isinstance(c, str) else c for c in json.loads(m.group(1))]
            text = text[:m.start()].strip()
        schema["description"] = text
    out: Dict[str, Any] = {"name": name, "description": description, "parameters": parameters}
    if ret is not None:
        out["return"] = ret
    return {"type": "function", "function": out}
