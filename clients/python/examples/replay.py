#!/usr/bin/env python3
"""Replays a corpus through deltatok from Python: one JSON line per request, like `deltatok replay`.

    python3 replay.py corpus.jsonl [--http URL] [-- deltatok serve flags...]

A corpus line is {"id", "messages", "tools"?, "chat_template_kwargs"?}; for every assistant
message k it prints {"id", "index": k, "isl", "osl"} (or "error" for that request).
"""
import json
import os
import sys

try:
    import deltatok  # noqa: F401  (pip install ./clients/python)
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
from deltatok import DeltatokClient, DeltatokError, DeltatokHttpClient  # noqa: E402


def main(argv):
    corpus = argv[0]
    rest = argv[1:]
    url = None
    if rest[:1] == ["--http"]:
        url, rest = rest[1], rest[2:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    client = DeltatokHttpClient(url) if url else DeltatokClient(rest)
    try:
        with open(corpus, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                conv = json.loads(line)
                msgs, tools, kw = conv["messages"], conv.get("tools"), conv.get("chat_template_kwargs")
                for k, m in enumerate(msgs):
                    if m.get("role") != "assistant":
                        continue
                    rec = {"id": conv["id"], "index": k}
                    try:
                        # only the messages the server has not seen cross the wire (no conversation id needed)
                        rec["isl"] = client.count_prompt(msgs[:k], tools=tools, chat_template_kwargs=kw)
                        rec["osl"] = client.count_message(m, chat_template_kwargs=kw)
                    except DeltatokError as e:
                        rec["error"] = {"code": e.code, "message": e.message}
                    print(json.dumps(rec))
    finally:
        if isinstance(client, DeltatokClient):
            client.close()


if __name__ == "__main__":
    main(sys.argv[1:])
