#!/usr/bin/env python3
"""Replays a corpus through a deltatok URL (one instance, or nginx in front of several) with the
Python client, one JSON line per request: {"id", "index", "isl"} (or "error": {code, message}),
then {"client": the prefix table's counters}. Run by scripts/cluster.ts (and so by the cluster
test and `npm run bench -- --suite cluster`).

    python3 cluster_replay.py URL CORPUS [--method apply_chat_template|count_prompt]
                              [--interleave W] [--pause-after N]

--interleave W: W conversations in progress at once, their turns taken round-robin (a conversation
that ends gives its slot to the next one), as a harness with W concurrent conversations sends
them; 1 (the default): conversation after conversation.
--pause-after N: after the first request, from the N-th on, whose conversation has more requests
to come, print {"pause": n, "route": that conversation's routing key} and wait for a line on
stdin (the caller kills an instance meanwhile), so the point is a request count, never a time.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import deltatok  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(HERE, "..", "src"))
from deltatok import AutoTokenizer, DeltatokError, conversation_key  # noqa: E402


def requests_of(convs, interleave=1):
    """(conversation, k, more) for every assistant message k, `interleave` conversations at a time
    round-robin; `more`: the conversation has later requests."""
    turns = [[k for k, m in enumerate(c["messages"]) if m.get("role") == "assistant"] for c in convs]
    waiting = [i for i in range(len(convs)) if turns[i]]
    waiting.reverse()
    active = []
    while waiting or active:
        while waiting and len(active) < interleave:
            active.append([waiting.pop(), 0])
        still = []
        for slot in active:
            i, t = slot
            yield convs[i], turns[i][t], t + 1 < len(turns[i])
            if t + 1 < len(turns[i]):
                still.append([i, t + 1])
        active = still


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("corpus")
    ap.add_argument("--method", choices=("apply_chat_template", "count_prompt"), default="apply_chat_template")
    ap.add_argument("--interleave", type=int, default=1)
    ap.add_argument("--pause-after", type=int, default=0)
    a = ap.parse_args(argv)
    with open(a.corpus, encoding="utf-8") as f:
        convs = [json.loads(line) for line in f if line.strip()]
    reqs = list(requests_of(convs, max(1, a.interleave)))
    tok = AutoTokenizer.from_pretrained("deltatok", url=a.url)
    out = sys.stdout
    paused = a.pause_after <= 0
    try:
        for n, (c, k, more) in enumerate(reqs, 1):
            messages, tools, kw = c["messages"][:k], c.get("tools"), c.get("chat_template_kwargs") or {}
            rec = {"id": c["id"], "index": k}
            try:
                if a.method == "count_prompt":
                    rec["isl"] = tok.client.count_prompt(messages, tools=tools, chat_template_kwargs=kw)
                else:
                    rec["isl"] = len(tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True, return_dict=False, **kw))
            except DeltatokError as e:
                rec["error"] = {"code": e.code, "message": e.message}
            out.write(json.dumps(rec) + "\n")
            if not paused and n >= a.pause_after and more:
                paused = True
                out.write(json.dumps({"pause": n, "route": conversation_key(messages, tools)}) + "\n")
                out.flush()
                if not sys.stdin.readline():
                    raise SystemExit("cluster_replay: stdin closed at the pause")
        out.write(json.dumps({"client": tok.client.client_stats()}) + "\n")
        out.flush()
    finally:
        tok.close()


if __name__ == "__main__":
    main(sys.argv[1:])
