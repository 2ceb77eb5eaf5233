#!/usr/bin/env python3
"""Renders the fast-check fuzz cases (test/fixtures/template/fuzz/cases.json, written by
gen-fuzz-cases.ts) with the reference environment and writes
test/fixtures/template/fuzz/expectations.json: per case the sha256 (UTF-8) and length of the
render, or the Python error. Templates and special tokens come from the vendored golden slice.
Usage: python3 scripts/template/gen-fuzz-expectations.py [--dir DIR]
"""
import hashlib
import json
import os
import sys

sys.dont_write_bytecode = True  # keep scripts/template free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_env  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FUZZ = os.path.join(ROOT, "test", "fixtures", "template", "fuzz")
GOLDEN = os.path.join(ROOT, "test", "fixtures", "template", "golden")


def main():
    fuzz = sys.argv[sys.argv.index("--dir") + 1] if "--dir" in sys.argv else FUZZ
    with open(os.path.join(fuzz, "cases.json"), encoding="ascii") as f:
        doc = json.load(f)
    with open(os.path.join(GOLDEN, "specials.json"), encoding="utf-8") as f:
        specials = json.load(f)["qwen3"]
    out = []
    for case in doc["cases"]:
        conv = doc["conversations"][case["conversation"]]
        with open(os.path.join(GOLDEN, "templates", case["template"] + ".jinja"), encoding="utf-8") as f:
            src = f.read()
        variables = {"messages": conv["messages"], "tools": conv["tools"], "documents": conv.get("documents"),
                     "add_generation_prompt": conv["add_generation_prompt"], **specials, **conv["kwargs"]}
        r = reference_env.render(src, variables)
        if "rendered" in r:
            text = r["rendered"]
            try:
                digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            except UnicodeEncodeError:
                digest = "unencodable"
            out.append({"sha256": digest, "chars": len(text)})
        else:
            out.append({"error": r["error"]})
    with open(os.path.join(fuzz, "expectations.json"), "w", encoding="ascii") as f:
        json.dump({"generated_by": "scripts/template/gen-fuzz-expectations.py", "expect": out}, f, ensure_ascii=True, indent=0)
        f.write("\n")
    ok = sum(1 for e in out if "sha256" in e)
    print(f"{len(out)} cases: {ok} render, {len(out) - ok} errors", file=sys.stderr)


if __name__ == "__main__":
    main()
