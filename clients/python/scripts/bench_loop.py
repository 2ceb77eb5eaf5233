#!/usr/bin/env python3
"""The Done-when loop of issue 14, timed: every request of a corpus through
`len(tok.apply_chat_template(messages[:k], tools=tools, add_generation_prompt=True, return_dict=False))`, after
warming up on the first conversations. Prints JSON (seconds, requests, tokens, the client's
prefix counters, CPU seconds of this process and of the sidecar, the bytes the sidecar read and
wrote over the loop, and the round-trip floor: as many empty calls, timed after the loop). With
`--batch`, each conversation's prompts go as one batch, as a metrics drain over a finished
trajectory asks them: `tok.apply_chat_template([messages[:k] for k in turns], ...)`. Run by
`npm run bench -- --suite python`.

    python3 bench_loop.py CORPUS [--warm N] [--tokenizer qwen3] [--date 2026-11-30] [--batch]
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import deltatok  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(HERE, "..", "src"))
from deltatok import AutoTokenizer  # noqa: E402


def proc_cpu(pid, main_thread=False):
    """utime + stime of a process (or of its main thread), seconds (Linux /proc; None elsewhere)."""
    try:
        with open("/proc/%d/task/%d/stat" % (pid, pid) if main_thread else "/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def proc_io(pid):
    """(bytes read, bytes written) by a process, pipes included (Linux /proc; None elsewhere)."""
    try:
        with open("/proc/%d/io" % pid) as f:
            io = dict(line.split(": ") for line in f.read().splitlines())
        return int(io["rchar"]), int(io["wchar"])
    except (OSError, ValueError, KeyError):
        return None


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--warm", type=int, default=20, help="conversations run first, untimed")
    ap.add_argument("--tokenizer", default="qwen3")
    ap.add_argument("--date", default="2026-11-30")
    ap.add_argument("--batch", action="store_true", help="each conversation's prompts as one batch")
    a = ap.parse_args(argv)
    convs = [json.loads(line) for line in open(a.corpus, encoding="utf-8") if line.strip()]
    tok = AutoTokenizer.from_pretrained(a.tokenizer, date=a.date)

    def loop(cs):
        n = tokens = 0
        for c in cs:
            messages, tools = c["messages"], c.get("tools")
            if a.batch:
                turns = [k for k, m in enumerate(messages) if m["role"] == "assistant"]
                tokens += sum(map(len, tok.apply_chat_template([messages[:k] for k in turns], tools=tools, add_generation_prompt=True, return_dict=False)))
                n += len(turns)
                continue
            for k, m in enumerate(messages):
                if m["role"] == "assistant":
                    tokens += len(tok.apply_chat_template(messages[:k], tools=tools, add_generation_prompt=True, return_dict=False))
                    n += 1
        return n, tokens

    loop(convs[:a.warm])
    pid = getattr(tok.client.transport, "pid", None)
    s0 = proc_cpu(pid) if pid else None
    m0 = proc_cpu(pid, True) if pid else None
    io0 = proc_io(pid) if pid else None
    c0 = time.process_time()
    t0 = time.perf_counter()
    n, tokens = loop(convs[a.warm:])
    seconds = time.perf_counter() - t0
    client_cpu = time.process_time() - c0
    s1 = proc_cpu(pid) if pid else None
    m1 = proc_cpu(pid, True) if pid else None
    io1 = proc_io(pid) if pid else None
    # the round-trip floor: as many calls that carry nothing (count_text "hi"), over the same pipe
    t1 = time.perf_counter()
    for _ in range(n):
        tok.client.count_text("hi")
    round_trip = time.perf_counter() - t1
    stats = tok.stats()["client"]
    tok.close()
    print(json.dumps({"seconds": seconds, "requests": n, "tokens": tokens, "client_cpu_s": client_cpu,
                      "server_cpu_s": None if s0 is None or s1 is None else s1 - s0,
                      "server_main_thread_cpu_s": None if m0 is None or m1 is None else m1 - m0,
                      "round_trip_floor_s": round_trip, "client": stats, "batch": a.batch,
                      "sidecar_read_bytes": None if io0 is None or io1 is None else io1[0] - io0[0],
                      "sidecar_written_bytes": None if io0 is None or io1 is None else io1[1] - io0[1]}))


if __name__ == "__main__":
    main(sys.argv[1:])
