"""A tokenization queue with MLCommons endpoints' drain contract, for metrics code.

    q = TokenizationQueue(tok)                                   # a DeltatokTokenizer or a client
    q.enqueue({"kind": "prompt", "messages": msgs, "tools": tools}, on_isl)   # O(1), never blocks
    q.enqueue({"kind": "message", "message": reply}, on_osl)
    result = q.drain(timeout=60.0)          # DrainResult(state="complete", pending=0, ...)
    q.close()

The contract (as deltatok's own BatchQueue, DESIGN.md "Worker pool, batch queue, sidecar"):

- `enqueue(item, callback)` is O(1) and never waits for tokenization; past `max_items` held it
  raises DeltatokError DT_QUEUE_FULL, after `close()` DT_CLOSED.
- A live lane (one thread) sends queued items every `interval` seconds in batches of at most
  `batch_items`, one round trip per batch; `interval=0` defers everything to `drain()`.
- `drain(timeout)` sends everything and returns once, always with `state == "complete"`:
  `pending == 0` when every item was answered, else the number of items it could not answer
  with a count (the timeout passed, or the server failed them: DT_CLOSED, DT_DRAIN_TIMEOUT, ...);
  those items were answered with that error and stay counted.
- Every item is answered exactly once (a batch that comes back after its items timed out is
  dropped); the answers of a batch are delivered in its input order; an item's own input error
  is its answer (counted done), the other items go on; a callback that raises is counted
  (`stats()["callback_errors"]`) and the queue goes on.

Items: `{"kind": "text", "text"}` (tokens of plain text), `{"kind": "message", "message", ...}`
(OSL), `{"kind": "prompt", "messages", "tools"?, ...}` (ISL; prompt options by name),
`{"kind": "ids", ...}` (the prompt's ids too), `{"kind": "token_ids", "token_ids"}` (a count of
ids already known, answered at once). The callback gets a QueueResult.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional

from ._client import ClientBase
from ._errors import DeltatokError, DeltatokInputError, DeltatokTypeError
from ._ops import PlanGen, simple_plan
from ._wire import PROMPT_OPTIONS

__all__ = ["TokenizationQueue", "QueueResult", "DrainResult"]

#: Codes that mean "not answered with a count" for reasons other than the input.
INFRASTRUCTURE_CODES = frozenset({"DT_CLOSED", "DT_DRAIN_TIMEOUT", "DT_WORKER_CRASHED", "DT_WORKER_OUT_OF_MEMORY", "DT_WORKER_STARTUP",
                                  "DT_INTERNAL", "DT_REQUEST_TIMEOUT", "DT_UNAUTHORIZED", "DT_FORBIDDEN"})
KINDS = ("text", "message", "prompt", "ids", "token_ids")


class QueueResult:
    """One item's answer: `ok`, its `kind`, the `count` (and `ids` for kind "ids") or the `error`."""

    __slots__ = ("ok", "kind", "count", "ids", "error")

    def __init__(self, ok: bool, kind: str, count: Optional[int] = None, ids: Optional[List[int]] = None, error: Optional[DeltatokError] = None):
        self.ok, self.kind, self.count, self.ids, self.error = ok, kind, count, ids, error

    def __repr__(self) -> str:
        return "QueueResult(ok=%s, kind=%r, count=%r%s)" % (self.ok, self.kind, self.count, "" if self.error is None else ", error=%s" % self.error.code)


class DrainResult:
    """The one final state of a drain: always "complete"; `pending > 0` says it timed out or failed."""

    __slots__ = ("state", "pending", "done", "reason", "elapsed_s")

    def __init__(self, pending: int, done: int, reason: str, elapsed_s: float):
        self.state = "complete"
        self.pending, self.done, self.reason, self.elapsed_s = pending, done, reason, elapsed_s

    def __repr__(self) -> str:
        return "DrainResult(state=%r, pending=%d, done=%d, reason=%r, elapsed_s=%.3f)" % (self.state, self.pending, self.done, self.reason, self.elapsed_s)


class _Entry:
    __slots__ = ("item", "callback", "kind", "settled")

    def __init__(self, item: Mapping[str, Any], callback: Callable[[QueueResult], None], kind: str):
        self.item, self.callback, self.kind, self.settled = item, callback, kind, False


def _client_of(target: Any) -> ClientBase:
    client = getattr(target, "client", target)
    if not isinstance(client, ClientBase):
        raise DeltatokTypeError("TokenizationQueue needs a DeltatokTokenizer or a deltatok client (DeltatokClient, DeltatokHttpClient)")
    return client


class TokenizationQueue:
    """See the module docstring. Thread-safe."""

    def __init__(self, target: Any, max_items: int = 1_000_000, batch_items: int = 64, interval: float = 0.05):
        if max_items < 1 or batch_items < 1 or interval < 0:
            raise DeltatokInputError("DT_INVALID_OPTION", "max_items and batch_items must be ≥ 1, interval ≥ 0")
        self._client = _client_of(target)
        self._defaults: Dict[str, Any] = {}
        tok_kwargs = getattr(target, "_default_kwargs", None)
        if tok_kwargs:
            self._defaults["chat_template_kwargs"] = dict(tok_kwargs)
        if getattr(target, "_parse_tool_arguments", False):
            self._defaults["parse_tool_arguments"] = True
        self.max_items = max_items
        self.batch_items = batch_items
        self.interval = interval
        self._cv = threading.Condition()
        self._queued: Deque[_Entry] = deque()
        self._in_flight: List[_Entry] = []
        self._draining = 0
        self._closed = False
        self._stats = {"enqueued": 0, "answered": 0, "ok": 0, "item_errors": 0, "failed": 0, "batches": 0, "callback_errors": 0, "dropped_late": 0}
        self._thread = threading.Thread(target=self._run, name="deltatok-queue", daemon=True)
        self._thread.start()

    # ---- the contract ------------------------------------------------------------------------

    def enqueue(self, item: Mapping[str, Any], callback: Callable[[QueueResult], None]) -> None:
        kind = item.get("kind") if isinstance(item, Mapping) else None
        if kind not in KINDS:
            raise DeltatokInputError("DT_INVALID_REQUEST", "item kind must be one of %s, got %r" % (", ".join(KINDS), kind), "kind")
        if not callable(callback):
            raise DeltatokTypeError("callback must be callable")
        e = _Entry(item, callback, kind)
        if kind == "token_ids":
            ids = item.get("token_ids")
            with self._cv:
                if self._closed:
                    raise DeltatokError("DT_CLOSED", "the queue is closed")
                self._stats["enqueued"] += 1
            self._deliver(e, QueueResult(True, kind, len(ids)) if isinstance(ids, (list, tuple)) else
                          QueueResult(False, kind, error=DeltatokInputError("DT_INVALID_REQUEST", "token_ids must be a list", "token_ids")))
            return
        with self._cv:
            if self._closed:
                raise DeltatokError("DT_CLOSED", "the queue is closed")
            if len(self._queued) + len(self._in_flight) >= self.max_items:
                raise DeltatokError("DT_QUEUE_FULL", "the queue holds %d items (max_items)" % self.max_items)
            self._queued.append(e)
            self._stats["enqueued"] += 1
            if self._draining or len(self._queued) >= self.batch_items:
                self._cv.notify_all()

    def drain(self, timeout: Optional[float] = None) -> DrainResult:
        """Sends everything queued; returns once (see the module docstring)."""
        t0 = time.monotonic()
        deadline = None if timeout is None else t0 + timeout
        with self._cv:
            start_answered = self._stats["answered"]
            start_failed = self._stats["failed"]
            self._draining += 1
            self._cv.notify_all()
            reason = "drained"
            try:
                while self._queued or self._in_flight:
                    if self._closed:
                        reason = "closed"
                        break
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        reason = "timeout"
                        break
                    self._cv.wait(left)
                late = list(self._queued) + [e for e in self._in_flight if not e.settled]
                self._queued.clear()
            finally:
                self._draining -= 1
        code = "DT_DRAIN_TIMEOUT" if reason == "timeout" else "DT_CLOSED"
        for e in late:
            self._deliver(e, QueueResult(False, e.kind, error=DeltatokError(code, "the drain ended (%s) before this item was answered" % reason)))
        with self._cv:
            done = self._stats["answered"] - start_answered
            pending = self._stats["failed"] - start_failed
        return DrainResult(pending, done - pending, reason, time.monotonic() - t0)

    def close(self, timeout: float = 30.0) -> None:
        """Stops the live lane; items not yet answered are answered DT_CLOSED."""
        with self._cv:
            if self._closed:
                return
            self._closed = True
            self._cv.notify_all()
        self._thread.join(timeout)
        with self._cv:
            left = list(self._queued) + [e for e in self._in_flight if not e.settled]
            self._queued.clear()
        for e in left:
            self._deliver(e, QueueResult(False, e.kind, error=DeltatokError("DT_CLOSED", "the queue was closed before this item was answered")))

    def stats(self) -> Dict[str, int]:
        with self._cv:
            s = dict(self._stats)
            s["queued"] = len(self._queued)
            s["in_flight"] = len(self._in_flight)
            return s

    @property
    def pending(self) -> int:
        """Items enqueued and not yet answered."""
        with self._cv:
            return len(self._queued) + sum(1 for e in self._in_flight if not e.settled)

    def __enter__(self) -> "TokenizationQueue":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- the live lane -----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cv:
                if self._closed:
                    return
                if not self._draining and (self.interval == 0 or len(self._queued) < self.batch_items):
                    self._cv.wait(None if self.interval == 0 else self.interval)
                if self._closed:
                    return
                if not self._queued or (self.interval == 0 and not self._draining):
                    continue
                batch = [self._queued.popleft() for _ in range(min(self.batch_items, len(self._queued)))]
                self._in_flight = batch
                self._stats["batches"] += 1
            try:
                outcomes = self._client.run_many([self._plan(e) for e in batch])
            except BaseException as x:  # noqa: BLE001 - a failed batch answers its items, the lane goes on
                err = x if isinstance(x, DeltatokError) else DeltatokError("DT_INTERNAL", "%s: %s" % (type(x).__name__, x))
                outcomes = [err] * len(batch)
            for e, o in zip(batch, outcomes):
                self._deliver(e, self._result(e, o))
            with self._cv:
                self._in_flight = []
                self._cv.notify_all()

    def _plan(self, e: _Entry) -> PlanGen:
        item = e.item
        if e.kind == "text":
            return simple_plan("count_text", {"text": item.get("text")})
        if e.kind == "message":
            p: Dict[str, Any] = {"message": item.get("message")}
            for k in ("chat_template", "chat_template_kwargs", "parse_tool_arguments"):
                v = item.get(k, self._defaults.get(k))
                if v is not None and v is not False:
                    p[k] = v
            return simple_plan("count_message", p)
        options = {k: item[k] for k in PROMPT_OPTIONS if item.get(k) is not None}
        for k, v in self._defaults.items():
            options.setdefault(k, v)
        if e.kind in ("prompt", "ids"):
            options.setdefault("add_generation_prompt", True)
        method = "encode_prompt" if e.kind == "ids" else "count_prompt"
        return self._client.prompt_plan(method, item.get("messages") or [], item.get("tools"), **options)

    @staticmethod
    def _result(e: _Entry, o: Any) -> QueueResult:
        if isinstance(o, DeltatokError):
            return QueueResult(False, e.kind, error=o)
        if isinstance(o, BaseException):
            return QueueResult(False, e.kind, error=DeltatokInputError("DT_INVALID_REQUEST", "%s: %s" % (type(o).__name__, o)))
        if e.kind == "ids":
            return QueueResult(True, e.kind, o.get("count"), ids=o.get("ids"))
        return QueueResult(True, e.kind, o.get("count"))

    def _deliver(self, e: _Entry, r: QueueResult) -> None:
        with self._cv:
            if e.settled:
                self._stats["dropped_late"] += 1
                return
            e.settled = True
            self._stats["answered"] += 1
            if r.ok:
                self._stats["ok"] += 1
            elif r.error is not None and r.error.code in INFRASTRUCTURE_CODES:
                self._stats["failed"] += 1
            else:
                self._stats["item_errors"] += 1
        try:
            e.callback(r)
        except BaseException:  # noqa: BLE001 - a callback's failure is counted, the queue goes on
            with self._cv:
                self._stats["callback_errors"] += 1
