"""The prefix table: the client's bounded state of the conversations it sent, and the choice of
which one a prompt request continues (an extension, the last message replaced, an identity
guess, chained in a batch). Thread-safe; no I/O.

The rules and why they are exact: DESIGN.md, "Incremental without asking". The fingerprints are
pure functions (_fingerprint); what a request sends and how its answer is finished is its
`Plan` (_plan); the counters are `PrefixStats`.
"""
from __future__ import annotations

import dataclasses
import itertools
import operator
import threading
import uuid
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence

from ._errors import PREFIX_UNKNOWN, DeltatokError, DeltatokInputError
from ._fingerprint import (ID_BYTES, chain, confirmed_prefix, conversation_key, fingerprint, fingerprints, held_bytes, leading, route_key,
                           route_of)
from ._plan import ROUND, BaseMissing, Conversation, Guess, Plan
from ._wire import ROUTE_HEADER

__all__ = ["PrefixTable", "PrefixStats", "Plan", "BaseMissing", "conversation_key", "route_of", "ROUTE_HEADER", "ROUND", "is_prefix_unknown"]

DEFAULT_MAX_CONVERSATIONS = 4096
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


@dataclasses.dataclass
class PrefixStats:
    """How prompt requests were sent (`stats()["client"]`, README "Incremental without asking")."""

    requests: int = 0
    extended: int = 0
    replaced_last: int = 0
    new_conversations: int = 0
    resent_whole: int = 0
    messages_sent: int = 0
    messages_skipped: int = 0
    ids_received: int = 0
    ids_reused: int = 0
    evictions: int = 0
    guessed: int = 0
    guess_missed: int = 0
    chained_in_batch: int = 0


class PrefixTable:
    """The client's table of conversations it sent (see the module docstring)."""

    def __init__(self, max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES):
        if max_conversations < 1 or max_bytes < 1:
            raise DeltatokInputError("DT_INVALID_OPTION", "the prefix table needs room for at least one conversation")
        self.max_conversations = max_conversations
        self.max_bytes = max_bytes
        self.counts = PrefixStats()
        self._lock = threading.Lock()
        self._convs: "OrderedDict[str, Conversation]" = OrderedDict()
        # chain key of a conversation's latest fingerprints (all of them / all but the last) -> its id
        self._full: Dict[int, str] = {}
        self._but_last: Dict[int, str] = {}
        # id(leading message object) -> the conversation whose latest state holds that object there
        self._by_lead: Dict[int, str] = {}
        self._namespace = uuid.uuid4().hex[:16]
        self._conv_ids = itertools.count(1)
        self._states = itertools.count(1)
        self._bytes = 0

    # ---- planning ------------------------------------------------------------------------------

    def plan(self, messages: Sequence[Any], tools: Any, want_ids: bool, guess: bool = True) -> Plan:
        """Chooses the conversation this request continues and registers it as its latest state
        (by an identity guess when one applies and `guess`)."""
        msgs = list(messages)
        if guess:
            p = self._plan_guess(msgs, tools, want_ids)
            if p is not None:
                return p
        fps = fingerprints(msgs)
        tools_fp = None if tools is None else fingerprint(tools)
        keys = chain(fps)
        n = len(fps)
        # a conversation is continued only by a request with its leading messages, so its routing
        # key never changes (two conversations that share just a system prompt stay apart)
        lead = leading(msgs)
        with self._lock:
            conv: Optional[Conversation] = None
            k = 0
            for j in range(n, max(lead, 1) - 1, -1):
                c = self._indexed(self._full, keys[j - 1])
                if c is not None and len(c.fps) == j and c.fps == fps[:j]:
                    conv, k = c, j
                    break
                c = self._indexed(self._but_last, keys[j - 1])
                if c is not None and len(c.fps) == j + 1 and c.fps[:j] == fps[:j]:
                    conv, k = c, j
                    break
            dep = None
            if conv is None:
                conv = Conversation("%s-%d" % (self._namespace, next(self._conv_ids)), route_key(fps[:lead], tools_fp))
                self._convs[conv.cid] = conv
                prefix_state, omit_tools, base = 0, False, None
                self._count(n, 0, None, False)
            else:
                prefix_state, omit_tools, base = conv.state, tools_fp == conv.tools_fp, self._held_ids(conv, want_ids)
                dep = self._chained(conv)
                self._count(n, k, k == len(conv.fps), False)
            self._next_state(conv, msgs, tools, lead)
            self._settle(conv, fps, tools_fp)
            return self._made(Plan(self, conv, conv.state, msgs, tools, k, prefix_state, omit_tools, base, want_ids, None, dep))

    def _plan_guess(self, msgs: List[Any], tools: Any, want_ids: bool) -> Optional[Plan]:
        """The identity guess: the held conversation whose leading message is this request's
        leading message object, when its latest messages (or all but the last) are this request's
        first objects. None when there is no such conversation."""
        n = len(msgs)
        if n == 0:
            return None
        lead = leading(msgs)
        with self._lock:
            conv = self._indexed(self._by_lead, id(msgs[lead - 1]))
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
            tools_fp: Optional[bytes]
            if tools is conv.tools:
                omit_tools, tools_fp = True, None  # confirmed by verify()
            else:
                tools_fp = None if tools is None else fingerprint(tools)
                omit_tools = tools_fp == conv.tools_fp
            self._count(n, k, k == rn, True)
            prefix_state, base = conv.state, self._held_ids(conv, want_ids)
            # a guess chained on an unconfirmed guess of this batch checks against that guess's
            # fingerprints once it is confirmed (None: taken from `dep` by verify)
            guess: Guess = (None if conv.guessing else conv.fps, conv.tools_fp if omit_tools and tools_fp is None else None)
            # the new state is unconfirmed: out of the content index until confirm() confirms it
            self._next_state(conv, msgs, tools, lead)
            conv.guessing = True
            if tools_fp is not None or tools is None:
                conv.tools_fp = tools_fp
            return self._made(Plan(self, conv, conv.state, msgs, tools, k, prefix_state, omit_tools, base, want_ids, guess, dep))

    # ---- what plans report (PlanOwner) -----------------------------------------------------------

    def confirm(self, plan: Plan) -> bool:
        """Confirms (or refutes) an identity guess with fingerprints; a refuted guess forgets its
        conversation (the request is then sent again by content)."""
        conv = plan.conv
        held_fps, held_tools_fp = plan.guess if plan.guess is not None else (None, None)
        k = plan.prefix_len
        if held_fps is None:
            # chained on a guess of the same batch: it holds only if that guess does
            dep = plan.dep
            held_fps = dep.fps if dep is not None and dep.verify() else None
        fps: Optional[List[bytes]] = None
        tools_fp: Optional[bytes] = None
        try:
            if held_fps is not None and len(held_fps) >= k:
                fps = confirmed_prefix(plan.messages, held_fps, k)
            tools_fp = conv.tools_fp if not plan.omit_tools or held_tools_fp is None else (
                None if plan.tools is None else fingerprint(plan.tools))
            ok = fps is not None and (held_tools_fp is None or tools_fp == held_tools_fp)
        except Exception:  # noqa: BLE001 - whatever the fingerprints raise, the ordinary path raises again
            ok = False
        with self._lock:
            current = conv.state == plan.state and self._convs.get(conv.cid) is conv
            if not ok or fps is None:
                self.counts.guess_missed += 1
                if current:
                    del self._convs[conv.cid]
                    self._drop(conv)
                return False
            plan.fps = fps
            if current:
                conv.guessing = False
                self._settle(conv, fps, tools_fp)
            return True

    def count_resent(self) -> None:
        """A plan was resent whole (the server did not hold its prefix)."""
        with self._lock:
            self.counts.resent_whole += 1

    def answered(self, plan: Plan, ids: Optional[List[int]], crossed: int, reused: int) -> None:
        """A plan's answer was used: its conversation keeps the ids (when still its latest state)."""
        conv = plan.conv
        with self._lock:
            if conv.state == plan.state:
                conv.plan = None  # answered: nothing more is chained on it
            if ids is None:
                return
            self.counts.ids_received += crossed
            self.counts.ids_reused += reused
            if conv.state != plan.state or self._convs.get(conv.cid) is not conv:
                return  # the conversation moved on (or was evicted) meanwhile
            conv.ids = ids
            conv.ids_state = plan.state
            extra = ID_BYTES * len(ids)
            conv.bytes += extra
            self._bytes += extra
            self._evict()

    def stats(self) -> Dict[str, int]:
        with self._lock:
            c = self.counts
            return {
                "requests": c.requests,
                "extended": c.extended,
                "replaced_last": c.replaced_last,
                "new_conversations": c.new_conversations,
                "prefix_sent": c.extended + c.replaced_last,
                "resent_whole": c.resent_whole,
                "messages_sent": c.messages_sent,
                "messages_skipped": c.messages_skipped,
                "ids_received": c.ids_received,
                "ids_reused": c.ids_reused,
                "conversations": len(self._convs),
                "bytes": self._bytes,
                "evictions": c.evictions,
                "guessed": c.guessed,
                "guess_missed": c.guess_missed,
                "chained_in_batch": c.chained_in_batch,
            }

    # ---- state updates (under the lock) ---------------------------------------------------------

    def _indexed(self, index: Dict[int, str], key: int) -> Optional[Conversation]:
        cid = index.get(key)
        return self._convs.get(cid) if cid is not None else None

    def _count(self, n: int, k: int, extended: Optional[bool], guessed: bool) -> None:
        """Counts a request of n messages sending n - k of them; `extended`: True (an extension),
        False (the last message replaced), None (a new conversation)."""
        c = self.counts
        c.requests += 1
        if guessed:
            c.guessed += 1
        if extended is None:
            c.new_conversations += 1
        elif extended:
            c.extended += 1
        else:
            c.replaced_last += 1
        c.messages_sent += n - k
        c.messages_skipped += k

    @staticmethod
    def _held_ids(conv: Conversation, want_ids: bool) -> Optional[List[int]]:
        """The ids of the conversation's latest state, when held and wanted (the base of a delta)."""
        return conv.ids if (want_ids and conv.ids is not None and conv.ids_state == conv.state) else None

    def _chained(self, conv: Conversation) -> Optional[Plan]:
        """The plan of `conv`'s latest state when it was made in the batch round being planned
        (not answered yet: the new request is chained on it)."""
        rnd = ROUND.get()
        if rnd is None or conv.round is not rnd:
            return None
        return conv.plan

    def _next_state(self, conv: Conversation, msgs: List[Any], tools: Any, lead: int) -> None:
        """The request becomes the conversation's latest state: a new state number, out of the
        content index (until `_settle`), no ids yet, its message and tools objects held."""
        self._convs.move_to_end(conv.cid)
        self._unindex(conv)
        conv.state = next(self._states)
        conv.ids = None
        conv.ids_state = -1
        self._unhold(conv)
        conv.msgs = msgs
        conv.tools = tools
        conv.lead = lead
        if msgs:
            self._by_lead[id(msgs[lead - 1])] = conv.cid

    def _settle(self, conv: Conversation, fps: List[bytes], tools_fp: Optional[bytes]) -> None:
        """The latest state's fingerprints are known: counted in the bound, indexed by content."""
        self._bytes -= conv.bytes
        conv.fps = fps
        conv.tools_fp = tools_fp
        conv.bytes = held_bytes(fps, tools_fp, conv.ids)
        self._bytes += conv.bytes
        keys = chain(fps)
        n = len(keys)
        full = keys[n - 1] if n > 0 else None
        but_last = keys[n - 2] if n > 1 else None
        if full is not None:
            self._full[full] = conv.cid
        if but_last is not None:
            self._but_last[but_last] = conv.cid
        conv.keys = (full, but_last)
        self._evict()

    def _made(self, plan: Plan) -> Plan:
        """`plan` is its conversation's latest state (counted when chained)."""
        if plan.dep is not None:
            self.counts.chained_in_batch += 1
        plan.conv.plan = plan
        plan.conv.round = ROUND.get()
        return plan

    def _unhold(self, conv: Conversation) -> None:
        if conv.msgs and conv.lead > 0 and self._by_lead.get(id(conv.msgs[conv.lead - 1])) == conv.cid:
            del self._by_lead[id(conv.msgs[conv.lead - 1])]

    def _drop(self, conv: Conversation) -> None:
        """Unindexes a conversation that left the table."""
        self._unindex(conv)
        self._bytes -= conv.bytes
        self._unhold(conv)
        conv.msgs = []
        conv.tools = None

    def _unindex(self, conv: Conversation) -> None:
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
            self.counts.evictions += 1


def is_prefix_unknown(e: BaseException) -> bool:
    return isinstance(e, DeltatokError) and e.code == PREFIX_UNKNOWN
