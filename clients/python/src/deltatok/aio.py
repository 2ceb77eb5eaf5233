"""asyncio variants: the same methods as awaitables, one sidecar shared by any number of tasks.

    from deltatok.aio import AsyncAutoTokenizer
    tok = await AsyncAutoTokenizer.from_pretrained("qwen3")
    ids = await tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True)
    counts = await asyncio.gather(*(tok.apply_chat_template(c) for c in conversations))
    await tok.aclose()

Over stdio the requests of all tasks share one pipe (a reader task hands each answer to its
future by id); over HTTP each call runs the blocking client in the loop's default executor.
The asyncio shell over the sans-I/O core (_wire, _ops): the same plans and params as the blocking
client, with the same prefix table, and every method's signature is its blocking twin's
(tests/test_signatures.py).
"""
from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ._discovery import find_command
from ._errors import NOT_FOUND_HELP, DeltatokError, DeltatokNotFoundError
from ._fingerprint import route_of
from ._ops import Answer, Call, Lockstep, Outcome, PlanGen, by_route, group_answers, group_request, groups, prompt_many_plans, prompt_plan, simple_plan, step
from ._prefix import DEFAULT_MAX_BYTES, DEFAULT_MAX_CONVERSATIONS, PrefixTable
from ._shape import BatchEncoding
from ._stream import AsyncMessageCounter, AsyncTextCounter
from ._stream import MessageCounter, TextCounter
from ._tokenizer import ChatRequest, DeltatokTokenizer, sidecar_args, split_options
from ._transport import HttpTransport
from ._wire import (DEFAULT_TIMEOUT, PromptRequest, budget_params, decode_params, envelope, message_counter_params, message_params, prompt_options,
                    read_answer, read_result, render_params, rollout_params, text_counter_params, trim_params, trim_result)

__all__ = ["AsyncDeltatokClient", "AsyncDeltatokHttpClient", "AsyncAutoTokenizer", "AsyncDeltatokTokenizer", "arun", "arun_many"]

_LINE_LIMIT = 512 * 1024 * 1024

#: An asyncio call: (method, params, route) -> result, raising the coded error answered.
ACallFn = Callable[[str, Dict[str, Any], Optional[str]], Awaitable[Any]]


async def arun(acall: ACallFn, gen: PlanGen) -> Any:
    """Drives one plan over an async `acall(method, params, route)`."""
    value: Any = None
    exc: Optional[BaseException] = None
    while True:
        more, out = step(gen, value, exc)
        if not more:
            return out
        value, exc = None, None
        try:
            value = await acall(out.method, out.params, out.route)
        except DeltatokError as e:
            exc = e


async def _send(acall: ACallFn, calls: Dict[int, Call], route: Optional[str], chunk: List[int]) -> List[Answer]:
    try:
        method, params = group_request(calls, chunk)
        return group_answers(await acall(method, params, route), [calls[i].method for i in chunk])
    except DeltatokError as e:
        return [(None, e)] * len(chunk)


async def _send_chunks(acall: ACallFn, calls: Dict[int, Call], route: Optional[str], chunks: List[List[int]]) -> List[List[Answer]]:
    return [await _send(acall, calls, route, chunk) for chunk in chunks]


async def arun_many(acall: ACallFn, gens: List[PlanGen], split: bool = False) -> List[Outcome]:
    """Drives plans in lockstep, one `batch` request per round, each routing key's chunks in
    order and the keys concurrently; each outcome is an answer or an exception."""
    lock = Lockstep(gens)
    while lock.pending:
        calls = lock.advance()
        keyed = by_route(groups(calls, split))
        parts = await asyncio.gather(*[_send_chunks(acall, calls, route, chunks) for route, chunks in keyed])
        for (_route, chunks), answered in zip(keyed, parts):
            for chunk, answers in zip(chunks, answered):
                lock.answer(chunk, answers)
    return lock.outcomes


class _AsyncBase:
    """The sidecar methods as coroutines over an `acall(method, params, route)`; each has the
    signature of its ClientBase twin."""

    def __init__(self, incremental: bool = True, max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES,
                 split_batches: bool = False):
        self.prefixes: Optional[PrefixTable] = PrefixTable(max_conversations, max_bytes) if incremental else None
        #: Split batches by routing key (HTTP behind a router; see _ops).
        self.split_batches = split_batches

    async def acall(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    async def aclose(self) -> int:  # pragma: no cover - interface
        return 0

    # ---- plumbing ---------------------------------------------------------------------------

    async def run(self, plan: PlanGen) -> Any:
        return await arun(self.acall, plan)

    async def run_many(self, plans: List[PlanGen]) -> List[Outcome]:
        return await arun_many(self.acall, plans, self.split_batches)

    def prompt_plan(self, method: str, messages: Sequence[Any], tools: Any = None, **options: Any) -> PlanGen:
        """A prompt request's plan through this client's prefix table (options: PROMPT_OPTIONS)."""
        return prompt_plan(self.prefixes, method, messages, tools, prompt_options(**options), method == "encode_prompt")

    # ---- prompt methods (incremental without asking) -----------------------------------------

    async def count_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                           chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                           parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False,
                           conversation_id: Any = None) -> int:
        r = await self.run(self.prompt_plan("count_prompt", messages, tools, documents=documents, chat_template=chat_template,
                                            chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                            parse_tool_arguments=parse_tool_arguments, continue_final_message=continue_final_message))
        return int(r["count"])

    async def encode_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                            chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                            parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False,
                            conversation_id: Any = None) -> List[int]:
        r = await self.run(self.prompt_plan("encode_prompt", messages, tools, documents=documents, chat_template=chat_template,
                                            chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                            parse_tool_arguments=parse_tool_arguments, continue_final_message=continue_final_message))
        ids: List[int] = r["ids"]
        return ids

    async def tokenize_trajectory(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None,
                                  chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                                  add_generation_prompt: Optional[bool] = None, parse_tool_arguments: bool = False,
                                  conversation_id: Any = None) -> Dict[str, Any]:
        r: Dict[str, Any] = await self.run(self.prompt_plan("tokenize_trajectory", messages, tools, documents=documents, chat_template=chat_template,
                                                            chat_template_kwargs=chat_template_kwargs, add_generation_prompt=add_generation_prompt,
                                                            parse_tool_arguments=parse_tool_arguments))
        return r

    async def tokenize_rollout(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None,
                               chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                               parse_tool_arguments: bool = False) -> Dict[str, Any]:
        r: Dict[str, Any] = await self.acall("tokenize_rollout", rollout_params(messages, tools, documents, chat_template, chat_template_kwargs,
                                                                               parse_tool_arguments), route_of(messages, tools))
        return r

    async def render_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                            chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                            parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False) -> str:
        return str((await self.acall("render_prompt", render_params(messages, tools, documents, chat_template, chat_template_kwargs,
                                                                    add_generation_prompt, parse_tool_arguments, continue_final_message)))["text"])

    async def prompt_many(self, method: str, requests: Iterable[PromptRequest]) -> List[Outcome]:
        return await self.run_many(prompt_many_plans(self.prefixes, method, requests))

    # ---- context budgets (fits, trim_to_fit) -------------------------------------------

    async def fits(self, messages: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, **options: Any) -> bool:
        return bool((await self.acall("fits", budget_params(messages, limit, tools, options)))["fits"])

    async def trim_to_fit(self, messages: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, policy: Optional[str] = None,
                          keep_first_user: bool = False, **options: Any) -> Dict[str, Any]:
        return trim_result(messages, await self.acall("trim_to_fit", trim_params(messages, limit, tools, policy, keep_first_user, options)))

    # ---- other methods --------------------------------------------------------------------

    async def count_message(self, message: Mapping[str, Any], chat_template: Optional[str] = None,
                            chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: bool = False) -> int:
        return int((await self.acall("count_message", message_params(message, chat_template, chat_template_kwargs, parse_tool_arguments)))["count"])

    async def count_text(self, text: str) -> int:
        return int((await self.acall("count_text", {"text": text}))["count"])

    async def text_counter(self, max_look_back: Optional[int] = None) -> AsyncTextCounter:
        """An AsyncTextCounter: ``await c.append(chunk)`` returns count_text of everything so far."""
        return AsyncTextCounter(self.acall, (await self.acall("text_counter_open", text_counter_params(max_look_back)))["handle"])

    async def message_counter(self, chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                              parse_tool_arguments: bool = False, max_look_back: Optional[int] = None) -> AsyncMessageCounter:
        """An AsyncMessageCounter: ``await c.append(delta)`` returns count_message of the message so far."""
        p = message_counter_params(chat_template, chat_template_kwargs, parse_tool_arguments, max_look_back)
        return AsyncMessageCounter(self.acall, (await self.acall("message_counter_open", p))["handle"])

    async def encode_text(self, text: str, add_special_tokens: bool = False) -> List[int]:
        ids: List[int] = (await self.acall("encode_text", {"text": text, "add_special_tokens": add_special_tokens}))["ids"]
        return ids

    async def decode(self, ids: Sequence[int], skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None) -> str:
        return str((await self.acall("decode", decode_params(ids, skip_special_tokens, clean_up_tokenization_spaces)))["text"])

    async def tokenizer_info(self) -> Dict[str, Any]:
        info: Dict[str, Any] = await self.acall("tokenizer_info", {})
        return info

    async def vocab(self) -> List[Optional[str]]:
        tokens: List[Optional[str]] = (await self.acall("vocab", {}))["tokens"]
        return tokens

    async def batch(self, requests: Iterable[Mapping[str, Any]]) -> List[Outcome]:
        return await arun_many(self.acall, [simple_plan(r["method"], r.get("params", {})) for r in requests])

    async def stats(self) -> Dict[str, Any]:
        s = dict(await self.acall("stats", {}))
        s["client"] = self.client_stats()
        return s

    def client_stats(self) -> Dict[str, int]:
        return self.prefixes.stats() if self.prefixes is not None else {}

    async def health(self) -> Dict[str, Any]:
        h: Dict[str, Any] = await self.acall("health", {})
        return h


class AsyncDeltatokClient(_AsyncBase):
    """`deltatok serve` as an asyncio child process; create it with `await AsyncDeltatokClient.start(args)`."""

    def __init__(self, incremental: bool = True, max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        """Use `await AsyncDeltatokClient.start(...)`, which starts the process."""
        super().__init__(incremental, max_conversations, max_bytes)
        self.command: List[str] = []
        self._proc: Optional[asyncio.subprocess.Process] = None
        self._futures: Dict[int, "asyncio.Future[Dict[str, Any]]"] = {}
        self._ids = itertools.count(1)
        self._reader: Optional["asyncio.Task[None]"] = None
        self._failure: Optional[BaseException] = None
        self._closed = False
        self.timeout: Optional[float] = DEFAULT_TIMEOUT

    @classmethod
    async def start(cls, args: Sequence[str] = (), command: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None,
                    incremental: bool = True, max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES,
                    timeout: Optional[float] = DEFAULT_TIMEOUT) -> "AsyncDeltatokClient":
        """`timeout`: seconds a call waits for its answer (None: forever); past it the call raises
        DT_REQUEST_TIMEOUT and is not resent, the client stays usable (a late answer is dropped)."""
        self = cls(incremental, max_conversations, max_bytes)
        cmd = list(command) if command is not None else find_command(environ=env)
        self.command = cmd + ["serve"] + list(args)
        self.timeout = timeout
        try:
            self._proc = await asyncio.create_subprocess_exec(*self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                              env=dict(env) if env is not None else None, limit=_LINE_LIMIT)
        except OSError as e:
            raise DeltatokNotFoundError("cannot run the deltatok command line %r: %s. %s" % (" ".join(cmd), e, NOT_FOUND_HELP), "command") from None
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        return self

    async def _read_loop(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            while True:
                raw = await self._proc.stdout.readline()
                if not raw:
                    raise EOFError("deltatok serve closed its output")
                try:
                    parsed = json.loads(raw)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict) and "id" in parsed and "result" not in parsed and "error" not in parsed:
                    parsed = {"id": parsed["id"], "error": {"code": "DT_BAD_RESPONSE", "message": "deltatok serve answered without a result or an error"}}
                resp = read_answer(parsed, "deltatok serve")
                rid = resp.get("id")
                fut = self._futures.pop(rid, None) if isinstance(rid, int) else None
                if fut is not None and not fut.done():
                    fut.set_result(resp)
        except BaseException as e:  # noqa: BLE001 - every waiter learns the pipe is gone
            self._failure = e
            futures, self._futures = self._futures, {}
            for f in futures.values():
                if not f.done():
                    f.set_exception(e if isinstance(e, DeltatokError) else
                                    DeltatokError("DT_CLOSED", "deltatok serve (%s) exited without answering; its stderr says why" % " ".join(self.command)))

    async def acall(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:
        if self._closed or self._failure is not None or self._proc is None or self._proc.stdin is None:
            raise DeltatokError("DT_CLOSED", "the client is closed" if self._closed else "deltatok serve is not running")
        rid = next(self._ids)
        line = envelope(rid, method, params)
        fut: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self._futures[rid] = fut
        try:
            self._proc.stdin.write(line)
            await asyncio.wait_for(self._proc.stdin.drain(), self.timeout)
            resp = await asyncio.wait_for(asyncio.shield(fut), self.timeout)
        except asyncio.TimeoutError:  # before OSError: from Python 3.11 it is the builtin TimeoutError, an OSError
            self._futures.pop(rid, None)
            raise DeltatokError("DT_REQUEST_TIMEOUT", "no answer from deltatok serve within %ss (stopped or overloaded); the call failed and "
                                "is not resent (its late answer is dropped)" % self.timeout) from None
        except (BrokenPipeError, ConnectionResetError, OSError) as e:
            self._futures.pop(rid, None)
            raise DeltatokError("DT_CLOSED", "deltatok serve is not running: %s" % e)
        return read_result(method, resp)

    async def aclose(self, timeout: float = 30.0) -> int:
        """Closes stdin (deltatok answers what is in flight, then exits) and waits for the process."""
        if self._proc is None:
            return 0
        if not self._closed:
            self._closed = True
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            code = await asyncio.wait_for(self._proc.wait(), timeout)
        except asyncio.TimeoutError:
            self._proc.terminate()
            code = await self._proc.wait()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        return code

    async def __aenter__(self) -> "AsyncDeltatokClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncDeltatokHttpClient(_AsyncBase):
    """`deltatok serve --port N` from asyncio: each call runs the blocking HTTP transport in the
    loop's default executor (the standard library has no asyncio HTTP client). `split_batches`:
    the URL is a router (deploy/nginx): each batch round is split by routing key."""

    def __init__(self, base_url: str, timeout: float = 300.0, token: Optional[str] = None, incremental: bool = True,
                 max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES, split_batches: bool = False):
        super().__init__(incremental, max_conversations, max_bytes, split_batches)
        self._transport = HttpTransport(base_url, token=token, timeout=timeout)

    async def acall(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, self._transport.call, method, params, route)

    async def aclose(self) -> int:
        return self._transport.close()

    async def __aenter__(self) -> "AsyncDeltatokHttpClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncDeltatokTokenizer:
    """transformers' tokenizer methods as coroutines (attributes are the blocking tokenizer's); each
    coroutine has the signature of its DeltatokTokenizer twin and builds the same request."""

    def __init__(self, client: _AsyncBase, sync_view: DeltatokTokenizer, owns_client: bool):
        self.client = client
        self._tok = sync_view
        self._owns = owns_client

    def __getattr__(self, name: str) -> Any:
        # attributes (eos_token, vocab_size, padding_side, ...) and pure helpers of the blocking view
        return getattr(self._tok, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # settings (chat_template, padding_side, ...) go to the blocking view, which the coroutines
        # read them from, so `tok.chat_template = t` means the same on both
        if name in ("client", "_tok", "_owns"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._tok, name, value)

    def __len__(self) -> int:
        return len(self._tok)

    async def _execute(self, req: ChatRequest) -> Any:
        plans = req.plans
        if len(plans) == 1:
            try:
                out: List[Any] = [await self.client.run(plans[0])]
            except DeltatokError as e:
                out = [e]
        else:
            out = await self.client.run_many(plans)
        return req.finish(out)

    async def apply_chat_template(self, conversation: Any, tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                                  add_generation_prompt: bool = False, continue_final_message: Union[bool, str] = False, tokenize: bool = True,
                                  padding: Any = False, truncation: Any = False, max_length: Optional[int] = None, return_tensors: Any = None,
                                  return_dict: Optional[bool] = None, return_assistant_tokens_mask: bool = False,
                                  tokenizer_kwargs: Optional[Dict[str, Any]] = None, **kwargs: Any) -> Any:
        return await self._execute(self._tok.chat_request(conversation, tools, documents, chat_template, add_generation_prompt, continue_final_message,
                                                          tokenize, padding, truncation, max_length, return_tensors, return_dict,
                                                          return_assistant_tokens_mask, tokenizer_kwargs, **kwargs))

    async def encode(self, text: str, text_pair: Optional[str] = None, add_special_tokens: bool = True, padding: Any = False, truncation: Any = None,
                     max_length: Optional[int] = None, stride: int = 0, padding_side: Optional[str] = None, return_tensors: Any = None,
                     **kwargs: Any) -> Any:
        enc = await self.__call__(text, text_pair=text_pair, add_special_tokens=add_special_tokens, padding=padding, truncation=truncation,
                                  max_length=max_length, stride=stride, padding_side=padding_side, return_tensors=return_tensors, **kwargs)
        return enc["input_ids"]

    async def __call__(self, text: Any = None, text_pair: Any = None, text_target: Any = None, text_pair_target: Any = None,
                       add_special_tokens: bool = True, padding: Any = False, truncation: Any = None, max_length: Optional[int] = None,
                       stride: int = 0, is_split_into_words: bool = False, pad_to_multiple_of: Optional[int] = None, padding_side: Optional[str] = None,
                       return_tensors: Any = None, return_token_type_ids: Optional[bool] = None, return_attention_mask: Optional[bool] = None,
                       return_overflowing_tokens: bool = False, return_special_tokens_mask: bool = False, return_offsets_mapping: bool = False,
                       return_length: bool = False, verbose: bool = True, **kwargs: Any) -> BatchEncoding:
        out: BatchEncoding = await self._execute(self._tok.call_request(
            text, text_pair, text_target, text_pair_target, add_special_tokens, padding, truncation, max_length, stride, is_split_into_words,
            pad_to_multiple_of, padding_side, return_tensors, return_token_type_ids, return_attention_mask, return_overflowing_tokens,
            return_special_tokens_mask, return_offsets_mapping, return_length, verbose, **kwargs))
        return out

    async def decode(self, token_ids: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None, **kwargs: Any) -> str:
        return str(await self._execute(self._tok.decode_request([token_ids], skip_special_tokens, clean_up_tokenization_spaces, True)))

    async def batch_decode(self, sequences: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None,
                           **kwargs: Any) -> List[str]:
        out: List[str] = await self._execute(self._tok.batch_decode_request(sequences, skip_special_tokens, clean_up_tokenization_spaces))
        return out

    async def fits(self, conversation: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, add_generation_prompt: bool = True,
                   **kwargs: Any) -> bool:
        """See DeltatokTokenizer.fits."""
        return await self.client.fits(list(conversation), limit, tools, **self._tok.budget_options(add_generation_prompt, kwargs))

    async def trim_to_fit(self, conversation: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, policy: Optional[str] = None,
                          keep_first_user: bool = False, add_generation_prompt: bool = True, **kwargs: Any) -> Dict[str, Any]:
        """See DeltatokTokenizer.trim_to_fit."""
        return await self.client.trim_to_fit(list(conversation), limit, tools, policy=policy, keep_first_user=keep_first_user,
                                             **self._tok.budget_options(add_generation_prompt, kwargs))

    async def osl(self, message: Mapping[str, Any], chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                  parse_tool_arguments: Optional[bool] = None, chat_template: Optional[str] = None) -> int:
        """OSL of an assistant message (see DeltatokTokenizer.osl)."""
        template, kw, pta = self._tok.template_options(chat_template_kwargs, parse_tool_arguments, chat_template)
        return await self.client.count_message(dict(message), template, kw, pta)

    async def text_counter(self, max_look_back: Optional[int] = None) -> AsyncTextCounter:
        """An AsyncTextCounter (see DeltatokTokenizer.text_counter)."""
        return await self.client.text_counter(max_look_back)

    async def message_counter(self, chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: Optional[bool] = None,
                              chat_template: Optional[str] = None, max_look_back: Optional[int] = None) -> AsyncMessageCounter:
        """An AsyncMessageCounter (see DeltatokTokenizer.message_counter)."""
        template, kw, pta = self._tok.template_options(chat_template_kwargs, parse_tool_arguments, chat_template)
        return await self.client.message_counter(template, kw, pta, max_look_back)

    async def tokenize_rollout(self, conversation: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None,
                               chat_template: Optional[str] = None, parse_tool_arguments: Optional[bool] = None, **kwargs: Any) -> Dict[str, Any]:
        """See DeltatokTokenizer.tokenize_rollout."""
        return await self.client.tokenize_rollout(**self._tok.rollout_arguments(conversation, tools, documents, chat_template, parse_tool_arguments,
                                                                                 kwargs))

    async def stats(self) -> Dict[str, Any]:
        return await self.client.stats()

    async def aclose(self) -> int:
        return await self.client.aclose() if self._owns else 0

    async def __aenter__(self) -> "AsyncDeltatokTokenizer":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncAutoTokenizer:
    """`await AsyncAutoTokenizer.from_pretrained(name_or_path, **options)`: options as AutoTokenizer's."""

    @classmethod
    async def from_pretrained(cls, pretrained_model_name_or_path: Any, *init_inputs: Any, **kwargs: Any) -> AsyncDeltatokTokenizer:
        dt, overrides, env_add = split_options(pretrained_model_name_or_path, init_inputs, kwargs)
        owns = True
        client: _AsyncBase
        if dt.get("client") is not None:
            client, owns = dt["client"], False
        elif dt.get("url"):
            client = AsyncDeltatokHttpClient(dt["url"], timeout=dt.get("timeout", 300.0), token=dt.get("server_token"),
                                             incremental=dt.get("incremental", True),
                                             max_conversations=dt.get("max_conversations", DEFAULT_MAX_CONVERSATIONS),
                                             max_bytes=dt.get("max_bytes", DEFAULT_MAX_BYTES), split_batches=bool(dt.get("split_batches", False)))
        else:
            env = dt.get("env")
            if env_add:
                env = dict(os.environ if env is None else env, **env_add)
            client = await AsyncDeltatokClient.start(sidecar_args(os.fspath(pretrained_model_name_or_path), dt), command=dt.get("command"), env=env,
                                                     incremental=dt.get("incremental", True),
                                                     max_conversations=dt.get("max_conversations", DEFAULT_MAX_CONVERSATIONS),
                                                     max_bytes=dt.get("max_bytes", DEFAULT_MAX_BYTES), timeout=dt.get("timeout", DEFAULT_TIMEOUT))
        try:
            info = await client.tokenizer_info()
            tokens = await client.vocab()
        except BaseException:
            if owns:
                await client.aclose()
            raise
        # the blocking view shapes requests and holds the attributes; its plans use the async client's prefix table
        view = DeltatokTokenizer(_PlanClient(client.prefixes, tokens), info, overrides, dt.get("chat_template_kwargs"),
                                 bool(dt.get("parse_tool_arguments", False)), owns_client=False)
        return AsyncDeltatokTokenizer(client, view, owns)


class _PlanClient:
    """The blocking view's client (a `TokenizerClient`): the asyncio client's prefix table and the
    vocabulary (already fetched) for building plans; everything that would send is refused (the
    asyncio tokenizer runs the plans itself)."""

    def __init__(self, prefixes: Optional[PrefixTable], tokens: List[Optional[str]]):
        self.prefixes = prefixes
        self._tokens = tokens

    def vocab(self) -> List[Optional[str]]:
        return self._tokens

    @staticmethod
    def _refuse() -> DeltatokError:
        return DeltatokError("DT_INTERNAL", "use the awaitable methods of AsyncDeltatokTokenizer")

    def call(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:
        raise self._refuse()

    def run(self, plan: PlanGen) -> Any:
        raise self._refuse()

    def run_many(self, plans: List[PlanGen]) -> List[Outcome]:
        raise self._refuse()

    def fits(self, messages: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, **options: Any) -> bool:
        raise self._refuse()

    def trim_to_fit(self, messages: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, policy: Optional[str] = None,
                    keep_first_user: bool = False, **options: Any) -> Dict[str, Any]:
        raise self._refuse()

    def count_message(self, message: Mapping[str, Any], chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                      parse_tool_arguments: bool = False) -> int:
        raise self._refuse()

    def text_counter(self, max_look_back: Optional[int] = None) -> TextCounter:
        raise self._refuse()

    def message_counter(self, chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                        parse_tool_arguments: bool = False, max_look_back: Optional[int] = None) -> MessageCounter:
        raise self._refuse()

    def tokenize_rollout(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                         chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: bool = False) -> Dict[str, Any]:
        raise self._refuse()

    def stats(self) -> Dict[str, Any]:
        raise self._refuse()

    def spec(self) -> Dict[str, Any]:
        raise self._refuse()

    def restorer(self) -> Callable[[str, Dict[str, Any], Dict[str, Any]], Any]:
        raise self._refuse()

    def close(self) -> int:
        return 0
