"""Compatibility module: the client used to be this one file. Import from `deltatok` instead."""
from deltatok import DeltatokClient, DeltatokError, DeltatokHttpClient, DeltatokInputError, DeltatokNotFoundError, find_command, read_tokens

__all__ = ["DeltatokClient", "DeltatokHttpClient", "DeltatokError", "DeltatokInputError", "DeltatokNotFoundError", "find_command", "read_tokens"]
