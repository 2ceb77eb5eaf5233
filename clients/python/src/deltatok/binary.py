"""Readers of deltatok's binary outputs (standard library only)."""
from __future__ import annotations

import json
import struct
import sys
from array import array
from typing import Any, Dict, Iterator

__all__ = ["read_tokens"]


def read_tokens(path: str) -> Iterator[Dict[str, Any]]:
    """Reads `deltatok tokenize --format binary` output: yields one dict per conversation with
    "ids" (array('I')) and "assistant_mask" (bytes, one 0/1 per token) plus the index fields
    ("id", "count", "prefix", "spans", "suffix", "mask_source", "offsets_exact"), or the
    {"id", "line", "error"} record of a conversation that failed."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"DTOKBIN1":
        raise ValueError("%s is not a deltatok token file" % path)
    (at,) = struct.unpack_from("<Q", data, len(data) - 8)
    index = json.loads(data[at:len(data) - 8].decode("utf-8"))
    for rec in index["records"]:
        if "error" in rec:
            yield rec
            continue
        ids = array("I")
        ids.frombytes(data[rec["offset"]:rec["offset"] + 4 * rec["count"]])
        if sys.byteorder == "big":
            ids.byteswap()
        out = dict(rec)
        out["ids"] = ids
        out["assistant_mask"] = data[rec["mask_offset"]:rec["mask_offset"] + rec["count"]]
        yield out
