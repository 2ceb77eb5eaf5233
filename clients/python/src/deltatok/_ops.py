"""Operations as plans: each request is a generator that yields the calls it needs and returns
its answer, so one plan serves the blocking client, the asyncio client and batches alike.

A plan yields ``Call(method, params, route)`` and is sent the result, or thrown the DeltatokError
the server answered; ``route`` is the conversation's routing key (sent over HTTP as the
X-Deltatok-Conversation header, None for calls that belong to no conversation). ``run`` drives
one plan over a blocking transport, ``run_many`` drives several in lockstep, sending each round's
calls as one ``batch`` request (a conversation whose prefix the server did not hold is resent in
the next round); ``arun``/``arun_many`` do the same over an asyncio transport. A round's prompt
plans are made under one ``ROUND`` token and its answers finished in call order, so a call may be
chained on an earlier call of the same batch (_prefix: "Chained in a batch").

A batch is one HTTP request, so a router sends all of it to one instance. Unsplit (the default),
it carries the routing key of its first call: a harness that sends the same conversations
together on every round (an RL step over its episodes) keeps them all on that instance. Split
(``split``: behind a router), each round's calls are grouped by key and the groups sent at once,
each to its conversations' own instance.
"""
from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from typing import Any, Awaitable, Callable, Dict, Generator, List, Optional, Sequence, Tuple, Union

from ._errors import DeltatokError, error_from_record
from ._prefix import ROUND, BaseMissing, Plan, PrefixTable, is_prefix_unknown, route_of

__all__ = ["Call", "run", "run_many", "arun", "arun_many", "prompt_plan", "simple_plan", "MAX_BATCH"]

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
        p = dict(extra)
        p["messages"] = list(messages)
        if tools is not None:
            p["tools"] = tools
        return (yield Call(method, p, route_of(messages, tools)))
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


def _step(gen: PlanGen, value: Any, exc: Optional[BaseException]) -> Tuple[bool, Any]:
    """Advances a plan: (True, next Call) or (False, its answer); errors it raises propagate."""
    try:
        call = gen.throw(exc) if exc is not None else gen.send(value)
    except StopIteration as stop:
        return False, stop.value
    return True, call


CallFn = Callable[[str, Dict[str, Any], Optional[str]], Any]


def run(call: CallFn, gen: PlanGen, overlap: bool = False) -> Any:
    """Drives one plan over a blocking `call(method, params, route)`; with `overlap`, the transport
    takes `during=` too (run between its write and its read)."""
    value: Any = None
    exc: Optional[BaseException] = None
    while True:
        more, out = _step(gen, value, exc)
        if not more:
            return out
        value, exc = None, None
        try:
            if overlap and out.during is not None:
                value = call(out.method, out.params, out.route, during=out.during)  # type: ignore[call-arg]
            else:
                value = call(out.method, out.params, out.route)
        except DeltatokError as e:
            exc = e


Outcome = Union[Any, BaseException]


def _round(gens: List[PlanGen], pending: Dict[int, Tuple[Any, Optional[BaseException]]], calls: Dict[int, Call], out: List[Outcome]) -> None:
    """Advances every plan in `pending` with its value/exception (in call order: an earlier call
    of a batch is finished before a later one chained on it); collects the next calls. The
    prompt plans made meanwhile are one round (`ROUND`): their calls go out in one batch request,
    run by the server in order, so a later one may extend an earlier one's state."""
    token = ROUND.set(object())
    try:
        _advance(gens, pending, calls, out)
    finally:
        ROUND.reset(token)


def _advance(gens: List[PlanGen], pending: Dict[int, Tuple[Any, Optional[BaseException]]], calls: Dict[int, Call], out: List[Outcome]) -> None:
    for i, (value, exc) in sorted(pending.items()):
        try:
            more, step = _step(gens[i], value, exc)
        except BaseException as e:  # noqa: BLE001 - one plan's error is its own outcome
            out[i] = e
            continue
        if more:
            calls[i] = step
        else:
            out[i] = step


def _batch_results(raw: Any, n: int) -> List[Tuple[Any, Optional[BaseException]]]:
    results = raw.get("results") if isinstance(raw, dict) else None
    if not isinstance(results, list) or len(results) != n:
        err = DeltatokError("DT_INTERNAL", "a batch answer did not hold one result per call")
        return [(None, err)] * n
    return [(None, error_from_record(r["error"])) if isinstance(r, dict) and "error" in r else (r.get("result") if isinstance(r, dict) else None, None) for r in results]


def _groups(calls: Dict[int, Call], split: bool) -> List[Tuple[Optional[str], List[int]]]:
    """The batch requests of one round: (routing key, call indexes), at most MAX_BATCH calls each.
    Unsplit: the calls in order under the first call's key. Split: one group per key."""
    order = list(calls)
    if not split:
        route = next((calls[i].route for i in order if calls[i].route is not None), None)
        by: Dict[Optional[str], List[int]] = {route: order}
    else:
        by = {}
        for i in order:
            by.setdefault(calls[i].route, []).append(i)
    return [(route, idx[s:s + MAX_BATCH]) for route, idx in by.items() for s in range(0, len(idx), MAX_BATCH)]


def _send_group(call: CallFn, calls: Dict[int, Call], route: Optional[str], chunk: List[int]) -> List[Tuple[Any, Optional[BaseException]]]:
    try:
        if len(chunk) == 1:
            # one call needs no batch envelope
            c = calls[chunk[0]]
            return [(call(c.method, c.params, route), None)]
        raw = call("batch", {"requests": [{"method": calls[i].method, "params": calls[i].params} for i in chunk]}, route)
        return _batch_results(raw, len(chunk))
    except DeltatokError as e:
        return [(None, e)] * len(chunk)


def _by_route(groups: List[Tuple[Optional[str], List[int]]]) -> List[Tuple[Optional[str], List[List[int]]]]:
    by: Dict[Optional[str], List[List[int]]] = {}
    for route, chunk in groups:
        by.setdefault(route, []).append(chunk)
    return list(by.items())


def _send_chunks(call: CallFn, calls: Dict[int, Call], route: Optional[str], chunks: List[List[int]]) -> List[List[Tuple[Any, Optional[BaseException]]]]:
    return [_send_group(call, calls, route, chunk) for chunk in chunks]


def run_many(call: CallFn, gens: List[PlanGen], executor: Optional[Executor] = None) -> List[Outcome]:
    """Drives plans in lockstep, one `batch` request per round; each outcome is an answer or the
    exception its plan ended with. With an `executor`, each round is split by routing key and the
    groups sent concurrently on it (see the module docstring)."""
    out: List[Outcome] = [None] * len(gens)
    pending: Dict[int, Tuple[Any, Optional[BaseException]]] = {i: (None, None) for i in range(len(gens))}
    while pending:
        calls: Dict[int, Call] = {}
        _round(gens, pending, calls, out)
        pending = {}
        groups = _groups(calls, executor is not None)
        if executor is None or len(groups) == 1:
            answered = [_send_group(call, calls, route, chunk) for route, chunk in groups]
        else:
            # one task per routing key, its chunks in order (a later chunk may be chained on an earlier)
            futures = [executor.submit(_send_chunks, call, calls, route, chunks) for route, chunks in _by_route(groups)]
            answered = [a for f in futures for a in f.result()]
            groups = [(route, chunk) for route, chunks in _by_route(groups) for chunk in chunks]
        for (_route, chunk), answers in zip(groups, answered):
            for i, a in zip(chunk, answers):
                pending[i] = a
    return out


async def arun(acall: Callable[[str, Dict[str, Any], Optional[str]], Awaitable[Any]], gen: PlanGen) -> Any:
    """Drives one plan over an async `acall(method, params, route)`."""
    value: Any = None
    exc: Optional[BaseException] = None
    while True:
        more, out = _step(gen, value, exc)
        if not more:
            return out
        value, exc = None, None
        try:
            value = await acall(out.method, out.params, out.route)
        except DeltatokError as e:
            exc = e


async def _asend_group(acall: Callable[[str, Dict[str, Any], Optional[str]], Awaitable[Any]], calls: Dict[int, Call], route: Optional[str],
                       chunk: List[int]) -> List[Tuple[Any, Optional[BaseException]]]:
    try:
        if len(chunk) == 1:
            c = calls[chunk[0]]
            return [(await acall(c.method, c.params, route), None)]
        raw = await acall("batch", {"requests": [{"method": calls[i].method, "params": calls[i].params} for i in chunk]}, route)
        return _batch_results(raw, len(chunk))
    except DeltatokError as e:
        return [(None, e)] * len(chunk)


async def _asend_chunks(acall: Callable[[str, Dict[str, Any], Optional[str]], Awaitable[Any]], calls: Dict[int, Call], route: Optional[str],
                        chunks: List[List[int]]) -> List[List[Tuple[Any, Optional[BaseException]]]]:
    return [await _asend_group(acall, calls, route, chunk) for chunk in chunks]


async def arun_many(acall: Callable[[str, Dict[str, Any], Optional[str]], Awaitable[Any]], gens: List[PlanGen], split: bool = False) -> List[Outcome]:
    out: List[Outcome] = [None] * len(gens)
    pending: Dict[int, Tuple[Any, Optional[BaseException]]] = {i: (None, None) for i in range(len(gens))}
    while pending:
        calls: Dict[int, Call] = {}
        _round(gens, pending, calls, out)
        pending = {}
        groups = [(route, chunk) for route, chunks in _by_route(_groups(calls, split)) for chunk in chunks]
        answered = [a for part in await asyncio.gather(*[_asend_chunks(acall, calls, route, chunks) for route, chunks in _by_route(groups)]) for a in part]
        for (_route, chunk), answers in zip(groups, answered):
            for i, a in zip(chunk, answers):
                pending[i] = a
    return out
