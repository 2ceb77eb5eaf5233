"""The wire, sans I/O: request params for each sidecar method, envelopes, and answers decoded.

No sockets, no threads, no asyncio: the blocking shell (_client, _transport) and the asyncio
shell (aio) both build their requests and read their answers here, so the two cannot differ in
what they send.
"""
from __future__ import annotations

import base64
import json
import sys
from array import array
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple, Union

from ._errors import DeltatokError, DeltatokInputError, DeltatokTypeError, error_from_record

__all__ = ["ROUTE_HEADER", "DEFAULT_TIMEOUT", "PROMPT_OPTIONS", "RESULTS", "decode_ids", "envelope", "read_answer", "read_result", "check_result",
           "bad_response", "prompt_options", "check_prompt_options",
           "whole_prompt_params", "render_params", "rollout_params", "budget_params", "trim_params", "trim_result", "message_counter_params",
           "message_params", "text_counter_params", "decode_params"]

#: The HTTP header that carries a request's routing key (deploy/nginx/deltatok.conf hashes it).
ROUTE_HEADER = "X-Deltatok-Conversation"

#: Seconds a call waits for its answer by default (stdio and HTTP alike); None waits forever.
DEFAULT_TIMEOUT = 300.0


def decode_ids(text: str, method: str = "encode_prompt") -> List[int]:
    """Ids sent as base64 of little-endian uint32 (DT_BAD_RESPONSE when `text` is not that)."""
    a = array("I")
    try:
        a.frombytes(base64.b64decode(text, validate=True))
    except (TypeError, ValueError):  # binascii.Error is a ValueError; so is a length not a multiple of 4
        raise bad_response(method, "result.ids", "is not base64 of uint32 ids: %.80r" % (text,)) from None
    if sys.byteorder == "big":
        a.byteswap()
    return a.tolist()


def envelope(rid: int, method: str, params: Dict[str, Any]) -> bytes:
    """One request as a JSON line."""
    # `id` first, as a scalar: the server can name the request even in a line it must skip
    try:
        return (json.dumps({"id": rid, "method": method, "params": params}, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError as e:
        raise DeltatokInputError("DT_LONE_SURROGATE", "a string of the request holds a lone UTF-16 surrogate (%s), which has no UTF-8 encoding" % e.object[e.start:e.end].encode("unicode_escape").decode("ascii")) from None
    except (TypeError, ValueError) as e:
        raise DeltatokInputError("DT_INVALID_REQUEST", "the request holds a value JSON cannot carry: %s" % e) from None


def read_answer(raw: Any, where: str) -> Dict[str, Any]:
    """A response envelope, or DT_BAD_RESPONSE when what came back is not one."""
    if not isinstance(raw, dict) or ("result" not in raw and "error" not in raw):
        raise DeltatokError("DT_BAD_RESPONSE", "%s answered something that is not a deltatok response: %.200r" % (where, raw))
    return raw


def read_result(method: str, resp: Mapping[str, Any]) -> Any:
    """The result of a response envelope to a `method` call, checked for its shape (`RESULTS`), or
    the coded error it carries. Every built-in transport reads its answers here."""
    if "error" in resp:
        raise error_from_record(resp["error"])
    return check_result(method, resp.get("result"))


# ---- result shapes --------------------------------------------------------------------------
# Each method's result, declared once: the keys the client reads or hands over, with their JSON
# types (more keys are allowed: a newer server may add some). An answer of another shape is
# DT_BAD_RESPONSE naming the method and the path of the field, never an AttributeError, KeyError,
# TypeError or ValueError deeper in the client.

class Shape:
    """What one JSON value must be: `why_not(value)` is None, or (the path of the first bad field
    below the value — "", ".count", "[3].ids" —, what is wrong with it). Paths are made only for
    a value that fails, so a right answer costs type checks alone."""

    __slots__ = ("expected", "kinds", "flat")

    def __init__(self, expected: str, kinds: Optional[FrozenSet[type]], flat: bool = False):
        #: What the value must be, in words ("an integer", "a list (each item a string)", ...).
        self.expected = expected
        #: The Python types the value itself may have (None: any); `flat`: that is the whole check.
        self.kinds = kinds
        self.flat = flat

    def why_not(self, v: Any) -> Optional[Tuple[str, str]]:  # pragma: no cover - interface
        raise NotImplementedError

    def wrong(self, v: Any) -> Tuple[str, str]:
        return "", "is %s, expected %s" % (_json_kind(v), self.expected)


def _json_kind(v: Any) -> str:
    """A value as JSON names it, with a short repr."""
    kind = ("null" if v is None else "a boolean" if isinstance(v, bool) else "a number" if isinstance(v, (int, float))
            else "a string" if isinstance(v, str) else "a list" if isinstance(v, list) else "an object" if isinstance(v, dict)
            else type(v).__name__)
    return kind if v is None or isinstance(v, (list, dict)) else "%s (%.40r)" % (kind, v)


class Scalar(Shape):
    """A JSON scalar of exact Python types (an int is never a bool here: JSON's true is not 1)."""

    __slots__ = ("types",)

    def __init__(self, expected: str, *types: type):
        self.types = frozenset(types)
        super().__init__(expected, self.types, True)

    def why_not(self, v: Any) -> Optional[Tuple[str, str]]:
        return None if type(v) in self.types else self.wrong(v)


class Anything(Shape):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("any value", None)

    def why_not(self, v: Any) -> Optional[Tuple[str, str]]:
        return None


class Either(Shape):
    """One of several shapes (null allowed: `Either(X, NULL)`)."""

    __slots__ = ("shapes",)

    def __init__(self, *shapes: Shape):
        kinds = None if any(s.kinds is None for s in shapes) else frozenset(t for s in shapes for t in s.kinds or ())
        super().__init__(" or ".join(s.expected for s in shapes), kinds, all(s.flat for s in shapes))
        self.shapes = shapes

    def why_not(self, v: Any) -> Optional[Tuple[str, str]]:
        t = type(v)
        deeper: Optional[Tuple[str, str]] = None
        for s in self.shapes:
            if s.kinds is not None and t not in s.kinds:
                continue
            why = s.why_not(v)
            if why is None:
                return None
            if deeper is None and why[0]:
                # a value of the right kind with a bad part: naming that part says more
                deeper = why
        return deeper if deeper is not None else self.wrong(v)


class ListOf(Shape):
    """A list whose items all have one shape (optionally of a fixed length)."""

    __slots__ = ("item", "length")

    def __init__(self, item: Shape, length: Optional[int] = None):
        super().__init__("a list%s (each item %s)" % ("" if length is None else " of %d" % length, item.expected), frozenset((list,)))
        self.item = item
        self.length = length

    def why_not(self, v: Any) -> Optional[Tuple[str, str]]:
        if type(v) is not list or (self.length is not None and len(v) != self.length):
            return self.wrong(v)
        item = self.item
        if item.flat and item.kinds is not None:
            # ids, tokens, logprobs: one C-level pass over the types (100k ids in ~1.5 ms, a
            # tenth of their json.loads); the loop below only to name the bad item
            kinds = item.kinds
            if len(kinds) == 1:
                if list(map(type, v)).count(next(iter(kinds))) == len(v):
                    return None
            elif set(map(type, v)) <= kinds:
                return None
        for i, x in enumerate(v):
            why = item.why_not(x)
            if why is not None:
                return "[%d]%s" % (i, why[0]), why[1]
        return None


class DictOf(Shape):
    """An object whose values all have one shape; `int_keys`: every key an integer's text."""

    __slots__ = ("value", "int_keys")

    def __init__(self, value: Shape, int_keys: bool = False):
        super().__init__("an object (each value %s)" % value.expected, frozenset((dict,)))
        self.value = value
        self.int_keys = int_keys

    def why_not(self, v: Any) -> Optional[Tuple[str, str]]:
        if type(v) is not dict:
            return self.wrong(v)
        value = self.value
        for k, x in v.items():
            if self.int_keys and not (k.isdigit() and k.isascii()):
                return "[%s]" % json.dumps(k), "is a key that is not a token id"
            why = value.why_not(x)
            if why is not None:
                return ".%s%s" % (k, why[0]), why[1]
        return None


class Obj(Shape):
    """An object with `required` keys and `optional` ones (each of its shape); other keys allowed."""

    __slots__ = ("required", "optional")

    def __init__(self, required: Mapping[str, Shape], optional: Optional[Mapping[str, Shape]] = None):
        super().__init__("an object with %s" % (", ".join(required) or "any keys"), frozenset((dict,)))
        self.required = dict(required)
        self.optional = dict(optional or {})

    def why_not(self, v: Any) -> Optional[Tuple[str, str]]:
        if type(v) is not dict:
            return self.wrong(v)
        for k, s in self.required.items():
            if k not in v:
                return ".%s" % k, "is missing (expected %s)" % s.expected
            why = s.why_not(v[k])
            if why is not None:
                return ".%s%s" % (k, why[0]), why[1]
        for k, s in self.optional.items():
            if k in v:
                why = s.why_not(v[k])
                if why is not None:
                    return ".%s%s" % (k, why[0]), why[1]
        return None


INT = Scalar("an integer", int)
NUMBER = Scalar("a number", int, float)
STR = Scalar("a string", str)
BOOL = Scalar("a boolean", bool)
NULL = Scalar("null", type(None))
ANY = Anything()
IDS = ListOf(INT)
#: Token ranges [start, end).
RANGES = ListOf(ListOf(INT, 2))
#: A count (count_prompt, count_message, count_text, counter_append).
_COUNT = Obj({"count": INT})
#: stats: an object of str keys, its key names not checked (their spelling is the server's).
_STATS = DictOf(ANY)
#: One training sequence of tokenize_rollout (binary.training_arrays reads it too).
ROLLOUT_SEQUENCE = Obj({"ids": IDS, "mask": RANGES, "logprobs": Either(ListOf(Either(NUMBER, NULL)), NULL), "turns": ListOf(ANY)})
_ADDED_TOKEN = Obj({"content": STR}, {k: BOOL for k in ("special", "lstrip", "rstrip", "normalized", "single_word")})

#: Every method's result shape; a method not listed (a raw `call` of a newer one) is not checked.
RESULTS: Dict[str, Shape] = {
    "count_prompt": _COUNT,
    "encode_prompt": Obj({"ids": Either(IDS, STR), "count": INT}, {"ids_from": INT}),
    "tokenize_trajectory": Obj({"ids": IDS, "count": INT}, {"assistant_mask": RANGES, "mask_source": STR, "spans": ListOf(DictOf(ANY))}),
    "tokenize_rollout": Obj({"sequences": ListOf(ROLLOUT_SEQUENCE), "splits": ListOf(ANY)}, {"drift": ListOf(ANY)}),
    "count_message": _COUNT,
    "count_text": _COUNT,
    "encode_text": Obj({"ids": IDS}, {"count": INT}),
    "encode_batch": Obj({"ids": Either(ListOf(IDS), STR)}, {"lengths": IDS, "count": INT}),
    "decode": Obj({"text": STR}),
    "render_prompt": Obj({"text": STR}),
    "fits": Obj({"fits": BOOL}),
    "trim_to_fit": Obj({"count": INT, "dropped": IDS}),
    "tokenizer_info": Obj({"vocab_size": INT, "length": INT, "model_max_length": NUMBER}, {
        "name_or_path": STR, "padding_side": STR, "truncation_side": STR, "clean_up_tokenization_spaces": BOOL,
        "model_input_names": ListOf(STR), "chat_template_sources": DictOf(STR), "special_tokens_map": DictOf(Either(STR, ListOf(STR))),
        "special_token_ids": DictOf(Either(INT, NULL)), "all_special_ids": IDS, "added_tokens_decoder": DictOf(_ADDED_TOKEN, int_keys=True),
        "model_type": STR}),
    "vocab": Obj({"tokens": ListOf(Either(STR, NULL))}),
    "text_counter_open": Obj({"handle": STR}),
    "message_counter_open": Obj({"handle": STR}),
    "counter_append": _COUNT,
    "counter_finish": Obj({"count": INT}, {"stats": Either(_STATS, NULL)}),
    "counter_close": DictOf(ANY),
    "batch": Obj({"results": ListOf(Either(Obj({"result": ANY}), Obj({"error": ANY})))}),
    "stats": _STATS,
    # its other fields (tokenizer, version, mode, workers) describe the server and are not read here
    "health": Obj({"status": STR}),
}


def bad_response(method: str, path: str, why: str) -> DeltatokError:
    """DT_BAD_RESPONSE for a `method` answer whose field at `path` is wrong."""
    return DeltatokError("DT_BAD_RESPONSE", "%s answered a result this client cannot read: %s %s" % (method, path, why), path)


def check_result(method: str, result: Any) -> Any:
    """`result` itself when it has `method`'s shape (RESULTS), else DT_BAD_RESPONSE."""
    shape = RESULTS.get(method)
    if shape is not None:
        why = shape.why_not(result)
        if why is not None:
            raise bad_response(method, "result" + why[0], why[1])
    return result


# ---- request params -------------------------------------------------------------------------

#: One prompt request for `prompt_many`: messages plus any prompt options as keyword names.
PromptRequest = Mapping[str, Any]

#: Prompt options besides `tools` (src/api/options.ts; checked by test/protocol-options.test.ts).
PROMPT_OPTIONS = ("documents", "chat_template", "chat_template_kwargs", "add_generation_prompt", "parse_tool_arguments", "continue_final_message")


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


def check_prompt_options(options: Mapping[str, Any]) -> None:
    """TypeError for option names a prompt request does not take."""
    unknown = set(options) - set(PROMPT_OPTIONS)
    if unknown:
        raise DeltatokTypeError("unknown prompt option(s): %s" % ", ".join(sorted(unknown)))


def whole_prompt_params(messages: Sequence[Any], tools: Any, extra: Mapping[str, Any]) -> Dict[str, Any]:
    """A prompt request with every message (no prefix table)."""
    p = dict(extra)
    p["messages"] = list(messages)
    if tools is not None:
        p["tools"] = tools
    return p


def render_params(messages: Sequence[Any], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                  chat_template_kwargs: Optional[Mapping[str, Any]] = None, add_generation_prompt: Optional[bool] = None,
                  parse_tool_arguments: bool = False, continue_final_message: Union[bool, str] = False) -> Dict[str, Any]:
    """The wire form of a render_prompt request."""
    return whole_prompt_params(messages, tools, prompt_options(documents, chat_template, chat_template_kwargs, add_generation_prompt,
                                                               parse_tool_arguments, continue_final_message))


def rollout_params(messages: Sequence[Any], tools: Any = None, documents: Any = None, chat_template: Optional[str] = None,
                   chat_template_kwargs: Optional[Mapping[str, Any]] = None, parse_tool_arguments: bool = False) -> Dict[str, Any]:
    """The wire form of a tokenize_rollout request."""
    return whole_prompt_params(messages, tools, prompt_options(documents, chat_template, chat_template_kwargs, None, parse_tool_arguments))


def budget_params(messages: Sequence[Any], limit: int, tools: Any, options: Mapping[str, Any]) -> Dict[str, Any]:
    """The wire form of a fits request (and the base of trim_to_fit's)."""
    check_prompt_options(options)
    p = whole_prompt_params(messages, tools, prompt_options(**options))
    p["limit"] = limit
    return p


def trim_params(messages: Sequence[Any], limit: int, tools: Any, policy: Optional[str], keep_first_user: bool,
                options: Mapping[str, Any]) -> Dict[str, Any]:
    """The wire form of a trim_to_fit request."""
    p = budget_params(messages, limit, tools, options)
    if policy is not None:
        p["policy"] = policy
    if keep_first_user:
        p["keep_first_user"] = True
    return p


def trim_result(messages: Sequence[Any], answer: Mapping[str, Any]) -> Dict[str, Any]:
    """trim_to_fit's answer with the caller's own kept message objects."""
    dropped = set(answer["dropped"])
    return {"messages": [m for i, m in enumerate(messages) if i not in dropped], "count": answer["count"], "dropped": list(answer["dropped"])}


def message_counter_params(chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                           parse_tool_arguments: bool = False, max_look_back: Optional[int] = None) -> Dict[str, Any]:
    """The wire form of a message option set (count_message, message_counter_open)."""
    p: Dict[str, Any] = {}
    if chat_template is not None:
        p["chat_template"] = chat_template
    if chat_template_kwargs:
        p["chat_template_kwargs"] = dict(chat_template_kwargs)
    if parse_tool_arguments:
        p["parse_tool_arguments"] = True
    if max_look_back is not None:
        p["max_look_back"] = max_look_back
    return p


def message_params(message: Mapping[str, Any], chat_template: Optional[str] = None, chat_template_kwargs: Optional[Mapping[str, Any]] = None,
                   parse_tool_arguments: bool = False) -> Dict[str, Any]:
    """The wire form of a count_message request."""
    p = message_counter_params(chat_template, chat_template_kwargs, parse_tool_arguments)
    p["message"] = message
    return p


def text_counter_params(max_look_back: Optional[int] = None) -> Dict[str, Any]:
    p: Dict[str, Any] = {}
    if max_look_back is not None:
        p["max_look_back"] = max_look_back
    return p


def decode_params(ids: Sequence[int], skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None) -> Dict[str, Any]:
    p: Dict[str, Any] = {"ids": list(ids), "skip_special_tokens": skip_special_tokens}
    if clean_up_tokenization_spaces is not None:
        p["clean_up_tokenization_spaces"] = clean_up_tokenization_spaces
    return p
