"""The method-level clients: every sidecar method, prompt requests incremental without asking.

    from deltatok import DeltatokClient, DeltatokHttpClient

    with DeltatokClient(["--tokenizer", "qwen3"]) as dt:      # starts `deltatok serve` (stdio)
        isl = dt.count_prompt(messages[:k], tools=tools)       # only the new messages are sent
        osl = dt.count_message(messages[k])

    dt = DeltatokHttpClient("http://127.0.0.1:8765")           # a `deltatok serve --port 8765`

Every method raises DeltatokError (with .code, .message, .path) when deltatok answers with an
error; input errors are DeltatokInputError, a ValueError. Clients are thread-safe.

The blocking shell over the sans-I/O core (_wire: params and answers, _ops: plans): its methods
and deltatok.aio's have the same signatures (tests/test_signatures.py). `AutoTokenizer` (below)
makes a `DeltatokTokenizer` (_tokenizer) over one of these clients.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._compat import transformers_types
from ._dropin import tokenizer_class
from ._errors import DeltatokError, DeltatokUnsupportedError
from ._fingerprint import route_of
from ._ops import Answer, Call, Group, Lockstep, Outcome, PlanGen, by_route, group_answers, group_request, groups, prompt_many_plans, prompt_plan, simple_plan, step
from ._prefix import DEFAULT_MAX_BYTES, DEFAULT_MAX_CONVERSATIONS, PrefixTable
from ._stream import MessageCounter, TextCounter
from ._tokenizer import DeltatokTokenizer, sidecar_args, split_options
from ._transport import DEFAULT_TIMEOUT, HttpTransport, StdioTransport, Transport
from ._wire import (PROMPT_OPTIONS, PromptRequest, budget_params, decode_params, message_counter_params, message_params, prompt_options, render_params,
                    rollout_params, text_counter_params, trim_params, trim_result)

__all__ = ["DeltatokClient", "DeltatokHttpClient", "ClientBase", "PromptRequest", "AutoTokenizer", "run", "run_many"]


#: A blocking call: (method, params, route) -> result, raising the coded error answered.
CallFn = Callable[[str, Dict[str, Any], Optional[str]], Any]


def run(call: CallFn, gen: PlanGen, during: Optional[Callable[[str, Dict[str, Any], Optional[str], Callable[[], Any]], Any]] = None) -> Any:
    """Drives one plan over a blocking `call(method, params, route)`; `during`, when given, is the
    same call taking the plan's `during=` work too (run between its write and its read)."""
    value: Any = None
    exc: Optional[BaseException] = None
    while True:
        more, out = step(gen, value, exc)
        if not more:
            return out
        value, exc = None, None
        try:
            if during is not None and out.during is not None:
                value = during(out.method, out.params, out.route, out.during)
            else:
                value = call(out.method, out.params, out.route)
        except DeltatokError as e:
            exc = e


def _send(call: CallFn, calls: Dict[int, Call], route: Optional[str], chunk: List[int]) -> List[Answer]:
    try:
        method, params = group_request(calls, chunk)
        return group_answers(call(method, params, route), [calls[i].method for i in chunk])
    except DeltatokError as e:
        return [(None, e)] * len(chunk)


def _send_chunks(call: CallFn, calls: Dict[int, Call], route: Optional[str], chunks: List[List[int]]) -> List[List[Answer]]:
    return [_send(call, calls, route, chunk) for chunk in chunks]


def run_many(call: CallFn, gens: List[PlanGen], executor: Optional[ThreadPoolExecutor] = None) -> List[Outcome]:
    """Drives plans in lockstep, one `batch` request per round; each outcome is an answer or the
    exception its plan ended with. With an `executor`, each round is split by routing key and the
    groups sent concurrently on it (_ops)."""
    lock = Lockstep(gens)
    while lock.pending:
        calls = lock.advance()
        gs: List[Group] = groups(calls, executor is not None)
        if executor is None or len(gs) == 1:
            answered = [_send(call, calls, route, chunk) for route, chunk in gs]
        else:
            # one task per routing key, its chunks in order (a later chunk may be chained on an earlier)
            keyed = by_route(gs)
            futures = [executor.submit(_send_chunks, call, calls, route, chunks) for route, chunks in keyed]
            answered = [a for f in futures for a in f.result()]
            gs = [(route, chunk) for route, chunks in keyed for chunk in chunks]
        for (_route, chunk), answers in zip(gs, answered):
            lock.answer(chunk, answers)
    return lock.outcomes


class ClientBase:
    """The methods, over any transport; `incremental=False` sends every prompt whole."""

    #: Threads that send one round's groups when batches are split by routing key.
    MAX_PARALLEL = 16

    def __init__(self, transport: Transport, incremental: bool = True, max_conversations: int = DEFAULT_MAX_CONVERSATIONS,
                 max_bytes: int = DEFAULT_MAX_BYTES, split_batches: bool = False):
        self.transport = transport
        self.prefixes: Optional[PrefixTable] = PrefixTable(max_conversations, max_bytes) if incremental else None
        self.split_batches = split_batches
        self._executor: Optional[ThreadPoolExecutor] = None
        self._executor_lock = threading.Lock()

    # ---- plumbing ---------------------------------------------------------------------------

    def call(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:
        """One raw sidecar call (no prefix handling); `route`: a routing key for a router."""
        return self.transport.call(method, params, route)

    def run(self, plan: PlanGen) -> Any:
        """One plan; the built-in transports run its `during` work between writing and reading."""
        t = self.transport
        if isinstance(t, (StdioTransport, HttpTransport)):
            return run(t.call, plan, t.call)
        return run(t.call, plan)

    def run_many(self, plans: List[PlanGen]) -> List[Outcome]:
        """Plans in one round trip per round (split by routing key, the groups sent concurrently,
        with `split_batches`); each outcome is an answer or an exception."""
        return run_many(self.transport.call, plans, self._split_executor())

    def _split_executor(self) -> Optional[ThreadPoolExecutor]:
        if not self.split_batches:
            return None
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.MAX_PARALLEL, thread_name_prefix="deltatok-route")
            return self._executor

    def prompt_plan(self, method: str, messages: Sequence[Any], tools: Any = None, **options: Any) -> PlanGen:
        """A prompt request's plan through this client's prefix table (options: PROMPT_OPTIONS)."""
        return prompt_plan(self.prefixes, method, messages, tools, prompt_options(**options), method == "encode_prompt")

    # ---- prompt methods (incremental without asking) -----------------------------------------

    def count_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                     chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                     parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False,
                     conversation_id: Any = None) -> int:
        """ISL: tokens of the rendered prompt (generation prompt included unless disabled).

        `conversation_id` is accepted for compatibility and not needed: the client recognises a
        conversation it sent before by its messages."""
        r = self.run(self.prompt_plan("count_prompt", messages, tools, documents=documents, chat_template=chat_template,
                                      chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                      parse_tool_arguments=parse_tool_arguments, continue_final_message=continue_final_message))
        return int(r["count"])

    def encode_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                      chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                      parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False,
                      conversation_id: Any = None) -> List[int]:
        """Token ids of the rendered prompt."""
        r = self.run(self.prompt_plan("encode_prompt", messages, tools, documents=documents, chat_template=chat_template,
                                      chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                      parse_tool_arguments=parse_tool_arguments, continue_final_message=continue_final_message))
        ids: List[int] = r["ids"]
        return ids

    def tokenize_trajectory(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                            chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                            parse_tool_arguments: bool = False, conversation_id: Any = None) -> Dict[str, Any]:
        """RL trajectory: {"ids", "count", "prefix", "spans", "suffix", "assistant_mask" (token ranges), ...}."""
        r: Dict[str, Any] = self.run(self.prompt_plan("tokenize_trajectory", messages, tools, documents=documents, chat_template=chat_template,
                                                      chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                                      parse_tool_arguments=parse_tool_arguments))
        return r

    def tokenize_rollout(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                         chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: bool = False) -> Dict[str, Any]:
        """RL rollout (docs/ROLLOUTS.md): {"sequences": [{"ids", "mask", "logprobs", "turns"}], "splits",
        "drift"}; assistant messages may carry "sampled_ids" and "sampled_logprobs". One request with
        the whole conversation (the server reuses what it cached for its prompts).
        `deltatok.binary.training_arrays(seq)` turns a sequence into arrays."""
        r: Dict[str, Any] = self.call("tokenize_rollout", rollout_params(messages, tools, documents, chat_template, chat_template_kwargs,
                                                                         parse_tool_arguments), route_of(messages, tools))
        return r

    def render_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                      chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                      parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False) -> str:
        """The rendered prompt text (whole request; rendering is not incremental over the wire)."""
        return str(self.call("render_prompt", render_params(messages, tools, documents, chat_template, chat_template_kwargs, add_generation_prompt,
                                                            parse_tool_arguments, continue_final_message))["text"])

    def prompt_many(self, method: str, requests: Iterable[PromptRequest]) -> List[Outcome]:
        """Many prompt requests (`count_prompt`, `encode_prompt`, `tokenize_trajectory`) in one round
        trip: each request a mapping with `messages` and any options by name (`tools`, ...); each
        outcome is its result dict or the DeltatokError it failed with."""
        return self.run_many(prompt_many_plans(self.prefixes, method, requests))

    # ---- context budgets (fits, trim_to_fit) -------------------------------------------

    def fits(self, messages: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, **options: Any) -> bool:
        """Exactly `count_prompt(messages, ...) <= limit`; the server stops encoding past the limit.
        Options: count_prompt's (documents, chat_template, chat_template_kwargs, ...)."""
        return bool(self.call("fits", budget_params(messages, limit, tools, options))["fits"])

    def trim_to_fit(self, messages: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, policy: Optional[str] = None,
                    keep_first_user: bool = False, **options: Any) -> Dict[str, Any]:
        """Drops the oldest turns until the prompt fits: {"messages": the kept messages (your own
        objects), "count": their exact count, "dropped": indices dropped}. Keeps the system prompt
        and the last user turn, never splits a tool call from its results; policy "oldest" (default)
        or "turns"; DeltatokInputError DT_CONTEXT_TOO_SMALL when the kept-always messages are over."""
        return trim_result(messages, self.call("trim_to_fit", trim_params(messages, limit, tools, policy, keep_first_user, options)))

    # ---- other methods --------------------------------------------------------------------

    def count_message(self, message: Mapping[str, Any], chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                      parse_tool_arguments: bool = False) -> int:
        """OSL of a structured assistant message (framing and end-of-turn token not counted)."""
        return int(self.call("count_message", message_params(message, chat_template, chat_template_kwargs, parse_tool_arguments))["count"])

    def count_text(self, text: str) -> int:
        """Tokens of plain text (no special tokens)."""
        return int(self.call("count_text", {"text": text})["count"])

    def text_counter(self, max_look_back: Optional[int] = None) -> TextCounter:
        """A streaming counter: ``append(chunk)`` returns count_text of everything appended so far."""
        return TextCounter(self.call, self.call("text_counter_open", text_counter_params(max_look_back))["handle"])

    def message_counter(self, chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                        parse_tool_arguments: bool = False, max_look_back: Optional[int] = None) -> MessageCounter:
        """A streaming counter of an assistant message: ``append(delta)`` returns count_message of the message so far."""
        p = message_counter_params(chat_template, chat_template_kwargs, parse_tool_arguments, max_look_back)
        return MessageCounter(self.call, self.call("message_counter_open", p)["handle"])

    def encode_text(self, text: str, add_special_tokens: bool = False) -> List[int]:
        """Token ids of plain text; with add_special_tokens, as a plain transformers encode adds them."""
        ids: List[int] = self.call("encode_text", {"text": text, "add_special_tokens": add_special_tokens})["ids"]
        return ids

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None) -> str:
        return str(self.call("decode", decode_params(ids, skip_special_tokens, clean_up_tokenization_spaces))["text"])

    def tokenizer_info(self) -> Dict[str, Any]:
        info: Dict[str, Any] = self.call("tokenizer_info", {})
        return info

    def vocab(self) -> List[Optional[str]]:
        """Every token by id (None where no token has the id)."""
        tokens: List[Optional[str]] = self.call("vocab", {})["tokens"]
        return tokens

    def batch(self, requests: Iterable[Mapping[str, Any]]) -> List[Outcome]:
        """Several raw {"method", "params"} calls in one round trip; each item a result or a DeltatokError."""
        return run_many(self.transport.call, [simple_plan(r["method"], r.get("params", {})) for r in requests])

    def stats(self) -> Dict[str, Any]:
        """The server's Deltatok statistics, with this client's prefix counters under "client"."""
        s = dict(self.call("stats", {}))
        s["client"] = self.client_stats()
        return s

    def client_stats(self) -> Dict[str, int]:
        """How prompt requests were sent: extended / replaced_last (with a prefix), new_conversations
        (whole), resent_whole (the server did not hold the prefix), messages and ids skipped."""
        return self.prefixes.stats() if self.prefixes is not None else {}

    def health(self) -> Dict[str, Any]:
        h: Dict[str, Any] = self.call("health", {})
        return h

    def close(self) -> int:
        self._close_executor()
        return self.transport.close()

    def _close_executor(self) -> None:
        with self._executor_lock:
            ex, self._executor = self._executor, None
        if ex is not None:
            ex.shutdown(wait=True)

    def __enter__(self) -> "ClientBase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def restorer(self) -> Callable[[str, Dict[str, Any], Dict[str, Any]], Any]:
        """What unpickling a tokenizer of this client calls: from_pretrained with `spec()`."""
        return _restore

    def spec(self) -> Dict[str, Any]:
        """from_pretrained options that reach a client like this one (for pickling a tokenizer)."""
        t = self.transport
        if isinstance(t, HttpTransport):
            return {"url": t.url, "timeout": t.timeout, "server_token": t.token}
        if isinstance(t, StdioTransport):
            cut = t.command.index("serve")
            return {"command": t.command[:cut], "serve_args": t.command[cut + 1:], "timeout": t.timeout, "_whole_args": True}
        raise DeltatokUnsupportedError("a tokenizer on a custom transport cannot be pickled", "client")


class DeltatokClient(ClientBase):
    """Runs `deltatok serve ARGS` as a child process and talks JSON lines over its stdin/stdout.

    `command` runs the deltatok CLI (default: `find_command()`, which needs no network and raises
    DeltatokNotFoundError here, at construction, when there is none). `timeout`: seconds a call
    waits for its answer (None: forever); past it the call fails DT_REQUEST_TIMEOUT and is not
    resent, and the client stays usable (a late answer is dropped)."""

    def __init__(self, args: Sequence[str] = (), command: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None,
                 incremental: bool = True, max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES,
                 timeout: Optional[float] = DEFAULT_TIMEOUT):
        self._stdio = StdioTransport(args, command, env, timeout)
        super().__init__(self._stdio, incremental, max_conversations, max_bytes)

    def close(self, timeout: float = 30.0) -> int:
        """Closes stdin (deltatok answers what is in flight, then exits) and waits for the process."""
        self._close_executor()
        return self._stdio.close(timeout)

    def __enter__(self) -> "DeltatokClient":
        return self


class DeltatokHttpClient(ClientBase):
    """Talks to `deltatok serve --port N` over HTTP (POST /rpc). `token`: the server's bearer token
    (default `$DELTATOK_TOKEN`). Every call of a conversation carries its routing key
    (X-Deltatok-Conversation); `split_batches=True` when the URL is a router over several
    instances (deploy/nginx): a batch round is split by key and the groups sent concurrently, so
    each conversation reaches its own instance (else the batch goes whole to its first
    conversation's instance)."""

    def __init__(self, base_url: str, timeout: float = 300.0, token: Optional[str] = None, incremental: bool = True,
                 max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES, split_batches: bool = False):
        super().__init__(HttpTransport(base_url, token=token, timeout=timeout), incremental, max_conversations, max_bytes, split_batches)

    def __enter__(self) -> "DeltatokHttpClient":
        return self



# ---- AutoTokenizer (the blocking tokenizer) ---------------------------------------------------

def _restore(name_or_path: str, spec: Dict[str, Any], attrs: Dict[str, Any]) -> "DeltatokTokenizer":
    tok = AutoTokenizer.from_pretrained(name_or_path, **spec)
    for k, v in attrs.items():
        setattr(tok, k, v)
    return tok



def make_client(name_or_path: Any, dt: Dict[str, Any], env_add: Dict[str, str]) -> Tuple[ClientBase, bool]:
    if dt.get("client") is not None:
        return dt["client"], False
    incremental = dt.get("incremental", True)
    mc = dt.get("max_conversations", DEFAULT_MAX_CONVERSATIONS)
    mb = dt.get("max_bytes", DEFAULT_MAX_BYTES)
    if dt.get("url"):
        return DeltatokHttpClient(dt["url"], timeout=dt.get("timeout", 300.0), token=dt.get("server_token"), incremental=incremental,
                                  max_conversations=mc, max_bytes=mb, split_batches=bool(dt.get("split_batches", False))), True
    env = dt.get("env")
    if env_add:
        env = dict(os.environ if env is None else env, **env_add)
    return DeltatokClient(sidecar_args(os.fspath(name_or_path), dt), command=dt.get("command"), env=env, incremental=incremental,
                          max_conversations=mc, max_bytes=mb, timeout=dt.get("timeout", DEFAULT_TIMEOUT)), True


class AutoTokenizer:
    """`AutoTokenizer.from_pretrained(name_or_path, **options)`, as transformers', answered by deltatok."""

    def __init__(self) -> None:
        raise EnvironmentError("AutoTokenizer is designed to be instantiated using `AutoTokenizer.from_pretrained(...)`")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Any, *init_inputs: Any, **kwargs: Any) -> DeltatokTokenizer:
        """A tokenizer for a bundled name (`qwen3`, ...), a directory with tokenizer.json, a
        tokenizer.json path, or a model id found in the local Hugging Face hub cache (never
        downloaded). deltatok's own options: `date` (what strftime_now sees, YYYY-MM-DD),
        `workers`, `cache_mb`, `max_prompt_chars`, `renderer`, `serve_args` (more `deltatok serve`
        flags), `command`/`env` (how to run the CLI), `url` + `server_token` (a running
        `deltatok serve --port`, instead of a child process), `timeout`, `incremental`,
        `max_conversations`/`max_bytes` (the prefix table's bound), `split_batches` (with `url`:
        the URL is a router over several instances, deploy/nginx), `client` (share one),
        `chat_template_kwargs` and `parse_tool_arguments` (defaults for every request)."""
        dt, overrides, env_add = split_options(pretrained_model_name_or_path, init_inputs, kwargs)
        client, owns = make_client(pretrained_model_name_or_path, dt, env_add)
        try:
            info = client.tokenizer_info()
        except BaseException:
            if owns:
                client.close()
            raise
        types = transformers_types()
        klass = tokenizer_class(DeltatokTokenizer, None if types is None else types[1])
        tok: DeltatokTokenizer = klass(client, info, overrides, dt.get("chat_template_kwargs"), bool(dt.get("parse_tool_arguments", False)), owns)
        spec = {k: v for k, v in kwargs.items() if k != "client"} if dt.get("client") is None else dict(client.spec(), **{
            k: v for k, v in kwargs.items() if k in ("chat_template_kwargs", "parse_tool_arguments", "incremental", "max_conversations", "max_bytes")})
        object.__setattr__(tok, "_spec", spec)
        return tok

