"""Incremental without asking: the automatic prefix path equals whole-history requests — over
stdio and HTTP, across a server restart in the middle of a conversation, behind a load balancer
that alternates two instances, with messages edited in place, tools changed, many threads and
asyncio tasks — and both paths are counted."""
import asyncio
import http.server
import json
import threading
import unittest
import urllib.request

import support
from support import deltatok, needs_cli


def replay(tok, convs, start=0):
    """ids of every request, as a harness asks them (messages[:k] of each assistant turn)."""
    return {(ci, k): tok.apply_chat_template(p, tools=t, add_generation_prompt=True) for ci, k, p, t, _ in support.requests_of(convs, start)}


def expected(keys=None):
    want = {(r["conversation"], r["k"]): r["ids"] for r in support.expectations()["requests"]}
    return want if keys is None else {k: want[k] for k in keys}


@needs_cli
class PrefixPathTest(unittest.TestCase):
    def test_stdio_prefix_path_equals_whole_requests_and_is_counted(self):
        with support.tokenizer() as tok:
            got = replay(tok, support.corpus()[:8])
            stats = tok.stats()["client"]
        self.assertEqual(got, expected(got.keys()))
        self.assertEqual(stats["requests"], len(got))
        self.assertEqual(stats["new_conversations"], 8)
        self.assertEqual(stats["extended"], len(got) - 8)
        self.assertEqual(stats["resent_whole"], 0)
        self.assertEqual((stats["guessed"], stats["guess_missed"]), (stats["extended"], 0), "each turn extends the same message objects")
        self.assertGreater(stats["messages_skipped"], 4 * stats["messages_sent"])
        self.assertGreater(stats["ids_reused"], 4 * stats["ids_received"], "only the appended ids crossed the pipe")

    def test_without_the_table_everything_is_sent(self):
        with support.tokenizer(incremental=False) as tok:
            got = replay(tok, support.corpus()[:2])
            self.assertEqual(tok.stats()["client"], {})
        self.assertEqual(got, expected(got.keys()))

    def test_in_place_edits_and_tools_changes_are_seen(self):
        convs = support.corpus()[:1]
        msgs = [dict(m) for m in convs[0]["messages"][:6]]
        tools = json.loads(json.dumps(convs[0]["tools"]))
        ref = support.tokenizer(incremental=False)
        with support.tokenizer() as tok:
            def check(label, **kw):
                a = tok.apply_chat_template(msgs, tools=tools, add_generation_prompt=True, **kw)
                b = ref.apply_chat_template(msgs, tools=tools, add_generation_prompt=True, **kw)
                self.assertEqual(a, b, label)
            check("first")
            msgs[1]["content"] = msgs[1]["content"] + " (edited)"  # in place: the same dict
            check("content edited in place")
            msgs[2]["extra"] = 1
            check("key added")
            msgs[2]["extra"] = True  # equal to 1 in Python, not in JSON
            check("1 became True")
            msgs[2]["extra"] = 1.0
            check("True became 1.0")
            k = msgs[3]
            first = next(iter(k))
            k[first] = k.pop(first)  # the same entries, another key order
            check("key order changed")
            tools[0]["function"]["description"] += "!"
            check("tools edited in place")
            tools.pop()
            check("a tool removed")
            self.assertEqual(tok.apply_chat_template(msgs), ref.apply_chat_template(msgs), "tools dropped")
            stats = tok.stats()["client"]
        ref.close()
        self.assertGreater(stats["extended"] + stats["replaced_last"], 0)
        self.assertGreater(stats["guess_missed"], 0, "the edits in place refuted identity guesses")

    def test_a_continued_final_message_replaces_the_last_one(self):
        convs = support.corpus()[:1]
        msgs = convs[0]["messages"]
        k = next(i for i, m in enumerate(msgs) if m["role"] == "assistant")
        with support.tokenizer() as tok, support.tokenizer(incremental=False) as ref:
            for cut in (5, 20, len(msgs[k]["content"])):
                partial = msgs[:k] + [dict(msgs[k], content=msgs[k]["content"][:cut])]
                self.assertEqual(tok.apply_chat_template(partial, continue_final_message=True),
                                 ref.apply_chat_template(partial, continue_final_message=True))
            self.assertGreaterEqual(tok.stats()["client"]["replaced_last"], 2)

    def test_the_table_is_bounded(self):
        with support.tokenizer(max_conversations=3) as tok:
            got = replay(tok, support.corpus()[:6])
            stats = tok.stats()["client"]
        self.assertEqual(got, expected(got.keys()))
        self.assertEqual(stats["conversations"], 3)
        self.assertEqual(stats["evictions"], 3)


@needs_cli
class ServerChangesTest(unittest.TestCase):
    def test_restart_in_the_middle_of_a_conversation(self):
        convs = support.corpus()[:2]
        first = support.HttpServer()
        port = first.port
        tok = deltatok.AutoTokenizer.from_pretrained("qwen3", url=first.url)
        try:
            reqs = list(support.requests_of(convs))
            half = len(reqs) // 2
            got = {}
            for ci, k, p, t, _ in reqs[:half]:
                got[(ci, k)] = tok.apply_chat_template(p, tools=t, add_generation_prompt=True)
            first.stop(kill=True)  # the old server dies with the client's connection open
            with support.HttpServer(port=port):
                for ci, k, p, t, _ in reqs[half:]:
                    got[(ci, k)] = tok.apply_chat_template(p, tools=t, add_generation_prompt=True)
                stats = tok.stats()["client"]
                tok.close()  # before the server stops: an idle keep-alive connection holds a graceful stop
        finally:
            first.stop(kill=True)
            tok.close()
        self.assertEqual(got, expected(got.keys()))
        self.assertEqual(stats["resent_whole"], 1, "the restarted server did not hold the prefix: resent once, then incremental again")
        self.assertGreater(stats["extended"], stats["resent_whole"])

    def test_two_instances_behind_a_round_robin_balancer(self):
        a, b = support.HttpServer(), support.HttpServer()
        upstreams = [a.url, b.url]
        turn = [0]

        class Proxy(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                url = upstreams[turn[0] % 2] + self.path
                turn[0] += 1
                req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
                try:
                    with urllib.request.urlopen(req) as r:
                        data, status = r.read(), r.status
                except urllib.error.HTTPError as e:
                    data, status = e.read(), e.code
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        try:
            tok = deltatok.AutoTokenizer.from_pretrained("qwen3", url="http://127.0.0.1:%d" % proxy.server_address[1])
            got = replay(tok, support.corpus()[:2])
            stats = tok.stats()["client"]
            tok.close()
        finally:
            proxy.shutdown()
            proxy.server_close()
            a.stop(kill=True)
            b.stop(kill=True)
        self.assertEqual(got, expected(got.keys()))
        self.assertGreater(stats["resent_whole"], 0)

    def test_bearer_token(self):
        with support.HttpServer(token="s3cret") as server:
            with self.assertRaises(deltatok.DeltatokError) as cm:
                deltatok.AutoTokenizer.from_pretrained("qwen3", url=server.url)
            self.assertEqual(cm.exception.code, "DT_UNAUTHORIZED")
            tok = deltatok.AutoTokenizer.from_pretrained("qwen3", url=server.url, server_token="s3cret")
            self.assertEqual(tok.encode("Hello world", add_special_tokens=False), [9707, 1879])
            tok.close()
            with deltatok.DeltatokHttpClient(server.url) as client:
                with self.assertRaises(deltatok.DeltatokError):
                    client.count_text("x")
            import os
            os.environ["DELTATOK_TOKEN"] = "s3cret"
            try:
                with deltatok.DeltatokHttpClient(server.url) as client:
                    self.assertEqual(client.count_text("Hello world"), 2)
            finally:
                del os.environ["DELTATOK_TOKEN"]


@needs_cli
class ConcurrencyTest(unittest.TestCase):
    def test_threads_share_one_tokenizer(self):
        convs = support.corpus()[:8]
        got, errors = {}, []
        lock = threading.Lock()
        with support.tokenizer() as tok:
            def work(i):
                try:
                    for ci, k, p, t, _ in support.requests_of(convs[i:i + 1], i):
                        ids = tok.apply_chat_template(p, tools=t, add_generation_prompt=True)
                        with lock:
                            got[(ci, k)] = ids
                except BaseException as e:  # noqa: BLE001
                    errors.append(e)
            threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            stats = tok.stats()["client"]
        self.assertEqual(errors, [])
        self.assertEqual(got, expected(got.keys()))
        self.assertGreater(stats["extended"], 0)

    def test_asyncio_tasks_share_one_pipe(self):
        from deltatok.aio import AsyncAutoTokenizer
        convs = support.corpus()[:6]

        async def conversation(tok, i):
            out = {}
            for ci, k, p, t, _ in support.requests_of(convs[i:i + 1], i):
                out[(ci, k)] = await tok.apply_chat_template(p, tools=t, add_generation_prompt=True)
            return out

        async def main():
            tok = await AsyncAutoTokenizer.from_pretrained("qwen3", date=support.DATE, command=support.COMMAND)
            try:
                parts = await asyncio.gather(*(conversation(tok, i) for i in range(6)))
                batch = await tok.apply_chat_template([p for _, _, p, _, _ in support.requests_of(convs[:1])], tools=convs[0]["tools"],
                                                      add_generation_prompt=True)
                text = await tok.decode(await tok.encode("Hello world", add_special_tokens=False))
                stats = await tok.stats()
                return parts, batch, text, stats, tok.eos_token, len(tok)
            finally:
                await tok.aclose()

        parts, batch, text, stats, eos, n = asyncio.run(main())
        got = {}
        for p in parts:
            got.update(p)
        self.assertEqual(got, expected(got.keys()))
        keys0 = [(ci, k) for ci, k, _, _, _ in support.requests_of(convs[:1])]
        self.assertEqual(batch, [expected()[key] for key in keys0])
        self.assertEqual(text, "Hello world")
        self.assertGreater(stats["client"]["extended"], 0)
        self.assertEqual(eos, "<|im_end|>")
        self.assertEqual(n, support.expectations()["info"]["length"])


if __name__ == "__main__":
    unittest.main()
