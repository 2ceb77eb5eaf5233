"""Context budgets from Python: tok.fits / tok.trim_to_fit (and the client's fits / trim_to_fit)
answer as apply_chat_template's token counts say, on the bundled corpus."""
import unittest

import support
from support import deltatok, needs_cli


@needs_cli
class BudgetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tok = support.shared_tokenizer()
        cls.conv = max(support.corpus(), key=lambda c: len(c["messages"]))

    def count(self, messages, tools):
        return len(self.tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True))

    def test_fits_is_count_at_most_limit(self):
        messages, tools = self.conv["messages"], self.conv["tools"]
        n = self.count(messages, tools)
        for limit in (n, n - 1, n // 2, n + 5):
            self.assertEqual(self.tok.fits(messages, limit, tools=tools), n <= limit, limit)
            self.assertEqual(self.tok.client.fits(messages, limit, tools, add_generation_prompt=True), n <= limit, limit)

    def test_trim_to_fit_keeps_what_fits(self):
        messages, tools = self.conv["messages"], self.conv["tools"]
        n = self.count(messages, tools)
        for policy in (None, "turns"):
            r = self.tok.trim_to_fit(messages, int(n * 0.8), tools=tools, policy=policy)
            self.assertGreater(len(r["dropped"]), 0)
            self.assertLessEqual(r["count"], int(n * 0.8))
            self.assertEqual(r["count"], self.count(r["messages"], tools))
            self.assertEqual(r["messages"], [m for i, m in enumerate(messages) if i not in set(r["dropped"])])
            self.assertEqual(r["messages"][0]["role"], "system")
        whole = self.tok.trim_to_fit(messages, n, tools=tools)
        self.assertEqual((whole["count"], whole["dropped"]), (n, []))

    def test_errors_are_coded(self):
        messages, tools = self.conv["messages"], self.conv["tools"]
        with self.assertRaises(deltatok.DeltatokInputError) as e:
            self.tok.trim_to_fit(messages, 10, tools=tools)
        self.assertEqual(e.exception.code, "DT_CONTEXT_TOO_SMALL")
        with self.assertRaises(deltatok.DeltatokError) as e:
            self.tok.trim_to_fit(messages, 100, tools=tools, policy="newest")
        self.assertEqual(e.exception.code, "DT_INVALID_OPTION")
        with self.assertRaises(TypeError):
            self.tok.client.fits(messages, 100, tools, add_generaton_prompt=True)


if __name__ == "__main__":
    unittest.main()
