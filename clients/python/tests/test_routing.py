"""Routing behind a load balancer: every HTTP call of a conversation carries the same
X-Deltatok-Conversation key (its tools and leading messages), a resent request too; calls of no
conversation carry none; a batch goes whole under its first conversation's key, or split by key
with `split_batches`; a proxy's own 502 (no instance answered) is DT_CLOSED. Checked against a
recording stand-in server (no deltatok needed)."""
import http.server
import json
import threading
import unittest

import support  # noqa: F401  (puts the package on sys.path)
from support import deltatok
from deltatok import conversation_key

SYSTEM = {"role": "system", "content": "You are an airline agent."}
TOOLS = [{"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {}}}}]


def conversation(question, turns=3):
    msgs = [SYSTEM, {"role": "user", "content": question}]
    for i in range(turns):
        msgs.append({"role": "assistant", "content": "answer %d" % i})
        msgs.append({"role": "user", "content": "more %d" % i})
    return msgs


class Recorder:
    """A stand-in server: answers count_prompt with the number of messages sent, count_text with
    0, refuses the first prefix request it sees when `refuse_prefix` (DT_PREFIX_UNKNOWN), and
    records (routing header, method, methods inside a batch) of every request."""

    def __init__(self, refuse_prefix=False, bad_gateway=False):
        self.seen = []
        self.refuse = [refuse_prefix]
        lock = threading.Lock()
        rec = self

        def answer(method, params):
            if method == "count_prompt":
                if "prefix" in params and rec.refuse[0]:
                    rec.refuse[0] = False
                    return {"error": {"code": "DT_PREFIX_UNKNOWN", "message": "not held"}}
                return {"result": {"count": len(params["messages"])}}
            return {"result": {"count": 0}}

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                method, params = body["method"], body["params"]
                inner = [r["method"] for r in params["requests"]] if method == "batch" else None
                with lock:
                    rec.seen.append((self.headers.get("X-Deltatok-Conversation"), method, inner))
                    if method == "batch":
                        out = {"id": body["id"], "result": {"results": [answer(r["method"], r["params"]) for r in params["requests"]]}}
                    else:
                        out = dict(answer(method, params), id=body["id"])
                data = json.dumps(out).encode()
                if bad_gateway:
                    data = b"<html><body>502 Bad Gateway</body></html>"
                self.send_response(502 if bad_gateway else 200)
                self.send_header("Content-Type", "text/html" if bad_gateway else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class ConversationKeyTest(unittest.TestCase):
    def test_one_key_per_conversation_from_its_tools_and_leading_messages(self):
        a = conversation("Book a flight")
        keys = {conversation_key(a[:k], TOOLS) for k in range(2, len(a) + 1)}
        self.assertEqual(len(keys), 1, "every turn has the conversation's key")
        self.assertRegex(keys.pop(), r"^[0-9a-f]{16}$")
        # sharing only the system prompt: another key; sharing system + first question: the same
        self.assertNotEqual(conversation_key(a, TOOLS), conversation_key(conversation("Cancel it"), TOOLS))
        self.assertEqual(conversation_key(a, TOOLS), conversation_key(conversation("Book a flight", turns=1), TOOLS))
        self.assertNotEqual(conversation_key(a, TOOLS), conversation_key(a, None), "tools are part of the key")
        dev = [SYSTEM, {"role": "developer", "content": "x"}, {"role": "user", "content": "q"}]
        self.assertNotEqual(conversation_key(dev + [{"role": "assistant", "content": "a"}]),
                            conversation_key([SYSTEM, {"role": "developer", "content": "y"}, {"role": "user", "content": "q"}]),
                            "developer messages lead a conversation too")


class HeaderTest(unittest.TestCase):
    def setUp(self):
        self.server = None

    def tearDown(self):
        if self.server is not None:
            self.server.close()

    def test_every_turn_and_its_resend_carry_the_key_and_other_calls_none(self):
        self.server = Recorder(refuse_prefix=True)
        dt = deltatok.DeltatokHttpClient(self.server.url)
        msgs = conversation("Book a flight")
        # messages sent: the first turn whole, the second refused and resent whole, the third its new two
        self.assertEqual([dt.count_prompt(msgs[:k], tools=TOOLS) for k in (2, 4, 6)], [2, 4, 2])
        dt.count_text("hello")
        stats = dt.client_stats()
        dt.close()
        key = conversation_key(msgs, TOOLS)
        prompts = [s for s in self.server.seen if s[1] == "count_prompt"]
        self.assertEqual(len(prompts), 4, "three turns, the second resent once")
        self.assertEqual({s[0] for s in prompts}, {key})
        self.assertEqual(stats["resent_whole"], 1)
        self.assertEqual([s[0] for s in self.server.seen if s[1] == "count_text"], [None])

    def test_without_the_prefix_table_the_key_is_sent_too(self):
        self.server = Recorder()
        dt = deltatok.DeltatokHttpClient(self.server.url, incremental=False)
        msgs = conversation("Book a flight")
        dt.count_prompt(msgs[:2])
        dt.count_prompt(msgs[:4])
        dt.close()
        self.assertEqual([s[0] for s in self.server.seen], [conversation_key(msgs)] * 2)

    def test_a_batch_goes_whole_under_its_first_key_or_split_by_key(self):
        convs = [conversation(q) for q in ("Book", "Cancel", "Change")]
        reqs = [{"messages": c[:2], "tools": TOOLS} for c in convs] + [{"messages": convs[0][:2] + [{"role": "assistant", "content": "x"}], "tools": TOOLS}]
        keys = [conversation_key(c, TOOLS) for c in convs]

        self.server = Recorder()
        dt = deltatok.DeltatokHttpClient(self.server.url)
        whole = dt.prompt_many("count_prompt", reqs)
        dt.close()
        self.assertEqual(self.server.seen, [(keys[0], "batch", ["count_prompt"] * 4)])
        self.server.close()

        self.server = Recorder()
        dt = deltatok.DeltatokHttpClient(self.server.url, split_batches=True)
        split = dt.prompt_many("count_prompt", reqs)
        dt.close()
        self.assertEqual(split, whole)
        self.assertEqual(sorted(self.server.seen, key=lambda s: keys.index(s[0])),
                         [(keys[0], "batch", ["count_prompt"] * 2), (keys[1], "count_prompt", None), (keys[2], "count_prompt", None)])


    def test_a_proxy_that_reached_no_instance_is_dt_closed(self):
        self.server = Recorder(bad_gateway=True)
        dt = deltatok.DeltatokHttpClient(self.server.url)
        with self.assertRaises(deltatok.DeltatokError) as cm:
            dt.count_prompt(conversation("Book")[:2])
        dt.close()
        self.assertEqual(cm.exception.code, "DT_CLOSED")


if __name__ == "__main__":
    unittest.main()
