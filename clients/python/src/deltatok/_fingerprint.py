"""Pure functions of the prefix table: message fingerprints, their hash chain, routing keys.

No state, no I/O. What the fingerprints mean and why a match is exact: DESIGN.md ("Incremental
without asking", "Identity guess", "Same leading messages").
"""
from __future__ import annotations

import hashlib
import json
import marshal
from typing import Any, List, Optional, Sequence

__all__ = ["fingerprint", "fingerprints", "chain", "leading", "route_key", "conversation_key", "route_of", "confirmed_prefix",
           "held_bytes", "MESSAGE_OVERHEAD", "ID_BYTES"]

#: Roles that lead a conversation and are shared by many (src/pool/skim.ts LEADING_ROLES).
LEADING_ROLES = ("system", "developer")
#: Bytes a held message reference costs in the table's bound, besides its fingerprint.
MESSAGE_OVERHEAD = 96
#: Bytes a held id costs in the table's bound.
ID_BYTES = 36


def fingerprint(value: Any) -> bytes:
    """Exact bytes of a JSON-like value: equal bytes mean equal types, values and key order."""
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        # a dict subclass, a str subclass, ...: its JSON text (a marshal string never starts with NUL)
        return b"\x00" + json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def fingerprints(values: Sequence[Any]) -> List[bytes]:
    """`fingerprint` of each value (one C call each in the common case)."""
    try:
        return [marshal.dumps(v, 2) for v in values]
    except ValueError:
        return [fingerprint(v) for v in values]


def chain(fps: Sequence[bytes]) -> List[int]:
    """The hash chain over fingerprints: item j hashes fps[:j + 1] (the table's index keys)."""
    out: List[int] = []
    h = 0
    for fp in fps:
        h = hash((h, fp))
        out.append(h)
    return out


def leading(messages: Sequence[Any]) -> int:
    """How many messages name a conversation: up to and including the first whose role is not
    system/developer (all of them when every one is)."""
    for i, m in enumerate(messages):
        if not (isinstance(m, dict) and m.get("role") in LEADING_ROLES):
            return i + 1
    return len(messages)


def route_key(lead_fps: Sequence[bytes], tools_fp: Optional[bytes]) -> str:
    """A conversation's routing key from its leading fingerprints and its tools' fingerprint."""
    h = hashlib.blake2b(digest_size=8)
    for fp in ([b"" if tools_fp is None else b"t" + tools_fp] + list(lead_fps)):
        h.update(len(fp).to_bytes(8, "little"))
        h.update(fp)
    return h.hexdigest()


def conversation_key(messages: Sequence[Any], tools: Any = None) -> str:
    """The routing key of a conversation (16 hex digits): a hash of its tools and leading messages,
    the same for every turn of it and in every process of one Python version (marshal version 2
    has not changed across Python 3 releases; a key that differs would cost reuse, never a count)."""
    n = leading(messages)
    return route_key(fingerprints(messages[:n]), None if tools is None else fingerprint(tools))


def route_of(messages: Any, tools: Any = None) -> Optional[str]:
    """`conversation_key`, or None for input that is not a list of messages (the server answers
    that request with its coded error; routing never raises first)."""
    try:
        return conversation_key(messages, tools)
    except (TypeError, ValueError, AttributeError, RecursionError):
        return None


def confirmed_prefix(msgs: List[Any], held: List[bytes], k: int) -> Optional[List[bytes]]:
    """The fingerprints of `msgs` if its first k equal `held[:k]`, else None. One marshal of the
    whole list in the common case: version 2 writes no references, so a list's marshal is a 5-byte
    header and its items' marshals back to back, and marshal's encoding is prefix-free — the
    list's bytes start with the held fingerprints exactly when its first k items have them (the
    held byte strings are then reused, their hashes cached)."""
    try:
        blob: Optional[bytes] = marshal.dumps(msgs, 2)
    except ValueError:
        blob = None
    if blob is not None and all(fp[:1] != b"\x00" for fp in held[:k]):
        if not blob.startswith(b"".join(held[:k]), 5):
            return None
        return held[:k] + fingerprints(msgs[k:])
    fps = fingerprints(msgs)
    return fps if fps[:k] == held[:k] else None


def held_bytes(fps: Sequence[bytes], tools_fp: Optional[bytes], ids: Optional[Sequence[int]] = None) -> int:
    """What a conversation's state costs in the table's bound: its fingerprints, the held message
    references (counted as their fingerprint bytes again), its tools' fingerprint and its ids."""
    return (2 * sum(map(len, fps)) + MESSAGE_OVERHEAD * len(fps) + (0 if tools_fp is None else len(tools_fp))
            + (0 if ids is None else ID_BYTES * len(ids)))
