"""`DeltatokTokenizer`: a drop-in for transformers' tokenizer where harnesses use it —
apply_chat_template first of all — answered by deltatok, incremental without asking. Made by
`AutoTokenizer.from_pretrained` (_client) over a blocking client, or by deltatok.aio as the view
its asyncio tokenizer reads attributes from and builds plans with; each call's requests are built
here as plans (`chat_request`, `call_request`, `decode_request`, …) and run on the client given
(any `TokenizerClient`), so this module sends nothing itself.

Signatures, defaults and return types are those of the transformers the user has (_compat:
its major version decides the defaults, DELTATOK_TRANSFORMERS_COMPAT=4|5 overrides, 5 without
it); with transformers installed, results are its own BatchEncoding and the tokenizer passes
isinstance(tok, PreTrainedTokenizerBase). What deltatok does not do raises DT_UNSUPPORTED_CALL:
text pairs, offsets, tensor types other than 'np' and 'pt', padding/truncation strategies other
than transformers' single-sequence ones.
"""
from __future__ import annotations

import os
import threading
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

from ._compat import bpe_cleanup_skipped, compat_major, json_schema_builder, transformers_types
from ._dropin import BackendTokenizer, plain_conversation, tokenizer_class
from ._errors import DeltatokError, DeltatokInputError, DeltatokTypeError, DeltatokUnsupportedError
from ._ops import PlanGen, prompt_plan, simple_plan
from ._ops import Outcome
from ._prefix import PrefixTable
from ._stream import MessageCounter, TextCounter
from ._wire import DEFAULT_TIMEOUT, prompt_options
from ._shape import (AddedToken, BatchEncoding, VERY_LARGE_INTEGER, batch_encoding, chat_flags, mask_from_ranges,
                     shape_encodings, split_conversations, to_id_list, to_tensor)

__all__ = ["DeltatokTokenizer", "ChatRequest", "TokenizerClient", "sidecar_args", "split_options"]

SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

#: from_pretrained options of deltatok itself (the rest are transformers' and are checked).
DELTATOK_OPTIONS = ("date", "pattern", "workers", "cache_mb", "max_prompt_chars", "renderer", "serve_args", "command", "env", "url", "server_token",
                    "timeout", "incremental", "max_conversations", "max_bytes", "split_batches", "client", "chat_template_kwargs", "parse_tool_arguments",
                    "_whole_args")
#: transformers options that change nothing here (nothing is downloaded, no remote code runs).
_ACCEPTED = ("trust_remote_code", "local_files_only", "token", "use_auth_token", "_from_auto", "_commit_hash", "resume_download",
             "proxies", "legacy", "use_fast")
_SETTABLE = ("padding_side", "truncation_side", "model_max_length", "chat_template", "clean_up_tokenization_spaces", "model_input_names") + SPECIAL_NAMES


_schemas: Dict[Any, Dict[str, Any]] = {}


def _schema_of(fn: Callable[..., Any]) -> Dict[str, Any]:
    """transformers' get_json_schema(fn) (kept per function: it reads the signature and docstring)."""
    got = _schemas.get(fn)
    if got is None:
        try:
            got = json_schema_builder()(fn)
        except DeltatokError:
            raise
        except Exception as e:  # noqa: BLE001 - transformers' TypeHint/DocstringParsingException
            raise DeltatokInputError("DT_INVALID_TOOLS", "get_json_schema(%s) failed: %s" % (getattr(fn, "__name__", fn), e), "tools") from e
        if len(_schemas) >= 1024:
            _schemas.clear()
        _schemas[fn] = got
    return got


def _check_tools(tools: Any) -> Any:
    """The tools as sent: the caller's own list when it is one of dicts (so the prefix table sees
    the same object turn after turn and skips fingerprinting it before sending), else a list;
    a Python function becomes its schema as transformers' get_json_schema builds it."""
    if tools is None:
        return None
    functions = False
    for t in tools:
        if not isinstance(t, dict):
            if callable(t):
                functions = True
                continue
            raise DeltatokInputError("DT_INVALID_TOOLS", "Tools should either be a JSON schema, or a callable function with type hints and a docstring", "tools")
    if functions:
        return [t if isinstance(t, dict) else _schema_of(t) for t in tools]
    return tools if type(tools) is list else list(tools)


def _check_documents(documents: Any) -> Any:
    if documents is not None:
        for d in documents:
            if not isinstance(d, dict):
                raise DeltatokTypeError("Documents should be a list of dicts with 'title' and 'text' keys!")
    return documents


class TokenizerClient(Protocol):
    """What a tokenizer needs of its client: the blocking one (_client.ClientBase), or the view
    the asyncio tokenizer builds its plans with (aio)."""

    prefixes: Optional[PrefixTable]

    def call(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any: ...

    def run(self, plan: PlanGen) -> Any: ...

    def run_many(self, plans: List[PlanGen]) -> List[Outcome]: ...

    def vocab(self) -> List[Optional[str]]: ...

    def fits(self, messages: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, **options: Any) -> bool: ...

    def trim_to_fit(self, messages: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, policy: Optional[str] = None,
                    keep_first_user: bool = False, **options: Any) -> Dict[str, Any]: ...

    def count_message(self, message: Mapping[str, Any], chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                      parse_tool_arguments: bool = False) -> int: ...

    def text_counter(self, max_look_back: Optional[int] = None) -> TextCounter: ...

    def message_counter(self, chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                        parse_tool_arguments: bool = False, max_look_back: Optional[int] = None) -> MessageCounter: ...

    def tokenize_rollout(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                         chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: bool = False) -> Dict[str, Any]: ...

    def stats(self) -> Dict[str, Any]: ...

    def spec(self) -> Dict[str, Any]: ...

    def restorer(self) -> Callable[[str, Dict[str, Any], Dict[str, Any]], Any]: ...

    def close(self) -> int: ...


class ChatRequest:
    """One apply_chat_template call made into plans (one per conversation) and how to finish it."""

    def __init__(self, plans: List[PlanGen], finish: Callable[[List[Any]], Any]):
        self.plans = plans
        self._finish = finish

    def finish(self, outcomes: List[Any]) -> Any:
        for o in outcomes:
            if isinstance(o, BaseException):
                raise o
        return self._finish(outcomes)


class DeltatokTokenizer:
    """A tokenizer answered by a deltatok sidecar, with transformers' methods and attributes."""

    is_fast = True

    def __init__(self, client: "TokenizerClient", info: Dict[str, Any], overrides: Optional[Mapping[str, Any]] = None,
                 chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: bool = False, owns_client: bool = True):
        self.client = client
        self._owns_client = owns_client
        self._info = info
        self.name_or_path: str = info.get("name_or_path", "")
        self.vocab_size: int = info["vocab_size"]
        self._len: int = info["length"]
        self.model_max_length: int = int(info["model_max_length"]) if info["model_max_length"] < VERY_LARGE_INTEGER else VERY_LARGE_INTEGER
        self.padding_side: str = info.get("padding_side", "right")
        self.truncation_side: str = info.get("truncation_side", "right")
        self.clean_up_tokenization_spaces: bool = bool(info.get("clean_up_tokenization_spaces", False))
        self.model_input_names: List[str] = list(info.get("model_input_names", ["input_ids", "attention_mask"]))
        sources: Dict[str, str] = dict(info.get("chat_template_sources", {}))
        self._template_override: Optional[str] = None
        self.chat_template: Union[None, str, Dict[str, str]] = (sources.get("default") if set(sources) <= {"default"} else sources) or None
        self._specials: Dict[str, Any] = dict(info.get("special_tokens_map", {}))
        self._special_ids: Dict[str, Optional[int]] = dict(info.get("special_token_ids", {}))
        self._overridden: Dict[str, Optional[str]] = {}
        self.added_tokens_decoder: Dict[int, AddedToken] = {
            int(k): AddedToken(**{f: v[f] for f in AddedToken.__slots__ if f in v}) for k, v in info.get("added_tokens_decoder", {}).items()}
        self._all_special_ids: List[int] = list(info.get("all_special_ids", []))
        self._default_kwargs = dict(chat_template_kwargs or {})
        self._parse_tool_arguments = parse_tool_arguments
        self._vocab: Optional[List[Optional[str]]] = None
        self._vocab_ids: Optional[Dict[str, int]] = None
        self._vocab_lock = threading.Lock()
        for k, v in (overrides or {}).items():
            setattr(self, k, v)

    # ---- special tokens ----------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        if name in SPECIAL_NAMES and "_specials" in self.__dict__:
            if value is not None and not isinstance(value, (str, AddedToken)):
                raise DeltatokTypeError("%s must be a string" % name)
            s = None if value is None else str(value)
            self._overridden[name] = s
            if s is None:
                self._specials.pop(name, None)
                self._special_ids[name] = None
            else:
                self._specials[name] = s
                self._special_ids[name] = self._token_id(s)
            return
        if name == "chat_template" and "_template_override" in self.__dict__ and "chat_template" in self.__dict__:
            object.__setattr__(self, "_template_override", value if isinstance(value, str) else None)
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # bos_token, eos_token_id, ... (only reached when no attribute of that name exists)
        specials = self.__dict__.get("_specials")
        if specials is None:
            raise AttributeError(name)
        if name in SPECIAL_NAMES:
            return specials.get(name)
        if name.endswith("_id") and name[:-3] in SPECIAL_NAMES:
            return self.__dict__["_special_ids"].get(name[:-3])
        raise AttributeError("%s has no attribute %r" % (type(self).__name__, name))

    def _token_id(self, token: str) -> Optional[int]:
        return self.vocabulary_ids().get(token)

    @property
    def additional_special_tokens(self) -> List[str]:
        v = self._specials.get("additional_special_tokens")
        return list(v) if isinstance(v, list) else []

    @property
    def additional_special_tokens_ids(self) -> List[Optional[int]]:
        return [self._token_id(t) for t in self.additional_special_tokens]

    @property
    def special_tokens_map(self) -> Dict[str, Any]:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self._specials.items() if k in SPECIAL_NAMES or k == "additional_special_tokens"}

    @property
    def all_special_tokens(self) -> List[str]:
        seen: List[str] = []
        for k, v in self.special_tokens_map.items():
            for t in (v if isinstance(v, list) else [v]):
                if isinstance(t, str) and t not in seen:
                    seen.append(t)
        return seen

    @property
    def all_special_ids(self) -> List[int]:
        ids = [self._token_id(t) for t in self.all_special_tokens]
        return [i for i in ids if i is not None]

    @property
    def added_tokens_encoder(self) -> Dict[str, int]:
        return {t.content: i for i, t in sorted(self.added_tokens_decoder.items())}

    def __len__(self) -> int:
        return self._len

    def __repr__(self) -> str:
        return "DeltatokTokenizer(name_or_path=%r, vocab_size=%d, model_max_length=%d, padding_side=%r, special_tokens=%r)" % (
            self.name_or_path, self.vocab_size, self.model_max_length, self.padding_side, self.special_tokens_map)

    # ---- vocabulary --------------------------------------------------------------------------

    def special_ids(self) -> List[int]:
        """The ids of the special tokens as the server listed them (tokenizer_info)."""
        return list(self._all_special_ids)

    def vocabulary(self) -> List[Optional[str]]:
        """Every token by id (None where no token has the id), fetched once."""
        with self._vocab_lock:
            if self._vocab is None:
                self._vocab = self.client.vocab()
            return self._vocab

    def vocabulary_ids(self) -> Dict[str, int]:
        """Token -> id, added tokens winning (as in the Rust tokenizer), made once."""
        tokens = self.vocabulary()
        with self._vocab_lock:
            if self._vocab_ids is None:
                ids: Dict[str, int] = {}
                for i, t in enumerate(tokens):
                    if t is not None and t not in ids:
                        ids[t] = i
                # added tokens win, as in the Rust tokenizer
                for i, a in self.added_tokens_decoder.items():
                    ids[a.content] = i
                self._vocab_ids = ids
            return self._vocab_ids

    def get_vocab(self) -> Dict[str, int]:
        return dict(self.vocabulary_ids())

    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = False) -> Any:
        ids = to_id_list(ids)
        tokens = self.vocabulary()
        if isinstance(ids, int):
            return tokens[ids] if 0 <= ids < len(tokens) else None
        special = set(self._all_special_ids) if skip_special_tokens else ()
        return [tokens[i] if 0 <= i < len(tokens) else None for i in ids if i not in special]

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        vocab = self.vocabulary_ids()
        unk = self.unk_token_id
        if isinstance(tokens, str):
            return vocab.get(tokens, unk)
        return [vocab.get(t, unk) for t in tokens]

    def convert_tokens_to_string(self, tokens: Sequence[str]) -> str:
        """The tokenizer's decoder over tokens, as transformers' fast tokenizers answer it; a token
        the vocabulary does not hold is DT_UNSUPPORTED_CALL (the decoder runs on the server's ids)."""
        vocab = self.vocabulary_ids()
        ids = []
        for i, t in enumerate(tokens):
            got = vocab.get(t)
            if got is None:
                raise DeltatokUnsupportedError("convert_tokens_to_string: token %d (%r) is not in the vocabulary" % (i, t), "tokens[%d]" % i)
            ids.append(got)
        return self.backend_tokenizer.decode(ids, skip_special_tokens=False)

    @property
    def backend_tokenizer(self) -> BackendTokenizer:
        """The Rust `tokenizers.Tokenizer` methods harnesses call (encode, encode_batch,
        encode_batch_fast, decode, decode_batch, get_vocab_size, token_to_id, id_to_token), batches
        answered on every sidecar worker in one round trip."""
        b = self.__dict__.get("_backend")
        if b is None:
            b = BackendTokenizer(self)
            object.__setattr__(self, "_backend", b)
        return b

    _tokenizer = backend_tokenizer

    def __reduce__(self) -> Any:
        """Pickles what makes the tokenizer, not its connection: unpickling starts (or connects
        to) a sidecar where it happens, with the same options and attributes."""
        attrs = {k: getattr(self, k) for k in ("padding_side", "truncation_side", "model_max_length", "clean_up_tokenization_spaces", "model_input_names")}
        if self._template_override is not None:
            attrs["chat_template"] = self._template_override
        attrs.update(self._overridden)
        return (self.client.restorer(), (self.name_or_path, self.__dict__.get("_spec") or self.client.spec(), attrs))

    def tokenize(self, text: str, pair: Optional[str] = None, add_special_tokens: bool = False, **kwargs: Any) -> List[str]:
        if pair is not None:
            raise DeltatokUnsupportedError("deltatok does not tokenize text pairs")
        tokens: List[str] = self.convert_ids_to_tokens(self.encode(text, add_special_tokens=add_special_tokens))
        return tokens

    # ---- chat templates ----------------------------------------------------------------------

    def _template_kwargs(self, kwargs: Mapping[str, Any]) -> Dict[str, Any]:
        out = {k: v for k, v in self._overridden.items() if v is not None}
        out.update(self._default_kwargs)
        out.update(kwargs)
        return out

    def chat_request(self, conversation: Any, tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                     add_generation_prompt: bool = False, continue_final_message: Union[bool, str] = False, tokenize: bool = True,
                     padding: Any = False, truncation: Any = False, max_length: Optional[int] = None, return_tensors: Any = None,
                     return_dict: Optional[bool] = None, return_assistant_tokens_mask: bool = False,
                     tokenizer_kwargs: Optional[Dict[str, Any]] = None, **kwargs: Any) -> ChatRequest:
        """apply_chat_template's work as plans (the blocking and asyncio tokenizers run them).
        `return_dict=None` is the default of the transformers imitated (5: True; 4: False)."""
        if compat_major() >= 5:
            if return_dict is None:
                return_dict = True
            if not tokenize:
                return_dict = False  # transformers 5: dicts come from tokenizing only
            if return_assistant_tokens_mask and not (return_dict and tokenize):
                raise DeltatokInputError("DT_INVALID_OPTION", "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`",
                                         "return_assistant_tokens_mask")
        else:
            return_dict = bool(return_dict)
            if return_dict and not tokenize:
                raise DeltatokInputError("DT_INVALID_OPTION", "`return_dict=True` is incompatible with `tokenize=False`, because there is no dict of "
                                         "tokenizer outputs to return.", "return_dict")
            if return_assistant_tokens_mask and not return_dict:
                raise DeltatokInputError("DT_INVALID_OPTION", "`return_assistant_tokens_mask=True` is incompatible with `return_dict=False`",
                                         "return_assistant_tokens_mask")
        if isinstance(conversation, (list, tuple)) and len(conversation) == 0:
            raise DeltatokInputError("DT_INVALID_MESSAGES", "Cannot apply chat template to an empty conversation. Provide at least one message.",
                                     "conversation")
        if continue_final_message:
            if add_generation_prompt:
                raise DeltatokInputError("DT_INVALID_OPTION", "continue_final_message and add_generation_prompt are not compatible. Use "
                                         "continue_final_message when you want the model to continue the final message, and add_generation_prompt "
                                         "when you want to add a header that will prompt it to start a new assistant message instead.",
                                         "continue_final_message")
            if return_assistant_tokens_mask:
                raise DeltatokInputError("DT_INVALID_OPTION", "continue_final_message is not compatible with return_assistant_tokens_mask.",
                                         "continue_final_message")
        conversations, batched = split_conversations(conversation)
        conversations = [plain_conversation(c) for c in conversations]
        tools = _check_tools(tools)
        documents = _check_documents(documents)
        template = chat_template if chat_template is not None else self._template_override
        extra = prompt_options(documents, template, self._template_kwargs(kwargs), add_generation_prompt, self._parse_tool_arguments,
                               continue_final_message)
        if not tokenize:
            plans = []
            for c in conversations:
                p = dict(extra)
                p["messages"] = list(c)
                if tools is not None:
                    p["tools"] = tools
                plans.append(simple_plan("render_prompt", p))
            return ChatRequest(plans, lambda out: [o["text"] for o in out] if batched else out[0]["text"])
        plain = (not return_dict and return_tensors is None and tokenizer_kwargs is None and padding in (False, None, "do_not_pad")
                 and truncation in (False, None, "do_not_truncate"))
        flags = None if plain else chat_flags(self, padding, truncation, max_length, return_tensors, tokenizer_kwargs)
        method = "tokenize_trajectory" if return_assistant_tokens_mask else "encode_prompt"
        table = self.client.prefixes
        plans = [prompt_plan(table, method, c, tools, extra, method == "encode_prompt") for c in conversations]

        def finish(out: List[Any]) -> Any:
            if flags is None:  # plain
                # the common case: the ids as they came (each answer's list is the caller's own)
                return [o["ids"] for o in out] if batched else out[0]["ids"]
            rows = [o["ids"] for o in out]
            masks: Optional[List[List[int]]] = None
            if return_assistant_tokens_mask:
                masks = []
                for o, r in zip(out, rows):
                    if o.get("mask_source") == "generation":
                        masks.append(mask_from_ranges(len(r), o.get("assistant_mask", [])))
                    else:
                        warnings.warn("return_assistant_tokens_mask==True but chat template does not contain `{% generation %}` keyword.")
                        masks.append([0] * len(r))
            data = shape_encodings(rows, masks, flags, batched, self.model_input_names)
            if return_dict:
                return batch_encoding(data, return_tensors, not batched)
            ids = data["input_ids"]
            return to_tensor(ids if batched else [ids], return_tensors) if return_tensors is not None else ids

        return ChatRequest(plans, finish)

    def apply_chat_template(self, conversation: Any, tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                            add_generation_prompt: bool = False, continue_final_message: Union[bool, str] = False, tokenize: bool = True,
                            padding: Any = False, truncation: Any = False, max_length: Optional[int] = None, return_tensors: Any = None,
                            return_dict: Optional[bool] = None, return_assistant_tokens_mask: bool = False,
                            tokenizer_kwargs: Optional[Dict[str, Any]] = None, **kwargs: Any) -> Any:
        """transformers' apply_chat_template: a BatchEncoding (input_ids, attention_mask,
        assistant_masks) — transformers 5's default — or with return_dict=False token ids (a list;
        transformers 4's default), the text with tokenize=False; a batch of conversations gives
        lists. `**kwargs` reach the template as variables. Only the messages the
        server has not seen cross the wire (the client recognises a conversation it sent before)."""
        req = self.chat_request(conversation, tools, documents, chat_template, add_generation_prompt, continue_final_message, tokenize,
                                padding, truncation, max_length, return_tensors, return_dict, return_assistant_tokens_mask, tokenizer_kwargs,
                                **kwargs)
        return req.finish(self._execute(req.plans))

    def _execute(self, plans: List[PlanGen]) -> List[Any]:
        if len(plans) == 1:
            try:
                return [self.client.run(plans[0])]
            except DeltatokError as e:
                return [e]
        return self.client.run_many(plans)

    def get_chat_template(self, chat_template: Optional[str] = None, tools: Any = None) -> str:
        t = self.chat_template
        if isinstance(t, dict):
            if chat_template is not None and chat_template in t:
                return t[chat_template]
            if chat_template is None:
                if tools is not None and "tool_use" in t:
                    return t["tool_use"]
                if "default" in t:
                    return t["default"]
                raise DeltatokInputError("DT_INVALID_OPTION", "This model has multiple chat templates with no default specified! Available template names are %s." % sorted(t))
            return chat_template
        if chat_template is not None:
            return chat_template
        if t is None:
            raise DeltatokInputError("DT_INVALID_OPTION", "Cannot use chat template functions because tokenizer.chat_template is not set and no template argument was passed!")
        return t

    def fits(self, conversation: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, add_generation_prompt: bool = True,
             **kwargs: Any) -> bool:
        """Whether the prompt (apply_chat_template's tokens; the generation prompt included by
        default, as ISL) has at most `limit` tokens; the server stops encoding past the limit.
        `**kwargs` reach the template as variables."""
        return self.client.fits(list(conversation), limit, tools, **self.budget_options(add_generation_prompt, kwargs))

    def trim_to_fit(self, conversation: Sequence[Mapping[str, Any]], limit: int, tools: Any = None, policy: Optional[str] = None,
                    keep_first_user: bool = False, add_generation_prompt: bool = True, **kwargs: Any) -> Dict[str, Any]:
        """Drops the oldest turns until the prompt fits `limit`: {"messages", "count", "dropped"}
        (ClientBase.trim_to_fit)."""
        return self.client.trim_to_fit(list(conversation), limit, tools, policy=policy, keep_first_user=keep_first_user,
                                       **self.budget_options(add_generation_prompt, kwargs))

    def budget_options(self, add_generation_prompt: bool, kwargs: Mapping[str, Any]) -> Dict[str, Any]:
        """fits / trim_to_fit's prompt options with this tokenizer's defaults."""
        o: Dict[str, Any] = {"add_generation_prompt": add_generation_prompt}
        kw = self._template_kwargs(kwargs)
        if kw:
            o["chat_template_kwargs"] = kw
        if self._template_override is not None:
            o["chat_template"] = self._template_override
        if self._parse_tool_arguments:
            o["parse_tool_arguments"] = True
        return o

    def template_options(self, chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: Optional[bool] = None,
                         chat_template: Optional[str] = None) -> Tuple[Optional[str], Dict[str, Any], bool]:
        """(chat_template, chat_template_kwargs, parse_tool_arguments) as a message request sends them:
        the arguments over this tokenizer's template override, special tokens and defaults."""
        kw = self._template_kwargs(chat_template_kwargs or {})
        template = chat_template if chat_template is not None else self._template_override
        pta = self._parse_tool_arguments if parse_tool_arguments is None else parse_tool_arguments
        return template, kw, bool(pta)

    def osl(self, message: Mapping[str, Any], chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: Optional[bool] = None,
            chat_template: Optional[str] = None) -> int:
        """OSL of an assistant message as MLCommons endpoints defines it: tokens of [U, m] minus
        those of [U, E] (U an empty user message, E an empty assistant message, no tools, no
        generation prompt): the message's own tokens, without framing or end-of-turn."""
        template, kw, pta = self.template_options(chat_template_kwargs, parse_tool_arguments, chat_template)
        return self.client.count_message(dict(message), template, kw, pta)

    def text_counter(self, max_look_back: Optional[int] = None) -> TextCounter:
        """A streaming counter: ``append(chunk)`` returns the tokens of everything appended so far
        (as ``len(encode(text, add_special_tokens=False))``), re-encoding only the last few characters."""
        return self.client.text_counter(max_look_back)

    def message_counter(self, chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: Optional[bool] = None,
                        chat_template: Optional[str] = None, max_look_back: Optional[int] = None) -> MessageCounter:
        """A streaming counter of an assistant message: ``append(delta)`` (an OpenAI-style delta)
        returns ``osl`` of the message so far."""
        template, kw, pta = self.template_options(chat_template_kwargs, parse_tool_arguments, chat_template)
        return self.client.message_counter(template, kw, pta, max_look_back)

    def tokenize_rollout(self, conversation: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None,
                         chat_template: Optional[str] = None, parse_tool_arguments: Optional[bool] = None, **kwargs: Any) -> Dict[str, Any]:
        """The training sequences of an RL rollout (docs/ROLLOUTS.md): each assistant message's
        prompt is exactly the ids `apply_chat_template(conversation[:k], add_generation_prompt=True)`
        gives, its completion the message's `sampled_ids` (with `sampled_logprobs`) or its
        canonical tokens; a new sequence starts where the template rewrote history. `**kwargs`
        reach the template as in apply_chat_template. `deltatok.binary.training_arrays(seq)` gives
        arrays ready for torch.tensor."""
        return self.client.tokenize_rollout(**self.rollout_arguments(conversation, tools, documents, chat_template, parse_tool_arguments, kwargs))

    def rollout_arguments(self, conversation: Sequence[Mapping[str, Any]], tools: Any, documents: Any, chat_template: Optional[str],
                          parse_tool_arguments: Optional[bool], kwargs: Mapping[str, Any]) -> Dict[str, Any]:
        """tokenize_rollout's arguments for the method-level client, with this tokenizer's defaults."""
        return {"messages": list(conversation), "tools": _check_tools(tools), "documents": _check_documents(documents),
                "chat_template": chat_template if chat_template is not None else self._template_override,
                "chat_template_kwargs": self._template_kwargs(kwargs),
                "parse_tool_arguments": bool(self._parse_tool_arguments if parse_tool_arguments is None else parse_tool_arguments)}

    # ---- plain text --------------------------------------------------------------------------

    def encode(self, text: str, text_pair: Optional[str] = None, add_special_tokens: bool = True, padding: Any = False, truncation: Any = None,
               max_length: Optional[int] = None, stride: int = 0, padding_side: Optional[str] = None, return_tensors: Any = None,
               **kwargs: Any) -> Any:
        """Token ids of `text` (with the tokenizer's special tokens unless add_special_tokens=False)."""
        enc = self(text, text_pair=text_pair, add_special_tokens=add_special_tokens, padding=padding, truncation=truncation,
                   max_length=max_length, stride=stride, padding_side=padding_side, return_tensors=return_tensors, **kwargs)
        return enc["input_ids"]

    def text_request(self, text: Any, text_pair: Any = None, text_target: Any = None, add_special_tokens: bool = True, padding: Any = False,
                     truncation: Any = None, max_length: Optional[int] = None, stride: int = 0, is_split_into_words: bool = False,
                     pad_to_multiple_of: Optional[int] = None, padding_side: Optional[str] = None, return_tensors: Any = None,
                     return_token_type_ids: Optional[bool] = None, return_attention_mask: Optional[bool] = None,
                     return_overflowing_tokens: bool = False, return_special_tokens_mask: bool = False, return_offsets_mapping: bool = False,
                     return_length: bool = False, verbose: bool = True, **kwargs: Any) -> ChatRequest:
        for name, v in (("text_pair", text_pair), ("text_target", text_target), ("is_split_into_words", is_split_into_words),
                        ("return_overflowing_tokens", return_overflowing_tokens), ("return_special_tokens_mask", return_special_tokens_mask),
                        ("return_offsets_mapping", return_offsets_mapping), ("stride", stride)):
            if v:
                raise DeltatokUnsupportedError("%s is not supported by deltatok" % name)
        if kwargs:
            raise DeltatokTypeError("unexpected keyword argument(s): %s" % ", ".join(sorted(kwargs)))
        if text is None:
            raise DeltatokInputError("DT_INVALID_OPTION", "You need to specify either `text` or `text_target`.")
        batched = isinstance(text, (list, tuple))
        texts = list(text) if batched else [text]
        for t in texts:
            if not isinstance(t, str):
                raise DeltatokInputError("DT_INVALID_OPTION", "text input must be of type `str` (single example), `List[str]` (batch or single pretokenized example) or `List[List[str]]` (batch of pretokenized examples).")
        flags = chat_flags(self, padding, truncation if truncation is not None else False, max_length, return_tensors,
                           {"padding_side": padding_side, "pad_to_multiple_of": pad_to_multiple_of, "return_attention_mask": return_attention_mask,
                            "return_token_type_ids": return_token_type_ids, "return_length": return_length})
        plans = [simple_plan("encode_text", {"text": t, "add_special_tokens": add_special_tokens}) for t in texts]

        def finish(out: List[Any]) -> Any:
            data = shape_encodings([list(o["ids"]) for o in out], None, flags, batched, self.model_input_names)
            return batch_encoding(data, return_tensors, not batched)

        return ChatRequest(plans, finish)

    def __call__(self, text: Any = None, text_pair: Any = None, text_target: Any = None, text_pair_target: Any = None,
                 add_special_tokens: bool = True, padding: Any = False, truncation: Any = None, max_length: Optional[int] = None,
                 stride: int = 0, is_split_into_words: bool = False, pad_to_multiple_of: Optional[int] = None, padding_side: Optional[str] = None,
                 return_tensors: Any = None, return_token_type_ids: Optional[bool] = None, return_attention_mask: Optional[bool] = None,
                 return_overflowing_tokens: bool = False, return_special_tokens_mask: bool = False, return_offsets_mapping: bool = False,
                 return_length: bool = False, verbose: bool = True, **kwargs: Any) -> BatchEncoding:
        """Encodes text (a string or a list of strings) into a BatchEncoding."""
        req = self.call_request(text, text_pair, text_target, text_pair_target, add_special_tokens, padding, truncation, max_length, stride,
                                is_split_into_words, pad_to_multiple_of, padding_side, return_tensors, return_token_type_ids, return_attention_mask,
                                return_overflowing_tokens, return_special_tokens_mask, return_offsets_mapping, return_length, verbose, **kwargs)
        out: BatchEncoding = req.finish(self._execute(req.plans))
        return out

    def call_request(self, text: Any = None, text_pair: Any = None, text_target: Any = None, text_pair_target: Any = None,
                     add_special_tokens: bool = True, padding: Any = False, truncation: Any = None, max_length: Optional[int] = None,
                     stride: int = 0, is_split_into_words: bool = False, pad_to_multiple_of: Optional[int] = None, padding_side: Optional[str] = None,
                     return_tensors: Any = None, return_token_type_ids: Optional[bool] = None, return_attention_mask: Optional[bool] = None,
                     return_overflowing_tokens: bool = False, return_special_tokens_mask: bool = False, return_offsets_mapping: bool = False,
                     return_length: bool = False, verbose: bool = True, **kwargs: Any) -> ChatRequest:
        """`__call__`'s work as plans (the blocking and asyncio tokenizers run them)."""
        if text_pair_target is not None:
            raise DeltatokUnsupportedError("text_pair_target is not supported by deltatok")
        return self.text_request(text, text_pair, text_target, add_special_tokens, padding, truncation, max_length, stride, is_split_into_words,
                                 pad_to_multiple_of, padding_side, return_tensors, return_token_type_ids, return_attention_mask,
                                 return_overflowing_tokens, return_special_tokens_mask, return_offsets_mapping, return_length, verbose, **kwargs)

    def decode_request(self, sequences: List[Any], skip_special_tokens: bool, clean_up_tokenization_spaces: Optional[bool], single: bool) -> ChatRequest:
        cleanup = self.clean_up_tokenization_spaces if clean_up_tokenization_spaces is None else clean_up_tokenization_spaces
        if (cleanup and self._info.get("model_type") == "BPE" and bpe_cleanup_skipped()
                and not getattr(self, "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", False)):
            # transformers 5 leaves the cleanup (made for WordPiece) undone on BPE models
            cleanup = False
        plans = []
        for s in sequences:
            ids = to_id_list(s)
            ids = [ids] if isinstance(ids, int) else ids
            plans.append(simple_plan("decode", {"ids": ids, "skip_special_tokens": bool(skip_special_tokens), "clean_up_tokenization_spaces": bool(cleanup)}))
        return ChatRequest(plans, lambda out: out[0]["text"] if single else [o["text"] for o in out])

    def decode(self, token_ids: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None, **kwargs: Any) -> str:
        """Text of token ids (an int, a list, a numpy array or a tensor), as transformers' decode."""
        req = self.decode_request([token_ids], skip_special_tokens, clean_up_tokenization_spaces, True)
        return str(req.finish(self._execute(req.plans)))

    def batch_decode(self, sequences: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None,
                     **kwargs: Any) -> List[str]:
        req = self.batch_decode_request(sequences, skip_special_tokens, clean_up_tokenization_spaces)
        texts: List[str] = req.finish(self._execute(req.plans))
        return texts

    def batch_decode_request(self, sequences: Any, skip_special_tokens: bool, clean_up_tokenization_spaces: Optional[bool]) -> ChatRequest:
        """batch_decode's work as plans (sequences as a list, an array or a tensor)."""
        seqs = to_id_list(sequences)
        return self.decode_request(list(seqs) if isinstance(seqs, list) else [seqs], skip_special_tokens, clean_up_tokenization_spaces, False)

    # ---- the rest ----------------------------------------------------------------------------

    def stats(self) -> Dict[str, Any]:
        """The server's Deltatok statistics with this client's prefix counters under "client"."""
        return self.client.stats()

    def save_pretrained(self, *args: Any, **kwargs: Any) -> None:
        raise DeltatokUnsupportedError("deltatok tokenizers are read-only; save the original files instead")

    def add_special_tokens(self, *args: Any, **kwargs: Any) -> int:
        raise DeltatokUnsupportedError("deltatok cannot add tokens: the vocabulary is the tokenizer.json's")

    add_tokens = add_special_tokens

    def close(self) -> int:
        return self.client.close() if self._owns_client else 0

    def __enter__(self) -> "DeltatokTokenizer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def sidecar_args(name_or_path: str, options: Dict[str, Any]) -> List[str]:
    """`deltatok serve` arguments for from_pretrained's deltatok options."""
    if options.get("_whole_args"):
        return [str(a) for a in options.get("serve_args") or ()]
    args = ["--tokenizer", str(name_or_path)]
    for key, flag in (("date", "--date"), ("pattern", "--pattern"), ("workers", "--workers"), ("cache_mb", "--cache-mb"), ("max_prompt_chars", "--max-prompt-chars"),
                      ("renderer", "--renderer")):
        if options.get(key) is not None:
            args += [flag, str(options[key])]
    args += [str(a) for a in options.get("serve_args") or ()]
    return args


def split_options(pretrained_model_name_or_path: Any, init_inputs: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]:
    """(deltatok options, attribute overrides, environment additions); refuses what deltatok cannot honour."""
    if init_inputs:
        raise DeltatokTypeError("deltatok's from_pretrained takes no positional init inputs")
    dt: Dict[str, Any] = {}
    overrides: Dict[str, Any] = {}
    env: Dict[str, str] = {}
    unknown = []
    for k, v in kwargs.items():
        if k in DELTATOK_OPTIONS:
            dt[k] = v
        elif k in _SETTABLE:
            overrides[k] = v
        elif k in _ACCEPTED:
            if k == "use_fast" and v is False:
                raise DeltatokInputError("DT_INVALID_OPTION", "deltatok is a fast tokenizer (Rust tokenizers' ids); use_fast=False has no slow equivalent here")
        elif k == "revision":
            if v not in (None, "main"):
                raise DeltatokInputError("DT_INVALID_OPTION", "deltatok reads the local hub cache's main snapshot; revision=%r is not supported" % (v,))
        elif k == "cache_dir":
            if v is not None:
                env["HF_HUB_CACHE"] = os.fspath(v)
        elif k == "force_download":
            if v:
                raise DeltatokInputError("DT_INVALID_OPTION", "deltatok never downloads: force_download=True is not supported")
        elif k == "subfolder":
            if v:
                raise DeltatokInputError("DT_INVALID_OPTION", "subfolder is not supported: pass the folder's path")
        else:
            unknown.append(k)
    if unknown:
        raise DeltatokTypeError("from_pretrained got option(s) deltatok does not know: %s (deltatok's: %s; transformers' it honours: %s)"
                        % (", ".join(sorted(unknown)), ", ".join(DELTATOK_OPTIONS), ", ".join(_SETTABLE + ("revision", "cache_dir") + _ACCEPTED)))
    return dt, overrides, env
