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
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._errors import DeltatokError, DeltatokInputError

__all__ = ["ROUTE_HEADER", "DEFAULT_TIMEOUT", "PROMPT_OPTIONS", "decode_ids", "envelope", "read_answer", "prompt_options", "check_prompt_options",
           "whole_prompt_params", "render_params", "rollout_params", "budget_params", "trim_params", "trim_result", "message_counter_params",
           "message_params", "text_counter_params", "decode_params"]

#: The HTTP header that carries a request's routing key (deploy/nginx/deltatok.conf hashes it).
ROUTE_HEADER = "X-Deltatok-Conversation"

#: Seconds a call waits for its answer by default (stdio and HTTP alike); None waits forever.
DEFAULT_TIMEOUT = 300.0


def decode_ids(text: str) -> List[int]:
    """Ids sent as base64 of little-endian uint32."""
    a = array("I")
    a.frombytes(base64.b64decode(text))
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
        raise TypeError("unknown prompt option(s): %s" % ", ".join(sorted(unknown)))


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
