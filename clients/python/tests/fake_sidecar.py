"""A fake `deltatok serve` for the tests of answers the client cannot read: every method answers a
plausible result of the right shape, unless a `fake_answer` call told it to answer a method with
something else ({"answers": {method: {"result": R} | {"error": E}}}; {} restores the good ones).

Run as a script it speaks JSON lines over stdio (what DeltatokClient starts: any arguments are
ignored); `HttpFake` serves the same answers over HTTP (POST /rpc) from a thread of the test's
own process. Standard library only.
"""
import base64
import copy
import json
import random
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

IDS = [1, 2, 3]


def _b64(ids):
    return base64.b64encode(struct.pack("<%dI" % len(ids), *ids)).decode("ascii")


INFO = {
    "name_or_path": "fake", "vocab_size": 10, "length": 12, "model_max_length": 1e30, "padding_side": "right", "truncation_side": "right",
    "clean_up_tokenization_spaces": False, "model_input_names": ["input_ids", "attention_mask"],
    "chat_template_sources": {"default": "{{ messages[0].content }}"}, "special_tokens_map": {"eos_token": "<e>"},
    "special_token_ids": {"eos_token": 10}, "all_special_ids": [10], "model_type": "BPE",
    "added_tokens_decoder": {"10": {"content": "<e>", "special": True, "lstrip": False, "rstrip": False, "normalized": False, "single_word": False}},
}


def good(method, params):
    """The right-shaped answer of `method`."""
    if method in ("count_prompt", "count_message", "count_text", "counter_append"):
        return {"count": 3 if method == "count_prompt" else 2}
    if method == "encode_prompt":
        return {"ids": _b64(IDS) if params.get("ids_encoding") == "base64" else list(IDS), "count": 3}
    if method == "tokenize_trajectory":
        return {"ids": IDS, "count": 3, "prefix": [0, 0], "spans": [], "suffix": [3, 3], "assistant_mask": [[1, 2]], "mask_source": "generation"}
    if method == "tokenize_rollout":
        return {"sequences": [{"ids": [1, 2], "mask": [[1, 2]], "logprobs": [None, -0.5], "turns": []}], "splits": [], "drift": []}
    if method == "encode_text":
        return {"ids": [1, 2], "count": 2}
    if method == "encode_batch":
        texts = params.get("texts", [])
        return {"ids": _b64([1, 2] * len(texts)), "lengths": [2] * len(texts), "count": 2 * len(texts)}
    if method in ("decode", "render_prompt"):
        return {"text": "hi"}
    if method == "fits":
        return {"fits": True}
    if method == "trim_to_fit":
        return {"count": 5, "dropped": [0]}
    if method == "tokenizer_info":
        return INFO
    if method == "vocab":
        return {"tokens": ["t%d" % i for i in range(10)] + [None, "<e>"]}
    if method in ("text_counter_open", "message_counter_open"):
        return {"handle": "h1"}
    if method == "counter_finish":
        return {"count": 2, "stats": {"appends": 1}}
    if method == "counter_close":
        return {"closed": True}
    if method == "stats":
        return {"requests": 1}
    if method == "health":
        return {"status": "ok", "tokenizer": "fake", "version": "0", "workers": 0}
    return {}


#: Values a mutation puts in place of a field (every JSON kind, edge numbers, base64 text).
ODD = [None, True, False, 0, -1, 2 ** 40, 1.5, float("inf"), "", "x", "AQAAAA==", [], [1], [[1, 2]], ["a"], [None], {}, {"a": 1}]


def mutate(value, rng):
    """`value` with one field (or itself) replaced by an odd value, or a key deleted."""
    value = copy.deepcopy(value)
    spots = []

    def walk(v, parent, key):
        spots.append((parent, key))
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, v, k)
        elif isinstance(v, list):
            for i, x in enumerate(v[:3]):
                walk(x, v, i)
    walk(value, None, None)
    parent, key = rng.choice(spots)
    if parent is None:
        return rng.choice(ODD)
    if isinstance(parent, dict) and rng.random() < 0.3:
        del parent[key]
    else:
        parent[key] = rng.choice(ODD)
    return value


class Fake:
    """The answers: good ones, or those a `fake_answer` call set."""

    def __init__(self):
        self.answers = {}
        self.mutation = None
        self.lock = threading.Lock()

    def body(self, method, params):
        """{"result": ...} or {"error": ...} for one call."""
        if method == "fake_answer":
            with self.lock:
                self.answers = dict(params.get("answers", {}))
                self.mutation = params.get("mutate")
            return {"result": {}}
        if method == "batch":
            return {"result": {"results": [self.body(r["method"], r.get("params", {})) for r in params["requests"]]}} \
                if "batch" not in self.answers else self.answers["batch"]
        with self.lock:
            got = self.answers.get(method)
            m = self.mutation
        if got is None and m is not None and m["method"] == method:
            # the right-shaped answer to these very params, one field changed (seeded)
            return {"result": mutate(good(method, params), random.Random(m["seed"]))}
        return got if got is not None else {"result": good(method, params)}

    def respond(self, line):
        req = json.loads(line)
        out = {"id": req.get("id")}
        out.update(self.body(req.get("method"), req.get("params") or {}))
        return json.dumps(out)


class HttpFake:
    """The fake over HTTP on 127.0.0.1 (an ephemeral port), served from a thread of this process."""

    def __init__(self):
        fake = Fake()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK wait per call

            def do_POST(self):
                body = fake.respond(self.rfile.read(int(self.headers["Content-Length"]))).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


def main():
    fake = Fake()
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(fake.respond(line) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
