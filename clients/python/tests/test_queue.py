"""The queue's drain contract (endpoints'): enqueue never waits, one drain answers everything
exactly once (state "complete", pending 0), a drain that times out still ends "complete" with
the unanswered items counted pending and answered DT_DRAIN_TIMEOUT, item errors stay per item,
a full queue refuses, a raising callback is counted, results equal the library's."""
import threading
import unittest

import support
from support import deltatok, needs_cli
from deltatok.queue import TokenizationQueue


@needs_cli
class QueueTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tok = support.shared_tokenizer()
        cls.expect = {(r["conversation"], r["k"]): r for r in support.expectations()["requests"]}

    def test_drain_answers_everything_once_with_the_library_results(self):
        convs = support.corpus()[:6]
        got, lock = {}, threading.Lock()

        def record(key, field):
            def cb(r):
                with lock:
                    self.assertNotIn((key, field), got, "answered twice")
                    got[(key, field)] = r
            return cb

        with TokenizationQueue(self.tok, batch_items=8, interval=0.01) as q:
            n = 0
            for ci, k, p, t, m in support.requests_of(convs):
                q.enqueue({"kind": "prompt", "messages": p, "tools": t}, record((ci, k), "isl"))
                q.enqueue({"kind": "message", "message": m}, record((ci, k), "osl"))
                q.enqueue({"kind": "ids", "messages": p, "tools": t}, record((ci, k), "ids"))
                q.enqueue({"kind": "token_ids", "token_ids": [1, 2, 3]}, record((ci, k), "len"))
                n += 1
            q.enqueue({"kind": "text", "text": "Hello world"}, record("text", "count"))
            q.enqueue({"kind": "prompt", "messages": [{"role": "user", "content": 5}]}, record("bad", "isl"))
            result = q.drain(timeout=120)
            stats = q.stats()
        self.assertEqual((result.state, result.pending, result.reason), ("complete", 0, "drained"))
        self.assertEqual(len(got), 4 * n + 2)
        for ci, k, _, _, _ in support.requests_of(convs):
            want = self.expect[(ci, k)]
            self.assertEqual(got[((ci, k), "isl")].count, len(want["ids"]))
            self.assertEqual(got[((ci, k), "ids")].ids, want["ids"])
            self.assertEqual(got[((ci, k), "osl")].count, want["osl"])
            self.assertEqual(got[((ci, k), "len")].count, 3)
        self.assertEqual(got[("text", "count")].count, 2)
        bad = got[("bad", "isl")]
        self.assertFalse(bad.ok)
        self.assertEqual(bad.error.code, "DT_INVALID_CONTENT")
        self.assertEqual(stats["item_errors"], 1)
        self.assertEqual(stats["failed"], 0)

    def test_a_drain_that_times_out_ends_complete_with_pending(self):
        answers = []
        q = TokenizationQueue(self.tok, interval=0)  # live lane off: nothing moves before a drain
        try:
            for i in range(5):
                q.enqueue({"kind": "text", "text": "x" * (i + 1)}, answers.append)
            self.assertEqual(q.pending, 5)
            result = q.drain(timeout=0)
            self.assertEqual((result.state, result.reason), ("complete", "timeout"))
            self.assertEqual(result.pending, 5)
            self.assertEqual([a.error.code for a in answers], ["DT_DRAIN_TIMEOUT"] * 5)
            self.assertEqual(q.pending, 0)
            # the queue goes on
            q.enqueue({"kind": "text", "text": "Hello world"}, answers.append)
            again = q.drain(timeout=60)
            self.assertEqual((again.pending, again.done), (0, 1))
            self.assertEqual(answers[-1].count, 2)
        finally:
            q.close()

    def test_limits_and_callbacks(self):
        q = TokenizationQueue(self.tok, max_items=2, interval=0)
        try:
            q.enqueue({"kind": "text", "text": "a"}, lambda r: None)
            q.enqueue({"kind": "text", "text": "b"}, lambda r: 1 / 0)  # a raising callback is counted
            with self.assertRaises(deltatok.DeltatokError) as cm:
                q.enqueue({"kind": "text", "text": "c"}, lambda r: None)
            self.assertEqual(cm.exception.code, "DT_QUEUE_FULL")
            with self.assertRaises(ValueError):
                q.enqueue({"kind": "nonsense"}, lambda r: None)
            self.assertEqual(q.drain(timeout=60).pending, 0)
            self.assertEqual(q.stats()["callback_errors"], 1)
        finally:
            q.close()
        answers = []
        with self.assertRaises(deltatok.DeltatokError) as cm:
            q.enqueue({"kind": "text", "text": "late"}, answers.append)
        self.assertEqual(cm.exception.code, "DT_CLOSED")

    def test_close_answers_what_is_left(self):
        answers = []
        q = TokenizationQueue(self.tok, interval=0)
        q.enqueue({"kind": "text", "text": "a"}, answers.append)
        q.close()
        self.assertEqual([a.error.code for a in answers], ["DT_CLOSED"])


if __name__ == "__main__":
    unittest.main()
