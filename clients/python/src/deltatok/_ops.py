"""Operations as plans, sans I/O: each request is a generator that yields the calls it needs and
returns its answer, so one plan serves the blocking client, the asyncio client and batches alike.

A plan yields ``Call(method, params, route)`` and is sent the result, or thrown the DeltatokError
the server answered; ``route`` is the conversation's routing key (sent over HTTP as the
X-Deltatok-Conversation header, None for calls that belong to no conversation). The shells drive
them: ``_client.run``/``run_many`` over a blocking transport, ``aio.arun``/``arun_many`` over
asyncio; here is what both share. ``Lockstep`` advances several plans in rounds, each round's
calls sent as one ``batch`` request (a conversation whose prefix the server did not hold is
resent in the next round). A round's prompt plans are made under one ``ROUND`` token and its
answers finished in call order, so a call may be chained on an earlier call of the same batch
(DESIGN.md, "Chained in a batch"). No sockets, no threads, no asyncio.

A batch is one HTTP request, so a router sends all of it to one instance. Unsplit (the default),
it carries the routing key of its first call: a harness that sends the same conversations
together on every round (an RL step over its episodes) keeps them all on that instance. Split
(``split``: behind a router), each round's calls are grouped by key and the groups sent at once,
each to its conversations' own instance.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Generator, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._errors import DeltatokError
from ._fingerprint import route_of
from ._plan import ROUND, BaseMissing, Plan
from ._prefix import PrefixTable, is_prefix_unknown
from ._wire import bad_response, check_prompt_options, check_result, prompt_options, read_result, whole_prompt_params

__all__ = ["Call", "PlanGen", "Outcome", "Answer", "Lockstep", "step", "prompt_plan", "prompt_many_plans", "simple_plan", "groups", "by_route",
           "group_request", "group_answers", "MAX_BATCH"]

#: Calls in one batch request (the server's bound).
MAX_BATCH = 10_000


class Call:
    """One call of a plan; `during`, when set, is work the transport may run after sending the
    request and before reading its answer (it overlaps the server's work; the plan runs it itself
    afterwards if the transport did not)."""

    __slots__ = ("method", "params", "route", "during")

    def __init__(self, method: str, params: Dict[str, Any], route: Optional[str] = None, during: Optional[Callable[[], Any]] = None):
        self.method = method
        self.params = params
        self.route = route
        self.during = during


PlanGen = Generator[Call, Any, Any]


def simple_plan(method: str, params: Dict[str, Any]) -> PlanGen:
    """One call, its result as the answer."""
    return (yield Call(method, params))


def prompt_plan(table: Optional[PrefixTable], method: str, messages: Sequence[Any], tools: Any, extra: Dict[str, Any], want_ids: bool) -> PlanGen:
    """A prompt request through the prefix table: only new messages, resent whole when the server
    does not hold the prefix. Without a table, every request is whole."""
    if table is None:
        return (yield Call(method, whole_prompt_params(messages, tools, extra), route_of(messages, tools)))
    plan = table.plan(messages, tools, want_ids)
    try:
        result = yield from _guessed(table, plan, method, messages, tools, extra, want_ids)
    finally:
        plan.done()
    return result


def _guessed(table: PrefixTable, plan: Plan, method: str, messages: Sequence[Any], tools: Any, extra: Dict[str, Any], want_ids: bool) -> PlanGen:
    try:
        result = yield Call(method, plan.params(extra), plan.route, plan.verify)
    except DeltatokError as e:
        if not plan.verify():
            # an identity guess that did not hold: its error may be the guessed state's
            result = yield from _by_content(table, method, messages, tools, extra, want_ids)
            return result
        if not (is_prefix_unknown(e) and plan.has_prefix):
            raise
        result = yield Call(method, plan.whole(extra), plan.route)
    if not plan.verify():
        # the caller changed a message or the tools in place: the answer is the guessed state's
        result = yield from _by_content(table, method, messages, tools, extra, want_ids)
        return result
    result = yield from _finish(plan, method, extra, result)
    return result


def _finish(plan: Plan, method: str, extra: Dict[str, Any], result: Any) -> PlanGen:
    """`plan.finish(result)`; a chained call whose ids came as a delta against an earlier answer
    the client did not keep is resent whole."""
    try:
        return plan.finish(result)
    except BaseMissing:
        result = yield Call(method, plan.whole(extra), plan.route)
        return plan.finish(result)


def _by_content(table: PrefixTable, method: str, messages: Sequence[Any], tools: Any, extra: Dict[str, Any], want_ids: bool) -> PlanGen:
    """The request planned by fingerprints only (no identity guess), resent whole if need be."""
    plan = table.plan(messages, tools, want_ids, guess=False)
    try:
        try:
            result = yield Call(method, plan.params(extra), plan.route)
        except DeltatokError as e:
            if not (is_prefix_unknown(e) and plan.has_prefix):
                raise
            result = yield Call(method, plan.whole(extra), plan.route)
        result = yield from _finish(plan, method, extra, result)
    finally:
        plan.done()
    return result


def prompt_many_plans(table: Optional[PrefixTable], method: str, requests: Iterable[Mapping[str, Any]]) -> List[PlanGen]:
    """`prompt_many`'s plans: each request a mapping with `messages` and any options by name."""
    plans = []
    for r in requests:
        opts = {k: v for k, v in r.items() if k not in ("messages", "tools")}
        check_prompt_options(opts)
        plans.append(prompt_plan(table, method, r["messages"], r.get("tools"), prompt_options(**opts), method == "encode_prompt"))
    return plans


def step(gen: PlanGen, value: Any, exc: Optional[BaseException]) -> Tuple[bool, Any]:
    """Advances a plan: (True, next Call) or (False, its answer); errors it raises propagate."""
    try:
        call = gen.throw(exc) if exc is not None else gen.send(value)
    except StopIteration as stop:
        return False, stop.value
    return True, call


#: A plan's outcome: its answer or the exception it ended with.
Outcome = Union[Any, BaseException]
#: What a call got: (result, None) or (None, the error).
Answer = Tuple[Any, Optional[BaseException]]


class Lockstep:
    """Plans advanced in rounds: `advance()` gives a round's calls, `answer()` takes what each
    got, `outcomes` holds each plan's answer or exception once `pending` is empty."""

    def __init__(self, gens: List[PlanGen]):
        self._gens = gens
        self.outcomes: List[Outcome] = [None] * len(gens)
        self._pending: Dict[int, Answer] = {i: (None, None) for i in range(len(gens))}

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def advance(self) -> Dict[int, Call]:
        """Advances every plan with what its call got (in call order: an earlier call of a batch
        is finished before a later one chained on it) and collects the next calls. The prompt
        plans made meanwhile are one round (`ROUND`): their calls go out in one batch request, run
        by the server in order, so a later one may extend an earlier one's state."""
        calls: Dict[int, Call] = {}
        token = ROUND.set(object())
        try:
            for i, (value, exc) in sorted(self._pending.items()):
                try:
                    more, out = step(self._gens[i], value, exc)
                except BaseException as e:  # noqa: BLE001 - one plan's error is its own outcome
                    self.outcomes[i] = e
                    continue
                if more:
                    calls[i] = out
                else:
                    self.outcomes[i] = out
        finally:
            ROUND.reset(token)
        self._pending = {}
        return calls

    def answer(self, chunk: List[int], answers: List[Answer]) -> None:
        for i, a in zip(chunk, answers):
            self._pending[i] = a


#: A batch request of one round: its routing key and the indexes of its calls.
Group = Tuple[Optional[str], List[int]]


def groups(calls: Dict[int, Call], split: bool) -> List[Group]:
    """The batch requests of one round, at most MAX_BATCH calls each. Unsplit: the calls in order
    under the first call's key. Split: one group per key."""
    order = list(calls)
    if not split:
        route = next((calls[i].route for i in order if calls[i].route is not None), None)
        by: Dict[Optional[str], List[int]] = {route: order}
    else:
        by = {}
        for i in order:
            by.setdefault(calls[i].route, []).append(i)
    return [(route, idx[s:s + MAX_BATCH]) for route, idx in by.items() for s in range(0, len(idx), MAX_BATCH)]


def by_route(gs: List[Group]) -> List[Tuple[Optional[str], List[List[int]]]]:
    """Groups gathered by routing key, each key's chunks in order (a later one may be chained on
    an earlier one, so they are sent one after another)."""
    by: Dict[Optional[str], List[List[int]]] = {}
    for route, chunk in gs:
        by.setdefault(route, []).append(chunk)
    return list(by.items())


def group_request(calls: Dict[int, Call], chunk: List[int]) -> Tuple[str, Dict[str, Any]]:
    """The (method, params) that carries a chunk of calls: the call itself when alone (no batch
    envelope), else a `batch`."""
    if len(chunk) == 1:
        c = calls[chunk[0]]
        return c.method, c.params
    return "batch", {"requests": [{"method": calls[i].method, "params": calls[i].params} for i in chunk]}


def group_answers(raw: Any, methods: List[str]) -> List[Answer]:
    """What each call of a chunk got, from the answer to `group_request`'s request (the calls'
    `methods` in order). A lone call's result was checked by the transport (`_wire.read_result`);
    each result of a batch is checked here against its own call's shape, and a bad one fails that
    call only (DT_BAD_RESPONSE)."""
    if len(methods) == 1:
        return [(raw, None)]
    try:
        results = check_result("batch", raw)["results"]
        if len(results) != len(methods):
            raise bad_response("batch", "result.results", "holds %d results for %d calls" % (len(results), len(methods)))
    except DeltatokError as e:
        return [(None, e)] * len(methods)
    out: List[Answer] = []
    for method, r in zip(methods, results):
        try:
            out.append((read_result(method, r), None))
        except DeltatokError as e:
            out.append((None, e))
    return out
