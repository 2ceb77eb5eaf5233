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
from typing import Any, Dict, List

from ._errors import DeltatokError, DeltatokInputError

__all__ = ["ROUTE_HEADER", "DEFAULT_TIMEOUT", "decode_ids", "envelope", "read_answer"]

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
