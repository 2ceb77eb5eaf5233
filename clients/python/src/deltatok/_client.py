"""The method-level clients: every sidecar method, prompt requests incremental without asking.

    from deltatok import DeltatokClient, DeltatokHttpClient

    with DeltatokClient(["--tokenizer", "qwen3"]) as dt:      # starts `deltatok serve` (stdio)
        isl = dt.count_prompt(messages[:k], tools=tools)       # only the new messages are sent
        osl = dt.count_message(messages[k])

    dt = DeltatokHttpClient("http://127.0.0.1:8765")           # a `deltatok serve --port 8765`

Every method raises DeltatokError (with .code, .message, .path) when deltatok answers with an
error; input errors are DeltatokInputError, a ValueError. Clients are thread-safe.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._ops import PlanGen, prompt_plan, run, run_many, simple_plan
from ._prefix import DEFAULT_MAX_BYTES, DEFAULT_MAX_CONVERSATIONS, PrefixTable, route_of
from ._stream import message_counter_params
from ._transport import DEFAULT_TIMEOUT, HttpTransport, StdioTransport, Transport

if TYPE_CHECKING:  # pragma: no cover
    from ._stream import MessageCounter, TextCounter

__all__ = ["DeltatokClient", "DeltatokHttpClient", "ClientBase", "PromptRequest"]

#: One prompt request for `prompt_many`: messages plus any prompt options as keyword names.
PromptRequest = Mapping[str, Any]

_PROMPT_OPTIONS = ("documents", "chat_template", "chat_template_kwargs", "add_generation_prompt", "parse_tool_arguments", "continue_final_message")


def prompt_options(documents: Any = None, chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                   add_generation_prompt: Optional[bool] = None, parse_tool_arguments: bool = False,
                   continue_final_message: Union[bool, str] = False) -> Dict[str, Any]:
    """The wire form of a prompt request's options (absent ones left out)."""
    p: Dict[str, Any] = {}
    if documents is not None:
        p["documents"] = documents
    if chat_template is not None:
        p["chat_template"] = chat_template
    if chat_template_kwargs:
        p["chat_template_kwargs"] = dict(chat_template_kwargs)
    if add_generation_prompt is not None:
        p["add_generation_prompt"] = add_generation_prompt
    if parse_tool_arguments:
        p["parse_tool_arguments"] = True
    if continue_final_message:
        p["continue_final_message"] = continue_final_message
    return p


def rollout_params(messages: Sequence[Any], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                   chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: bool = False) -> Dict[str, Any]:
    """The wire form of a tokenize_rollout request."""
    p = prompt_options(documents, chat_template, chat_template_kwargs, None, parse_tool_arguments)
    p["messages"] = list(messages)
    if tools is not None:
        p["tools"] = tools
    return p


def budget_params(messages: Sequence[Any], limit: int, tools: Any, options: Mapping[str, Any]) -> Dict[str, Any]:
    """The wire form of a fits / trim_to_fit request."""
    unknown = set(options) - set(_PROMPT_OPTIONS)
    if unknown:
        raise TypeError("unknown prompt option(s): %s" % ", ".join(sorted(unknown)))
    p = prompt_options(**options)
    p["messages"] = list(messages)
    p["limit"] = limit
    if tools is not None:
        p["tools"] = tools
    return p


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
        # the built-in transports run a plan's `during` work between writing and reading
        return run(self.transport.call, plan, isinstance(self.transport, (StdioTransport, HttpTransport)))

    def run_many(self, plans: List[PlanGen]) -> List[Any]:
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
        extra = prompt_options(**options)
        return prompt_plan(self.prefixes, method, messages, tools, extra, method == "encode_prompt")

    # ---- prompt methods (incremental without asking) -----------------------------------------

    def count_prompt(self, messages: Sequence[dict], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                     chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                     parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False,
                     conversation_id: Any = None) -> int:
        """ISL: tokens of the rendered prompt (generation prompt included unless disabled).

        `conversation_id` is accepted for compatibility and not needed: the client recognises a
        conversation it sent before by its messages."""
        return self.run(self.prompt_plan("count_prompt", messages, tools, documents=documents, chat_template=chat_template,
                                         chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                         parse_tool_arguments=parse_tool_arguments, continue_final_message=continue_final_message))["count"]

    def encode_prompt(self, messages: Sequence[dict], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                      chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                      parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False,
                      conversation_id: Any = None) -> List[int]:
        """Token ids of the rendered prompt."""
        return self.run(self.prompt_plan("encode_prompt", messages, tools, documents=documents, chat_template=chat_template,
                                         chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                         parse_tool_arguments=parse_tool_arguments, continue_final_message=continue_final_message))["ids"]

    def tokenize_trajectory(self, messages: Sequence[dict], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                            chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                            parse_tool_arguments: bool = False, conversation_id: Any = None) -> Dict[str, Any]:
        """RL trajectory: {"ids", "count", "prefix", "spans", "suffix", "assistant_mask" (token ranges), ...}."""
        return self.run(self.prompt_plan("tokenize_trajectory", messages, tools, documents=documents, chat_template=chat_template,
                                         chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                         parse_tool_arguments=parse_tool_arguments))

    def tokenize_rollout(self, messages: Sequence[dict], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                         chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: bool = False) -> Dict[str, Any]:
        """RL rollout (docs/ROLLOUTS.md): {"sequences": [{"ids", "mask", "logprobs", "turns"}], "splits",
        "drift"}; assistant messages may carry "sampled_ids" and "sampled_logprobs". One request with
        the whole conversation (the server reuses what it cached for its prompts).
        `deltatok.binary.training_arrays(seq)` turns a sequence into arrays."""
        return self.call("tokenize_rollout", rollout_params(messages, tools, documents, chat_template, chat_template_kwargs, parse_tool_arguments),
                         route_of(messages, tools))

    def render_prompt(self, messages: Sequence[dict], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                      chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                      parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False) -> str:
        """The rendered prompt text (whole request; rendering is not incremental over the wire)."""
        p = prompt_options(documents, chat_template, chat_template_kwargs, add_generation_prompt, parse_tool_arguments, continue_final_message)
        p["messages"] = list(messages)
        if tools is not None:
            p["tools"] = tools
        return self.call("render_prompt", p)["text"]

    def prompt_many(self, method: str, requests: Iterable[PromptRequest]) -> List[Any]:
        """Many prompt requests (`count_prompt`, `encode_prompt`, `tokenize_trajectory`) in one round
        trip: each request a mapping with `messages` and any options by name (`tools`, ...); each
        outcome is its result dict or the DeltatokError it failed with."""
        plans = []
        for r in requests:
            opts = {k: v for k, v in r.items() if k not in ("messages", "tools")}
            unknown = set(opts) - set(_PROMPT_OPTIONS)
            if unknown:
                raise TypeError("unknown prompt option(s): %s" % ", ".join(sorted(unknown)))
            plans.append(self.prompt_plan(method, r["messages"], r.get("tools"), **opts))
        return self.run_many(plans)

    # ---- context budgets (fits, trim_to_fit) -------------------------------------------

    def fits(self, messages: Sequence[dict], limit: int, tools: Any = None, **options: Any) -> bool:
        """Exactly `count_prompt(messages, ...) <= limit`; the server stops encoding past the limit.
        Options: count_prompt's (documents, chat_template, chat_template_kwargs, ...)."""
        return self.call("fits", budget_params(messages, limit, tools, options))["fits"]

    def trim_to_fit(self, messages: Sequence[dict], limit: int, tools: Any = None, policy: Optional[str] = None,
                    keep_first_user: bool = False, **options: Any) -> Dict[str, Any]:
        """Drops the oldest turns until the prompt fits: {"messages": the kept messages (your own
        objects), "count": their exact count, "dropped": indices dropped}. Keeps the system prompt
        and the last user turn, never splits a tool call from its results; policy "oldest" (default)
        or "turns"; DeltatokInputError DT_CONTEXT_TOO_SMALL when the kept-always messages are over."""
        p = budget_params(messages, limit, tools, options)
        if policy is not None:
            p["policy"] = policy
        if keep_first_user:
            p["keep_first_user"] = True
        r = self.call("trim_to_fit", p)
        dropped = set(r["dropped"])
        return {"messages": [m for i, m in enumerate(messages) if i not in dropped], "count": r["count"], "dropped": list(r["dropped"])}

    # ---- other methods --------------------------------------------------------------------

    def count_message(self, message: dict, chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                      parse_tool_arguments: bool = False) -> int:
        """OSL of a structured assistant message (framing and end-of-turn token not counted)."""
        p = message_counter_params(chat_template, chat_template_kwargs, parse_tool_arguments)
        p["message"] = message
        return self.call("count_message", p)["count"]

    def count_text(self, text: str) -> int:
        """Tokens of plain text (no special tokens)."""
        return self.call("count_text", {"text": text})["count"]

    def text_counter(self, max_look_back: Optional[int] = None) -> "TextCounter":
        """A streaming counter: ``append(chunk)`` returns count_text of everything appended so far."""
        from ._stream import TextCounter, text_counter_params
        return TextCounter(self.call, self.call("text_counter_open", text_counter_params(max_look_back))["handle"])

    def message_counter(self, chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                        parse_tool_arguments: bool = False, max_look_back: Optional[int] = None) -> "MessageCounter":
        """A streaming counter of an assistant message: ``append(delta)`` returns count_message of the message so far."""
        from ._stream import MessageCounter
        p = message_counter_params(chat_template, chat_template_kwargs, parse_tool_arguments, max_look_back)
        return MessageCounter(self.call, self.call("message_counter_open", p)["handle"])

    def encode_text(self, text: str, add_special_tokens: bool = False) -> List[int]:
        """Token ids of plain text; with add_special_tokens, as a plain transformers encode adds them."""
        return self.call("encode_text", {"text": text, "add_special_tokens": add_special_tokens})["ids"]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None) -> str:
        p: Dict[str, Any] = {"ids": list(ids), "skip_special_tokens": skip_special_tokens}
        if clean_up_tokenization_spaces is not None:
            p["clean_up_tokenization_spaces"] = clean_up_tokenization_spaces
        return self.call("decode", p)["text"]

    def tokenizer_info(self) -> Dict[str, Any]:
        return self.call("tokenizer_info", {})

    def vocab(self) -> List[Optional[str]]:
        """Every token by id (None where no token has the id)."""
        return self.call("vocab", {})["tokens"]

    def batch(self, requests: Iterable[Dict[str, Any]]) -> List[Any]:
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
        return self.call("health", {})

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


class DeltatokClient(ClientBase):
    """Runs `deltatok serve ARGS` as a child process and talks JSON lines over its stdin/stdout.

    `command` runs the deltatok CLI (default: `find_command()`, which needs no network and raises
    DeltatokNotFoundError here, at construction, when there is none). `timeout`: seconds a call
    waits for its answer (None: forever); past it the call fails DT_REQUEST_TIMEOUT and is not
    resent, and the client stays usable (a late answer is dropped)."""

    def __init__(self, args: Sequence[str] = (), command: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None,
                 incremental: bool = True, max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES,
                 timeout: Optional[float] = DEFAULT_TIMEOUT):
        super().__init__(StdioTransport(args, command, env, timeout), incremental, max_conversations, max_bytes)

    def close(self, timeout: float = 30.0) -> int:  # type: ignore[override]
        """Closes stdin (deltatok answers what is in flight, then exits) and waits for the process."""
        self._close_executor()
        return self.transport.close(timeout)  # type: ignore[call-arg]

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


def outcome_or_raise(x: Any) -> Any:
    if isinstance(x, BaseException):
        raise x
    return x

