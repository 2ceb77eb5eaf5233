#!/usr/bin/env python3
"""Issue 14: the floor of ANY Python client over stdio, standard library only. Replays the request
lines recorded from clients/python/scripts/bench_loop.py against a server (by default
bench/echo-sidecar.mjs answering the recorded answers, i.e. zero Deltatok work) and, for each
request, does only what a client must: json.dumps of the request (its own payload: the new
messages against the prefix handle, as the real client sent it), one write, one readline,
json.loads, and the list of ids the answer implies (the transformers return type: a fresh list of
ints the caller owns; the tail decoded from base64, the held ids of the conversation cut at
`ids_from` and extended, so the next delta has its base). No fingerprints, no plan, no locks.

The recorded lines are parsed before timing (the payload is Python objects, as a caller's
messages are). Warm-up lines (everything before the (warm+1)-th conversation's first request) run
first, untimed; then the timed encode_prompt lines; then the recorded count_text lines (the
empty round trip). Prints JSON: seconds, requests, tokens (must equal bench_loop.py's), client
CPU, the server's CPU (/proc, 10 ms ticks) and the empty round trip.

    python3 bench/min_client.py REQUESTS.jsonl ANSWERS.jsonl [--warm 20] [--server "node bench/echo-sidecar.mjs"] [--spin-us N]

(record both files as the header of bench/echo-sidecar.mjs says; bench/python-floor.mjs runs this
alternating with the library, the real client and the real client against the fake.)
"""
import argparse
import base64
import json
import os
import shlex
import subprocess
import sys
import time
from array import array

HERE = os.path.dirname(os.path.abspath(__file__))


def proc_cpu(pid):
    """utime + stime of a process, seconds (Linux /proc; None elsewhere)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def cut(reqs, warm):
    """(warm-up, timed, empty) request lists, cut as bench/sidecar-replay.mjs cuts them."""
    conversations = 0
    start = -1
    end = len(reqs)
    for i, r in enumerate(reqs):
        if r["method"] == "count_text":
            end = i
            break
        p = r["params"]
        if r["method"] == "encode_prompt" and "tools" in p and "prefix" not in p:
            conversations += 1
            if conversations == warm + 1:
                start = i
    if start < 0:
        raise SystemExit("fewer than %d conversations in the recording" % (warm + 1))
    empty = [r for r in reqs[end:] if r["method"] == "count_text"]
    return reqs[:start], reqs[start:end], empty


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("requests")
    ap.add_argument("answers")
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--server", default="node " + shlex.quote(os.path.join(HERE, "echo-sidecar.mjs")))
    ap.add_argument("--spin-us", type=float, default=0, help="passed to the server: a busy wait before each prompt answer")
    a = ap.parse_args(argv)
    reqs = [json.loads(line) for line in open(a.requests, encoding="utf-8") if line.strip()]
    warm, timed, empty = cut(reqs, a.warm)
    spin = ["--spin-us", str(a.spin_us)] if a.spin_us else []
    proc = subprocess.Popen(shlex.split(a.server) + [a.answers] + spin, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    fd = proc.stdin.fileno()
    readline = proc.stdout.readline
    dumps, loads, write, b64decode = json.dumps, json.loads, os.write, base64.b64decode
    held = {}  # conversation id -> its ids, the base of the next delta

    def call(r):
        # the request as a client sends it: envelope + payload serialised, one write
        line = (dumps({"id": r["id"], "method": r["method"], "params": r["params"]}) + "\n").encode()
        write(fd, line)
        resp = loads(readline())
        result = resp["result"]
        if r["method"] != "encode_prompt":
            return 0
        tail = array("I")
        tail.frombytes(b64decode(result["ids"]))
        tail = tail.tolist()
        start = result["ids_from"]
        cid = r["params"]["conversation_id"]
        base = held.get(cid)
        if start:
            ids = base[:start]
            ids += tail
            del base[start:]
            base += tail
        else:
            ids = tail
            held[cid] = tail[:]
        return len(ids)

    for r in warm:
        call(r)
    s0 = proc_cpu(proc.pid)
    c0 = time.process_time()
    t0 = time.perf_counter()
    tokens = 0
    for r in timed:
        tokens += call(r)
    seconds = time.perf_counter() - t0
    client_cpu = time.process_time() - c0
    s1 = proc_cpu(proc.pid)
    t1 = time.perf_counter()
    for r in empty:
        call(r)
    round_trip = time.perf_counter() - t1
    proc.stdin.close()
    proc.wait()
    n = sum(1 for r in timed if r["method"] == "encode_prompt")
    print(json.dumps({"seconds": seconds, "requests": n, "tokens": tokens, "client_cpu_s": client_cpu,
                      "server_cpu_s": None if s0 is None or s1 is None else s1 - s0,
                      "round_trip_floor_s": round_trip, "empty_calls": len(empty)}))


if __name__ == "__main__":
    main(sys.argv[1:])
