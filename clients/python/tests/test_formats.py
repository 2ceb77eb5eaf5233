"""from_pretrained over directories without tokenizer.json (the main README's "Tokenizer
formats"): a Kimi-shaped tiktoken directory and a SentencePiece one load through `deltatok serve`
with the same ids as the JS library's fixtures, and `pattern` reaches `--pattern`."""
import os
import unittest

import support
from support import deltatok, needs_cli

FIXTURES = os.path.join(support.REPO, "test", "fixtures", "formats")


class EngineArgsTest(unittest.TestCase):
    def test_pattern_becomes_the_flag(self):
        from deltatok._tokenizer import sidecar_args
        self.assertEqual(sidecar_args("dir", {"pattern": r"\S+|\s+"}), ["--tokenizer", "dir", "--pattern", r"\S+|\s+"])


@needs_cli
class FormatDirectoriesTest(unittest.TestCase):
    def test_kimi_and_sentencepiece_directories(self):
        messages = [{"role": "user", "content": "Hello there"}, {"role": "assistant", "content": "Hi!"}]
        with deltatok.AutoTokenizer.from_pretrained(os.path.join(FIXTURES, "kimi"), date=support.DATE, command=support.COMMAND) as tok:
            self.assertEqual(tok.encode("hi<|im_end|>", add_special_tokens=False)[-1], 20002)
            ids = tok.apply_chat_template(messages, add_generation_prompt=True)
            self.assertEqual(tok.decode(ids), tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))
        with deltatok.AutoTokenizer.from_pretrained(os.path.join(FIXTURES, "mistral-v3-chat"), date=support.DATE, command=support.COMMAND) as tok:
            ids = tok.apply_chat_template(messages, add_generation_prompt=True)
            self.assertEqual(ids[:2], [1, 3])  # <s> [INST]

    def test_pattern_option(self):
        glm4 = os.path.join(FIXTURES, "glm4")
        with deltatok.AutoTokenizer.from_pretrained(glm4, pattern=r"\S+|\s+", command=support.COMMAND) as tok:
            with deltatok.AutoTokenizer.from_pretrained(glm4, command=support.COMMAND) as own:
                self.assertNotEqual(tok.encode("Hello, world"), own.encode("Hello, world"))


if __name__ == "__main__":
    unittest.main()
