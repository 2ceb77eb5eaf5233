#!/usr/bin/env python3
"""ISL and OSL of a replayed corpus with MLCommons endpoints' definitions, the way its metrics
aggregator computes them — through `tokenizer.apply_chat_template` and a batch queue with a
drain — with deltatok in place of transformers:

    python3 endpoints_metrics.py corpus.jsonl [--tokenizer qwen3] [--date 2026-11-30]
                                 [--parse-tool-arguments] [--timeout 600] [--out records.jsonl]

A corpus line is {"id", "messages", "tools"?, "chat_template_kwargs"?}. For every assistant
message k: ISL = len(apply_chat_template(messages[:k], tools, add_generation_prompt=True,
**chat_template_kwargs)); OSL = tokens of [U, m] minus tokens of [U, E] (U an empty user
message, E an empty assistant message: the message's own tokens). Every request is enqueued at
once (as the aggregator's triggers do), then one drain answers them all. Prints one record per
request ({"id", "index", "isl", "osl"} or "error") and a summary line with the drain's result.
"""
import argparse
import json
import os
import sys
import time

try:
    import deltatok  # noqa: F401  (pip install ./clients/python)
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from deltatok import AutoTokenizer  # noqa: E402
from deltatok.queue import TokenizationQueue  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--tokenizer", default="qwen3")
    ap.add_argument("--date", default=None, help="what strftime_now sees (YYYY-MM-DD)")
    ap.add_argument("--parse-tool-arguments", action="store_true", help="JSON-string tool-call arguments as objects (as endpoints does)")
    ap.add_argument("--timeout", type=float, default=600.0, help="drain timeout, seconds")
    ap.add_argument("--out", default=None, help="records file (default stdout)")
    a = ap.parse_args(argv)

    options = {"parse_tool_arguments": a.parse_tool_arguments}
    if a.date:
        options["date"] = a.date
    tok = AutoTokenizer.from_pretrained(a.tokenizer, **options)
    records = {}
    order = []

    def recorder(key, field):
        def on_result(r):
            rec = records[key]
            if r.ok:
                rec[field] = r.count
            else:
                rec.setdefault("error", {"code": r.error.code, "message": r.error.message})
        return on_result

    t0 = time.perf_counter()
    with TokenizationQueue(tok) as q:
        with open(a.corpus, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                conv = json.loads(line)
                msgs, tools, kw = conv["messages"], conv.get("tools"), conv.get("chat_template_kwargs") or {}
                for k, m in enumerate(msgs):
                    if m.get("role") != "assistant":
                        continue
                    key = (conv["id"], k)
                    records[key] = {"id": conv["id"], "index": k}
                    order.append(key)
                    q.enqueue({"kind": "prompt", "messages": msgs[:k], "tools": tools, "chat_template_kwargs": kw}, recorder(key, "isl"))
                    q.enqueue({"kind": "message", "message": m, "chat_template_kwargs": kw}, recorder(key, "osl"))
        result = q.drain(timeout=a.timeout)
    out = open(a.out, "w", encoding="utf-8") if a.out else sys.stdout
    for key in order:
        out.write(json.dumps(records[key]) + "\n")
    if a.out:
        out.close()
    summary = {"requests": len(order), "drain": {"state": result.state, "pending": result.pending, "done": result.done, "reason": result.reason},
               "isl_total": sum(r.get("isl", 0) for r in records.values()), "osl_total": sum(r.get("osl", 0) for r in records.values()),
               "errors": sum(1 for r in records.values() if "error" in r), "seconds": round(time.perf_counter() - t0, 3),
               "client": tok.stats()["client"]}
    sys.stderr.write(json.dumps(summary) + "\n")
    tok.close()
    return 0 if result.pending == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
