"""Incremental without asking: which conversation a prompt request continues, and what to send.

The server holds, per conversation id, the messages (and tools) of the latest request it saw
(src/api/conversations.ts): a request may name its own ``state`` and say that its first n
messages are those of an earlier ``state`` of the same conversation, sending only the rest. The
server accepts only the exact state it holds and answers DT_PREFIX_UNKNOWN otherwise, so nothing
is ever spliced by guess.

This table is the client's side of it. For every prompt request it fingerprints each message —
``marshal`` of the message (exact: types, values and key order; a message marshal cannot write
falls back to its JSON text) — and looks for a conversation whose latest sent messages are a
prefix of this request's (an *extension*: the next turn), or all but the last of them (the final
message replaced: a prefill continued, a turn regenerated, another sample of one prompt). The
match is confirmed by comparing the fingerprints themselves, so a hash collision can cost reuse,
never exactness; a caller who edits a message in place changes its fingerprint and the request
simply shares less. With a match the request names the conversation and sends only the messages
after the shared ones (tools only when they changed); without one it starts a conversation of its
own and sends everything. Either way the request becomes the conversation's latest state.

When the server does not hold the referenced state (a restart, eviction, another instance behind
a load balancer, requests overtaking each other), it answers DT_PREFIX_UNKNOWN and the request is
resent whole; both paths are counted (``stats()``).

Behind a router (nginx ``hash $http_x_deltatok_conversation consistent``, deploy/nginx/), each
conversation carries a routing key (``Plan.route``, sent as the ``X-Deltatok-Conversation``
header): a hash of its tools and leading messages — every message up to and including the first
that is not a system/developer message, as the pool chooses a worker — taken when the
conversation starts here and kept for its life, so all its turns reach the instance that holds
its state. The same leading messages give the same key in any client and process (a client that
restarted or forgot the conversation still reaches the instance whose Deltatok's cache holds it;
samples of one prompt meet on one instance), while conversations that only share a system
prompt spread.

The fingerprints cost time on every request (O(history) marshal in Python), so the common case
skips them before sending: a conversation keeps references to its latest messages and tools, and
a request whose leading message is the same object as a held conversation's and whose first k
messages are those very objects (an identity check, in C) is *guessed* to extend it. It is sent
at once; its fingerprints are computed while the server works (``Plan.verify``, run by the
transport between writing the request and reading the answer) and compared with the held ones
as before. Only a confirmed guess's answer is used: if the caller changed a message or the tools
in place, the guess fails, its answer is dropped, the conversation is forgotten and the request is
sent again the ordinary way (counted as ``guess_missed``). While a guess is unconfirmed its
conversation takes no other request (they start their own), so nothing is spliced onto an
unconfirmed state.

Chained in a batch: the plans of one batch round (``ROUND``, set by _ops while it advances the
plans whose calls go out as one batch request) are made before any of them is answered. A plan
may extend the latest state of a conversation when that state's plan belongs to the same round,
as if it had been answered: the server runs a batch's calls in order (one Deltatok in order; with
workers, a conversation's calls stay on one worker, in order — DESIGN.md, Python client), so the
earlier call's state exists when the later one runs, and if it does not the server answers
DT_PREFIX_UNKNOWN and the later call is resent whole. An identity guess may be chained on an
unconfirmed guess of its round: it is confirmed against that guess's fingerprints once that guess
is, and refuted with it. A chained encode asks for ``ids_delta`` against the earlier call's ids,
which the round finishes first (``Plan.finish``: in call order); counted as ``chained_in_batch``.

For encode requests the table also keeps the ids answered for each conversation's latest state,
and asks the server for the ids after the common prefix only (``ids_delta``; the server compares
the ids themselves), so a long conversation's ids cross the pipe once.

Bounded: at most ``max_conversations`` conversations and ``max_bytes`` of fingerprints, held
message references (counted as their fingerprint bytes again) and ids (36 bytes per held id),
least recently used first out. Thread-safe.
"""
from __future__ import annotations

import base64
import contextvars
import hashlib
import itertools
import json
import marshal
import operator
import sys
import threading
from array import array
import uuid
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._errors import PREFIX_UNKNOWN, DeltatokError

__all__ = ["PrefixTable", "Plan", "fingerprint", "conversation_key", "ROUTE_HEADER", "ROUND"]

#: The batch round being planned (an object unique to it; set by _ops while it advances the plans
#: whose calls go out in one batch request, None otherwise). A plan made in a round may extend
#: the state of an earlier plan of the same round (see "Chained in a batch" in the docstring).
ROUND: "contextvars.ContextVar[Optional[object]]" = contextvars.ContextVar("deltatok_round", default=None)

#: The HTTP header that carries a request's routing key (deploy/nginx/deltatok.conf hashes it).
ROUTE_HEADER = "X-Deltatok-Conversation"
#: Roles that lead a conversation and are shared by many (src/pool/skim.ts LEADING_ROLES).
_LEADING_ROLES = ("system", "developer")

DEFAULT_MAX_CONVERSATIONS = 4096
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
_ID_BYTES = 36
_MESSAGE_OVERHEAD = 96


def decode_ids(text: str) -> List[int]:
    """Ids sent as base64 of little-endian uint32."""
    a = array("I")
    a.frombytes(base64.b64decode(text))
    if sys.byteorder == "big":
        a.byteswap()
    return a.tolist()


def fingerprints(values: Sequence[Any]) -> List[bytes]:
    """`fingerprint` of each value (one C call each in the common case)."""
    try:
        return [marshal.dumps(v, 2) for v in values]
    except ValueError:
        return [fingerprint(v) for v in values]


def fingerprint(value: Any) -> bytes:
    """Exact bytes of a JSON-like value: equal bytes mean equal types, values and key order."""
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        # a dict subclass, a str subclass, ...: its JSON text (a marshal string never starts with NUL)
        return b"\x00" + json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _leading(messages: Sequence[Any]) -> int:
    """How many messages name a conversation: up to and including the first whose role is not
    system/developer (all of them when every one is)."""
    for i, m in enumerate(messages):
        if not (isinstance(m, dict) and m.get("role") in _LEADING_ROLES):
            return i + 1
    return len(messages)


def _route_key(lead_fps: Sequence[bytes], tools_fp: Optional[bytes]) -> str:
    h = hashlib.blake2b(digest_size=8)
    for fp in ([b"" if tools_fp is None else b"t" + tools_fp] + list(lead_fps)):
        h.update(len(fp).to_bytes(8, "little"))
        h.update(fp)
    return h.hexdigest()


def conversation_key(messages: Sequence[Any], tools: Any = None) -> str:
    """The routing key of a conversation (16 hex digits): a hash of its tools and leading messages,
    the same for every turn of it and in every process of one Python version (marshal version 2
    has not changed across Python 3 releases; a key that differs would cost reuse, never a count)."""
    n = _leading(messages)
    return _route_key(fingerprints(messages[:n]), None if tools is None else fingerprint(tools))


def route_of(messages: Any, tools: Any = None) -> Optional[str]:
    """`conversation_key`, or None for input that is not a list of messages (the server answers
    that request with its coded error; routing never raises first)."""
    try:
        return conversation_key(messages, tools)
    except (TypeError, ValueError, AttributeError, RecursionError):
        return None


def _confirmed_prefix(msgs: List[Any], held: List[bytes], k: int) -> Optional[List[bytes]]:
    """The fingerprints of `msgs` if its first k equal `held[:k]`, else None. One marshal of the
    whole list in the common case: version 2 writes no references, so a list's marshal is a 5-byte
    header and its items' marshals back to back, and marshal's encoding is prefix-free — the
    list's bytes start with the held fingerprints exactly when its first k items have them (the
    held byte strings are then reused, their hashes cached)."""
    try:
        blob = marshal.dumps(msgs, 2)
    except ValueError:
        blob = None
    if blob is not None and all(fp[:1] != b"\x00" for fp in held[:k]):
        if not blob.startswith(b"".join(held[:k]), 5):
            return None
        return held[:k] + fingerprints(msgs[k:])
    fps = fingerprints(msgs)
    return fps if fps[:k] == held[:k] else None


class _Conversation:
    __slots__ = ("cid", "route", "state", "fps", "tools_fp", "ids", "ids_state", "bytes", "keys", "msgs", "tools", "lead", "guessing", "plan", "round")

    def __init__(self, cid: str, route: str):
        self.cid = cid
        self.route = route
        self.state = 0
        self.fps: List[bytes] = []
        self.tools_fp: Optional[bytes] = None
        self.ids: Optional[List[int]] = None
        self.ids_state = -1
        self.bytes = 0
        self.keys: Tuple[Optional[int], Optional[int]] = (None, None)
        # the latest state's message objects and tools object (for the identity guess), the
        # index of its leading message, and whether that state is an unconfirmed guess
        self.msgs: List[Any] = []
        self.tools: Any = None
        self.lead = 0
        self.guessing = False
        # the plan of the latest state and the batch round it was made in (for chaining)
        self.plan: Optional["Plan"] = None
        self.round: Optional[object] = None


class Plan:
    """One prompt request's wire params, and how to finish its answer."""

    __slots__ = ("_table", "_conv", "_state", "_base_ids", "_want_ids", "_messages", "_tools", "_prefix_len", "_prefix_state", "_omit_tools", "resent",
                 "_guess", "_verified", "_dep", "_dep_ids", "_child", "_ids", "_fps")

    def __init__(self, table: "PrefixTable", conv: _Conversation, state: int, messages: Sequence[Any], tools: Any,
                 prefix_len: int, prefix_state: int, omit_tools: bool, base_ids: Optional[List[int]], want_ids: bool,
                 guess: Optional[Tuple[Optional[List[bytes]], Optional[bytes]]] = None, dep: Optional["Plan"] = None):
        self._table = table
        self._conv = conv
        self._state = state
        self._messages = messages
        self._tools = tools
        self._prefix_len = prefix_len
        self._prefix_state = prefix_state
        self._omit_tools = omit_tools
        self._base_ids = base_ids
        self._want_ids = want_ids
        self.resent = False
        # an identity guess: the fingerprints (and tools fingerprint) of the state it extends
        self._guess = guess
        self._verified: Optional[bool] = None if guess is not None else True
        # chained in a batch: the earlier plan of the same round whose state this one extends;
        # its ids (kept once it finished, `_ids`) are the base of this plan's ids delta
        self._dep = dep
        self._dep_ids = dep is not None and want_ids and base_ids is None
        self._child = False
        self._ids: Optional[List[int]] = None
        # the confirmed fingerprints of a guess (a chained guess checks against them)
        self._fps: Optional[List[bytes]] = None
        if dep is not None:
            dep._child = True

    def verify(self) -> bool:
        """Whether the request's prefix holds (always, unless it was an identity guess; a guess is
        confirmed by fingerprints, once). Never raises. Run by the transport while the server
        works, else before the answer is used."""
        if self._verified is None:
            self._verified = self._table._confirm(self)
        return self._verified

    @property
    def route(self) -> str:
        """The conversation's routing key (the X-Deltatok-Conversation header)."""
        return self._conv.route

    @property
    def has_prefix(self) -> bool:
        return self._prefix_len > 0

    def params(self, extra: Dict[str, Any]) -> Dict[str, Any]:
        """The request params: `extra` (options) plus messages, tools and the conversation fields."""
        p = dict(extra)
        p["conversation_id"] = self._conv.cid
        p["state"] = self._state
        if self._prefix_len > 0:
            p["messages"] = list(self._messages[self._prefix_len:])
            p["prefix"] = {"state": self._prefix_state, "length": self._prefix_len}
            if not self._omit_tools:
                p["tools"] = self._tools
        else:
            p["messages"] = list(self._messages)
            if self._tools is not None:
                p["tools"] = self._tools
        if self._want_ids:
            # a base64 string of uint32 decodes faster than a JSON list of numbers
            p["ids_encoding"] = "base64"
            if self._prefix_len == 0 or self._base_ids is not None or self._dep_ids:
                # the server keeps this answer's ids; it sends a delta only against ids we hold
                # (or, chained, the ids the earlier call of the batch answers: finished first)
                p["ids_delta"] = True
        return p

    def whole(self, extra: Dict[str, Any]) -> Dict[str, Any]:
        """The same request with every message (after DT_PREFIX_UNKNOWN)."""
        self._prefix_len = 0
        self._base_ids = None
        self._dep_ids = False
        self.resent = True
        with self._table._lock:
            self._table.resent_whole += 1
        return self.params(extra)

    def done(self) -> None:
        """The request is over (answered or not): it lets go of the plan it was chained on."""
        self._dep = None

    def finish(self, result: Any) -> Any:
        """The answer with whole ids (rebuilt from the held ones when the server sent a delta). The
        table keeps its own list; the caller gets a copy it may change."""
        ids: Optional[List[int]] = None
        start = 0
        crossed = 0
        if self._want_ids and isinstance(result, dict) and isinstance(result.get("ids"), (list, str)):
            tail = result["ids"]
            if isinstance(tail, str):
                tail = decode_ids(tail)
            crossed = len(tail)
            start = result.get("ids_from") or 0
            if start:
                base = self._base_ids
                if base is None and self._dep_ids and self._dep is not None:
                    # chained: the earlier call's ids (it finished first, in batch order); taken, not copied
                    base, self._dep._ids = self._dep._ids, None
                if base is None or start > len(base):
                    if self._dep_ids:
                        # the earlier call's answer was not used (an error, a refuted guess): resend
                        raise BaseMissing()
                    raise DeltatokError("DT_INTERNAL", "the server sent ids from %d against ids this client does not hold" % start)
                # the base list is this plan's own (the table let go of it when the plan was made)
                del base[start:]
                base.extend(tail)
                ids = base
            else:
                ids = tail
            result["ids"] = ids[:]
            result.pop("ids_from", None)
            if self._child:
                self._ids = ids
        self._table._answered(self._conv, self._state, ids, crossed, start)
        return result


class BaseMissing(Exception):
    """A chained call's ids delta came against ids this client did not keep (its earlier call's
    answer was not used): the request is resent whole."""


class PrefixTable:
    """The client's table of conversations it sent (see the module docstring)."""

    def __init__(self, max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES):
        if max_conversations < 1 or max_bytes < 1:
            raise ValueError("the prefix table needs room for at least one conversation")
        self.max_conversations = max_conversations
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._convs: "OrderedDict[str, _Conversation]" = OrderedDict()
        self._full: Dict[int, str] = {}
        self._but_last: Dict[int, str] = {}
        self._namespace = uuid.uuid4().hex[:16]
        self._conv_ids = itertools.count(1)
        self._states = itertools.count(1)
        self._bytes = 0
        # counters
        self.requests = 0
        self.extended = 0
        self.replaced_last = 0
        self.new_conversations = 0
        self.resent_whole = 0
        self.messages_sent = 0
        self.messages_skipped = 0
        self.ids_received = 0
        self.ids_reused = 0
        self.evictions = 0
        self.guessed = 0
        self.guess_missed = 0
        self.chained_in_batch = 0
        # id(leading message object) -> the conversation whose latest state holds that object there
        self._by_lead: Dict[int, str] = {}

    def plan(self, messages: Sequence[Any], tools: Any, want_ids: bool, guess: bool = True) -> Plan:
        """Chooses the conversation this request continues and registers it as its latest state
        (by an identity guess when one applies and `guess`; see the module docstring)."""
        msgs = list(messages)
        if guess:
            p = self._plan_guess(msgs, tools, want_ids)
            if p is not None:
                return p
        fps = fingerprints(msgs)
        tools_fp = None if tools is None else fingerprint(tools)
        chain: List[int] = []
        h = 0
        for fp in fps:
            h = hash((h, fp))
            chain.append(h)
        n = len(fps)
        # a conversation is continued only by a request with its leading messages, so its routing
        # key never changes (two conversations that share just a system prompt stay apart)
        lead = _leading(msgs)
        with self._lock:
            self.requests += 1
            conv: Optional[_Conversation] = None
            k = 0
            for j in range(n, max(lead, 1) - 1, -1):
                key = chain[j - 1]
                cid = self._full.get(key)
                if cid is not None:
                    c = self._convs.get(cid)
                    if c is not None and len(c.fps) == j and c.fps == fps[:j]:
                        conv, k = c, j
                        self.extended += 1
                        break
                cid = self._but_last.get(key)
                if cid is not None:
                    c = self._convs.get(cid)
                    if c is not None and len(c.fps) == j + 1 and c.fps[:j] == fps[:j]:
                        conv, k = c, j
                        self.replaced_last += 1
                        break
            state = next(self._states)
            dep = None
            if conv is None:
                conv = _Conversation("%s-%d" % (self._namespace, next(self._conv_ids)), _route_key(fps[:lead], tools_fp))
                self._convs[conv.cid] = conv
                self.new_conversations += 1
                prefix_state, omit_tools, base = 0, False, None
            else:
                self._convs.move_to_end(conv.cid)
                prefix_state = conv.state
                omit_tools = tools_fp == conv.tools_fp
                base = conv.ids if (want_ids and conv.ids is not None and conv.ids_state == conv.state) else None
                dep = self._chained(conv)
            self.messages_sent += n - k
            self.messages_skipped += k
            # this request is now the conversation's latest state
            self._unindex(conv)
            self._bytes -= conv.bytes
            conv.state = state
            conv.fps = fps
            conv.tools_fp = tools_fp
            conv.ids = None
            conv.ids_state = -1
            conv.bytes = 2 * sum(map(len, fps)) + _MESSAGE_OVERHEAD * n + (0 if tools_fp is None else len(tools_fp))
            self._bytes += conv.bytes
            self._hold(conv, msgs, tools, lead)
            self._index(conv, chain)
            self._evict()
            p = Plan(self, conv, state, msgs, tools, k, prefix_state, omit_tools, base, want_ids, None, dep)
            self._latest(conv, p)
            return p

    def _plan_guess(self, msgs: List[Any], tools: Any, want_ids: bool) -> Optional[Plan]:
        """The identity guess: the held conversation whose leading message is this request's
        leading message object, when its latest messages (or all but the last) are this request's
        first objects. None when there is no such conversation."""
        n = len(msgs)
        if n == 0:
            return None
        lead = _leading(msgs)
        with self._lock:
            cid = self._by_lead.get(id(msgs[lead - 1]))
            conv = self._convs.get(cid) if cid is not None else None
            if conv is None or conv.lead != lead:
                return None
            dep = self._chained(conv)
            if conv.guessing and dep is None:
                return None
            held = conv.msgs
            rn = len(held)
            if rn <= n and all(map(operator.is_, held, msgs)):
                k = rn
            elif lead < rn <= n + 1 and all(map(operator.is_, held[:rn - 1], msgs)):
                k = rn - 1
            else:
                return None
            if k < lead:
                return None
            if tools is conv.tools:
                omit_tools, tools_fp = True, None  # confirmed by verify()
            else:
                tools_fp = None if tools is None else fingerprint(tools)
                omit_tools = tools_fp == conv.tools_fp
            self.requests += 1
            self.guessed += 1
            if k == rn:
                self.extended += 1
            else:
                self.replaced_last += 1
            self.messages_sent += n - k
            self.messages_skipped += k
            self._convs.move_to_end(conv.cid)
            prefix_state = conv.state
            base = conv.ids if (want_ids and conv.ids is not None and conv.ids_state == conv.state) else None
            # a guess chained on an unconfirmed guess of this batch checks against that guess's
            # fingerprints once it is confirmed (None: taken from `dep` by verify)
            guess = (None if conv.guessing else conv.fps, conv.tools_fp if omit_tools and tools_fp is None else None)
            state = next(self._states)
            # the new state is unconfirmed: out of the content index until verify() confirms it
            self._unindex(conv)
            conv.state = state
            conv.ids = None
            conv.ids_state = -1
            conv.guessing = True
            if tools_fp is not None or tools is None:
                conv.tools_fp = tools_fp
            self._hold(conv, msgs, tools, lead)
            p = Plan(self, conv, state, msgs, tools, k, prefix_state, omit_tools, base, want_ids, guess, dep)
            self._latest(conv, p)
            return p

    def _chained(self, conv: _Conversation) -> Optional[Plan]:
        """The plan of `conv`'s latest state when it was made in the batch round being planned
        (not answered yet: the new request is chained on it). Under the lock."""
        rnd = ROUND.get()
        if rnd is None or conv.round is not rnd:
            return None
        return conv.plan

    def _latest(self, conv: _Conversation, plan: Plan) -> None:
        """`plan` is the conversation's latest state (counted when chained). Under the lock."""
        if plan._dep is not None:
            self.chained_in_batch += 1
        conv.plan = plan
        conv.round = ROUND.get()

    def _confirm(self, plan: Plan) -> bool:
        """Confirms (or refutes) an identity guess with fingerprints; a refuted guess forgets its
        conversation (the request is then sent again by content)."""
        conv = plan._conv
        held_fps, held_tools_fp = plan._guess  # type: ignore[misc]
        k = plan._prefix_len
        if held_fps is None:
            # chained on a guess of the same batch: it holds only if that guess does
            dep = plan._dep
            held_fps = dep._fps if dep is not None and dep.verify() else None
        try:
            msgs = plan._messages
            ok = held_fps is not None and len(held_fps) >= k
            fps: List[bytes] = []
            if ok:
                fps = _confirmed_prefix(msgs, held_fps, k)  # type: ignore[arg-type]
                ok = fps is not None
            tools_fp = conv.tools_fp if not plan._omit_tools or held_tools_fp is None else (
                None if plan._tools is None else fingerprint(plan._tools))
            ok = ok and (held_tools_fp is None or tools_fp == held_tools_fp)
        except Exception:  # noqa: BLE001 - whatever the fingerprints raise, the ordinary path raises again
            ok = False
            fps, tools_fp = [], None
        with self._lock:
            current = conv.state == plan._state and self._convs.get(conv.cid) is conv
            if not ok:
                self.guess_missed += 1
                if current:
                    del self._convs[conv.cid]
                    self._drop(conv)
                return False
            plan._fps = fps
            if current:
                chain: List[int] = []
                h = 0
                for fp in fps:
                    h = hash((h, fp))
                    chain.append(h)
                self._bytes -= conv.bytes
                conv.fps = fps
                conv.tools_fp = tools_fp
                conv.bytes = 2 * sum(map(len, fps)) + _MESSAGE_OVERHEAD * len(fps) + (0 if tools_fp is None else len(tools_fp))
                if conv.ids is not None:
                    conv.bytes += _ID_BYTES * len(conv.ids)
                self._bytes += conv.bytes
                conv.guessing = False
                self._index(conv, chain)
                self._evict()
            return True

    def _hold(self, conv: _Conversation, msgs: List[Any], tools: Any, lead: int) -> None:
        """Keeps the state's message and tools objects for the identity guess."""
        if conv.msgs and conv.lead > 0 and self._by_lead.get(id(conv.msgs[conv.lead - 1])) == conv.cid:
            del self._by_lead[id(conv.msgs[conv.lead - 1])]
        conv.msgs = msgs
        conv.tools = tools
        conv.lead = lead
        if msgs:
            self._by_lead[id(msgs[lead - 1])] = conv.cid

    def _drop(self, conv: _Conversation) -> None:
        """Unindexes a conversation that left the table."""
        self._unindex(conv)
        self._bytes -= conv.bytes
        if conv.msgs and conv.lead > 0 and self._by_lead.get(id(conv.msgs[conv.lead - 1])) == conv.cid:
            del self._by_lead[id(conv.msgs[conv.lead - 1])]
        conv.msgs = []
        conv.tools = None

    def _index(self, conv: _Conversation, chain: List[int]) -> None:
        n = len(chain)
        full = chain[n - 1] if n > 0 else None
        but_last = chain[n - 2] if n > 1 else None
        if full is not None:
            self._full[full] = conv.cid
        if but_last is not None:
            self._but_last[but_last] = conv.cid
        conv.keys = (full, but_last)

    def _unindex(self, conv: _Conversation) -> None:
        full, but_last = conv.keys
        if full is not None and self._full.get(full) == conv.cid:
            del self._full[full]
        if but_last is not None and self._but_last.get(but_last) == conv.cid:
            del self._but_last[but_last]
        conv.keys = (None, None)

    def _evict(self) -> None:
        while len(self._convs) > self.max_conversations or (self._bytes > self.max_bytes and len(self._convs) > 1):
            _, old = self._convs.popitem(last=False)
            self._drop(old)
            self.evictions += 1

    def _answered(self, conv: _Conversation, state: int, ids: Optional[List[int]], crossed: int, reused: int) -> None:
        with self._lock:
            if conv.state == state:
                conv.plan = None  # answered: nothing more is chained on it
            if ids is None:
                return
            held = ids
            self.ids_received += crossed
            self.ids_reused += reused
            if conv.state != state or self._convs.get(conv.cid) is not conv:
                return  # the conversation moved on (or was evicted) meanwhile
            conv.ids = held
            conv.ids_state = state
            extra = _ID_BYTES * len(held)
            conv.bytes += extra
            self._bytes += extra
            self._evict()

    def stats(self) -> Dict[str, int]:
        with self._lock:
            return {
                "requests": self.requests,
                "extended": self.extended,
                "replaced_last": self.replaced_last,
                "new_conversations": self.new_conversations,
                "prefix_sent": self.extended + self.replaced_last,
                "resent_whole": self.resent_whole,
                "messages_sent": self.messages_sent,
                "messages_skipped": self.messages_skipped,
                "ids_received": self.ids_received,
                "ids_reused": self.ids_reused,
                "conversations": len(self._convs),
                "bytes": self._bytes,
                "evictions": self.evictions,
                "guessed": self.guessed,
                "guess_missed": self.guess_missed,
                "chained_in_batch": self.chained_in_batch,
            }


def is_prefix_unknown(e: BaseException) -> bool:
    return isinstance(e, DeltatokError) and e.code == PREFIX_UNKNOWN
