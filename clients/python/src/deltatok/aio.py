"""asyncio variants: the same methods as awaitables, one sidecar shared by any number of tasks.

    from deltatok.aio import AsyncAutoTokenizer
    tok = await AsyncAutoTokenizer.from_pretrained("qwen3")
    ids = await tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True)
    counts = await asyncio.gather(*(tok.apply_chat_template(c) for c in conversations))
    await tok.aclose()

Over stdio the requests of all tasks share one pipe (a reader task hands each answer to its
future by id); over HTTP each call runs the blocking client in the loop's default executor.
Results are exactly the blocking client's: the same plans run (deltatok._ops), with the same
prefix table.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._discovery import find_command
from ._errors import DeltatokError, error_from_record
from ._ops import PlanGen, arun, arun_many, simple_plan
from ._prefix import DEFAULT_MAX_BYTES, DEFAULT_MAX_CONVERSATIONS, PrefixTable, route_of
from ._tokenizer import DeltatokTokenizer, engine_args, split_options
from ._errors import NOT_FOUND_HELP, DeltatokNotFoundError
from ._stream import message_counter_params
from ._transport import DEFAULT_TIMEOUT, HttpTransport, _answer, _envelope

__all__ = ["AsyncDeltatokClient", "AsyncDeltatokHttpClient", "AsyncAutoTokenizer", "AsyncDeltatokTokenizer"]

_LINE_LIMIT = 512 * 1024 * 1024


class _AsyncBase:
    """The sidecar methods as coroutines over an `acall(method, params, route)`."""

    prefixes: Optional[PrefixTable]
    #: Split batches by routing key (HTTP behind a router; see _ops).
    split_batches = False

    async def acall(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    async def run(self, plan: PlanGen) -> Any:
        return await arun(self.acall, plan)

    async def run_many(self, plans: List[PlanGen]) -> List[Any]:
        return await arun_many(self.acall, plans, self.split_batches)

    def _plan(self, method: str, messages: Sequence[Any], tools: Any, **options: Any) -> PlanGen:
        from ._client import prompt_options
        from ._ops import prompt_plan
        return prompt_plan(self.prefixes, method, messages, tools, prompt_options(**options), method == "encode_prompt")

    async def count_prompt(self, messages: Sequence[dict], tools: Any = None, **options: Any) -> int:
        return (await self.run(self._plan("count_prompt", messages, tools, **options)))["count"]

    async def encode_prompt(self, messages: Sequence[dict], tools: Any = None, **options: Any) -> List[int]:
        return (await self.run(self._plan("encode_prompt", messages, tools, **options)))["ids"]

    async def tokenize_trajectory(self, messages: Sequence[dict], tools: Any = None, **options: Any) -> Dict[str, Any]:
        return await self.run(self._plan("tokenize_trajectory", messages, tools, **options))

    async def tokenize_rollout(self, messages: Sequence[dict], tools: Any = None, **options: Any) -> Dict[str, Any]:
        from ._client import rollout_params
        return await self.acall("tokenize_rollout", rollout_params(messages, tools, **options), route_of(messages, tools))

    async def count_message(self, message: dict, **options: Any) -> int:
        p: Dict[str, Any] = {"message": message}
        p.update({k: v for k, v in options.items() if v is not None and v is not False})
        return (await self.acall("count_message", p))["count"]

    async def count_text(self, text: str) -> int:
        return (await self.acall("count_text", {"text": text}))["count"]

    async def text_counter(self, max_look_back: Optional[int] = None) -> Any:
        """An AsyncTextCounter: ``await c.append(chunk)`` returns count_text of everything so far."""
        from ._stream import AsyncTextCounter, text_counter_params
        return AsyncTextCounter(self.acall, (await self.acall("text_counter_open", text_counter_params(max_look_back)))["handle"])

    async def message_counter(self, **options: Any) -> Any:
        """An AsyncMessageCounter (options as message_counter's): ``await c.append(delta)``."""
        from ._stream import AsyncMessageCounter, message_counter_params
        return AsyncMessageCounter(self.acall, (await self.acall("message_counter_open", message_counter_params(**options)))["handle"])

    async def encode_text(self, text: str, add_special_tokens: bool = False) -> List[int]:
        return (await self.acall("encode_text", {"text": text, "add_special_tokens": add_special_tokens}))["ids"]

    async def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return (await self.acall("decode", {"ids": list(ids), "skip_special_tokens": skip_special_tokens}))["text"]

    async def tokenizer_info(self) -> Dict[str, Any]:
        return await self.acall("tokenizer_info", {})

    async def vocab(self) -> List[Optional[str]]:
        return (await self.acall("vocab", {}))["tokens"]

    async def batch(self, requests: Sequence[Dict[str, Any]]) -> List[Any]:
        return await arun_many(self.acall, [simple_plan(r["method"], r.get("params", {})) for r in requests])

    async def stats(self) -> Dict[str, Any]:
        s = dict(await self.acall("stats", {}))
        s["client"] = self.prefixes.stats() if self.prefixes is not None else {}
        return s

    async def health(self) -> Dict[str, Any]:
        return await self.acall("health", {})


class AsyncDeltatokClient(_AsyncBase):
    """`deltatok serve` as an asyncio child process; create it with `await AsyncDeltatokClient.start(args)`."""

    def __init__(self) -> None:
        self._proc: Optional[asyncio.subprocess.Process] = None
        self._futures: Dict[int, "asyncio.Future[Dict[str, Any]]"] = {}
        self._ids = itertools.count(1)
        self._reader: Optional["asyncio.Task[None]"] = None
        self._failure: Optional[BaseException] = None
        self._closed = False
        self.prefixes = None
        self.timeout: Optional[float] = DEFAULT_TIMEOUT

    @classmethod
    async def start(cls, args: Sequence[str] = (), command: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None,
                    incremental: bool = True, max_conversations: int = DEFAULT_MAX_CONVERSATIONS, max_bytes: int = DEFAULT_MAX_BYTES,
                    timeout: Optional[float] = DEFAULT_TIMEOUT) -> "AsyncDeltatokClient":
        """`timeout`: seconds a call waits for its answer (None: forever); past it the call raises
        DT_REQUEST_TIMEOUT and is not resent, the client stays usable (a late answer is dropped)."""
        self = cls()
        cmd = list(command) if command is not None else find_command(environ=env)
        self.command = cmd + ["serve"] + list(args)
        self.timeout = timeout
        self.prefixes = PrefixTable(max_conversations, max_bytes) if incremental else None
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
                resp = _answer(parsed, "deltatok serve")
                fut = self._futures.pop(resp.get("id"), None)
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
        line = _envelope(rid, method, params)
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
        if "error" in resp:
            raise error_from_record(resp["error"])
        return resp.get("result")

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
        self._transport = HttpTransport(base_url, token=token, timeout=timeout)
        self.prefixes = PrefixTable(max_conversations, max_bytes) if incremental else None
        self.split_batches = split_batches

    async def acall(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, self._transport.call, method, params, route)

    async def aclose(self) -> int:
        return self._transport.close()

    async def __aenter__(self) -> "AsyncDeltatokHttpClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncDeltatokTokenizer:
    """transformers' tokenizer methods as coroutines (attributes are the blocking tokenizer's)."""

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

    async def _execute(self, plans: List[PlanGen]) -> List[Any]:
        if len(plans) == 1:
            try:
                return [await self.client.run(plans[0])]
            except DeltatokError as e:
                return [e]
        return await self.client.run_many(plans)

    async def apply_chat_template(self, conversation: Any, tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                                  add_generation_prompt: bool = False, continue_final_message: Any = False, tokenize: bool = True,
                                  padding: Any = False, truncation: Any = False, max_length: Optional[int] = None, return_tensors: Any = None,
                                  return_dict: Optional[bool] = None, return_assistant_tokens_mask: bool = False,
                                  tokenizer_kwargs: Optional[Dict[str, Any]] = None, **kwargs: Any) -> Any:
        req = self._tok.chat_request(conversation, tools, documents, chat_template, add_generation_prompt, continue_final_message, tokenize,
                                     padding, truncation, max_length, return_tensors, return_dict, return_assistant_tokens_mask,
                                     tokenizer_kwargs, **kwargs)
        return req.finish(await self._execute(req.plans))

    async def encode(self, text: str, add_special_tokens: bool = True, **kwargs: Any) -> Any:
        req = self._tok.text_request(text, add_special_tokens=add_special_tokens, **kwargs)
        return req.finish(await self._execute(req.plans))["input_ids"]

    async def __call__(self, text: Any = None, **kwargs: Any) -> Any:
        req = self._tok.text_request(text, **kwargs)
        return req.finish(await self._execute(req.plans))

    async def decode(self, token_ids: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None, **kwargs: Any) -> str:
        req = self._tok.decode_request([token_ids], skip_special_tokens, clean_up_tokenization_spaces, True)
        return req.finish(await self._execute(req.plans))

    async def batch_decode(self, sequences: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None,
                           **kwargs: Any) -> List[str]:
        req = self._tok.decode_request(list(sequences), skip_special_tokens, clean_up_tokenization_spaces, False)
        return req.finish(await self._execute(req.plans))

    async def text_counter(self, max_look_back: Optional[int] = None) -> Any:
        """An AsyncTextCounter (see DeltatokTokenizer.text_counter)."""
        return await self.client.text_counter(max_look_back)

    async def message_counter(self, chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: Optional[bool] = None,
                              chat_template: Optional[str] = None, max_look_back: Optional[int] = None) -> Any:
        """An AsyncMessageCounter (see DeltatokTokenizer.message_counter): the same arguments, the
        tokenizer's chat_template override included."""
        kw = self._tok._template_kwargs(chat_template_kwargs or {})
        pta = self._tok._parse_tool_arguments if parse_tool_arguments is None else parse_tool_arguments
        template = chat_template if chat_template is not None else self._tok._template_override
        return await self.client.message_counter(chat_template=template, chat_template_kwargs=kw, parse_tool_arguments=bool(pta),
                                                 max_look_back=max_look_back)

    async def osl(self, message: Mapping[str, Any], chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                  parse_tool_arguments: Optional[bool] = None, chat_template: Optional[str] = None) -> int:
        """OSL of an assistant message (see DeltatokTokenizer.osl): the same arguments, the
        tokenizer's chat_template override included."""
        kw = self._tok._template_kwargs(chat_template_kwargs or {})
        pta = self._tok._parse_tool_arguments if parse_tool_arguments is None else parse_tool_arguments
        template = chat_template if chat_template is not None else self._tok._template_override
        p = message_counter_params(template, kw, bool(pta))
        p["message"] = dict(message)
        return (await self.client.acall("count_message", p))["count"]

    async def stats(self) -> Dict[str, Any]:
        return await self.client.stats()

    async def aclose(self) -> int:
        return await self.client.aclose() if self._owns else 0  # type: ignore[attr-defined]

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
            client = await AsyncDeltatokClient.start(engine_args(os.fspath(pretrained_model_name_or_path), dt), command=dt.get("command"), env=env,
                                                     incremental=dt.get("incremental", True),
                                                     max_conversations=dt.get("max_conversations", DEFAULT_MAX_CONVERSATIONS),
                                                     max_bytes=dt.get("max_bytes", DEFAULT_MAX_BYTES), timeout=dt.get("timeout", DEFAULT_TIMEOUT))
        try:
            info = await client.tokenizer_info()
            tokens = await client.vocab()
        except BaseException:
            if owns:
                await client.aclose()  # type: ignore[attr-defined]
            raise
        # the blocking view shapes requests and holds the attributes; its plans use the async client's prefix table
        view = DeltatokTokenizer(_PlanClient(client, tokens), info, overrides, dt.get("chat_template_kwargs"),  # type: ignore[arg-type]
                                 bool(dt.get("parse_tool_arguments", False)), owns_client=False)
        return AsyncDeltatokTokenizer(client, view, owns)


class _PlanClient:
    """What the blocking view needs from a client while only building plans: the prefix table
    and the vocabulary (already fetched)."""

    def __init__(self, client: _AsyncBase, tokens: List[Optional[str]]):
        self._client = client
        self._tokens = tokens

    @property
    def prefixes(self) -> Optional[PrefixTable]:
        return self._client.prefixes

    def vocab(self) -> List[Optional[str]]:
        return self._tokens

    def run(self, plan: PlanGen) -> Any:
        raise DeltatokError("DT_INTERNAL", "use the awaitable methods of AsyncDeltatokTokenizer")

    def close(self) -> int:
        return 0
