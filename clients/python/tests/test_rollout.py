"""Rollouts from Python: tokenize_rollout on the tokenizer and the method clients (stdio, HTTP,
asyncio) equals the JS library (canonical completions, sampled ids with logprobs, a
non-canonical re-tokenization); read_rollouts reads `deltatok rollout --format binary` back to
what the JSONL says; training_arrays."""
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import support
from support import deltatok, needs_cli
from deltatok.aio import AsyncDeltatokHttpClient


def _nan_none(values):
    return [None if math.isnan(x) else x for x in values]


@needs_cli
class RolloutTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.expect = support.expectations()["rollouts"]
        cls.tok = support.shared_tokenizer()

    def test_tokenizer_equals_the_library(self):
        for r in self.expect:
            self.assertEqual(self.tok.tokenize_rollout(r["messages"], tools=r["tools"]), r["sampled"])
            plain = [{k: v for k, v in m.items() if not k.startswith("sampled_")} for m in r["messages"]]
            self.assertEqual(self.tok.tokenize_rollout(plain, tools=r["tools"]), r["canonical"])

    def test_drift_is_the_perturbed_message_only(self):
        for r in self.expect:
            self.assertEqual(len(r["sampled"]["drift"]), 1)
            k = r["sampled"]["drift"][0]["index"]
            canonical = {t["index"]: (q, t) for q in r["canonical"]["sequences"] for t in q["turns"]}
            q, t = canonical[k]
            self.assertNotEqual(r["messages"][k]["sampled_ids"], q["ids"][t["completion"][0]:t["completion"][1]])

    def test_http_and_asyncio_clients(self):
        with support.HttpServer() as server:
            with deltatok.DeltatokHttpClient(server.url) as dt:
                r = self.expect[0]
                self.assertEqual(dt.tokenize_rollout(r["messages"], tools=r["tools"]), r["sampled"])

            async def go():
                async with AsyncDeltatokHttpClient(server.url) as adt:
                    return await adt.tokenize_rollout(self.expect[1]["messages"], tools=self.expect[1]["tools"])
            self.assertEqual(asyncio.run(go()), self.expect[1]["sampled"])

    def test_bad_sampled_ids_are_an_input_error(self):
        r = self.expect[0]
        bad = [dict(m) for m in r["messages"]]
        k = next(i for i, m in enumerate(bad) if "sampled_ids" in m)
        bad[k]["sampled_ids"] = [1.5]
        with self.assertRaises(deltatok.DeltatokInputError) as cm:
            self.tok.tokenize_rollout(bad, tools=r["tools"])
        self.assertEqual(cm.exception.code, "DT_INVALID_SAMPLED_IDS")
        # the tokenizer still answers
        self.assertEqual(self.tok.tokenize_rollout(r["messages"], tools=r["tools"]), r["sampled"])

    def test_training_arrays(self):
        seq = self.expect[0]["sampled"]["sequences"][0]
        a = deltatok.training_arrays(seq)
        self.assertEqual(list(a["ids"]), seq["ids"])
        self.assertEqual(len(a["mask"]), len(seq["ids"]))
        want = [0] * len(seq["ids"])
        for s, e in seq["mask"]:
            want[s:e] = [1] * (e - s)
        self.assertEqual(list(a["mask"]), want)
        self.assertEqual(len(a["logprobs"]), len(seq["ids"]))
        for x, y in zip(a["logprobs"], seq["logprobs"]):
            self.assertTrue(math.isnan(x) if y is None else abs(x - y) < 1e-6)

    def test_read_rollouts_equals_the_jsonl(self):
        d = tempfile.mkdtemp(prefix="deltatok-rollout-")
        corpus = os.path.join(d, "in.jsonl")
        with open(corpus, "w", encoding="utf-8") as f:
            for i, r in enumerate(self.expect):
                f.write(json.dumps({"id": "c%d" % i, "messages": r["messages"], "tools": r["tools"]}) + "\n")
            f.write('{"id": "bad", "messages": 3}\n')
        jsonl, binary = os.path.join(d, "out.jsonl"), os.path.join(d, "out.bin")
        base = [support.NODE, support.CLI, "rollout", corpus, "--tokenizer", "qwen3", "--date", support.DATE, "--no-progress"]
        subprocess.run(base + ["--out", jsonl], check=True, stderr=subprocess.DEVNULL)
        subprocess.run(base + ["--out", binary, "--format", "binary"], check=True, stderr=subprocess.DEVNULL)
        with open(jsonl, encoding="utf-8") as f:
            lines = [json.loads(line) for line in f]
        got = list(deltatok.read_rollouts(binary))
        self.assertEqual(len(got), len(lines))
        self.assertEqual(got[-1]["id"], "bad")
        self.assertIn("error", got[-1])
        for want, rec in zip(lines[:-1], got[:-1]):
            self.assertEqual(rec["id"], want["id"])
            self.assertEqual(rec["splits"], want["splits"])
            self.assertEqual(rec["drift"], want["drift"])
            self.assertEqual(len(rec["sequences"]), len(want["sequences"]))
            for q, wq in zip(rec["sequences"], want["sequences"]):
                a = deltatok.training_arrays(wq)
                self.assertEqual(q["ids"], a["ids"])
                self.assertEqual(q["mask"], a["mask"])
                self.assertEqual(q["turns"], wq["turns"])
                self.assertEqual(_nan_none(q["logprobs"]), _nan_none(a["logprobs"]))
        self._damaged_files_are_coded(binary, d)

    def _damaged_files_are_coded(self, binary, d):
        """A binary file cut short (its run killed before the index) or with an index naming
        arrays past its end is DT_BINARY_INVALID, never a JSONDecodeError or a short array."""
        with open(binary, "rb") as f:
            data = f.read()
        (at,) = __import__("struct").unpack_from("<Q", data, len(data) - 8)
        index = json.loads(data[at:len(data) - 8])
        cases = {
            "killed": data[:at],  # the arrays, no index: what SIGKILL leaves
            "killed-mid-array": data[:at // 2],
            "torn-index": data[:at + 10] + data[-8:],
        }
        forged = json.loads(json.dumps(index))
        seq = next(r for r in forged["records"] if "sequences" in r)["sequences"][0]
        seq["count"] = 10 ** 9
        body = json.dumps(forged).encode("utf-8")
        cases["forged-count"] = data[:at] + body + __import__("struct").pack("<Q", at)
        for name, content in cases.items():
            path = os.path.join(d, name + ".bin")
            with open(path, "wb") as f:
                f.write(content)
            with self.assertRaises(deltatok.DeltatokError, msg=name) as cm:
                list(deltatok.read_rollouts(path))
            self.assertEqual(cm.exception.code, "DT_BINARY_INVALID", name)

    def test_example_rollout_arrays(self):
        d = tempfile.mkdtemp(prefix="deltatok-rollout-ex-")
        corpus = os.path.join(d, "in.jsonl")
        with open(corpus, "w", encoding="utf-8") as f:
            for i, r in enumerate(self.expect):
                f.write(json.dumps({"id": "c%d" % i, "messages": r["messages"], "tools": r["tools"]}) + "\n")
        example = os.path.join(support.PACKAGE, "examples", "rollout_arrays.py")
        env = dict(os.environ, DELTATOK_CMD="%s %s" % (support.NODE, support.CLI))
        p = subprocess.run([sys.executable, example, corpus, "--date", support.DATE], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertEqual([x["id"] for x in lines], ["c0", "c1", "c2"])
        for x, r in zip(lines, self.expect):
            want = r["sampled"]
            self.assertEqual([q["tokens"] for q in x["sequences"]], [len(q["ids"]) for q in want["sequences"]])
            self.assertEqual([q["trained"] for q in x["sequences"]], [sum(e - s for s, e in q["mask"]) for q in want["sequences"]])
            self.assertEqual(x["splits"], [s["reason"] for s in want["splits"]])
            self.assertEqual(x["drift"], 1)
        summary = json.loads(p.stderr.strip().splitlines()[-1])["summary"]
        self.assertEqual(summary["conversations"], 3)
        self.assertEqual(summary["drifted"], 3)


if __name__ == "__main__":
    unittest.main()
