"""deltatok client for Python harnesses: standard library only.

Two transports with the same methods:

    from deltatok_client import DeltatokClient, DeltatokHttpClient

    with DeltatokClient(["--tokenizer", "qwen3"]) as dt:      # starts `deltatok serve` (stdio)
        isl = dt.count_prompt(messages[:k], tools=tools)
        osl = dt.count_message(messages[k])

    dt = DeltatokHttpClient("http://127.0.0.1:8765")           # a `deltatok serve --port 8765`

Every method raises DeltatokError (with .code, .message, .path) when deltatok answers with an
error. DeltatokClient is thread-safe: several threads may have requests in flight on one pipe;
each waits for its own answer (answers may come back in any order).

DeltatokClient finds the deltatok CLI without any network (see find_command): DELTATOK_CMD,
then node_modules/.bin/deltatok in the working directory or above, then `deltatok` on PATH;
with none it raises DeltatokNotFoundError at construction, saying how to point it.
"""
from __future__ import annotations

import itertools
import json
import struct
import sys
from array import array
import os
import shlex
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from typing import Any, Dict, Iterable, List, Optional, Sequence

__all__ = ["DeltatokClient", "DeltatokHttpClient", "DeltatokError", "DeltatokNotFoundError", "find_command", "read_tokens"]


class DeltatokError(Exception):
    """An error answered by deltatok: a stable `code`, a message and, for bad input, a `path`."""

    def __init__(self, code: str, message: str, path: Optional[str] = None):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.path = path

    @classmethod
    def from_record(cls, rec: Dict[str, Any]) -> "DeltatokError":
        return cls(rec.get("code", "DT_INTERNAL"), rec.get("message", ""), rec.get("path"))


def _prompt_params(messages, tools, documents, chat_template, chat_template_kwargs, add_generation_prompt, parse_tool_arguments, conversation_id):
    p: Dict[str, Any] = {"messages": messages}
    if tools is not None:
        p["tools"] = tools
    if documents is not None:
        p["documents"] = documents
    if chat_template is not None:
        p["chat_template"] = chat_template
    if chat_template_kwargs is not None:
        p["chat_template_kwargs"] = chat_template_kwargs
    if add_generation_prompt is not None:
        p["add_generation_prompt"] = add_generation_prompt
    if parse_tool_arguments:
        p["parse_tool_arguments"] = True
    if conversation_id is not None:
        p["conversation_id"] = conversation_id
    return p


class _Methods:
    """The request methods, over any transport implementing `call(method, params)`.

    With a `conversation_id`, prompt requests send only the messages the server has not seen:
    each request names its state, and refers to the previous request's state for the shared
    prefix. If the server no longer holds that state (evicted, restarted, requests reordered),
    it answers DT_PREFIX_UNKNOWN and the request is resent whole, transparently.
    """

    _prefix_lock: threading.Lock
    _sent: Dict[str, Any]

    def call(self, method: str, params: Dict[str, Any]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _prompt_call(self, method: str, params: Dict[str, Any]) -> Any:
        cid = params.get("conversation_id")
        if cid is None:
            return self.call(method, params)
        if not hasattr(self, "_sent"):
            self._prefix_lock, self._sent, self._states = threading.Lock(), {}, itertools.count(1)
        msgs = list(params["messages"])
        with self._prefix_lock:
            state = next(self._states)
            prev = self._sent.get(cid)
            self._sent[cid] = (state, msgs, params.get("tools"))
        full = dict(params, messages=msgs, state=state)
        if prev is not None:
            prev_state, prev_msgs, prev_tools = prev
            n, m = 0, min(len(prev_msgs), len(msgs))
            while n < m and (prev_msgs[n] is msgs[n] or prev_msgs[n] == msgs[n]):
                n += 1
            if n > 0:
                short = dict(full, messages=msgs[n:], prefix={"state": prev_state, "length": n})
                if prev_tools is full.get("tools") or prev_tools == full.get("tools"):
                    short.pop("tools", None)  # the state's tools carry over
                elif "tools" not in short:
                    short["tools"] = None
                try:
                    return self.call(method, short)
                except DeltatokError as e:
                    if e.code != "DT_PREFIX_UNKNOWN":
                        raise
        return self.call(method, full)

    def count_prompt(self, messages: Sequence[dict], tools=None, documents=None, chat_template=None,
                     chat_template_kwargs=None, add_generation_prompt=None, parse_tool_arguments=False,
                     conversation_id=None) -> int:
        """ISL: tokens of the rendered prompt (generation prompt included unless disabled)."""
        return self._prompt_call("count_prompt", _prompt_params(messages, tools, documents, chat_template, chat_template_kwargs,
                                                                add_generation_prompt, parse_tool_arguments, conversation_id))["count"]

    def encode_prompt(self, messages: Sequence[dict], tools=None, documents=None, chat_template=None,
                      chat_template_kwargs=None, add_generation_prompt=None, parse_tool_arguments=False,
                      conversation_id=None) -> List[int]:
        """Token ids of the rendered prompt."""
        return self._prompt_call("encode_prompt", _prompt_params(messages, tools, documents, chat_template, chat_template_kwargs,
                                                                 add_generation_prompt, parse_tool_arguments, conversation_id))["ids"]

    def count_message(self, message: dict, chat_template=None, chat_template_kwargs=None, parse_tool_arguments=False) -> int:
        """OSL of a structured assistant message (framing and end-of-turn token not counted)."""
        p: Dict[str, Any] = {"message": message}
        if chat_template is not None:
            p["chat_template"] = chat_template
        if chat_template_kwargs is not None:
            p["chat_template_kwargs"] = chat_template_kwargs
        if parse_tool_arguments:
            p["parse_tool_arguments"] = True
        return self.call("count_message", p)["count"]

    def count_text(self, text: str) -> int:
        """Tokens of plain text."""
        return self.call("count_text", {"text": text})["count"]

    def batch(self, requests: Iterable[Dict[str, Any]]) -> List[Any]:
        """Several {"method", "params"} calls in one round trip; each item is a result dict or a DeltatokError."""
        out = self.call("batch", {"requests": list(requests)})["results"]
        return [DeltatokError.from_record(r["error"]) if "error" in r else r["result"] for r in out]

    def tokenize_trajectory(self, messages: Sequence[dict], tools=None, documents=None, chat_template=None,
                            chat_template_kwargs=None, add_generation_prompt=None, parse_tool_arguments=False,
                            conversation_id=None) -> Dict[str, Any]:
        """RL trajectory: {"ids", "count", "prefix", "spans", "suffix", "assistant_mask" (token ranges), ...}."""
        return self._prompt_call("tokenize_trajectory", _prompt_params(messages, tools, documents, chat_template, chat_template_kwargs,
                                                                       add_generation_prompt, parse_tool_arguments, conversation_id))

    def stats(self) -> Dict[str, Any]:
        return self.call("stats", {})

    def health(self) -> Dict[str, Any]:
        return self.call("health", {})


class DeltatokClient(_Methods):
    """Runs `deltatok serve` as a child process and talks JSON lines over its stdin/stdout.

    `command` runs the deltatok CLI (default: `find_command()`, which needs no network and raises
    DeltatokNotFoundError here, at construction, when there is none)."""

    def __init__(self, args: Sequence[str] = (), command: Optional[Sequence[str]] = None, env: Optional[Dict[str, str]] = None):
        cmd = list(command) if command is not None else find_command(environ=env)
        self._cmd = cmd
        self._proc = subprocess.Popen(cmd + ["serve"] + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=None, env=env, bufsize=0)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()          # guards writes and the waiters map
        self._waiters: Dict[int, Any] = {}
        self._reader = threading.Thread(target=self._read_loop, name="deltatok-reader", daemon=True)
        self._closed = False
        self._failure: Optional[BaseException] = None
        self._reader.start()

    def call(self, method: str, params: Dict[str, Any]) -> Any:
        waiter = {"event": threading.Event(), "response": None}
        with self._lock:
            if self._closed:
                raise DeltatokError("DT_CLOSED", "the client is closed")
            rid = next(self._ids)
            self._waiters[rid] = waiter
            line = json.dumps({"id": rid, "method": method, "params": params}, ensure_ascii=False) + "\n"
            try:
                self._proc.stdin.write(line.encode("utf-8"))
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError) as e:
                del self._waiters[rid]
                raise DeltatokError("DT_CLOSED", "deltatok serve is not running: %s" % e)
        waiter["event"].wait()
        resp = waiter["response"]
        if resp is None:
            if self._failure is not None:
                raise DeltatokError("DT_CLOSED", "deltatok serve failed: %s" % self._failure)
            code = self._proc.poll()
            if code is None:
                try:
                    code = self._proc.wait(5)
                except subprocess.TimeoutExpired:
                    code = None
            raise DeltatokError("DT_CLOSED", "deltatok serve (%s) exited%s without answering; its stderr says why"
                                % (" ".join(self._cmd), "" if code is None else " with code %d" % code))
        if "error" in resp:
            raise DeltatokError.from_record(resp["error"])
        return resp["result"]

    def _read_loop(self) -> None:
        try:
            for raw in self._proc.stdout:
                resp = json.loads(raw)
                with self._lock:
                    waiter = self._waiters.pop(resp.get("id"), None)
                if waiter is not None:
                    waiter["response"] = resp
                    waiter["event"].set()
        except BaseException as e:  # noqa: BLE001 - reported to every waiter
            self._failure = e
        finally:
            with self._lock:
                waiters, self._waiters = self._waiters, {}
            for w in waiters.values():
                w["event"].set()

    def close(self, timeout: float = 30.0) -> int:
        """Closes stdin (deltatok answers what is in flight, then exits) and waits for the process."""
        with self._lock:
            if self._closed:
                return self._proc.returncode or 0
            self._closed = True
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            return self._proc.wait(timeout)

    def __enter__(self) -> "DeltatokClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class DeltatokHttpClient(_Methods):
    """Talks to `deltatok serve --port N` over HTTP (POST /rpc)."""

    def __init__(self, base_url: str, timeout: float = 300.0):
        self._url = base_url.rstrip("/") + "/rpc"
        self._timeout = timeout
        self._ids = itertools.count(1)

    def call(self, method: str, params: Dict[str, Any]) -> Any:
        body = json.dumps({"id": next(self._ids), "method": method, "params": params}, ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(self._url, data=body, headers={"content-type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as r:
                resp = json.loads(r.read())
        except urllib.error.HTTPError as e:
            resp = json.loads(e.read() or b"{}")
            if "error" not in resp:
                raise DeltatokError("DT_INTERNAL", "HTTP %d" % e.code)
        if "error" in resp:
            raise DeltatokError.from_record(resp["error"])
        return resp["result"]


class DeltatokNotFoundError(FileNotFoundError):
    """No deltatok command line was found (DELTATOK_CMD, node_modules/.bin, PATH); says how to point to one."""


def _upward(start: str):
    d = os.path.abspath(start)
    while True:
        yield d
        parent = os.path.dirname(d)
        if parent == d:
            return
        d = parent


def _find_in(start: str) -> Optional[List[str]]:
    """`node_modules/.bin/deltatok` in `start` or a parent; or a deltatok checkout (built) there."""
    names = ["deltatok.cmd", "deltatok"] if os.name == "nt" else ["deltatok"]
    for d in _upward(start):
        for name in names:
            exe = os.path.join(d, "node_modules", ".bin", name)
            if os.path.isfile(exe) and os.access(exe, os.X_OK):
                return [exe]
        # the deltatok repository itself (its CLI is not in its own node_modules)
        main = os.path.join(d, "dist", "src", "cli", "main.js")
        pkg = os.path.join(d, "package.json")
        if os.path.isfile(main) and os.path.isfile(pkg):
            try:
                with open(pkg, encoding="utf-8") as f:
                    is_deltatok = json.load(f).get("name") == "deltatok"
            except (OSError, ValueError, AttributeError):
                is_deltatok = False
            node = shutil.which("node")
            if is_deltatok and node:
                return [node, main]
    return None


def find_command(cwd: Optional[str] = None, environ: Optional[Dict[str, str]] = None) -> List[str]:
    """The command that runs the deltatok CLI, found without any network, in this order:

    1. `DELTATOK_CMD`: a command line, split like a shell does (quote paths with spaces),
       e.g. `DELTATOK_CMD="node /opt/deltatok/dist/src/cli/main.js"`;
    2. `node_modules/.bin/deltatok` in the working directory or one of its parents (what
       `npm install deltatok` creates), then next to this module or above it; a built deltatok
       checkout found the same way is run with `node`;
    3. `deltatok` on PATH (`npm install -g deltatok`).

    Raises DeltatokNotFoundError, saying how to point to one, when none is found.
    """
    env = os.environ if environ is None else environ
    cmd = env.get("DELTATOK_CMD", "").strip()
    if cmd:
        parts = shlex.split(cmd, posix=os.name != "nt")
        if parts:
            return parts
    for start in (cwd or os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
        found = _find_in(start)
        if found:
            return found
    exe = shutil.which("deltatok", path=env.get("PATH"))
    if exe:
        return [exe]
    raise DeltatokNotFoundError(
        "cannot find the deltatok command line: DELTATOK_CMD is not set, there is no node_modules/.bin/deltatok "
        "in %s or above, and no deltatok on PATH. Install it in your project (`npm install deltatok`), or set "
        "DELTATOK_CMD to the command that runs it (e.g. DELTATOK_CMD=\"node /path/to/deltatok/dist/src/cli/main.js\"), "
        "or pass DeltatokClient(command=[...])" % (cwd or os.getcwd()))


def _default_command() -> List[str]:
    return find_command()


def read_tokens(path: str):
    """Reads `deltatok tokenize --format binary` output: yields one dict per conversation with
    "ids" (array('I')) and "assistant_mask" (bytes, one 0/1 per token) plus the index fields
    ("id", "count", "prefix", "spans", "suffix", "mask_source", "offsets_exact"), or the
    {"id", "line", "error"} record of a conversation that failed."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"DTOKBIN1":
        raise ValueError("%s is not a deltatok token file" % path)
    (at,) = struct.unpack_from("<Q", data, len(data) - 8)
    index = json.loads(data[at:len(data) - 8].decode("utf-8"))
    for rec in index["records"]:
        if "error" in rec:
            yield rec
            continue
        ids = array("I")
        ids.frombytes(data[rec["offset"]:rec["offset"] + 4 * rec["count"]])
        if sys.byteorder == "big":
            ids.byteswap()
        out = dict(rec)
        out["ids"] = ids
        out["assistant_mask"] = data[rec["mask_offset"]:rec["mask_offset"] + rec["count"]]
        yield out
