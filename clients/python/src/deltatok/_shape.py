"""What transformers does around the token ids: argument checks of apply_chat_template and
__call__, truncation, padding, attention and assistant masks, tensors, BatchEncoding.

Pure functions over lists, shared by the blocking and the asyncio tokenizer.
"""
from __future__ import annotations

import warnings
from collections import UserDict
from typing import Any, Dict, ItemsView, KeysView, List, Mapping, Optional, Sequence, Tuple, Union, ValuesView

from ._compat import transformers_types
from ._errors import DeltatokInputError, DeltatokTypeError

__all__ = ["BatchEncoding", "ChatFlags", "chat_flags", "split_conversations", "shape_encodings", "to_id_list", "AddedToken"]

VERY_LARGE_INTEGER = int(1e30)

_PADDING = {True: "longest", "longest": "longest", False: None, "do_not_pad": None, None: None, "max_length": "max_length"}
_TRUNCATION = {True: True, "longest_first": True, "only_first": True, False: False, "do_not_truncate": False, None: False}
#: tokenizer_kwargs / __call__ options deltatok honours (transformers passes the rest to the Rust tokenizer).
TOKENIZER_KWARGS = ("padding_side", "pad_to_multiple_of", "return_attention_mask", "return_token_type_ids", "return_length", "verbose")


class AddedToken:
    """An entry of `added_tokens_decoder` (transformers' tokenizers.AddedToken, as data)."""

    __slots__ = ("content", "special", "lstrip", "rstrip", "normalized", "single_word")

    def __init__(self, content: str, special: bool = False, lstrip: bool = False, rstrip: bool = False, normalized: bool = True,
                 single_word: bool = False):
        self.content, self.special, self.lstrip, self.rstrip, self.normalized, self.single_word = content, special, lstrip, rstrip, normalized, single_word

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        return "AddedToken(%r, rstrip=%s, lstrip=%s, single_word=%s, normalized=%s, special=%s)" % (
            self.content, self.rstrip, self.lstrip, self.single_word, self.normalized, self.special)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AddedToken) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash(self.content)


class BatchEncoding(UserDict[str, Any]):
    """transformers' BatchEncoding as data: a dict of `input_ids`, `attention_mask`, ... with
    attribute access and `.to(device)` for torch tensors. Offset methods (char_to_token, ...) are
    not available: deltatok returns no Rust Encoding objects."""

    def __init__(self, data: Optional[Dict[str, Any]] = None, tensor_type: Optional[str] = None, prepend_batch_axis: bool = False):
        super().__init__(data or {})
        if tensor_type is not None:
            self.convert_to_tensors(tensor_type, prepend_batch_axis)

    def __getattr__(self, item: str) -> Any:
        try:
            return self.__dict__["data"][item]
        except KeyError:
            raise AttributeError(item)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            return self.data[item]
        if isinstance(item, slice):
            return {k: v[item] for k, v in self.data.items()}
        raise KeyError("deltatok's BatchEncoding has no Encoding objects: index it by key (or a slice)")

    def keys(self) -> KeysView[str]:
        return self.data.keys()

    def values(self) -> ValuesView[Any]:
        return self.data.values()

    def items(self) -> ItemsView[str, Any]:
        return self.data.items()

    @property
    def encodings(self) -> None:
        return None

    @property
    def is_fast(self) -> bool:
        return False

    def convert_to_tensors(self, tensor_type: Optional[str] = None, prepend_batch_axis: bool = False) -> "BatchEncoding":
        if tensor_type is None:
            return self
        for k, v in list(self.data.items()):
            self.data[k] = to_tensor([v] if prepend_batch_axis else v, tensor_type, k)
        return self

    def to(self, device: Any, non_blocking: bool = False) -> "BatchEncoding":
        for k, v in list(self.data.items()):
            if hasattr(v, "to") and callable(v.to):
                self.data[k] = v.to(device=device, non_blocking=non_blocking)
        return self


def batch_encoding(data: Dict[str, Any], tensor_type: Any, prepend_batch_axis: bool) -> Any:
    """transformers' own BatchEncoding when it is installed (_compat), else deltatok's."""
    types = transformers_types()
    if types is not None:
        kind = getattr(tensor_type, "value", tensor_type)
        if kind is not None and kind not in ("np", "pt"):
            raise DeltatokInputError("DT_INVALID_OPTION", "return_tensors=%r is not supported by deltatok (use 'pt', 'np' or None)" % (tensor_type,))
        for k, v in data.items():
            if kind is not None and isinstance(v, list) and v and isinstance(v[0], list) and len({len(x) for x in v}) > 1:
                to_tensor(v, kind, k)  # the same error as deltatok's own BatchEncoding
        return types[0](data, tensor_type=tensor_type, prepend_batch_axis=prepend_batch_axis)
    return BatchEncoding(data, tensor_type=tensor_type, prepend_batch_axis=prepend_batch_axis)


def to_tensor(value: Any, tensor_type: Any, key: str = "input_ids") -> Any:
    kind = getattr(tensor_type, "value", tensor_type)
    if isinstance(value, list) and value and isinstance(value[0], list) and len({len(x) for x in value}) > 1:
        raise DeltatokInputError("DT_INVALID_OPTION",
            "Unable to create tensor, you should probably activate truncation and/or padding with 'padding=True' "
            "'truncation=True' to have batched tensors with the same length (%s has rows of different lengths)" % key)
    if kind == "np":
        try:
            import numpy as np
        except ImportError:
            raise ImportError("return_tensors='np' needs numpy, which is not installed") from None
        return np.array(value, dtype=np.int64)
    if kind == "pt":
        try:
            import torch
        except ImportError:
            raise ImportError("return_tensors='pt' needs PyTorch, which is not installed; use return_tensors='np' or None") from None
        return torch.tensor(value, dtype=torch.long)
    raise DeltatokInputError("DT_INVALID_OPTION", "return_tensors=%r is not supported by deltatok (use 'pt', 'np' or None)" % (tensor_type,))


class ChatFlags:
    """The checked shaping options of one apply_chat_template / __call__."""

    __slots__ = ("padding", "truncation", "max_length", "return_tensors", "padding_side", "truncation_side", "pad_to_multiple_of",
                 "return_attention_mask", "return_token_type_ids", "return_length", "pad_token_id", "model_max_length")

    def __init__(self) -> None:
        self.padding: Optional[str] = None
        self.truncation = False
        self.max_length: Optional[int] = None
        self.return_tensors: Any = None
        self.padding_side = "right"
        self.truncation_side = "right"
        self.pad_to_multiple_of: Optional[int] = None
        self.return_attention_mask = True
        self.return_token_type_ids = False
        self.return_length = False
        self.pad_token_id: Optional[int] = None
        self.model_max_length = VERY_LARGE_INTEGER


def chat_flags(tok: Any, padding: Any, truncation: Any, max_length: Optional[int], return_tensors: Any,
               kwargs: Optional[Mapping[str, Any]]) -> ChatFlags:
    """Checks padding / truncation / tensors and the tokenizer kwargs deltatok honours."""
    f = ChatFlags()
    key = getattr(padding, "value", padding)
    if key not in _PADDING:
        raise DeltatokInputError("DT_INVALID_OPTION", "padding=%r is not supported by deltatok (True, 'longest', 'max_length', False, 'do_not_pad')" % (padding,))
    f.padding = _PADDING[key]
    tkey = getattr(truncation, "value", truncation)
    if tkey not in _TRUNCATION:
        raise DeltatokInputError("DT_INVALID_OPTION", "truncation=%r is not supported by deltatok for one sequence (True, 'longest_first', 'only_first', False)" % (truncation,))
    f.truncation = _TRUNCATION[tkey]
    if max_length is not None and (not isinstance(max_length, int) or max_length < 0):
        raise DeltatokInputError("DT_INVALID_OPTION", "max_length must be a non-negative integer, got %r" % (max_length,))
    f.max_length = max_length
    f.return_tensors = return_tensors
    f.padding_side = tok.padding_side
    f.truncation_side = tok.truncation_side
    f.pad_token_id = tok.pad_token_id
    f.model_max_length = tok.model_max_length
    f.return_token_type_ids = "token_type_ids" in tok.model_input_names
    f.return_attention_mask = "attention_mask" in tok.model_input_names
    for k, v in (kwargs or {}).items():
        if k not in TOKENIZER_KWARGS:
            if k == "add_special_tokens":
                raise DeltatokTypeError("apply_chat_template tokenizes with add_special_tokens=False; it cannot be given in tokenizer_kwargs")
            raise DeltatokInputError("DT_INVALID_OPTION", "tokenizer option %r is not supported by deltatok (supported: %s)" % (k, ", ".join(TOKENIZER_KWARGS)))
        if v is None:
            continue
        if k == "padding_side":
            if v not in ("left", "right"):
                raise DeltatokInputError("DT_INVALID_OPTION", "padding_side must be 'left' or 'right', got %r" % (v,))
            f.padding_side = v
        elif k == "pad_to_multiple_of":
            f.pad_to_multiple_of = int(v)
        elif k == "return_attention_mask":
            f.return_attention_mask = bool(v)
        elif k == "return_token_type_ids":
            f.return_token_type_ids = bool(v)
        elif k == "return_length":
            f.return_length = bool(v)
    return f


def split_conversations(conversation: Any) -> Tuple[List[Any], bool]:
    """transformers' batch detection: a list whose first item is a list (or has `.messages`)."""
    if isinstance(conversation, (list, tuple)) and (isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages")):
        return [getattr(c, "messages", c) for c in conversation], True
    return [getattr(conversation, "messages", conversation)], False


def _limit(f: ChatFlags) -> Optional[int]:
    if f.max_length is not None:
        return f.max_length
    return f.model_max_length if f.model_max_length < VERY_LARGE_INTEGER else None


def shape_encodings(rows: List[List[int]], masks: Optional[List[List[int]]], f: ChatFlags, batched: bool,
                    model_input_names: Sequence[str]) -> Dict[str, Any]:
    """input_ids (+ attention_mask, token_type_ids, assistant_masks, length) after truncation and padding."""
    limit = _limit(f)
    if f.truncation and limit is not None:
        cut = []
        for i, r in enumerate(rows):
            if len(r) > limit:
                keep = slice(0, limit) if f.truncation_side == "right" else slice(len(r) - limit, len(r))
                cut.append(r[keep])
                if masks is not None:
                    masks[i] = masks[i][keep]
            else:
                cut.append(r)
        rows = cut
    attention = [[1] * len(r) for r in rows]
    target: Optional[int] = None
    if f.padding == "longest":
        target = max((len(r) for r in rows), default=0)
    elif f.padding == "max_length":
        target = limit
        if target is None:
            warnings.warn("Asking to pad to max_length but no maximum length is provided and the model has no predefined maximum length. "
                          "Default to no padding.")
    if target is not None and f.pad_to_multiple_of and target % f.pad_to_multiple_of:
        target = (target // f.pad_to_multiple_of + 1) * f.pad_to_multiple_of
    if target is not None and any(len(r) < target for r in rows):
        if f.pad_token_id is None:
            raise DeltatokInputError("DT_INVALID_OPTION", "Asking to pad but the tokenizer does not have a padding token. Please select a token to use as `pad_token` "
                             "`(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via `tokenizer.add_special_tokens`.")
        padded, att, msk = [], [], []
        for i, r in enumerate(rows):
            n = target - len(r)
            if n <= 0:
                padded.append(r)
                att.append(attention[i])
                if masks is not None:
                    msk.append(masks[i])
                continue
            pads, zeros = [f.pad_token_id] * n, [0] * n
            if f.padding_side == "right":
                padded.append(r + pads)
                att.append(attention[i] + zeros)
                if masks is not None:
                    msk.append(masks[i] + zeros)
            else:
                padded.append(pads + r)
                att.append(zeros + attention[i])
                if masks is not None:
                    msk.append(zeros + masks[i])
        rows, attention = padded, att
        if masks is not None:
            masks = msk
    out: Dict[str, Any] = {}

    def one(x: List[Any]) -> Any:
        return x if batched else x[0]

    for name in model_input_names:
        if name == "input_ids":
            out["input_ids"] = one(rows)
        elif name == "attention_mask" and f.return_attention_mask:
            out["attention_mask"] = one(attention)
        elif name == "token_type_ids" and f.return_token_type_ids:
            out["token_type_ids"] = one([[0] * len(r) for r in rows])
    if "input_ids" not in out:
        out = {"input_ids": one(rows), **out}
    if f.return_length:
        out["length"] = one([sum(a) for a in attention])
    if masks is not None:
        out["assistant_masks"] = one(masks)
    return out


def mask_from_ranges(n: int, ranges: Sequence[Sequence[int]]) -> List[int]:
    m = [0] * n
    for a, b in ranges:
        for i in range(max(0, a), min(n, b)):
            m[i] = 1
    return m


def to_id_list(token_ids: Any) -> Union[int, List[Any]]:
    """A list (or int) from ids given as a list, tuple, numpy array or torch tensor."""
    if hasattr(token_ids, "tolist") and callable(token_ids.tolist):
        token_ids = token_ids.tolist()
    if isinstance(token_ids, bool):
        raise DeltatokTypeError("token ids must be integers, got a bool")
    if isinstance(token_ids, int):
        return token_ids
    if isinstance(token_ids, (list, tuple)):
        return [to_id_list(x) if not isinstance(x, int) else x for x in token_ids]
    raise DeltatokTypeError("token ids must be an int, a list of ints, a numpy array or a tensor, got %s" % type(token_ids).__name__)
