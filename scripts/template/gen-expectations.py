#!/usr/bin/env python3
"""Renders the template test cases with the reference configuration (scripts/template/
reference_env.py: Python Jinja2 set up as Hugging Face transformers' apply_chat_template, the same
as shared/oracle/render.py) and writes
test/fixtures/template/expectations/<family>.json.

Usage: python3 scripts/template/gen-expectations.py [family ...]
The case lists live in scripts/template/template_cases.py. Errors are recorded as render.py
prints them: f"{type(e).__name__}: {e}". Files are written with ensure_ascii so lone
surrogates survive.
"""
import json
import os
import platform
import sys
import jinja2

sys.dont_write_bytecode = True  # keep scripts/template free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_env  # noqa: E402
import template_cases  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "test", "fixtures", "template", "expectations")
DEFAULT_NOW = reference_env.DEFAULT_NOW


def render_case(case):
    # a fresh environment per case, so cached templates never leak state between cases
    reference_env._cache.clear()
    return reference_env.render(case["template"], case.get("vars", {}), case.get("now"))


def main():
    families = sys.argv[1:] or sorted(template_cases.FAMILIES)
    os.makedirs(OUT, exist_ok=True)
    for fam in families:
        cases = template_cases.FAMILIES[fam]()
        names = set()
        out = []
        for c in cases:
            if c["name"] in names:
                raise SystemExit(f"duplicate case name {fam}/{c['name']}")
            names.add(c["name"])
            row = {"name": c["name"], "template": c["template"]}
            if c.get("vars") is template_cases.DATA:
                row["vars"] = "@data"
            elif c.get("vars"):
                row["vars"] = c["vars"]
            if c.get("now"):
                row["now"] = c["now"]
            row["expect"] = render_case(c)
            out.append(row)
        doc = {
            "generated_by": "scripts/template/gen-expectations.py",
            "python": platform.python_version(),
            "jinja2": jinja2.__version__,
            "default_now": DEFAULT_NOW,
            "data": template_cases.DATA,
            "cases": out,
        }
        path = os.path.join(OUT, f"{fam}.json")
        with open(path, "w", encoding="ascii") as f:
            json.dump(doc, f, ensure_ascii=True, indent=1)
            f.write("\n")
        print(f"{path}: {len(out)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
