"""Streaming counters from Python: text and message counters over the stdio sidecar (blocking and
asyncio) and over HTTP answer what count_text / osl answer for the text or message so far; finished,
closed and unknown counters raise DT_COUNTER_UNKNOWN."""
import asyncio
import unittest

import support
from support import deltatok, needs_cli

TEXT = "Sure! Your flight HAT045 leaves at 10:00 \u2014 gate B12.\n\n\u6771\u4eac \U0001F44D <|im_end|> done"


def chunks(text, n):
    return [text[i:i + n] for i in range(0, len(text), n)]


@needs_cli
class StreamTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tok = support.shared_tokenizer()

    def test_text_counter_equals_count_text_after_every_append(self):
        for n in (1, 3, 7, 64):
            c = self.tok.text_counter()
            so_far = ""
            for ch in chunks(TEXT, n):
                so_far += ch
                self.assertEqual(c.append(ch), self.tok.client.count_text(so_far), (n, so_far))
            self.assertEqual(c.finish(), len(self.tok.encode(TEXT, add_special_tokens=False)))
            self.assertIsInstance(c.stats, dict)
            # written-out fields are snake_case (README "Field names")
            self.assertIn("chars_encoded", c.stats)
            self.assertEqual([k for k in c.stats if any(a.islower() and b.isupper() for a, b in zip(k, k[1:]))], [])
            with self.assertRaises(deltatok.DeltatokError) as e:
                c.append("more")
            self.assertEqual(e.exception.code, "DT_COUNTER_UNKNOWN")

    def test_message_counter_equals_osl_of_the_message_so_far(self):
        c = self.tok.message_counter()
        m = {"role": "assistant", "content": "", "reasoning_content": ""}
        calls = []
        deltas = [{"reasoning_content": "Look up "}, {"reasoning_content": "the user."}, {"content": "One "}, {"content": "moment."},
                  {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_user", "arguments": "{\"user_id\": "}}]},
                  {"tool_calls": [{"index": 0, "function": {"arguments": "\"omar\"}"}}]}]
        for d in deltas:
            m["content"] += d.get("content", "")
            m["reasoning_content"] += d.get("reasoning_content", "")
            for t in d.get("tool_calls", []):
                if t["index"] == len(calls):
                    calls.append({"id": t["id"], "type": "function", "function": {"name": "", "arguments": ""}})
                calls[t["index"]]["function"]["name"] += t["function"].get("name", "")
                calls[t["index"]]["function"]["arguments"] += t["function"].get("arguments", "")
            want = dict(m, tool_calls=[dict(x, function=dict(x["function"])) for x in calls]) if calls else m
            self.assertEqual(c.append(d), self.tok.osl(want))
        c.close()
        c.close()  # idempotent
        with self.assertRaises(deltatok.DeltatokError) as e:
            c.append({"content": "x"})
        self.assertEqual(e.exception.code, "DT_COUNTER_UNKNOWN")

    def test_server_stats_are_snake_case(self):
        s = self.tok.stats()
        self.assertIn("tokens_reused", s)
        self.assertIn("units_reused", s["render"])
        camel = [k for d in (s, s["render"]) for k in d if any(a.islower() and b.isupper() for a, b in zip(k, k[1:]))]
        self.assertEqual(camel, [])

    def test_bad_chunks(self):
        with self.tok.text_counter() as c:
            with self.assertRaises(TypeError):
                c.append(5)
            with self.assertRaises(ValueError):  # a lone surrogate has no UTF-8: refused before it is sent
                c.append("\ud800x")
            self.assertEqual(c.append("ok"), self.tok.client.count_text("ok"))
        with self.assertRaises(deltatok.DeltatokError) as e:
            self.tok.text_counter(max_look_back=0)
        self.assertEqual(e.exception.code, "DT_INVALID_OPTION")

    def test_async_counters(self):
        from deltatok.aio import AsyncAutoTokenizer

        async def main():
            tok = await AsyncAutoTokenizer.from_pretrained("qwen3", date=support.DATE, command=support.COMMAND)
            try:
                c = await tok.text_counter()
                counts = [await c.append(ch) for ch in chunks(TEXT, 5)]
                final = await c.finish()
                mc = await tok.message_counter()
                osl = [await mc.append({"content": ch}) for ch in chunks("Hello there, world.", 4)]
                await mc.close()
                return counts, final, osl
            finally:
                await tok.aclose() if hasattr(tok, "aclose") else tok.close()

        counts, final, osl = asyncio.run(main())
        so_far = ""
        for ch, got in zip(chunks(TEXT, 5), counts):
            so_far += ch
            self.assertEqual(got, self.tok.client.count_text(so_far))
        self.assertEqual(final, self.tok.client.count_text(TEXT))
        so_far = ""
        for ch, got in zip(chunks("Hello there, world.", 4), osl):
            so_far += ch
            self.assertEqual(got, self.tok.osl({"role": "assistant", "content": so_far}))

    def test_async_osl_honours_the_template_override(self):
        """The async osl and message_counter take chat_template and the tokenizer's override,
        as the blocking ones do (they used to ignore both)."""
        from deltatok.aio import AsyncAutoTokenizer
        template = "{% for m in messages %}<<{{ m.role }}>>{{ m.content }}<</{{ m.role }}>>{% endfor %}"
        message = {"role": "assistant", "content": "Hello there, world."}

        async def main():
            tok = await AsyncAutoTokenizer.from_pretrained("qwen3", date=support.DATE, command=support.COMMAND)
            try:
                by_argument = await tok.osl(message, chat_template=template)
                mc = await tok.message_counter(chat_template=template)
                streamed = await mc.append({"content": message["content"]})
                await mc.close()
                tok.chat_template = template
                by_override = await tok.osl(message)
                return by_argument, streamed, by_override
            finally:
                await tok.aclose()

        by_argument, streamed, by_override = asyncio.run(main())
        want = self.tok.osl(message, chat_template=template)
        self.assertNotEqual(want, self.tok.osl(message))  # the template changes the answer
        self.assertEqual((by_argument, streamed, by_override), (want, want, want))

    def test_http_client(self):
        with support.HttpServer() as server:
            client = deltatok.DeltatokHttpClient(server.url)
            try:
                c = client.text_counter()
                so_far = ""
                for ch in chunks(TEXT, 9):
                    so_far += ch
                    self.assertEqual(c.append(ch), self.tok.client.count_text(so_far))
                self.assertEqual(c.finish(), self.tok.client.count_text(TEXT))
            finally:
                client.close()


if __name__ == "__main__":
    unittest.main()
