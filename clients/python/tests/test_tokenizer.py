"""AutoTokenizer against the JS library on the bundled corpus (data/tau-bench-airline-20.jsonl):
apply_chat_template in every signature variant — ids, text, BatchEncoding, batches, kwargs to
the template, continue_final_message, assistant masks, padding/truncation, tensors — and the
plain-text methods and attributes (encode, __call__, decode, convert_*, len, special tokens)."""
import unittest

import support
from support import deltatok, needs_cli


@needs_cli
class ApplyChatTemplateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.expect = support.expectations()
        cls.tok = support.shared_tokenizer()
        cls.convs = support.corpus()
        cls.by_key = {(r["conversation"], r["k"]): r for r in cls.expect["requests"]}

    def test_ids_of_every_request_equal_the_library(self):
        n = 0
        for ci, k, prompt, tools, _ in support.requests_of(self.convs):
            ids = self.tok.apply_chat_template(prompt, tools=tools, add_generation_prompt=True)
            self.assertIsInstance(ids, list)
            self.assertEqual(ids, self.by_key[(ci, k)]["ids"], (ci, k))
            n += 1
        self.assertEqual(n, len(self.expect["requests"]))
        self.assertGreater(n, 200)

    def test_variants(self):
        for ci, k, prompt, tools, message in support.requests_of(self.convs[:3]):
            want = self.by_key[(ci, k)]
            # transformers' default: no generation prompt
            self.assertEqual(self.tok.apply_chat_template(prompt, tools=tools), want["ids_no_generation_prompt"])
            self.assertEqual(self.tok.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, tokenize=False), want["text"])
            # **kwargs reach the template (Qwen3 reads enable_thinking)
            self.assertEqual(self.tok.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, enable_thinking=False), want["ids_no_thinking"])
            enc = self.tok.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, return_dict=True)
            self.assertIsInstance(enc, deltatok.BatchEncoding)
            self.assertEqual(list(enc.keys()), ["input_ids", "attention_mask"])
            self.assertEqual(enc["input_ids"], want["ids"])
            self.assertEqual(enc.attention_mask, [1] * len(want["ids"]))
            cont = self.tok.apply_chat_template(prompt + [message], tools=tools, continue_final_message=True)
            self.assertEqual(cont, want["ids_continued"])

    def test_kwargs_differ_from_the_default_render(self):
        # the variant above is only meaningful if the kwarg changes something
        changed = sum(1 for r in self.expect["requests"] if "ids_no_thinking" in r and r["ids_no_thinking"] != r["ids"])
        self.assertGreater(changed, 0)

    def test_a_batch_of_conversations_is_one_round_trip(self):
        prompts = [(p, t) for _, _, p, t, _ in support.requests_of(self.convs[3:6], 3)]
        keys = [(ci, k) for ci, k, _, _, _ in support.requests_of(self.convs[3:6], 3)]
        tools = prompts[0][1]
        self.assertTrue(all(t == tools for _, t in prompts))
        before = self.tok.client.client_stats()
        out = self.tok.apply_chat_template([p for p, _ in prompts], tools=tools, add_generation_prompt=True)
        self.assertEqual(out, [self.by_key[key]["ids"] for key in keys])
        texts = self.tok.apply_chat_template([p for p, _ in prompts[:3]], tools=tools, add_generation_prompt=True, tokenize=False)
        self.assertIsInstance(texts, list)
        self.assertEqual(len(texts), 3)
        padded = self.tok.apply_chat_template([p for p, _ in prompts[:4]], tools=tools, add_generation_prompt=True, padding=True, return_dict=True)
        longest = max(len(self.by_key[key]["ids"]) for key in keys[:4])
        for row, mask, key in zip(padded["input_ids"], padded["attention_mask"], keys[:4]):
            ids = self.by_key[key]["ids"]
            self.assertEqual(len(row), longest)
            self.assertEqual(row[:len(ids)], ids)
            self.assertEqual(sum(mask), len(ids))
            self.assertTrue(all(x == self.tok.pad_token_id for x in row[len(ids):]))
        after = self.tok.client.client_stats()
        self.assertGreater(after["requests"], before["requests"])

    def test_truncation(self):
        ci, k, prompt, tools, _ = next(support.requests_of(self.convs[:1]))
        ids = self.by_key[(ci, k)]["ids"]
        self.assertEqual(self.tok.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, truncation=True, max_length=10), ids[:10])
        enc = self.tok.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, truncation=True, max_length=10, return_dict=True,
                                           tokenizer_kwargs={"return_attention_mask": False})
        self.assertEqual(list(enc.keys()), ["input_ids"])

    def test_assistant_masks_follow_generation_blocks(self):
        template = self.expect["generation_template"]
        for ci, k, prompt, tools, message in support.requests_of(self.convs[:2]):
            want = self.by_key[(ci, k)]["generation"]
            self.assertEqual(want["source"], "generation")
            enc = self.tok.apply_chat_template(prompt + [message], chat_template=template, return_dict=True, return_assistant_tokens_mask=True)
            self.assertEqual(enc["input_ids"], want["ids"])
            expected = [0] * len(want["ids"])
            for a, b in want["mask"]:
                for i in range(a, b):
                    expected[i] = 1
            self.assertEqual(enc["assistant_masks"], expected)
            self.assertGreater(sum(expected), 0)

    def test_assistant_masks_without_generation_blocks_are_zero_as_in_transformers(self):
        msgs = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
        with self.assertWarns(UserWarning):
            enc = self.tok.apply_chat_template(msgs, return_dict=True, return_assistant_tokens_mask=True)
        self.assertEqual(enc["assistant_masks"], [0] * len(enc["input_ids"]))

    def test_numpy_tensors(self):
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("numpy is not installed")
        ci, k, prompt, tools, _ = next(support.requests_of(self.convs[:1]))
        arr = self.tok.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, return_tensors="np")
        self.assertEqual(arr.shape, (1, len(self.by_key[(ci, k)]["ids"])))
        self.assertEqual(arr[0].tolist(), self.by_key[(ci, k)]["ids"])

    def test_transformers_errors(self):
        msgs = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "He"}]
        with self.assertRaises(ValueError):
            self.tok.apply_chat_template(msgs, tokenize=False, return_dict=True)
        with self.assertRaises(ValueError):
            self.tok.apply_chat_template(msgs, return_assistant_tokens_mask=True)
        with self.assertRaises(ValueError):
            self.tok.apply_chat_template(msgs, continue_final_message=True, add_generation_prompt=True)
        with self.assertRaises(ValueError):
            self.tok.apply_chat_template(msgs, tools=[lambda x: x])
        with self.assertRaises(TypeError):
            self.tok.apply_chat_template(msgs, documents=["not a dict"])
        with self.assertRaises(ValueError):
            self.tok.apply_chat_template(msgs, return_tensors="tf")
        with self.assertRaises(ValueError):
            self.tok.apply_chat_template(msgs, tokenizer_kwargs={"stride": 3})

    def test_get_chat_template(self):
        self.assertIsInstance(self.tok.chat_template, str)
        self.assertEqual(self.tok.get_chat_template(), self.tok.chat_template)
        self.assertEqual(self.tok.get_chat_template("{{ x }}"), "{{ x }}")


@needs_cli
class PlainTextTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.expect = support.expectations()
        cls.tok = support.shared_tokenizer()

    def test_attributes(self):
        info = self.expect["info"]
        tok = self.tok
        self.assertEqual(tok.vocab_size, info["vocab_size"])
        self.assertEqual(len(tok), info["length"])
        self.assertEqual(tok.eos_token, info["special_tokens_map"]["eos_token"])
        self.assertEqual(tok.eos_token_id, info["special_token_ids"]["eos_token"])
        self.assertEqual(tok.pad_token_id, info["special_token_ids"]["pad_token"])
        self.assertIsNone(tok.bos_token)
        self.assertIsNone(tok.bos_token_id)
        self.assertEqual(tok.model_max_length, info["model_max_length"])
        self.assertEqual(tok.padding_side, "right")
        self.assertTrue(tok.is_fast)
        self.assertIn("<|im_start|>", tok.additional_special_tokens)
        self.assertIn(tok.eos_token_id, tok.all_special_ids)
        self.assertEqual(tok.added_tokens_decoder[tok.eos_token_id].content, tok.eos_token)
        self.assertTrue(tok.added_tokens_decoder[tok.eos_token_id].special)

    def test_encode_call_decode(self):
        for t in self.expect["texts"]:
            self.assertEqual(self.tok.encode(t["text"], add_special_tokens=False), t["ids"])
            self.assertEqual(self.tok.encode(t["text"]), t["ids_special"])
            enc = self.tok(t["text"])
            self.assertEqual(enc["input_ids"], t["ids_special"])
            self.assertEqual(enc["attention_mask"], [1] * len(t["ids_special"]))
            self.assertEqual(self.tok.decode(t["ids"]), t["decoded"])
            self.assertEqual(self.tok.decode(t["ids"], skip_special_tokens=True), t["decoded_skip"])
        texts = [t["text"] for t in self.expect["texts"]]
        batch = self.tok(texts, padding=True)
        self.assertEqual(len(batch["input_ids"]), len(texts))
        self.assertEqual(len({len(r) for r in batch["input_ids"]}), 1)
        self.assertEqual(self.tok.batch_decode([t["ids"] for t in self.expect["texts"]]), [t["decoded"] for t in self.expect["texts"]])
        self.assertEqual(self.tok.decode(self.expect["texts"][0]["ids"][0]), self.tok.convert_ids_to_tokens(self.expect["texts"][0]["ids"][0]))

    def test_tokens_and_ids(self):
        ids = self.expect["texts"][3]["ids"]
        tokens = self.tok.convert_ids_to_tokens(ids)
        self.assertEqual(self.tok.convert_tokens_to_ids(tokens), ids)
        self.assertEqual(self.tok.convert_tokens_to_ids("<|im_end|>"), self.tok.eos_token_id)
        self.assertIsNone(self.tok.convert_tokens_to_ids("definitely-not-a-token"))  # Qwen3 has no unk token
        self.assertEqual(self.tok.convert_ids_to_tokens(ids, skip_special_tokens=True), [t for t in tokens if t not in ("<|im_start|>", "<|im_end|>")])
        self.assertEqual(self.tok.tokenize("Hello world"), ["Hello", "Ġworld"])
        vocab = self.tok.get_vocab()
        self.assertEqual(vocab["<|im_end|>"], self.tok.eos_token_id)
        self.assertEqual(len(vocab), len(self.tok))

    def test_osl_helper_equals_the_library(self):
        convs = support.corpus()
        by_key = {(r["conversation"], r["k"]): r for r in self.expect["requests"]}
        for ci, k, _, _, message in support.requests_of(convs[:4]):
            self.assertEqual(self.tok.osl(message), by_key[(ci, k)]["osl"])

    def test_from_pretrained_options(self):
        with self.assertRaises(TypeError):
            deltatok.AutoTokenizer.from_pretrained("qwen3", not_an_option=1, command=support.COMMAND)
        with self.assertRaises(ValueError):
            deltatok.AutoTokenizer.from_pretrained("qwen3", use_fast=False, command=support.COMMAND)
        with self.assertRaises(ValueError):
            deltatok.AutoTokenizer.from_pretrained("qwen3", revision="v2", command=support.COMMAND)
        with self.assertRaises(EnvironmentError):
            deltatok.AutoTokenizer()
        # as transformers: an OSError for a tokenizer that cannot be loaded (with deltatok's code)
        with self.assertRaises(OSError) as cm:
            deltatok.AutoTokenizer.from_pretrained("no-such-tokenizer-anywhere", command=support.COMMAND)
        self.assertIsInstance(cm.exception, deltatok.DeltatokError)
        self.assertEqual(cm.exception.code, "DT_TOKENIZER_UNKNOWN")

    def test_settable_attributes_reach_the_template(self):
        tok = support.tokenizer(padding_side="left", trust_remote_code=True, chat_template="{{ bos_token }}|{% for m in messages %}{{ m.content }}{% endfor %}")
        try:
            self.assertEqual(tok.padding_side, "left")
            tok.bos_token = "<|endoftext|>"
            self.assertEqual(tok.bos_token_id, tok.convert_tokens_to_ids("<|endoftext|>"))
            self.assertEqual(tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False), "<|endoftext|>|hi")
            tok.pad_token = None
            with self.assertRaises(ValueError):
                tok.apply_chat_template([[{"role": "user", "content": "a"}], [{"role": "user", "content": "a b c"}]], padding=True)
        finally:
            tok.close()


if __name__ == "__main__":
    unittest.main()
