"""Readers of deltatok's binary outputs (standard library only): `deltatok tokenize --format
binary` (read_tokens) and `deltatok rollout --format binary` (read_rollouts), and the arrays of
a rollout answered as JSON (training_arrays).

A record's "id" is the corpus line's id as json.loads reads it from that line: the index holds
it as the line spelt it (`7`, `"7"`, `1e3`, `9007199254740993`), so no type flag is needed and
files written before read the same way."""
from __future__ import annotations

import json
import os
import stat
import struct
import sys
from array import array
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple, Union

from ._errors import DeltatokFileError, DeltatokInputError
from ._wire import ANY, INT, NULL, ROLLOUT_SEQUENCE, Either, ListOf, Obj, Shape

#: A path as open() takes it.
PathArg = Union[str, "os.PathLike[str]"]

__all__ = ["read_tokens", "read_rollouts", "training_arrays"]


def read_tokens(path: PathArg) -> Iterator[Dict[str, Any]]:
    """Reads `deltatok tokenize --format binary` output: yields one dict per conversation with
    "ids" (array('I')) and "assistant_mask" (bytes, one 0/1 per token) plus the index fields
    ("id", "count", "prefix", "spans", "suffix", "mask_source", "offsets_exact"), or the
    {"id", "line", "error"} record of a conversation that failed.

    A path that cannot be read (missing, a directory, a FIFO, no permission) raises
    DeltatokFileError, DT_CORPUS_UNREADABLE (an OSError); a file that is not a complete deltatok
    output, DT_BINARY_INVALID. Both at the first next()."""
    path = os.fspath(path)
    data, index = _open(path, b"DTOKBIN1", "token")
    layout = _Layout(path)
    for i, rec in enumerate(index["records"]):
        if _record(rec, _TOKEN_RECORD, path, i):
            yield rec
            continue
        n = rec["count"]
        out = dict(rec)
        out["ids"] = _values(data, "I", layout.place(i, "offset", rec["offset"], 4 * n), n, path)
        mask = _values(data, "B", layout.place(i, "mask_offset", rec["mask_offset"], (n + 3) & ~3), n, path).tobytes()
        if mask.translate(None, b"\x00\x01"):
            raise _invalid(path, "index record %d: an assistant mask holds bytes other than 0 and 1 (a forged or damaged index)" % i)
        out["assistant_mask"] = mask
        yield out


def read_rollouts(path: PathArg) -> Iterator[Dict[str, Any]]:
    """Reads `deltatok rollout --format binary` output: yields one dict per conversation,
    {"id", "sequences", "splits", "drift"}, each sequence with "ids" (array('I')), "mask"
    (array('B'), 1 on completion tokens: the loss mask), "logprobs" (array('d'), float64 as the
    sampler gave them — array('f') in files written before float64 — NaN where a
    token has none, or None when no completion of the sequence carried logprobs) and "turns";
    or the {"id", "line", "error"} record of a conversation that failed. The arrays go to
    torch.tensor / numpy.asarray as they are. Errors as read_tokens'."""
    path = os.fspath(path)
    data, index = _open(path, (b"DTROLL02", b"DTROLL01"), "rollout")
    lp_code = "d" if data[:8] == b"DTROLL02" else "f"
    lp_size = 8 if lp_code == "d" else 4
    layout = _Layout(path)
    for i, rec in enumerate(index["records"]):
        if _record(rec, _ROLLOUT_RECORD, path, i):
            yield rec
            continue
        sequences = []
        for q in rec["sequences"]:
            n = q["count"]
            lp = q["logprobs_offset"]
            ids = _values(data, "I", layout.place(i, "offset", q["offset"], 4 * n), n, path)
            mask = _values(data, "B", layout.place(i, "mask_offset", q["mask_offset"], (n + 3) & ~3), n, path)
            if mask.tobytes().translate(None, b"\x00\x01"):
                raise _invalid(path, "index record %d: a loss mask holds bytes other than 0 and 1 (a forged or damaged index)" % i)
            sequences.append({
                "ids": ids,
                "mask": mask,
                "logprobs": None if lp is None else _values(data, lp_code, layout.place(i, "logprobs_offset", lp, lp_size * n), n, path),
                "turns": q["turns"],
            })
        yield {"id": rec.get("id"), "sequences": sequences, "splits": rec["splits"], "drift": rec["drift"]}


def training_arrays(sequence: Mapping[str, Any]) -> Dict[str, Any]:
    """One sequence of a rollout answered as JSON (`tokenize_rollout`) in read_rollouts' form:
    "ids" array('I'), "mask" array('B') from its completion ranges, "logprobs" array('d') with
    NaN where the JSON has null (or None), and its "turns". A sequence of another shape — ids
    outside uint32, a mask range outside the ids, logprobs not one per id — is DeltatokInputError
    DT_INVALID_REQUEST naming the bad field."""
    why = ROLLOUT_SEQUENCE.why_not(sequence if not isinstance(sequence, Mapping) else dict(sequence))
    if why is not None:
        raise DeltatokInputError("DT_INVALID_REQUEST", "training_arrays: sequence%s %s" % why, "sequence" + why[0])
    try:
        ids = array("I", sequence["ids"])
    except OverflowError:
        raise DeltatokInputError("DT_INVALID_REQUEST", "training_arrays: sequence.ids holds an id outside 0..2^32-1", "sequence.ids") from None
    n = len(ids)
    mask = array("B", bytes(n))
    for k, (start, end) in enumerate(sequence["mask"]):
        if not 0 <= start <= end <= n:
            raise DeltatokInputError("DT_INVALID_REQUEST", "training_arrays: sequence.mask[%d] is [%d, %d], not a range of the %d ids" % (k, start, end, n),
                                     "sequence.mask[%d]" % k)
        mask[start:end] = array("B", b"\x01" * (end - start))
    lps: Optional["array[float]"] = None
    if sequence.get("logprobs") is not None:
        if len(sequence["logprobs"]) != n:
            raise DeltatokInputError("DT_INVALID_REQUEST", "training_arrays: sequence.logprobs has %d entries for %d ids" % (len(sequence["logprobs"]), n),
                                     "sequence.logprobs")
        lps = array("d", (float("nan") if x is None else x for x in sequence["logprobs"]))
    return {"ids": ids, "mask": mask, "logprobs": lps, "turns": sequence["turns"]}


def _invalid(path: str, why: str) -> DeltatokInputError:
    return DeltatokInputError("DT_BINARY_INVALID", "%s %s" % (path, why), path)


#: An index record of each file (besides a failed conversation's {"id", "line", "error"}).
_TOKEN_RECORD: Shape = Obj({"offset": INT, "count": INT, "mask_offset": INT})
_ROLLOUT_RECORD: Shape = Obj({"sequences": ListOf(Obj({"offset": INT, "count": INT, "mask_offset": INT, "logprobs_offset": Either(INT, NULL),
                                                        "turns": ANY})),
                              "splits": ANY, "drift": ANY})


def _record(rec: Any, shape: Shape, path: str, i: int) -> bool:
    """Whether index record `i` is a failed conversation's; DT_BINARY_INVALID unless it is that or
    of `shape`."""
    if isinstance(rec, dict) and "error" in rec:
        return True
    why = shape.why_not(rec)
    if why is not None:
        raise _invalid(path, "has an index whose records[%d]%s %s (a forged or damaged index)" % (i, why[0], why[1]))
    return False


def _read(path: str) -> bytes:
    """The whole file; DeltatokFileError (DT_CORPUS_UNREADABLE) when it cannot be read or is not a
    regular file (a FIFO would block, a device may not end)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO, device or socket"
            raise DeltatokFileError("cannot read %s: it is not a regular file (%s)" % (path, kind), path)
        with open(path, "rb") as f:
            return f.read()
    except DeltatokFileError:
        raise
    except OSError as e:
        raise DeltatokFileError("cannot read %s: %s" % (path, e.strerror or e), path, e.errno) from None


def _open(path: str, magic: Any, what: str) -> Tuple[bytes, Dict[str, Any]]:
    """The file's bytes and its JSON index (at the offset the last 8 bytes give); a file that is
    not one, or was killed before its index was written, is DT_BINARY_INVALID."""
    data = _read(path)
    if data[:8] not in (magic if isinstance(magic, tuple) else (magic,)) or len(data) < 16:
        raise _invalid(path, "is not a deltatok %s file" % what)
    (at,) = struct.unpack_from("<Q", data, len(data) - 8)
    if at < 8 or at > len(data) - 8:
        raise _invalid(path, "has no index: its run was killed before the end (run it again)")
    try:
        index = json.loads(data[at:len(data) - 8].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _invalid(path, "has no readable index: its run was killed before the end (run it again)") from None
    if not isinstance(index, dict) or not isinstance(index.get("records"), list):
        raise _invalid(path, "has an index without records")
    return data, index


class _Layout:
    """Where the writer puts each array: the first right after the 8-byte magic, each next one
    right after the previous (ids 4 bytes a token, a mask a byte a token padded to 4, logprobs 8
    bytes a token — 4 in DTROLL01 files). An index offset anywhere else (a count off by one, an
    unaligned or overlapping offset, a mask pointed into the ids) is DT_BINARY_INVALID, as
    `deltatok merge` checks it (src/cli/merge.ts)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.cursor = 8

    def place(self, i: int, field: str, offset: Any, size: Any) -> int:
        if offset != self.cursor or isinstance(offset, bool) or not isinstance(size, int) or size < 0:
            raise _invalid(self.path, "index record %d: %s %r where the writer put %d (a forged or damaged index)" % (i, field, offset, self.cursor))
        self.cursor += size
        return int(offset)


def _values(data: bytes, code: str, offset: int, count: int, path: str) -> "array[Any]":
    """`count` little-endian values of array type `code` at `offset` (DT_BINARY_INVALID when
    they are not all inside the file)."""
    a = array(code)
    end = offset + a.itemsize * count
    if not isinstance(offset, int) or not isinstance(count, int) or offset < 8 or count < 0 or end > len(data):
        raise _invalid(path, "names %r values at offset %r past its end" % (count, offset))
    a.frombytes(data[offset:end])
    if sys.byteorder == "big" and a.itemsize > 1:
        a.byteswap()
    return a
