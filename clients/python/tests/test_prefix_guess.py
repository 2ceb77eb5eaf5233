"""The prefix table's identity guess (no server needed): a continued conversation is sent before
it is fingerprinted, the fingerprints confirm it afterwards, an in-place edit refutes it (and the
conversation is forgotten), and an unconfirmed state is never extended by another request."""
import unittest

import support  # noqa: F401 - puts ../src on the path
from deltatok._prefix import PrefixTable


def conversation():
    return [{"role": "system", "content": "You help."}, {"role": "user", "content": "Hi"}]


class GuessTest(unittest.TestCase):
    def test_a_continued_conversation_is_guessed_and_confirmed(self):
        t = PrefixTable()
        msgs = conversation()
        tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        first = t.plan(msgs, tools, True)
        self.assertTrue(first.verify())
        first.finish({"ids": [1, 2, 3]})
        msgs = msgs + [{"role": "assistant", "content": "Hello"}, {"role": "user", "content": "More"}]
        p = t.plan(msgs, tools, True)
        params = p.params({})
        self.assertEqual(params["prefix"]["length"], 2)
        self.assertEqual(params["messages"], msgs[2:])
        self.assertNotIn("tools", params, "the same tools object is not sent again")
        self.assertTrue(p.verify())
        out = p.finish({"ids": "BAAAAAUAAAA=", "ids_from": 2})  # [4, 5] as base64 uint32
        self.assertEqual(out["ids"], [1, 2, 4, 5])
        out["ids"].append(99)  # the caller's list is its own
        q = t.plan(msgs + [{"role": "assistant", "content": "x"}], tools, True)
        self.assertTrue(q.verify())
        self.assertEqual(q.finish({"ids": "BgAAAA==", "ids_from": 4})["ids"], [1, 2, 4, 5, 6])
        s = t.stats()
        self.assertEqual((s["guessed"], s["guess_missed"], s["extended"], s["new_conversations"]), (2, 0, 2, 1))

    def test_an_edit_in_place_refutes_the_guess(self):
        for edit in ("message", "tools", "key order", "1 to True"):
            t = PrefixTable()
            msgs = conversation()
            tools = [{"type": "function", "function": {"name": "f", "parameters": {"n": 1}}}]
            first = t.plan(msgs, tools, False)
            self.assertTrue(first.verify())
            if edit == "message":
                msgs[1]["content"] = "Hi!"
            elif edit == "tools":
                tools[0]["function"]["name"] = "g"
            elif edit == "key order":
                msgs[1] = msgs[1]  # same object
                c = msgs[1].pop("role")
                msgs[1]["role"] = c
            else:
                tools[0]["function"]["parameters"]["n"] = True
            p = t.plan(msgs + [{"role": "assistant", "content": "Hello"}], tools, False)
            self.assertTrue(p.has_prefix, edit)
            self.assertFalse(p.verify(), edit)
            s = t.stats()
            self.assertEqual((s["guess_missed"], s["conversations"]), (1, 0), edit)
            # sent again by content: a conversation of its own, everything sent
            again = t.plan(msgs + [{"role": "assistant", "content": "Hello"}], tools, False, guess=False)
            self.assertFalse(again.has_prefix, edit)
            self.assertEqual(len(again.params({})["messages"]), 3)
            self.assertEqual(again.params({})["tools"], tools)

    def test_messages_marshal_cannot_write_are_confirmed_by_their_json(self):
        from collections import OrderedDict
        t = PrefixTable()
        msgs = [OrderedDict(role="system", content="You help."), {"role": "user", "content": "Hi"}]
        self.assertTrue(t.plan(msgs, None, False).verify())
        p = t.plan(msgs + [{"role": "assistant", "content": "Hello"}], None, False)
        self.assertTrue(p.has_prefix)
        self.assertTrue(p.verify())
        msgs[0]["content"] = "You help!"  # in place, in the subclass
        q = t.plan(msgs + [{"role": "assistant", "content": "Hello"}, {"role": "user", "content": "x"}], None, False)
        self.assertTrue(q.has_prefix)
        self.assertFalse(q.verify())

    def test_an_unconfirmed_state_is_not_extended(self):
        t = PrefixTable()
        msgs = conversation()
        t.plan(msgs, None, False).verify()
        msgs2 = msgs + [{"role": "assistant", "content": "Hello"}]
        p = t.plan(msgs2, None, False)
        self.assertTrue(p.has_prefix)
        # before p is confirmed, neither a guess nor the fingerprints may extend p's state
        q = t.plan(msgs2 + [{"role": "user", "content": "Next"}], None, False)
        self.assertFalse(q.has_prefix)
        self.assertTrue(p.verify())
        self.assertTrue(q.verify())
        self.assertEqual(t.stats()["new_conversations"], 2)

    def test_held_references_count_against_the_bound(self):
        t = PrefixTable(max_bytes=2000)
        for i in range(20):
            msgs = [{"role": "user", "content": "x" * 200 + str(i)}]
            t.plan(msgs, None, False).verify()
        s = t.stats()
        self.assertLessEqual(s["bytes"], 2000)
        self.assertGreater(s["evictions"], 0)


if __name__ == "__main__":
    unittest.main()
