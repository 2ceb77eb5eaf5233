#!/usr/bin/env python3
"""Writes test/fixtures/template/json/{parse,dumps}.json: Python's json.loads / json.dumps on a
list of tricky inputs, as expectations for src/json (parseJson, dumps).

Values are recorded in a typed form so Python's int/float distinction and dict order survive:
["none"] ["bool", b] ["int", "123"] ["float", repr] ["str", s] ["list", [...]] ["dict", [[k, v], ...]]
Usage: python3 scripts/template/gen-json-expectations.py
"""
import json
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "test", "fixtures", "template", "json")

PARSE = [
    '1', '-0', '0', '1.0', '-0.0', '1e5', '1E-7', '1.5e+300', '1e400', '-1e400', '12345678901234567890', '-9007199254740993',
    '9007199254740991', '9007199254740992', '0.1', '123.456e-2', '[1, 1.0, 2.50, 3e0]', 'NaN', 'Infinity', '-Infinity',
    '"a"', '"\\u00e9\\n\\t\\"\\\\\\/\\b\\f\\r"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\udc00x"', '"\U0001F600"', '"\u00e9"',
    '{"b": 1, "1": 2, "0": 3, "a": 4}', '{"2": 1, "10": 2}', '{"01": 1, "1": 2}', '{"4294967295": 1, "4294967294": 2}',
    '{"a": 1, "a": 2, "b": 3}', '{"1": 1, "1": 2, "0": 0}', '{"__proto__": {"x": 1}, "constructor": 2}', '{}', '[]',
    '  \n\t {"k" : [ true , false , null ] }  \r\n', '[[[[[]]]]]', '{"a": {"b": {"c": [1, {"d": 2.0}]}}}',
    '', ' ', '{', '{"a" 1}', '{"a":1 "b"}', '[1 2]', '"abc', '"a\x01"', '"\\x"', '"\\u12"', '1 2', '{"a":1,}', '[1,]',
    ' \n [\n1,\n x]', '\ufeff1', '-', '-x', 'nul', 'tru', '[', '{"a"', '{"a":', '1.e5', '01', '{"a":1}x', '.5', '+1', '1.5.5',
    "'a'", '{a: 1}', '[1,,2]', '"\\u00e9\\U0001"', '"tab\tin"', '\u00e9', '"\u00e9" x', '[1]\n\n{', 'true false', 'null1',
    '{"x": -0}', '[0.0, -0.0, 100.0, 1e16, 1e15, 1e-5, 0.0001]', '{"k": "v\u2028\u2029"}',
    '"\\u00e9', '"\\ud83d\\ude00', '["\\ud800', '"\\u00e9"', '"\\u00e',
]

DUMPS = [
    ('{"b": 1, "a": [1, 2.0, "x"], "c": {"d": null, "e": true}}', {}),
    ('{"b": 1, "a": [1, 2.0, "x"], "c": {"d": null, "e": true}}', {"indent": 2}),
    ('{"b": 1, "a": [1, 2.0, "x"], "c": {"d": null, "e": true}}', {"indent": "\t"}),
    ('{"b": 1, "a": [1, 2.0, "x"], "c": {"d": null, "e": true}}', {"indent": 0}),
    ('{"b": 1, "a": [1, 2.0, "x"], "c": {"d": null, "e": true}}', {"separators": [",", ":"]}),
    ('{"b": 1, "a": [1, 2.0, "x"], "c": {"d": null, "e": true}}', {"sort_keys": True}),
    ('{"b": 1, "a": [1, 2.0, "x"], "c": {"d": null, "e": true}}', {"sort_keys": True, "indent": 1, "separators": [",", ": "]}),
    ('{"b": 1, "1": 2, "0": 3, "a": 4}', {}),
    ('{"b": 1, "1": 2, "0": 3, "a": 4}', {"sort_keys": True}),
    ('{"\u00e9": "\U0001F600", "B": 1, "a": 2, "\uffff": 3, "\U0001F601": 4}', {"sort_keys": True}),
    ('{"\u00e9": "\U0001F600", "ctl": "\\u0000\\u001f\\u007f\\b\\f\\n\\r\\t\\"\\\\/"}', {"ensure_ascii": False}),
    ('{"\u00e9": "\U0001F600", "ctl": "\\u0000\\u001f\\u007f\\b\\f\\n\\r\\t\\"\\\\/"}', {"ensure_ascii": True}),
    ('["\\u2028\\u2029\\ufeff"]', {"ensure_ascii": False}),
    ('["\\u2028\\u2029\\ufeff"]', {"ensure_ascii": True}),
    ('["\\ud800", "a\\udc00"]', {"ensure_ascii": False}),
    ('["\\ud800", "a\\udc00"]', {"ensure_ascii": True}),
    ('[1.0, -0.0, 1e-07, 1e16, 1e15, 0.1, 1e+100, 2.5e-5, 100.0, 123456789012345678, 12345678901234567890, 1.7976931348623157e308, 5e-324]', {}),
    ('[NaN, Infinity, -Infinity]', {}),
    ('[[], {}, [[]], {"a": {}}]', {"indent": 2}),
    ('"just a string"', {}),
    ('null', {"indent": 2}),
    ('[1, [2, [3, {"x": [4]}]]]', {"indent": 3, "ensure_ascii": False}),
]


def typed(v):
    if v is None:
        return ["none"]
    if v is True or v is False:
        return ["bool", v]
    if isinstance(v, int):
        return ["int", str(v)]
    if isinstance(v, float):
        return ["float", repr(v)]
    if isinstance(v, str):
        return ["str", v]
    if isinstance(v, list):
        return ["list", [typed(x) for x in v]]
    if isinstance(v, dict):
        return ["dict", [[k, typed(x)] for k, x in v.items()]]
    raise TypeError(type(v))


def main():
    os.makedirs(OUT, exist_ok=True)
    parse = []
    for text in PARSE:
        try:
            parse.append({"input": text, "value": typed(json.loads(text))})
        except json.JSONDecodeError as e:
            parse.append({"input": text, "error": str(e)})
    dumps = []
    for text, kwargs in DUMPS:
        v = json.loads(text)
        kw = dict(kwargs)
        if "separators" in kw:
            kw["separators"] = tuple(kw["separators"])
        dumps.append({"input": text, "options": kwargs, "output": json.dumps(v, **kw)})
    for name, doc in (("parse", parse), ("dumps", dumps)):
        with open(os.path.join(OUT, f"{name}.json"), "w", encoding="ascii") as f:
            json.dump({"generated_by": "scripts/template/gen-json-expectations.py", "cases": doc}, f, ensure_ascii=True, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
