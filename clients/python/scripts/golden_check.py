#!/usr/bin/env python3
"""The Done-when check of issue 14, against ../shared's golden files (not run by npm test):
through `AutoTokenizer.from_pretrained("qwen3")`, on every request of tau-bench airline,

    len(tok.apply_chat_template(messages[:k], tools=tools, add_generation_prompt=True, return_dict=False))

equals the golden count (../shared/corpus/golden/qwen3__tau-bench-airline-gpt-4o.jsonl), the ids
equal the golden ids hash, and the OSL helper (`tok.osl(messages[k])`) equals golden/osl.

    python3 clients/python/scripts/golden_check.py [--shared ../shared] [--tokenizer qwen3] [--template-name qwen3]

Prints one JSON summary; exit 1 on any difference. Needs the deltatok CLI (DELTATOK_CMD, or run
from the repository after `npm run build`).
"""
import argparse
import hashlib
import json
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import deltatok  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(HERE, "..", "src"))
from deltatok import AutoTokenizer  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    ap.add_argument("--corpus", default="tau-bench-airline-gpt-4o")
    ap.add_argument("--tokenizer", default="qwen3")
    ap.add_argument("--template-name", default="qwen3", help="the golden file's template (its name before __)")
    a = ap.parse_args(argv)
    corpus = os.path.join(a.shared, "corpus", "trajectories", a.corpus + ".jsonl")
    golden = {}
    for line in open(os.path.join(a.shared, "corpus", "golden", "%s__%s.jsonl" % (a.template_name, a.corpus)), encoding="utf-8"):
        r = json.loads(line)
        golden[r["id"]] = r
    osl_golden = {}
    osl_path = os.path.join(a.shared, "corpus", "golden", "osl", "%s__%s.jsonl" % (a.template_name, a.corpus))
    for line in open(osl_path, encoding="utf-8"):
        r = json.loads(line)
        osl_golden[r["id"]] = r["osl"]

    tok = AutoTokenizer.from_pretrained(a.tokenizer, date="2026-11-30")
    checked = differ = ids_differ = osl_checked = osl_differ = 0
    examples = []
    t0 = time.perf_counter()
    for line in open(corpus, encoding="utf-8"):
        conv = json.loads(line)
        messages, tools = conv["messages"], conv.get("tools")
        for k, m in enumerate(messages):
            if m["role"] != "assistant":
                continue
            rid = "%s#%d" % (conv["id"], k)
            ids = tok.apply_chat_template(messages[:k], tools=tools, add_generation_prompt=True, return_dict=False)
            g = golden.get(rid)
            if g is not None and "count" in g:
                checked += 1
                if len(ids) != g["count"]:
                    differ += 1
                    if len(examples) < 5:
                        examples.append({"id": rid, "count": len(ids), "golden": g["count"]})
                sha = hashlib.sha256(struct.pack("<%dI" % len(ids), *ids)).hexdigest()
                if sha != g.get("ids_sha256", sha):
                    ids_differ += 1
            if rid in osl_golden:
                osl_checked += 1
                osl = tok.osl(m)
                if osl != osl_golden[rid]:
                    osl_differ += 1
                    if len(examples) < 5:
                        examples.append({"id": rid, "osl": osl, "golden": osl_golden[rid]})
    summary = {"corpus": a.corpus, "tokenizer": a.tokenizer, "requests_checked": checked, "count_differ": differ, "ids_differ": ids_differ,
               "osl_checked": osl_checked, "osl_differ": osl_differ, "seconds": round(time.perf_counter() - t0, 2),
               "client": tok.stats()["client"], "examples": examples}
    print(json.dumps(summary))
    tok.close()
    return 1 if differ or ids_differ or osl_differ or checked == 0 or osl_checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
