"""Chained in a batch: a batch whose conversations extend each other (a finished trajectory's
prompts, `apply_chat_template([messages[:k] for k in turns])`) sends each conversation's new
messages only, against the state of the earlier call of the same batch, and its answers are
exactly those of one call at a time — over stdio and HTTP, one Deltatok and a worker pool, in
mixed batches, asyncio, and when the earlier call fails or the server restarts between batches
(the later calls are then resent whole)."""
import asyncio
import json
import unittest

import support
from support import deltatok, needs_cli


def turns(conv):
    return [k for k, m in enumerate(conv["messages"]) if m["role"] == "assistant"]


def expected():
    return {(r["conversation"], r["k"]): r["ids"] for r in support.expectations()["requests"]}


class Recorder:
    """A transport in front of another that keeps the params of every call and may change a
    batch's requests (`before`) or its answer (`after`), once — to make an earlier call fail for real."""

    def __init__(self, inner):
        self.inner = inner
        self.sent = []
        self.before = None
        self.after = None

    def call(self, method, params, route=None):
        if method == "batch" and self.before is not None:
            self.before(params["requests"])
            self.before = None
        self.sent.append((method, json.loads(json.dumps(params))))
        out = self.inner.call(method, params, route)
        if method == "batch" and self.after is not None:
            self.after(out["results"])
            self.after = None
        return out

    def bytes_sent(self):
        return sum(len(json.dumps(p, ensure_ascii=False).encode("utf-8")) for _, p in self.sent)

    def close(self):
        return 0


def recorded(incremental=True):
    tok = support.tokenizer(incremental=incremental)
    rec = Recorder(tok.client.transport)
    tok.client.transport = rec
    return tok, rec


@needs_cli
class ChainedBatchTest(unittest.TestCase):
    def test_a_batch_of_prefixes_equals_one_call_at_a_time(self):
        convs = support.corpus()
        want = expected()
        tok, rec = recorded()
        ref = support.tokenizer(incremental=False)
        n = 0
        sent = []
        for ci, c in enumerate(convs):
            ks = turns(c)
            prompts = [c["messages"][:k] for k in ks]
            before = len(rec.sent)
            got = tok.apply_chat_template(prompts, tools=c.get("tools"), add_generation_prompt=True)
            self.assertEqual(got, [want[(ci, k)] for k in ks], "conversation %d" % ci)
            self.assertEqual(len(rec.sent), before + 1, "one round trip")
            n += len(ks)
            if len(ks) > 1:
                sent.append((rec.sent[-1][1]["requests"], ks))
        stats = tok.stats()["client"]
        self.assertEqual(stats["requests"], n)
        self.assertEqual(stats["new_conversations"], len(convs), "one conversation per trajectory, not one per guess")
        self.assertEqual(stats["chained_in_batch"], n - len(convs))
        self.assertEqual(stats["extended"], n - len(convs))
        self.assertEqual((stats["resent_whole"], stats["guess_missed"]), (0, 0))
        self.assertGreater(stats["ids_reused"], 4 * stats["ids_received"], "each call's ids came as a delta against the one before it")
        # every call after a conversation's first carried only the messages after the one before it
        self.assertGreater(len(sent), 10)
        for reqs, ks in sent:
            self.assertNotIn("prefix", reqs[0]["params"])
            for i in range(1, len(reqs)):
                p = reqs[i]["params"]
                self.assertEqual(p["prefix"], {"state": reqs[i - 1]["params"]["state"], "length": ks[i - 1]})
                self.assertEqual(len(p["messages"]), ks[i] - ks[i - 1])
                self.assertNotIn("tools", p)
        # counts, text and return_dict shapes, batched, as one call at a time
        c = convs[3]
        prompts = [c["messages"][:k] for k in turns(c)]
        tools = c.get("tools")
        for kw in ({"tokenize": False}, {"return_dict": True}, {"return_dict": True, "return_assistant_tokens_mask": True}):
            batch = tok.apply_chat_template(prompts, tools=tools, add_generation_prompt=True, **kw)
            single = [ref.apply_chat_template(p, tools=tools, add_generation_prompt=True, **kw) for p in prompts]
            if kw.get("return_dict"):
                self.assertEqual(sorted(batch), sorted(single[0]), kw)
                for key in batch:
                    self.assertEqual(batch[key], [s[key] for s in single], (kw, key))
            else:
                self.assertEqual(batch, single, kw)
        counts = tok.client.prompt_many("count_prompt", [{"messages": p, "tools": tools, "add_generation_prompt": True} for p in prompts])
        self.assertEqual([r["count"] for r in counts], [len(want[(3, k)]) for k in turns(c)])
        ref.close()
        tok.close()

    def test_the_bytes_sent_drop(self):
        c = support.corpus()[0]
        prompts = [c["messages"][:k] for k in turns(c)]
        sizes = {}
        outs = {}
        for incremental in (True, False):
            tok, rec = recorded(incremental)
            outs[incremental] = tok.apply_chat_template(prompts, tools=c["tools"], add_generation_prompt=True)
            sizes[incremental] = rec.bytes_sent()
            tok.close()
        self.assertEqual(outs[True], outs[False])
        self.assertLess(3 * sizes[True], sizes[False], "each history crossed once, not once per prompt")

    def test_mixed_batches(self):
        convs = support.corpus()[:3]
        want = expected()
        tok = support.tokenizer()
        items = []  # (key, messages, tools)
        # two conversations interleaved, a third's first prompt among them
        a, b = turns(convs[0]), turns(convs[1])
        for i in range(max(len(a), len(b))):
            if i < len(a):
                items.append(((0, a[i]), convs[0]["messages"][:a[i]], convs[0]["tools"]))
            if i < len(b):
                items.append(((1, b[i]), convs[1]["messages"][:b[i]], convs[1]["tools"]))
            if i == 1:
                k = turns(convs[2])[0]
                items.append(((2, k), convs[2]["messages"][:k], convs[2]["tools"]))
        # the same prompt twice (one list object), an equal copy, and a shorter one after a longer
        same = convs[0]["messages"][:a[2]]
        items.append(((0, a[2]), same, convs[0]["tools"]))
        items.append(((0, a[2]), same, convs[0]["tools"]))
        items.append(((0, a[2]), json.loads(json.dumps(same)), convs[0]["tools"]))
        items.append(((1, b[0]), convs[1]["messages"][:b[0]], convs[1]["tools"]))
        items.append(((1, b[-1]), convs[1]["messages"][:b[-1]], convs[1]["tools"]))
        got = tok.client.prompt_many("encode_prompt", [{"messages": m, "tools": t, "add_generation_prompt": True} for _, m, t in items])
        self.assertEqual([r["ids"] for r in got], [want[key] for key, _, _ in items])
        stats = tok.stats()["client"]
        self.assertEqual(stats["resent_whole"], 0)
        self.assertGreater(stats["chained_in_batch"], len(a) + len(b) - 3)
        # and the same batch again: now every call extends (or repeats) an answered state
        got = tok.client.prompt_many("encode_prompt", [{"messages": m, "tools": t, "add_generation_prompt": True} for _, m, t in items])
        self.assertEqual([r["ids"] for r in got], [want[key] for key, _, _ in items])
        self.assertEqual(tok.stats()["client"]["resent_whole"], 0)
        tok.close()

    def test_an_earlier_call_that_fails_leaves_the_later_ones_exact(self):
        c = support.corpus()[1]
        ks = turns(c)
        want = expected()
        tools = c["tools"]
        # a failing template: the server takes the state, the render fails (the later calls extend it)
        tok = support.tokenizer()
        reqs = [{"messages": c["messages"][:k], "tools": tools, "add_generation_prompt": True} for k in ks]
        reqs[1] = dict(reqs[1], chat_template="{{ raise_exception('no') }}")
        got = tok.client.prompt_many("encode_prompt", reqs)
        self.assertIsInstance(got[1], deltatok.DeltatokError)
        self.assertEqual([r["ids"] for i, r in enumerate(got) if i != 1], [want[(1, k)] for i, k in enumerate(ks) if i != 1])
        tok.close()
        # a call the server rejects before it takes the state: the next is DT_PREFIX_UNKNOWN, resent whole
        tok, rec = recorded()

        def spoil(requests):
            requests[1]["params"]["messages"] = 5
        rec.before = spoil
        got = tok.client.prompt_many("encode_prompt", [{"messages": c["messages"][:k], "tools": tools, "add_generation_prompt": True} for k in ks])
        self.assertEqual(got[1].code, "DT_INVALID_MESSAGES")
        self.assertEqual([r["ids"] for i, r in enumerate(got) if i != 1], [want[(1, k)] for i, k in enumerate(ks) if i != 1])
        stats = tok.stats()["client"]
        self.assertEqual(stats["resent_whole"], len(ks) - 2, "every call after the failed one was resent whole")
        resent = rec.sent[1:]
        self.assertTrue(all("prefix" not in r["params"] for method, p in resent for r in (p["requests"] if method == "batch" else [{"params": p}])))
        tok.close()

    def test_a_delta_against_an_answer_the_client_dropped_is_resent_whole(self):
        c = support.corpus()[2]
        ks = turns(c)
        want = expected()
        tok, rec = recorded()

        def drop(results):
            results[0] = {"error": {"code": "DT_INTERNAL", "message": "dropped by the test"}}
        rec.after = drop
        got = tok.client.prompt_many("encode_prompt", [{"messages": c["messages"][:k], "tools": c["tools"], "add_generation_prompt": True} for k in ks])
        self.assertEqual(got[0].code, "DT_INTERNAL")
        self.assertEqual([r["ids"] for r in got[1:]], [want[(2, k)] for k in ks[1:]])
        self.assertEqual(tok.stats()["client"]["resent_whole"], len(ks) - 1)
        tok.close()

    def test_a_message_edited_in_place_between_batches_refutes_the_whole_chain(self):
        c = support.corpus()[6]
        ks = turns(c)
        msgs = [dict(m) for m in c["messages"]]
        ref = support.tokenizer(incremental=False)
        tok = support.tokenizer()
        half = len(ks) // 2
        first = tok.apply_chat_template([msgs[:k] for k in ks[:half]], tools=c["tools"], add_generation_prompt=True)
        msgs[1]["content"] = msgs[1]["content"] + " (edited)"  # in place: the same dict, guessed by identity
        prompts = [msgs[:k] for k in ks[half:]]
        got = tok.apply_chat_template(prompts, tools=c["tools"], add_generation_prompt=True)
        self.assertEqual(got, ref.apply_chat_template(prompts, tools=c["tools"], add_generation_prompt=True))
        self.assertNotEqual(got[0][:len(first[-1])], first[-1])
        stats = tok.stats()["client"]
        self.assertEqual(stats["guess_missed"], len(ks) - half, "the first guess and every one chained on it")
        tok.close()
        ref.close()

    def test_asyncio_batch_is_chained(self):
        from deltatok.aio import AsyncAutoTokenizer
        c = support.corpus()[4]
        ks = turns(c)
        want = expected()

        async def main():
            tok = await AsyncAutoTokenizer.from_pretrained("qwen3", date=support.DATE, command=support.COMMAND)
            try:
                out = await tok.apply_chat_template([c["messages"][:k] for k in ks], tools=c["tools"], add_generation_prompt=True)
                return out, tok.client.prefixes.stats()
            finally:
                await tok.aclose()

        out, stats = asyncio.run(main())
        self.assertEqual(out, [want[(4, k)] for k in ks])
        self.assertEqual((stats["new_conversations"], stats["chained_in_batch"], stats["resent_whole"]), (1, len(ks) - 1, 0))


@needs_cli
class ChainedOverHttpTest(unittest.TestCase):
    def test_a_worker_pool_runs_a_conversations_calls_in_order(self):
        convs = support.corpus()[:4]
        want = expected()
        with support.HttpServer(extra=["--workers", "2"]) as server:
            tok = deltatok.AutoTokenizer.from_pretrained("qwen3", url=server.url)
            try:
                # four conversations' prompts in one batch, interleaved: they spread over the workers
                items = [(ci, k) for i in range(12) for ci, c in enumerate(convs) if i < len(turns(c)) for k in [turns(c)[i]]]
                got = tok.client.prompt_many("encode_prompt", [{"messages": convs[ci]["messages"][:k], "tools": convs[ci]["tools"],
                                                                "add_generation_prompt": True} for ci, k in items])
                stats = tok.stats()["client"]
            finally:
                tok.close()
        self.assertEqual([r["ids"] for r in got], [want[key] for key in items])
        self.assertEqual((stats["new_conversations"], stats["chained_in_batch"], stats["resent_whole"]), (4, len(items) - 4, 0))

    def test_split_batches_send_a_conversations_chunks_in_order(self):
        from deltatok import _ops
        convs = support.corpus()[:3]
        want = expected()
        items = [(ci, k) for ci, c in enumerate(convs) for k in turns(c)]
        saved = _ops.MAX_BATCH
        with support.HttpServer() as server:
            tok = deltatok.AutoTokenizer.from_pretrained("qwen3", url=server.url, split_batches=True)
            try:
                _ops.MAX_BATCH = 3  # each conversation's calls in several chunks, chained across them
                got = tok.client.prompt_many("encode_prompt", [{"messages": convs[ci]["messages"][:k], "tools": convs[ci]["tools"],
                                                                "add_generation_prompt": True} for ci, k in items])
            finally:
                _ops.MAX_BATCH = saved
                stats = tok.stats()["client"]
                tok.close()
        self.assertEqual([r["ids"] for r in got], [want[key] for key in items])
        self.assertEqual((stats["new_conversations"], stats["chained_in_batch"], stats["resent_whole"]), (3, len(items) - 3, 0))

    def test_restart_between_batches(self):
        c = support.corpus()[5]
        ks = turns(c)
        half = len(ks) // 2
        want = expected()
        first = support.HttpServer()
        port = first.port
        tok = deltatok.AutoTokenizer.from_pretrained("qwen3", url=first.url)
        try:
            got = tok.apply_chat_template([c["messages"][:k] for k in ks[:half]], tools=c["tools"], add_generation_prompt=True)
            first.stop(kill=True)
            with support.HttpServer(port=port):
                got += tok.apply_chat_template([c["messages"][:k] for k in ks[half:]], tools=c["tools"], add_generation_prompt=True)
                got += tok.apply_chat_template([c["messages"][:k] for k in ks], tools=c["tools"], add_generation_prompt=True)
                stats = tok.stats()["client"]
                tok.close()
        finally:
            first.stop(kill=True)
            tok.close()
        self.assertEqual(got, [want[(5, k)] for k in ks[:half] + ks[half:] + ks])
        self.assertEqual(stats["resent_whole"], len(ks) - half, "the second batch's calls were resent whole, once")
        self.assertEqual(stats["chained_in_batch"], 2 * len(ks) - 3)


if __name__ == "__main__":
    unittest.main()
