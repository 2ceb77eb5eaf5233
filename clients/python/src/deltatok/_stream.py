"""Streaming counters over the sidecar: a text or an assistant message counted as it arrives.

``append`` returns the exact count of everything appended so far (countText, or countMessage of
the message so far); the sidecar re-encodes only the characters after the last safe cut, so a
streamed response costs about one encode of it (see the README, "Streaming counts"). A counter
lives on the server until ``finish()`` or ``close()``; an evicted or unknown one raises
DeltatokError with code DT_COUNTER_UNKNOWN.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, Mapping, Optional

from ._errors import DeltatokTypeError

__all__ = ["TextCounter", "MessageCounter", "AsyncTextCounter", "AsyncMessageCounter"]

Call = Callable[[str, Dict[str, Any]], Any]
ACall = Callable[[str, Dict[str, Any]], Awaitable[Any]]


class _Base:
    _field = ""

    def __init__(self, handle: str):
        self.handle = handle
        #: The count after the last append (0 before any).
        self.count = 0
        #: The counter's work, as the server reported it at finish().
        self.stats: Optional[Dict[str, Any]] = None
        self.closed = False


class TextCounter(_Base):
    """``append(chunk) -> int`` (countText of all chunks so far), ``finish() -> int``, ``close()``."""

    def __init__(self, call: Call, handle: str):
        super().__init__(handle)
        self._call = call

    def append(self, chunk: str) -> int:
        if not isinstance(chunk, str):
            raise DeltatokTypeError("chunk must be a str, got %s" % type(chunk).__name__)
        self.count = self._call("counter_append", {"handle": self.handle, "chunk": chunk})["count"]
        return self.count

    def finish(self) -> int:
        r = self._call("counter_finish", {"handle": self.handle})
        self.count, self.stats, self.closed = r["count"], r.get("stats"), True
        return self.count

    def close(self) -> None:
        """Frees the server's counter without a final count (idempotent)."""
        if not self.closed:
            self.closed = True
            self._call("counter_close", {"handle": self.handle})

    def __enter__(self) -> "TextCounter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class MessageCounter(TextCounter):
    """``append(delta) -> int``: an OpenAI-style delta (``content``, ``reasoning_content``,
    ``tool_calls`` pieces with ``index``); returns countMessage of the message so far."""

    # the override is ignored below: a message counter appends deltas where a text counter appends text;
    # it subclasses TextCounter for finish/close/with, and the README documents append per class
    def append(self, delta: Mapping[str, Any]) -> int:  # type: ignore[override]
        if not isinstance(delta, Mapping):
            raise DeltatokTypeError("delta must be a mapping, got %s" % type(delta).__name__)
        self.count = self._call("counter_append", {"handle": self.handle, "delta": dict(delta)})["count"]
        return self.count


class AsyncTextCounter(_Base):
    """TextCounter's methods as coroutines."""

    def __init__(self, acall: ACall, handle: str):
        super().__init__(handle)
        self._acall = acall

    async def append(self, chunk: str) -> int:
        if not isinstance(chunk, str):
            raise DeltatokTypeError("chunk must be a str, got %s" % type(chunk).__name__)
        self.count = (await self._acall("counter_append", {"handle": self.handle, "chunk": chunk}))["count"]
        return self.count

    async def finish(self) -> int:
        r = await self._acall("counter_finish", {"handle": self.handle})
        self.count, self.stats, self.closed = r["count"], r.get("stats"), True
        return self.count

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self._acall("counter_close", {"handle": self.handle})


class AsyncMessageCounter(AsyncTextCounter):
    """MessageCounter's methods as coroutines."""

    # the override is ignored below, as in MessageCounter.append (deltas, not text)
    async def append(self, delta: Mapping[str, Any]) -> int:  # type: ignore[override]
        if not isinstance(delta, Mapping):
            raise DeltatokTypeError("delta must be a mapping, got %s" % type(delta).__name__)
        self.count = (await self._acall("counter_append", {"handle": self.handle, "delta": dict(delta)}))["count"]
        return self.count
