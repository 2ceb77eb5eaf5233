"""What one prompt request sends, and how its answer is finished: the prefix table's `Plan`.

A plan is made by the prefix table (_prefix) and holds no lock: the table confirms it
(`verify`), counts a whole resend and keeps its answered ids through the `PlanOwner` methods.
The rules it follows (extend, replace the last, identity guess, chained in a batch, ids delta):
DESIGN.md, "Incremental without asking".
"""
from __future__ import annotations

import contextvars
from typing import Any, Dict, List, Optional, Protocol, Tuple

from ._wire import bad_response, decode_ids

__all__ = ["Plan", "PlanOwner", "BaseMissing", "ROUND", "Conversation"]

#: The batch round being planned (an object unique to it; set by _ops while it advances the plans
#: whose calls go out in one batch request, None otherwise). A plan made in a round may extend
#: the state of an earlier plan of the same round (DESIGN.md, "Chained in a batch").
ROUND: "contextvars.ContextVar[Optional[object]]" = contextvars.ContextVar("deltatok_round", default=None)


class Conversation:
    """One conversation's latest state in the table (mutated only under the table's lock)."""

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
        self.plan: Optional[Plan] = None
        self.round: Optional[object] = None


#: An identity guess: the fingerprints (None: those of the plan it is chained on) and the tools
#: fingerprint of the state it extends (None: the tools are checked another way).
Guess = Tuple[Optional[List[bytes]], Optional[bytes]]


class PlanOwner(Protocol):
    """What a plan needs of the table that made it."""

    def confirm(self, plan: "Plan") -> bool: ...

    def count_resent(self) -> None: ...

    def answered(self, plan: "Plan", ids: Optional[List[int]], crossed: int, reused: int) -> None: ...


class BaseMissing(Exception):
    """A chained call's ids delta came against ids this client did not keep (its earlier call's
    answer was not used): the request is resent whole."""


class Plan:
    """One prompt request's wire params, and how to finish its answer. Its fields are read by the
    table that made it (under the table's lock); callers use the methods."""

    __slots__ = ("owner", "conv", "state", "base_ids", "want_ids", "messages", "tools", "prefix_len", "prefix_state", "omit_tools", "resent",
                 "guess", "verified", "dep", "dep_ids", "child", "ids", "fps")

    def __init__(self, owner: PlanOwner, conv: Conversation, state: int, messages: List[Any], tools: Any,
                 prefix_len: int, prefix_state: int, omit_tools: bool, base_ids: Optional[List[int]], want_ids: bool,
                 guess: Optional[Guess] = None, dep: Optional["Plan"] = None):
        self.owner = owner
        self.conv = conv
        self.state = state
        self.messages = messages
        self.tools = tools
        self.prefix_len = prefix_len
        self.prefix_state = prefix_state
        self.omit_tools = omit_tools
        self.base_ids = base_ids
        self.want_ids = want_ids
        self.resent = False
        self.guess = guess
        self.verified: Optional[bool] = None if guess is not None else True
        # chained in a batch: the earlier plan of the same round whose state this one extends;
        # its ids (kept once it finished, `ids`) are the base of this plan's ids delta
        self.dep = dep
        self.dep_ids = dep is not None and want_ids and base_ids is None
        self.child = False
        self.ids: Optional[List[int]] = None
        # the confirmed fingerprints of a guess (a chained guess checks against them)
        self.fps: Optional[List[bytes]] = None
        if dep is not None:
            dep.child = True

    def verify(self) -> bool:
        """Whether the request's prefix holds (always, unless it was an identity guess; a guess is
        confirmed by fingerprints, once). Never raises. Run by the transport while the server
        works, else before the answer is used."""
        if self.verified is None:
            self.verified = self.owner.confirm(self)
        return self.verified

    @property
    def route(self) -> str:
        """The conversation's routing key (the X-Deltatok-Conversation header)."""
        return self.conv.route

    @property
    def has_prefix(self) -> bool:
        return self.prefix_len > 0

    def params(self, extra: Dict[str, Any]) -> Dict[str, Any]:
        """The request params: `extra` (options) plus messages, tools and the conversation fields."""
        p = dict(extra)
        p["conversation_id"] = self.conv.cid
        p["state"] = self.state
        if self.prefix_len > 0:
            p["messages"] = list(self.messages[self.prefix_len:])
            p["prefix"] = {"state": self.prefix_state, "length": self.prefix_len}
            if not self.omit_tools:
                p["tools"] = self.tools
        else:
            p["messages"] = list(self.messages)
            if self.tools is not None:
                p["tools"] = self.tools
        if self.want_ids:
            # a base64 string of uint32 decodes faster than a JSON list of numbers
            p["ids_encoding"] = "base64"
            if self.prefix_len == 0 or self.base_ids is not None or self.dep_ids:
                # the server keeps this answer's ids; it sends a delta only against ids we hold
                # (or, chained, the ids the earlier call of the batch answers: finished first)
                p["ids_delta"] = True
        return p

    def whole(self, extra: Dict[str, Any]) -> Dict[str, Any]:
        """The same request with every message (after DT_PREFIX_UNKNOWN)."""
        self.prefix_len = 0
        self.base_ids = None
        self.dep_ids = False
        self.resent = True
        self.owner.count_resent()
        return self.params(extra)

    def done(self) -> None:
        """The request is over (answered or not): it lets go of the plan it was chained on."""
        self.dep = None

    def finish(self, result: Any) -> Any:
        """The answer with whole ids (rebuilt from the held ones when the server sent a delta). The
        table keeps its own list; the caller gets a copy it may change."""
        ids: Optional[List[int]] = None
        start = 0
        crossed = 0
        if self.want_ids and isinstance(result, dict) and isinstance(result.get("ids"), (list, str)):
            tail = result["ids"]
            if isinstance(tail, str):
                tail = decode_ids(tail)
            crossed = len(tail)
            start = result.get("ids_from") or 0
            if start < 0:
                raise bad_response("encode_prompt", "result.ids_from", "is %d, expected a count of ids" % start)
            if start:
                base = self.base_ids
                if base is None and self.dep_ids and self.dep is not None:
                    # chained: the earlier call's ids (it finished first, in batch order); taken, not copied
                    base, self.dep.ids = self.dep.ids, None
                if base is None or start > len(base):
                    if self.dep_ids:
                        # the earlier call's answer was not used (an error, a refuted guess): resend
                        raise BaseMissing()
                    raise bad_response("encode_prompt", "result.ids_from", "is %d, against %s ids this client holds for that state" % (
                        start, "no" if base is None else len(base)))
                # the base list is this plan's own (the table let go of it when the plan was made)
                del base[start:]
                base.extend(tail)
                ids = base
            else:
                ids = tail
            result["ids"] = ids[:]
            result.pop("ids_from", None)
            if self.child:
                self.ids = ids
        self.owner.answered(self, ids, crossed, start)
        return result
