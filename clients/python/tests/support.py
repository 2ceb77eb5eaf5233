"""What the tests share: the package from ../src, the built CLI, the JS library's expectations,
one stdio tokenizer for the read-only tests, and HTTP servers started on demand."""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(PACKAGE))
sys.path.insert(0, os.path.join(PACKAGE, "src"))
# these tests pin transformers 4's defaults (apply_chat_template returns ids) and deltatok's own
# classes; test_dropin.py checks transformers 5's defaults and transformers' own types
os.environ.setdefault("DELTATOK_TRANSFORMERS_COMPAT", "4")
os.environ.setdefault("DELTATOK_TRANSFORMERS_TYPES", "0")

import deltatok  # noqa: E402

NODE = os.environ.get("DELTATOK_TEST_NODE") or shutil.which("node")
CLI = os.path.join(REPO, "dist", "src", "cli", "main.js")
EXPECT_SCRIPT = os.path.join(REPO, "dist", "scripts", "python-client-expectations.js")
COMMAND = [NODE, CLI] if NODE else None
DATE = "2026-11-30"
CORPUS = os.path.join(REPO, "data", "tau-bench-airline-20.jsonl")

built = NODE is not None and os.path.isfile(CLI) and os.path.isfile(EXPECT_SCRIPT)
needs_cli = unittest.skipUnless(built, "needs node and the built CLI (npm run build)")

_expect = None
_tok = None
_lock = threading.Lock()


def expectations():
    """The JS library's answers (scripts/python-client-expectations.ts), made once per process."""
    global _expect
    with _lock:
        if _expect is None:
            path = os.environ.get("DELTATOK_TEST_EXPECT")
            if not path:
                path = os.path.join(tempfile.mkdtemp(prefix="deltatok-expect-"), "expect.json")
                subprocess.run([NODE, EXPECT_SCRIPT, path], check=True)
            with open(path, encoding="utf-8") as f:
                _expect = json.load(f)
        return _expect


def corpus():
    with open(CORPUS, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def requests_of(convs, start=0):
    """(conversation index, k, messages[:k], tools, message k) for every assistant message k;
    `convs` is the corpus from conversation `start` on."""
    for ci, c in enumerate(convs, start):
        for k, m in enumerate(c["messages"]):
            if m["role"] == "assistant":
                yield ci, k, c["messages"][:k], c.get("tools"), m


def own_tokenizer(**options):
    """A tokenizer with a `deltatok serve` process of its own (the caller closes it)."""
    return deltatok.AutoTokenizer.from_pretrained("qwen3", date=DATE, command=COMMAND, **options)


def shared_tokenizer():
    """One stdio tokenizer for tests that only read (closed at exit)."""
    global _tok
    with _lock:
        if _tok is None:
            _tok = own_tokenizer()
            atexit.register(_tok.close)
        return _tok


def tokenizer(incremental=True, max_conversations=4096, **options):
    """A tokenizer with a prefix table (and counters) of its own over the shared server's pipe:
    its conversations are its own (each table names them apart), no process is started."""
    from deltatok._client import ClientBase
    client = ClientBase(shared_tokenizer().client.transport, incremental=incremental, max_conversations=max_conversations)
    return deltatok.AutoTokenizer.from_pretrained("qwen3", client=client, **options)


class HttpServer:
    """`deltatok serve --no-stdio --port PORT` as a child process."""

    def __init__(self, port=0, token=None, extra=()):
        env = dict(os.environ)
        env.pop("DELTATOK_TOKEN", None)
        if token is not None:
            env["DELTATOK_TOKEN"] = token
        self.proc = subprocess.Popen([NODE, CLI, "serve", "--no-stdio", "--port", str(port), "--date", DATE] + list(extra),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        err = b""
        while True:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError("deltatok serve exited: %s" % err.decode("utf-8", "replace"))
            err += line
            m = re.search(rb'"listening":"([^"]+)"', line)
            if m:
                self.url = m.group(1).decode()
                self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
                break
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        try:
            for _ in self.proc.stderr:
                pass
        except (OSError, ValueError):
            pass

    def stop(self, kill=False):
        """SIGTERM (a graceful stop: idle keep-alive connections may hold it up to its 10 s bound),
        or SIGKILL (a crash)."""
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            self.proc.wait(30)
        self.proc.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
