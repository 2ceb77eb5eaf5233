"""Every error the client raises is a DeltatokError with a code: a result of the wrong shape is
DT_BAD_RESPONSE naming the method and the bad field's path (never AttributeError, KeyError,
TypeError or ValueError), on every transport — stdio and HTTP, blocking and asyncio — and the
client answers the next good request; a file the readers cannot read is DT_CORPUS_UNREADABLE.
The server is tests/fake_sidecar.py (over HTTP from a thread of this process, over stdio as a
child)."""
import asyncio
import errno
import json
import os
import struct
import sys
import tempfile
import unittest
import warnings

import support  # noqa: F401 - puts the package on sys.path
from support import deltatok
from deltatok import aio
from deltatok._wire import RESULTS, check_result
from fake_sidecar import INFO, HttpFake

FAKE = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_sidecar.py")]
MSGS = [{"role": "user", "content": "hi"}]

#: (name, call on a method client, the method answered badly, bad results, the good answer's value)
CASES = [
    ("count_prompt", lambda c: c.count_prompt(MSGS), "count_prompt",
     [42, [], {}, None, "x", {"count": "x"}, {"count": None}, {"count": True}, {"count": 1.5}], 3),
    ("encode_prompt", lambda c: c.encode_prompt(MSGS), "encode_prompt",
     [{"ids": 5, "count": 1}, {"ids": "@@@", "count": 1}, {"ids": "AQA=", "count": 1}, {"ids": [1, "x"], "count": 2}, {"ids": [True], "count": 1},
      {"ids": "AQAAAA==", "count": 1, "ids_from": -1}, {"ids": "AQAAAA==", "count": 1, "ids_from": "0"}, {"ids": "AQAAAA==", "count": 1, "ids_from": 9}],
     [1, 2, 3]),
    ("tokenize_trajectory", lambda c: c.tokenize_trajectory(MSGS)["ids"], "tokenize_trajectory",
     [{"ids": [1], "count": 1, "assistant_mask": [[1]]}, {"ids": [1]}, {"ids": [1], "count": 1, "mask_source": 0}], [1, 2, 3]),
    ("tokenize_rollout", lambda c: c.tokenize_rollout(MSGS)["sequences"][0]["ids"], "tokenize_rollout",
     [{"sequences": [{"ids": [1], "mask": [[0, 1]], "logprobs": ["x"], "turns": []}], "splits": []}, {"sequences": 5, "splits": []}, []], [1, 2]),
    ("render_prompt", lambda c: c.render_prompt(MSGS), "render_prompt", [{"text": 5}, None, {}], "hi"),
    ("fits", lambda c: c.fits(MSGS, 10), "fits", [{"fits": "yes"}, {}, {"fits": 1}], True),
    ("trim_to_fit", lambda c: c.trim_to_fit(MSGS, 10)["count"], "trim_to_fit", [{"count": 1, "dropped": ["a"]}, {"count": 1}, {"dropped": []}], 5),
    ("count_message", lambda c: c.count_message({"role": "assistant", "content": "x"}), "count_message", [{"count": "x"}, 7], 2),
    ("count_text", lambda c: c.count_text("x"), "count_text", [{"count": "x"}, {"count": None}, {}, 42], 2),
    ("encode_text", lambda c: c.encode_text("x"), "encode_text", [{"ids": 5}, {"ids": [1.0]}, {"ids": None}], [1, 2]),
    ("decode", lambda c: c.decode([1]), "decode", [{"text": None}, {"text": ["a"]}], "hi"),
    ("tokenizer_info", lambda c: c.tokenizer_info()["vocab_size"], "tokenizer_info",
     [42, [], {}, {"vocab_size": "10", "length": 1, "model_max_length": 1}, dict(INFO, added_tokens_decoder={"x": {"content": "a"}}),
      dict(INFO, added_tokens_decoder={"3": {"special": True}}), dict(INFO, special_tokens_map={"eos_token": 5}), dict(INFO, model_max_length=None)], 10),
    ("vocab", lambda c: len(c.vocab()), "vocab", [{"tokens": [1]}, {"tokens": "abc"}, {}], 12),
    ("text_counter", lambda c: c.text_counter().handle, "text_counter_open", [{"handle": 5}, {}], "h1"),
    ("message_counter", lambda c: c.message_counter().handle, "message_counter_open", [{"handle": None}], "h1"),
    ("stats", lambda c: c.stats()["requests"], "stats", [7, [1], None, "ok"], 1),
    ("health", lambda c: c.health()["status"], "health", [7, {"status": 1}, {}, {"status": None}], "ok"),
]


def acall_case(name):
    """The asyncio twin of a case's call."""
    async def run(c):
        if name == "tokenize_trajectory":
            return (await c.tokenize_trajectory(MSGS))["ids"]
        if name == "tokenize_rollout":
            return (await c.tokenize_rollout(MSGS))["sequences"][0]["ids"]
        if name == "trim_to_fit":
            return (await c.trim_to_fit(MSGS, 10))["count"]
        if name == "tokenizer_info":
            return (await c.tokenizer_info())["vocab_size"]
        if name == "vocab":
            return len(await c.vocab())
        if name in ("text_counter", "message_counter"):
            return (await getattr(c, name)()).handle
        if name == "stats":
            return (await c.stats())["requests"]
        if name == "health":
            return (await c.health())["status"]
        args = {"count_prompt": (MSGS,), "encode_prompt": (MSGS,), "render_prompt": (MSGS,), "fits": (MSGS, 10),
                "count_message": ({"role": "assistant", "content": "x"},), "count_text": ("x",), "encode_text": ("x",), "decode": ([1],)}[name]
        return await getattr(c, name)(*args)
    return run


def answers(method, result):
    return {"answers": {method: {"result": result}}}


class ShapeCheckTest(unittest.TestCase):
    """The sans-I/O checker alone (_wire.check_result)."""

    def test_the_sweep_of_issue_24(self):
        for method, result, path in [("tokenizer_info", 42, "result"), ("tokenizer_info", [], "result"), ("tokenizer_info", {}, "result.vocab_size"),
                                     ("count_text", {"count": "x"}, "result.count"), ("count_text", {"count": None}, "result.count"),
                                     ("count_text", {}, "result.count"), ("encode_text", {"ids": 5}, "result.ids"), ("health", 7, "result"),
                                     ("encode_text", {"ids": [1, 2, False]}, "result.ids[2]"),
                                     ("tokenize_rollout", {"sequences": [{"ids": [1], "mask": [[0, 1, 2]], "logprobs": None, "turns": []}], "splits": []},
                                      "result.sequences[0].mask[0]")]:
            with self.subTest(method=method, result=result):
                with self.assertRaises(deltatok.DeltatokError) as c:
                    check_result(method, result)
                self.assertEqual(c.exception.code, "DT_BAD_RESPONSE")
                self.assertEqual(c.exception.path, path)
                self.assertIn(method, c.exception.message)
                self.assertIn(path, c.exception.message)

    def test_good_results_pass_as_they_are(self):
        from fake_sidecar import good
        for method in RESULTS:
            if method != "batch":
                r = good(method, {})
                self.assertIs(check_result(method, r), r, method)
        self.assertEqual(check_result("a_newer_method", 5), 5)
        # stats: any keys (their spelling is the server's), a dict of them
        self.assertEqual(check_result("stats", {"cacheHits": 1, "cache_hits": {"x": [1]}}), {"cacheHits": 1, "cache_hits": {"x": [1]}})
        # more keys than the client reads are allowed (a newer server), ids as base64 too
        self.assertTrue(check_result("encode_prompt", {"ids": "AQAAAA==", "count": 1, "ids_from": 0, "new_field": [1]}))
        self.assertTrue(check_result("tokenize_rollout", {"sequences": [{"ids": [], "mask": [], "logprobs": [None, -1e308, 0], "turns": [{}]}],
                                                          "splits": [], "drift": []}))


class _Cases:
    """The cases over one kind of blocking client (`make` it, `stop` it)."""

    def make(self):  # pragma: no cover - per transport
        raise NotImplementedError

    def test_each_method_refuses_a_wrong_shape_and_answers_after(self):
        with self.make() as c:
            for name, call, method, bads, want in CASES:
                for bad in bads:
                    with self.subTest(name=name, bad=bad):
                        c.call("fake_answer", answers(method, bad))
                        with self.assertRaises(deltatok.DeltatokError) as cm:
                            call(c)
                        self.assertEqual(cm.exception.code, "DT_BAD_RESPONSE", cm.exception)
                        self.assertTrue((cm.exception.path or "").startswith("result"), cm.exception.path)
                        self.assertIn(method, cm.exception.message)
                        c.call("fake_answer", {})
                        self.assertEqual(call(c), want)

    def test_a_batch_fails_only_its_bad_calls(self):
        with self.make() as c:
            c.call("fake_answer", answers("count_text", {"count": "x"}))
            out = c.batch([{"method": "count_text", "params": {"text": "a"}}, {"method": "decode", "params": {"ids": [1]}}])
            self.assertEqual(out[0].code, "DT_BAD_RESPONSE")
            self.assertEqual(out[0].path, "result.count")
            self.assertEqual(out[1], {"text": "hi"})
            many = c.prompt_many("count_prompt", [{"messages": MSGS}, {"messages": MSGS + MSGS}])
            self.assertEqual([m["count"] for m in many], [3, 3])
            for bad in ({"result": {"results": 5}}, {"result": {"results": [{"result": {"text": "a"}}]}}, {"result": 7}, {"result": {"results": [1, 2]}}):
                c.call("fake_answer", {"answers": {"batch": bad}})
                out = c.batch([{"method": "count_text", "params": {"text": "a"}}, {"method": "decode", "params": {"ids": [1]}}])
                self.assertEqual([o.code for o in out], ["DT_BAD_RESPONSE"] * 2, bad)
            c.call("fake_answer", {})
            self.assertEqual(c.batch([{"method": "count_text", "params": {"text": "a"}}] * 2), [{"count": 2}] * 2)

    def test_an_error_without_a_code(self):
        with self.make() as c:
            for err in ({"message": "no code"}, 5, None, {"code": 7}):
                c.call("fake_answer", {"answers": {"count_text": {"error": err}}})
                with self.assertRaises(deltatok.DeltatokError) as cm:
                    c.count_text("x")
                self.assertEqual(cm.exception.code, "DT_BAD_RESPONSE")
            c.call("fake_answer", {})
            self.assertEqual(c.count_text("x"), 2)

    def test_streaming_counters(self):
        with self.make() as c:
            t = c.text_counter()
            c.call("fake_answer", answers("counter_append", {"count": "1"}))
            with self.assertRaises(deltatok.DeltatokError) as cm:
                t.append("a")
            self.assertEqual(cm.exception.code, "DT_BAD_RESPONSE")
            c.call("fake_answer", answers("counter_finish", {"count": 1, "stats": 5}))
            with self.assertRaises(deltatok.DeltatokError) as cm:
                t.finish()
            self.assertEqual(cm.exception.path, "result.stats")
            c.call("fake_answer", {})
            self.assertEqual(t.append("b"), 2)
            self.assertEqual(t.finish(), 2)
            m = c.message_counter()
            self.assertEqual(m.append({"content": "x"}), 2)
            m.close()

    def test_the_tokenizer(self):
        with self.make() as c:
            for bad in (42, [], {}, dict(INFO, length="12")):
                c.call("fake_answer", answers("tokenizer_info", bad))
                with self.assertRaises(deltatok.DeltatokError) as cm:
                    deltatok.AutoTokenizer.from_pretrained("fake", client=c)
                self.assertEqual(cm.exception.code, "DT_BAD_RESPONSE")
            c.call("fake_answer", {})
            tok = deltatok.AutoTokenizer.from_pretrained("fake", client=c)
            self.assertEqual(tok.vocab_size, 10)
            self.assertEqual(tok.eos_token_id, 10)
            for method, bad, call in [("encode_prompt", {"ids": "!!", "count": 1}, lambda: tok.apply_chat_template(MSGS)),
                                      ("encode_prompt", {"ids": ["1"], "count": 1}, lambda: tok.apply_chat_template([MSGS, MSGS + MSGS])),
                                      ("encode_text", {"ids": 5}, lambda: tok.encode("x")),
                                      ("encode_text", {"ids": [[1]], "count": 1}, lambda: tok(["x", "y"])["input_ids"]),
                                      ("decode", {"text": 1}, lambda: tok.decode([1])),
                                      ("render_prompt", {}, lambda: tok.apply_chat_template(MSGS, tokenize=False)),
                                      ("encode_batch", {"ids": 5}, lambda: tok.backend_tokenizer.encode_batch(["x"])),
                                      ("count_message", {"count": []}, lambda: tok.osl({"role": "assistant", "content": "x"}))]:
                with self.subTest(method=method, bad=bad):
                    c.call("fake_answer", answers(method, bad))
                    with self.assertRaises(deltatok.DeltatokError) as cm:
                        call()
                    self.assertEqual(cm.exception.code, "DT_BAD_RESPONSE")
            c.call("fake_answer", {})
            self.assertEqual(tok.apply_chat_template([MSGS, MSGS + MSGS]), [[1, 2, 3], [1, 2, 3]])
            self.assertEqual(tok.encode("x", add_special_tokens=False), [1, 2])
            self.assertEqual(tok.backend_tokenizer.encode_batch(["x"])[0].ids, [1, 2])


class HttpTest(_Cases, unittest.TestCase):
    def setUp(self):
        self.fake = HttpFake()
        self.addCleanup(self.fake.stop)

    def make(self):
        return deltatok.DeltatokHttpClient(self.fake.url, timeout=30)


class StdioTest(_Cases, unittest.TestCase):
    def make(self):
        return deltatok.DeltatokClient(command=FAKE, timeout=30)

    def test_an_answer_whose_id_is_a_list_answers_nobody(self):
        with deltatok.DeltatokClient(command=FAKE, timeout=1) as c:
            c.call("fake_answer", {"answers": {"health": {"id": [1], "result": {"status": "ok"}}}})
            with self.assertRaises(deltatok.DeltatokError) as cm:
                c.health()
            # the pipe is still read right: this call alone went unanswered
            self.assertEqual(cm.exception.code, "DT_REQUEST_TIMEOUT")
            c.call("fake_answer", {})
            self.assertEqual(c.health()["status"], "ok")


class AsyncTest(unittest.TestCase):
    async def cases(self, c):
        for name, _call, method, bads, want in CASES:
            call = acall_case(name)
            for bad in bads:
                with self.subTest(name=name, bad=bad):
                    await c.acall("fake_answer", answers(method, bad))
                    with self.assertRaises(deltatok.DeltatokError) as cm:
                        await call(c)
                    self.assertEqual(cm.exception.code, "DT_BAD_RESPONSE", cm.exception)
                    await c.acall("fake_answer", {})
                    self.assertEqual(await call(c), want)
        await c.acall("fake_answer", answers("count_text", {"count": "x"}))
        out = await c.batch([{"method": "count_text", "params": {"text": "a"}}, {"method": "decode", "params": {"ids": [1]}}])
        self.assertEqual(out[0].code, "DT_BAD_RESPONSE")
        self.assertEqual(out[1], {"text": "hi"})
        await c.acall("fake_answer", answers("tokenizer_info", []))
        with self.assertRaises(deltatok.DeltatokError) as cm:
            await aio.AsyncAutoTokenizer.from_pretrained("fake", client=c)
        self.assertEqual(cm.exception.code, "DT_BAD_RESPONSE")
        await c.acall("fake_answer", answers("vocab", {"tokens": 3}))
        with self.assertRaises(deltatok.DeltatokError) as cm:
            await aio.AsyncAutoTokenizer.from_pretrained("fake", client=c)
        self.assertEqual(cm.exception.path, "result.tokens")
        await c.acall("fake_answer", answers("encode_prompt", {"ids": None, "count": 0}))
        await c.acall("fake_answer", {})
        tok = await aio.AsyncAutoTokenizer.from_pretrained("fake", client=c)
        await c.acall("fake_answer", answers("encode_prompt", {"ids": None, "count": 0}))
        with self.assertRaises(deltatok.DeltatokError) as cm:
            await tok.apply_chat_template(MSGS)
        self.assertEqual(cm.exception.code, "DT_BAD_RESPONSE")
        await c.acall("fake_answer", {})
        self.assertEqual(await tok.apply_chat_template(MSGS), [1, 2, 3])

    def test_stdio(self):
        async def main():
            c = await aio.AsyncDeltatokClient.start(command=FAKE, timeout=30)
            try:
                await self.cases(c)
            finally:
                await c.aclose()
        asyncio.run(main())

    def test_http(self):
        fake = HttpFake()
        self.addCleanup(fake.stop)

        async def main():
            c = aio.AsyncDeltatokHttpClient(fake.url, timeout=30)
            try:
                await self.cases(c)
            finally:
                await c.aclose()
        asyncio.run(main())


class MutationTest(unittest.TestCase):
    """Seeded: each method's right-shaped answer to the very params sent, one field changed or
    deleted (fake_sidecar.mutate), through the method client, the tokenizer and training_arrays:
    every call answers or raises a DeltatokError, nothing else (the failure names its seed)."""

    SEEDS = int(os.environ.get("DELTATOK_TEST_SEEDS", "40"))

    def test_one_field_changed(self):
        fake = HttpFake()
        self.addCleanup(fake.stop)
        with deltatok.DeltatokHttpClient(fake.url, timeout=30) as c:
            tok = deltatok.AutoTokenizer.from_pretrained("fake", client=c)
            # the client's own calls (none of the test's indexing into what they return)
            calls = [(method, (lambda name, args: lambda c: getattr(c, name)(*args))(name, args)) for method, name, args in [
                ("count_prompt", "count_prompt", (MSGS,)), ("encode_prompt", "encode_prompt", (MSGS,)), ("tokenize_trajectory", "tokenize_trajectory", (MSGS,)),
                ("tokenize_rollout", "tokenize_rollout", (MSGS,)), ("render_prompt", "render_prompt", (MSGS,)), ("fits", "fits", (MSGS, 10)),
                ("trim_to_fit", "trim_to_fit", (MSGS, 10)), ("count_message", "count_message", ({"role": "assistant", "content": "x"},)),
                ("count_text", "count_text", ("x",)), ("encode_text", "encode_text", ("x",)), ("decode", "decode", ([1],)),
                ("tokenizer_info", "tokenizer_info", ()), ("vocab", "vocab", ()), ("text_counter_open", "text_counter", ()),
                ("message_counter_open", "message_counter", ()), ("stats", "stats", ()), ("health", "health", ())]] + [
                ("tokenizer_info", lambda c: deltatok.AutoTokenizer.from_pretrained("fake", client=c).all_special_ids),
                ("vocab", lambda c: deltatok.AutoTokenizer.from_pretrained("fake", client=c).convert_ids_to_tokens([1, 11])),
                ("encode_prompt", lambda c: tok.apply_chat_template([MSGS, MSGS + MSGS], return_dict=True, padding=True)),
                ("encode_prompt", lambda c: tok.apply_chat_template(MSGS + MSGS + MSGS)),
                ("tokenize_trajectory", lambda c: tok.apply_chat_template(MSGS, return_assistant_tokens_mask=True, return_dict=True)),
                ("encode_text", lambda c: tok(["x", "y"], padding=True)),
                ("encode_batch", lambda c: tok.backend_tokenizer.encode_batch(["x", "y"])),
                ("decode", lambda c: tok.batch_decode([[1], [2]])),
                ("render_prompt", lambda c: tok.apply_chat_template(MSGS, tokenize=False)),
                ("count_message", lambda c: tok.osl({"role": "assistant", "content": "x"})),
                ("counter_append", lambda c: c.text_counter().append("x")),
                ("counter_finish", lambda c: c.message_counter().finish()),
                ("trim_to_fit", lambda c: tok.trim_to_fit(MSGS + MSGS, 10)),
                ("tokenize_rollout", lambda c: [deltatok.training_arrays(q) for q in c.tokenize_rollout(MSGS)["sequences"]]),
            ]
            with warnings.catch_warnings():
                # a mutated mask_source makes the tokenizer warn, as transformers does, on every call
                warnings.simplefilter("ignore", UserWarning)
                coded, answered = self.sweep(c, calls)
            c.call("fake_answer", {})
            self.assertEqual(c.count_text("x"), 2)
            self.assertGreater(coded, 0)
            self.assertGreater(answered, 0)

    def sweep(self, c, calls):
        """(calls that raised a DeltatokError, calls answered) over every seed."""
        coded = answered = 0
        for seed in range(self.SEEDS):
            for method, call in calls:
                c.call("fake_answer", {"mutate": {"method": method, "seed": seed}})
                try:
                    call(c)
                    answered += 1
                except deltatok.DeltatokError:
                    coded += 1
                except Exception as e:  # noqa: BLE001 - what this test is about
                    self.fail("seed %d, %s: %s: %s" % (seed, method, type(e).__name__, e))
        return coded, answered


class ReaderTest(unittest.TestCase):
    """read_tokens / read_rollouts: a path that cannot be read is DT_CORPUS_UNREADABLE (an
    OSError), a forged index record DT_BINARY_INVALID; training_arrays' bad input is coded."""

    def readers(self):
        return [deltatok.read_tokens, deltatok.read_rollouts]

    def assertUnreadable(self, path, errno_=None):
        for read in self.readers():
            with self.subTest(read=read.__name__, path=path):
                with self.assertRaises(deltatok.DeltatokError) as cm:
                    next(read(path))
                self.assertEqual(cm.exception.code, "DT_CORPUS_UNREADABLE")
                self.assertIsInstance(cm.exception, OSError)
                self.assertEqual(cm.exception.path, os.fspath(path))
                if errno_ is not None:
                    self.assertEqual(cm.exception.errno, errno_)

    def test_missing_directory_fifo(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertUnreadable(os.path.join(d, "nonexistent.bin"), errno.ENOENT)
            self.assertUnreadable("/nonexistent.bin", errno.ENOENT)
            self.assertUnreadable(d)
            from pathlib import Path
            self.assertUnreadable(Path(d) / "missing.bin", errno.ENOENT)
            if hasattr(os, "mkfifo"):
                fifo = os.path.join(d, "fifo.bin")
                os.mkfifo(fifo)
                self.assertUnreadable(fifo)  # refused at once, not blocked waiting for a writer
            if hasattr(os, "geteuid") and os.geteuid() != 0:
                locked = os.path.join(d, "locked.bin")
                with open(locked, "wb") as f:
                    f.write(b"DTOKBIN1")
                os.chmod(locked, 0)
                self.assertUnreadable(locked, errno.EACCES)

    def write(self, d, magic, index):
        path = os.path.join(d, "x.bin")
        body = magic + b"\x00" * 8
        at = len(body)
        with open(path, "wb") as f:
            f.write(body + json.dumps(index).encode("utf-8") + struct.pack("<Q", at))
        return path

    def test_forged_index_records(self):
        with tempfile.TemporaryDirectory() as d:
            for read, magic, rec in [(deltatok.read_tokens, b"DTOKBIN1", {"id": 1, "count": 1}),
                                     (deltatok.read_tokens, b"DTOKBIN1", 5),
                                     (deltatok.read_tokens, b"DTOKBIN1", {"id": 1, "offset": "8", "count": 1, "mask_offset": 8}),
                                     (deltatok.read_rollouts, b"DTROLL02", {"id": 1, "sequences": [{"count": 1}], "splits": [], "drift": []}),
                                     (deltatok.read_rollouts, b"DTROLL02", {"id": 1, "splits": [], "drift": []})]:
                with self.subTest(read=read.__name__, rec=rec):
                    path = self.write(d, magic, {"records": [rec]})
                    with self.assertRaises(deltatok.DeltatokError) as cm:
                        list(read(path))
                    self.assertEqual(cm.exception.code, "DT_BINARY_INVALID")
            # a failed conversation's record is yielded as it is
            path = self.write(d, b"DTOKBIN1", {"records": [{"id": 1, "line": 1, "error": {"code": "DT_INVALID_MESSAGES"}}]})
            self.assertEqual(list(deltatok.read_tokens(path))[0]["line"], 1)

    def write_arrays(self, d, records, arrays):
        """A token file with `arrays` (bytes) after the magic and `records` as its index."""
        path = os.path.join(d, "t.bin")
        body = b"DTOKBIN1" + arrays
        with open(path, "wb") as f:
            f.write(body + json.dumps({"records": records}).encode("utf-8") + struct.pack("<Q", len(body)))
        return path

    def test_forged_index_layout(self):
        # two conversations as the writer lays them out: ids (4 bytes a token), then the mask
        # padded to 4, each right after the previous
        arrays = struct.pack("<3I", 7, 8, 9) + bytes([0, 1, 1, 0]) + struct.pack("<2I", 5, 6) + bytes([1, 1, 0, 0])
        good = [{"id": 1, "count": 3, "offset": 8, "mask_offset": 20}, {"id": 2, "count": 2, "offset": 24, "mask_offset": 32}]
        with tempfile.TemporaryDirectory() as d:
            got = list(deltatok.read_tokens(self.write_arrays(d, good, arrays)))
            self.assertEqual([list(r["ids"]) for r in got], [[7, 8, 9], [5, 6]])
            self.assertEqual([r["assistant_mask"] for r in got], [bytes([0, 1, 1]), bytes([1, 1])])
            forged = {
                "count one more": [dict(good[0], count=4), good[1]],
                "count one less": [dict(good[0], count=2), good[1]],
                "unaligned offset": [good[0], dict(good[1], offset=25)],
                "mask pointed into the ids": [dict(good[0], mask_offset=8), good[1]],
                "records swapped": [good[1], good[0]],
                "one record twice": [good[0], good[0]],
            }
            for what, records in forged.items():
                with self.subTest(what):
                    with self.assertRaises(deltatok.DeltatokError) as cm:
                        list(deltatok.read_tokens(self.write_arrays(d, records, arrays)))
                    self.assertEqual(cm.exception.code, "DT_BINARY_INVALID")
            # a mask byte other than 0/1 where the layout is right
            bad_mask = arrays[:12] + bytes([0, 7, 1, 0]) + arrays[16:]
            with self.assertRaises(deltatok.DeltatokError) as cm:
                list(deltatok.read_tokens(self.write_arrays(d, good, bad_mask)))
            self.assertEqual(cm.exception.code, "DT_BINARY_INVALID")

    def test_training_arrays(self):
        for seq in ({}, {"ids": [1], "mask": [[0]], "logprobs": None, "turns": []}, {"ids": ["1"], "mask": [], "logprobs": None, "turns": []}, 5):
            with self.assertRaises(deltatok.DeltatokError) as cm:
                deltatok.training_arrays(seq)
            self.assertEqual(cm.exception.code, "DT_INVALID_REQUEST")
        got = deltatok.training_arrays({"ids": [1, 2], "mask": [[1, 2]], "logprobs": [None, -0.5], "turns": []})
        self.assertEqual(list(got["mask"]), [0, 1])


if __name__ == "__main__":
    unittest.main()
