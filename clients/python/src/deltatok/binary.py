"""Readers of deltatok's binary outputs (standard library only): `deltatok tokenize --format
binary` (read_tokens) and `deltatok rollout --format binary` (read_rollouts), and the arrays of
a rollout answered as JSON (training_arrays)."""
from __future__ import annotations

import json
import struct
import sys
from array import array
from typing import Any, Dict, Iterator, Mapping, Optional

__all__ = ["read_tokens", "read_rollouts", "training_arrays"]


def read_tokens(path: str) -> Iterator[Dict[str, Any]]:
    """Reads `deltatok tokenize --format binary` output: yields one dict per conversation with
    "ids" (array('I')) and "assistant_mask" (bytes, one 0/1 per token) plus the index fields
    ("id", "count", "prefix", "spans", "suffix", "mask_source", "offsets_exact"), or the
    {"id", "line", "error"} record of a conversation that failed."""
    data, index = _open(path, b"DTOKBIN1", "token")
    for rec in index["records"]:
        if "error" in rec:
            yield rec
            continue
        out = dict(rec)
        out["ids"] = _values(data, "I", rec["offset"], rec["count"])
        out["assistant_mask"] = data[rec["mask_offset"]:rec["mask_offset"] + rec["count"]]
        yield out


def read_rollouts(path: str) -> Iterator[Dict[str, Any]]:
    """Reads `deltatok rollout --format binary` output: yields one dict per conversation,
    {"id", "sequences", "splits", "drift"}, each sequence with "ids" (array('I')), "mask"
    (array('B'), 1 on completion tokens: the loss mask), "logprobs" (array('d'), float64 as the
    sampler gave them — array('f') in files written before float64 — NaN where a
    token has none, or None when no completion of the sequence carried logprobs) and "turns";
    or the {"id", "line", "error"} record of a conversation that failed. The arrays go to
    torch.tensor / numpy.asarray as they are."""
    data, index = _open(path, (b"DTROLL02", b"DTROLL01"), "rollout")
    lp_code = "d" if data[:8] == b"DTROLL02" else "f"
    for rec in index["records"]:
        if "error" in rec:
            yield rec
            continue
        sequences = []
        for q in rec["sequences"]:
            n = q["count"]
            lp = q["logprobs_offset"]
            sequences.append({
                "ids": _values(data, "I", q["offset"], n),
                "mask": _values(data, "B", q["mask_offset"], n),
                "logprobs": None if lp is None else _values(data, lp_code, lp, n),
                "turns": q["turns"],
            })
        yield {"id": rec["id"], "sequences": sequences, "splits": rec["splits"], "drift": rec["drift"]}


def training_arrays(sequence: Mapping[str, Any]) -> Dict[str, Any]:
    """One sequence of a rollout answered as JSON (`tokenize_rollout`) in read_rollouts' form:
    "ids" array('I'), "mask" array('B') from its completion ranges, "logprobs" array('d') with
    NaN where the JSON has null (or None), and its "turns"."""
    ids = array("I", sequence["ids"])
    mask = array("B", bytes(len(ids)))
    for start, end in sequence["mask"]:
        for i in range(start, end):
            mask[i] = 1
    lps: Optional[array] = None
    if sequence.get("logprobs") is not None:
        lps = array("d", (float("nan") if x is None else x for x in sequence["logprobs"]))
    return {"ids": ids, "mask": mask, "logprobs": lps, "turns": sequence["turns"]}


def _open(path: str, magic: Any, what: str):
    """The file's bytes and its JSON index (at the offset the last 8 bytes give)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] not in (magic if isinstance(magic, tuple) else (magic,)) or len(data) < 16:
        raise ValueError("%s is not a deltatok %s file" % (path, what))
    (at,) = struct.unpack_from("<Q", data, len(data) - 8)
    return data, json.loads(data[at:len(data) - 8].decode("utf-8"))


def _values(data: bytes, code: str, offset: int, count: int) -> array:
    """`count` little-endian values of array type `code` at `offset`."""
    a = array(code)
    a.frombytes(data[offset:offset + a.itemsize * count])
    if sys.byteorder == "big" and a.itemsize > 1:
        a.byteswap()
    return a
