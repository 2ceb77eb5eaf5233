"""Operations as plans: each request is a generator that yields the calls it needs and returns
its answer, so one plan serves the blocking client, the asyncio client and batches alike.

A plan yields ``Call(method, params)`` and is sent the result, or thrown the DeltatokError the
server answered. ``run`` drives one plan over a blocking transport, ``run_many`` drives several
in lockstep, sending each round's calls as one ``batch`` request (a conversation whose prefix the
server did not hold is resent in the next round); ``arun``/``arun_many`` do the same over an
asyncio transport.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, Generator, List, Optional, Sequence, Tuple, Union

from ._errors import DeltatokError, error_from_record
from ._prefix import PrefixTable, is_prefix_unknown

__all__ = ["Call", "run", "run_many", "arun", "arun_many", "prompt_plan", "simple_plan", "MAX_BATCH"]

#: Calls in one batch request (the server's bound).
MAX_BATCH = 10_000


class Call:
    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Dict[str, Any]):
        self.method = method
        self.params = params


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
        return (yield Call(method, p))
    plan = table.plan(messages, tools, want_ids)
    try:
        result = yield Call(method, plan.params(extra))
    except DeltatokError as e:
        if not (is_prefix_unknown(e) and plan.has_prefix):
            raise
        result = yield Call(method, plan.whole(extra))
    return plan.finish(result)


def _step(gen: PlanGen, value: Any, exc: Optional[BaseException]) -> Tuple[bool, Any]:
    """Advances a plan: (True, next Call) or (False, its answer); errors it raises propagate."""
    try:
        call = gen.throw(exc) if exc is not None else gen.send(value)
    except StopIteration as stop:
        return False, stop.value
    return True, call


def run(call: Callable[[str, Dict[str, Any]], Any], gen: PlanGen) -> Any:
    """Drives one plan over a blocking `call(method, params)`."""
    value: Any = None
    exc: Optional[BaseException] = None
    while True:
        more, out = _step(gen, value, exc)
        if not more:
            return out
        value, exc = None, None
        try:
            value = call(out.method, out.params)
        except DeltatokError as e:
            exc = e


Outcome = Union[Any, BaseException]


def _round(gens: List[PlanGen], pending: Dict[int, Tuple[Any, Optional[BaseException]]], calls: Dict[int, Call], out: List[Outcome]) -> None:
    """Advances every plan in `pending` with its value/exception; collects the next calls."""
    for i, (value, exc) in pending.items():
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


def run_many(call: Callable[[str, Dict[str, Any]], Any], gens: List[PlanGen]) -> List[Outcome]:
    """Drives plans in lockstep, one `batch` request per round; each outcome is an answer or the
    exception its plan ended with."""
    out: List[Outcome] = [None] * len(gens)
    pending: Dict[int, Tuple[Any, Optional[BaseException]]] = {i: (None, None) for i in range(len(gens))}
    while pending:
        calls: Dict[int, Call] = {}
        _round(gens, pending, calls, out)
        pending = {}
        order = list(calls)
        for start in range(0, len(order), MAX_BATCH):
            chunk = order[start:start + MAX_BATCH]
            try:
                raw = call("batch", {"requests": [{"method": calls[i].method, "params": calls[i].params} for i in chunk]})
                answers = _batch_results(raw, len(chunk))
            except DeltatokError as e:
                answers = [(None, e)] * len(chunk)
            for i, a in zip(chunk, answers):
                pending[i] = a
    return out


async def arun(acall: Callable[[str, Dict[str, Any]], Awaitable[Any]], gen: PlanGen) -> Any:
    """Drives one plan over an async `acall(method, params)`."""
    value: Any = None
    exc: Optional[BaseException] = None
    while True:
        more, out = _step(gen, value, exc)
        if not more:
            return out
        value, exc = None, None
        try:
            value = await acall(out.method, out.params)
        except DeltatokError as e:
            exc = e


async def arun_many(acall: Callable[[str, Dict[str, Any]], Awaitable[Any]], gens: List[PlanGen]) -> List[Outcome]:
    out: List[Outcome] = [None] * len(gens)
    pending: Dict[int, Tuple[Any, Optional[BaseException]]] = {i: (None, None) for i in range(len(gens))}
    while pending:
        calls: Dict[int, Call] = {}
        _round(gens, pending, calls, out)
        pending = {}
        order = list(calls)
        for start in range(0, len(order), MAX_BATCH):
            chunk = order[start:start + MAX_BATCH]
            try:
                raw = await acall("batch", {"requests": [{"method": calls[i].method, "params": calls[i].params} for i in chunk]})
                answers = _batch_results(raw, len(chunk))
            except DeltatokError as e:
                answers = [(None, e)] * len(chunk)
            for i, a in zip(chunk, answers):
                pending[i] = a
    return out
