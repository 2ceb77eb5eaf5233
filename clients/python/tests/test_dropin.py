"""The drop-in surface without transformers installed (transformers_matrix.py compares it with the
real one): transformers 5's defaults, one-shot iterables, backend_tokenizer, pickling; and the
client's errors, every one coded: a stopped server (timeout), a lone surrogate, a bad
DELTATOK_CMD, a malformed answer."""
import os
import pickle
import signal
import sys
import tempfile
import unittest
from unittest import mock

from support import COMMAND, DATE, deltatok, needs_cli, own_tokenizer, shared_tokenizer

CHAT = [{"role": "user", "content": "Hello, world. It's me"}, {"role": "assistant", "content": "Hi!"}]


@needs_cli
class TransformersFiveTest(unittest.TestCase):
    def test_batch_encoding_by_default_under_5_and_ids_under_4(self):
        tok = shared_tokenizer()
        ids = tok.apply_chat_template(CHAT, return_dict=False)
        with mock.patch.dict(os.environ, {"DELTATOK_TRANSFORMERS_COMPAT": "5"}):
            enc = tok.apply_chat_template(CHAT)
            self.assertIsInstance(enc, deltatok.BatchEncoding)
            self.assertEqual(enc["input_ids"], ids)
            self.assertEqual(enc["attention_mask"], [1] * len(ids))
            # transformers 5: tokenize=False wins over return_dict
            self.assertIsInstance(tok.apply_chat_template(CHAT, tokenize=False, return_dict=True), str)
        with mock.patch.dict(os.environ, {"DELTATOK_TRANSFORMERS_COMPAT": "4"}):
            self.assertEqual(tok.apply_chat_template(CHAT), ids)
            with self.assertRaises(deltatok.DeltatokInputError):
                tok.apply_chat_template(CHAT, tokenize=False, return_dict=True)
        with mock.patch.dict(os.environ, {"DELTATOK_TRANSFORMERS_COMPAT": "6"}):
            with self.assertRaises(deltatok.DeltatokError) as c:
                tok.apply_chat_template(CHAT)
            self.assertEqual(c.exception.code, "DT_INVALID_OPTION")

    def test_one_shot_iterables_are_rendered_as_lists(self):
        tok = shared_tokenizer()
        calls = [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]
        want = tok.apply_chat_template([CHAT[0], {"role": "assistant", "content": "", "tool_calls": calls}], return_dict=False)
        got = tok.apply_chat_template([CHAT[0], {"role": "assistant", "content": "", "tool_calls": iter(calls)}], return_dict=False)
        self.assertEqual(got, want)

    def test_backend_tokenizer_batches_equal_encode(self):
        tok = shared_tokenizer()
        texts = ["Hello world", "", "naïve café 日本語", "x" * 1000]
        encs = tok.backend_tokenizer.encode_batch(texts)
        self.assertEqual([e.ids for e in encs], [tok.encode(t) for t in texts])
        self.assertEqual(encs[0].tokens, tok.convert_ids_to_tokens(encs[0].ids))
        self.assertEqual(len(encs[2]), len(encs[2].ids))
        self.assertEqual([e.tokens for e in tok.backend_tokenizer.encode_batch_fast(texts[:1])], [["", ""]])
        self.assertEqual(tok.backend_tokenizer.get_vocab_size(), len(tok))
        self.assertEqual(tok.backend_tokenizer.id_to_token(tok.backend_tokenizer.token_to_id("Hello")), "Hello")
        with self.assertRaises(deltatok.DeltatokError) as c:
            tok.backend_tokenizer.encode_batch(["ok", "bad \ud800"])
        self.assertEqual(c.exception.code, "DT_LONE_SURROGATE")

    def test_pickling_starts_a_sidecar_where_it_is_unpickled(self):
        tok = own_tokenizer()
        try:
            tok.pad_token = "<|endoftext|>"
            tok.padding_side = "left"
            back = pickle.loads(pickle.dumps(tok))
            try:
                self.assertNotEqual(back.client.transport.pid, tok.client.transport.pid)
                self.assertEqual(back.apply_chat_template(CHAT, return_dict=False), tok.apply_chat_template(CHAT, return_dict=False))
                self.assertEqual((back.pad_token, back.padding_side), ("<|endoftext|>", "left"))
            finally:
                back.close()
        finally:
            tok.close()


@needs_cli
class CodedErrorsTest(unittest.TestCase):
    def test_a_stopped_server_times_out_and_the_client_goes_on(self):
        tok = own_tokenizer(timeout=120)
        try:
            tok.encode("warm")
            tok.client.transport.timeout = 2
            os.kill(tok.client.transport.pid, signal.SIGSTOP)
            try:
                with self.assertRaises(deltatok.DeltatokError) as c:
                    tok.apply_chat_template(CHAT, return_dict=False)
                self.assertEqual(c.exception.code, "DT_REQUEST_TIMEOUT")
            finally:
                os.kill(tok.client.transport.pid, signal.SIGCONT)
            # the late answer is dropped; the next call gets its own
            self.assertEqual(tok.encode("Hello world", add_special_tokens=False), [9707, 1879])
        finally:
            tok.close()

    def test_asyncio_a_stopped_server_times_out_too(self):
        import asyncio
        from deltatok.aio import AsyncAutoTokenizer

        async def go():
            tok = await AsyncAutoTokenizer.from_pretrained("qwen3", date=DATE, command=COMMAND, timeout=120)
            try:
                tok.client.timeout = 2
                pid = tok.client._proc.pid
                os.kill(pid, signal.SIGSTOP)
                try:
                    with self.assertRaises(deltatok.DeltatokError) as c:
                        await tok.encode("Hello world", add_special_tokens=False)
                    self.assertEqual(c.exception.code, "DT_REQUEST_TIMEOUT")
                finally:
                    os.kill(pid, signal.SIGCONT)
                self.assertEqual(await tok.encode("Hello world", add_special_tokens=False), [9707, 1879])
            finally:
                await tok.aclose()

        asyncio.run(go())

    def test_a_lone_surrogate_is_coded(self):
        with self.assertRaises(deltatok.DeltatokError) as c:
            shared_tokenizer().apply_chat_template([{"role": "user", "content": "a\ud800b"}], return_dict=False)
        self.assertEqual(c.exception.code, "DT_LONE_SURROGATE")
        self.assertIsInstance(c.exception, ValueError)

    def test_a_bad_command_is_coded_and_says_how_to_point_to_one(self):
        for cmd in ('node "unclosed', "/nonexistent/deltatok-cli"):
            with mock.patch.dict(os.environ, {"DELTATOK_CMD": cmd}):
                with self.assertRaises(deltatok.DeltatokNotFoundError) as c:
                    deltatok.AutoTokenizer.from_pretrained("qwen3")
            self.assertEqual(c.exception.code, "DT_COMMAND_NOT_FOUND")
            self.assertIsInstance(c.exception, FileNotFoundError)
            self.assertIn("npm link", c.exception.message)
            self.assertNotIn("npm install deltatok", c.exception.message)
        with tempfile.TemporaryDirectory() as d:
            with mock.patch.dict(os.environ, {"DELTATOK_CMD": "", "PATH": d}):
                with self.assertRaises(deltatok.DeltatokNotFoundError) as c:
                    deltatok.find_command(cwd=d)
        self.assertEqual(c.exception.code, "DT_COMMAND_NOT_FOUND")

    def test_a_malformed_answer_is_coded(self):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write("import sys\nfor line in sys.stdin:\n    print('[1, 2]', flush=True)\n")
        try:
            client = deltatok.DeltatokClient(command=[sys.executable, f.name], timeout=10)
            try:
                with self.assertRaises(deltatok.DeltatokError) as c:
                    client.health()
                self.assertEqual(c.exception.code, "DT_BAD_RESPONSE")
            finally:
                client.close()
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
