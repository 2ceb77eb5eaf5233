#!/usr/bin/env python3
"""Vendors the reference token counts, ids hashes and OSL of the conversations in
test/fixtures/template/golden/conversations.jsonl into test/fixtures/golden/counts.jsonl, from
../shared/corpus/golden (made by Python Jinja2 + Rust tokenizers). Run from the repo root:

    python3 scripts/vendor-golden-counts.py
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared", "corpus")
CONVS = os.path.join(ROOT, "test", "fixtures", "template", "golden", "conversations.jsonl")
OUT = os.path.join(ROOT, "test", "fixtures", "golden", "counts.jsonl")

index = {t["short"]: t for t in json.load(open(os.path.join(SHARED, "templates", "_index.json")))}
ids = {}
for i, line in enumerate(open(CONVS, encoding="utf-8")):
    ids[json.loads(json.loads(line)["line"])["id"]] = i

with open(OUT, "w", encoding="utf-8") as out:
    out.write("# one line per golden file with counts: {file, template, tokenizer, expect: {'<conv index>#<k|final>': [count, ids_sha256] | {error}}}"
              " and per OSL file: {osl_file, expect: {'<conv index>#<k>': osl}}\n")
    for name in sorted(os.listdir(os.path.join(SHARED, "golden"))):
        if not name.endswith(".jsonl"):
            continue
        rows = [json.loads(l) for l in open(os.path.join(SHARED, "golden", name), encoding="utf-8") if l.strip()]
        if not any("count" in r for r in rows):
            continue
        template = name.split("__")[0]
        expect = {}
        for r in rows:
            conv, _, k = r["id"].rpartition("#")
            if conv not in ids:
                continue
            expect["%d#%s" % (ids[conv], k)] = {"error": r["error"]} if "error" in r else [r["count"], r["ids_sha256"]]
        out.write(json.dumps({"file": name, "template": template, "tokenizer": index[template]["tokenizer"], "expect": expect}) + "\n")
    for name in sorted(os.listdir(os.path.join(SHARED, "golden", "osl"))):
        expect = {}
        for l in open(os.path.join(SHARED, "golden", "osl", name), encoding="utf-8"):
            r = json.loads(l)
            conv, _, k = r["id"].rpartition("#")
            if conv in ids:
                expect["%d#%s" % (ids[conv], k)] = r["osl"]
        template = name.split("__")[0]
        out.write(json.dumps({"osl_file": name, "template": template, "tokenizer": index[template]["tokenizer"], "expect": expect}) + "\n")
