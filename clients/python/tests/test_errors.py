"""Error mapping: deltatok's coded errors arrive with code and path; bad input is a
DeltatokInputError (a ValueError, as transformers raises), a tokenizer that cannot be loaded a
DeltatokLoadError (an OSError); a server that is gone is DT_CLOSED for every waiter."""
import unittest

import support
from support import deltatok, needs_cli


@needs_cli
class ErrorTest(unittest.TestCase):
    def test_input_errors_carry_code_and_path(self):
        tok = support.shared_tokenizer()
        with self.assertRaises(deltatok.DeltatokInputError) as cm:
            tok.apply_chat_template([{"role": "user", "content": 5}])
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual(cm.exception.code, "DT_INVALID_CONTENT")
        self.assertEqual(cm.exception.path, "messages[0].content")
        with self.assertRaises(deltatok.DeltatokInputError) as cm:
            tok.apply_chat_template([{"content": "no role"}])
        self.assertEqual(cm.exception.code, "DT_INVALID_MESSAGE")
        with self.assertRaises(deltatok.DeltatokInputError) as cm:
            tok.apply_chat_template([{"role": "user", "content": "x"}], chat_template="{{ raise_exception('no') }}")
        self.assertEqual(cm.exception.code, "DT_TEMPLATE_RAISED")
        with self.assertRaises(deltatok.DeltatokInputError) as cm:
            tok.apply_chat_template([{"role": "user", "content": "x"}], continue_final_message="not_in_template")
        self.assertEqual(cm.exception.code, "DT_CONTINUE_FINAL_MESSAGE")
        with self.assertRaises(deltatok.DeltatokInputError) as cm:
            tok.decode([-1])
        self.assertEqual(cm.exception.code, "DT_INVALID_REQUEST")
        # the client is still usable
        self.assertEqual(tok.encode("Hello world", add_special_tokens=False), [9707, 1879])

    def test_a_batch_raises_the_first_error_and_the_others_are_still_exact(self):
        tok = support.shared_tokenizer()
        good = [{"role": "user", "content": "hi"}]
        with self.assertRaises(deltatok.DeltatokInputError):
            tok.apply_chat_template([good, [{"role": "user", "content": 5}]])
        self.assertEqual(tok.apply_chat_template([good, good]), [tok.apply_chat_template(good)] * 2)

    def test_a_server_that_dies_fails_every_caller_with_dt_closed(self):
        tok = support.own_tokenizer()
        tok.client.transport._proc.kill()
        with self.assertRaises(deltatok.DeltatokError) as cm:
            tok.encode("x")
        self.assertEqual(cm.exception.code, "DT_CLOSED")
        tok.close()

    def test_method_clients_keep_working(self):
        with deltatok.DeltatokClient(["--date", support.DATE], command=support.COMMAND) as dt:
            convs = support.corpus()[:1]
            want = {(r["conversation"], r["k"]): r for r in support.expectations()["requests"]}
            for ci, k, p, t, m in support.requests_of(convs):
                self.assertEqual(dt.count_prompt(p, tools=t, conversation_id="ignored"), len(want[(ci, k)]["ids"]))
                self.assertEqual(dt.encode_prompt(p, tools=t), want[(ci, k)]["ids"])
                self.assertEqual(dt.count_message(m), want[(ci, k)]["osl"])
            many = dt.prompt_many("count_prompt", [{"messages": p, "tools": t} for _, _, p, t, _ in support.requests_of(convs)])
            self.assertEqual([r["count"] for r in many], [len(want[(ci, k)]["ids"]) for ci, k, _, _, _ in support.requests_of(convs)])
            raw = dt.batch([{"method": "count_text", "params": {"text": "Hello world"}}, {"method": "count_text", "params": {"text": 5}}])
            self.assertEqual(raw[0]["count"], 2)
            self.assertIsInstance(raw[1], deltatok.DeltatokError)
            traj = dt.tokenize_trajectory(convs[0]["messages"], tools=convs[0]["tools"])
            self.assertEqual(traj["count"], len(traj["ids"]))
            self.assertEqual(dt.health()["status"], "ok")


if __name__ == "__main__":
    unittest.main()
