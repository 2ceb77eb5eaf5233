"""Finding the deltatok command line without any network: DELTATOK_CMD, node_modules/.bin, PATH."""
from __future__ import annotations

import json
import os
import shlex
import shutil
from typing import Iterator, List, Mapping, Optional

from ._errors import NOT_FOUND_HELP, DeltatokNotFoundError

__all__ = ["find_command"]


def _upward(start: str) -> Iterator[str]:
    d = os.path.abspath(start)
    while True:
        yield d
        parent = os.path.dirname(d)
        if parent == d:
            return
        d = parent


def _find_in(start: str) -> Optional[List[str]]:
    """``node_modules/.bin/deltatok`` in ``start`` or a parent; or a built deltatok checkout there."""
    names = ["deltatok.cmd", "deltatok"] if os.name == "nt" else ["deltatok"]
    for d in _upward(start):
        for name in names:
            exe = os.path.join(d, "node_modules", ".bin", name)
            if os.path.isfile(exe) and os.access(exe, os.X_OK):
                return [exe]
        # the deltatok repository itself (its CLI is not in its own node_modules)
        main = os.path.join(d, "dist", "src", "cli", "main.js")
        pkg = os.path.join(d, "package.json")
        if os.path.isfile(main) and os.path.isfile(pkg):
            try:
                with open(pkg, encoding="utf-8") as f:
                    is_deltatok = json.load(f).get("name") == "deltatok"
            except (OSError, ValueError, AttributeError):
                is_deltatok = False
            node = shutil.which("node")
            if is_deltatok and node:
                return [node, main]
    return None


def find_command(cwd: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """The command that runs the deltatok CLI, found without any network, in this order:

    1. ``DELTATOK_CMD``: a command line, split like a shell does (quote paths with spaces),
       e.g. ``DELTATOK_CMD="node /opt/deltatok/dist/src/cli/main.js"``;
    2. ``node_modules/.bin/deltatok`` in the working directory or one of its parents (what
       an npm install of deltatok creates), then from this package's directory; a built deltatok
       checkout found the same way is run with ``node``;
    3. ``deltatok`` on PATH (``npm link`` in a built checkout puts it there).

    Raises DeltatokNotFoundError, saying how to point to one, when none is found. Never runs npx.
    """
    env = os.environ if environ is None else environ
    cmd = env.get("DELTATOK_CMD", "").strip()
    if cmd:
        try:
            parts = shlex.split(cmd, posix=os.name != "nt")
        except ValueError as e:
            raise DeltatokNotFoundError("DELTATOK_CMD does not parse as a command line (%s): %r; %s" % (e, cmd, NOT_FOUND_HELP), "DELTATOK_CMD") from None
        if parts:
            return parts
    for start in (cwd or os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
        found = _find_in(start)
        if found:
            return found
    exe = shutil.which("deltatok", path=env.get("PATH"))
    if exe:
        return [exe]
    raise DeltatokNotFoundError(
        "cannot find the deltatok command line: DELTATOK_CMD is not set, there is no node_modules/.bin/deltatok in %s or above, "
        "and no deltatok on PATH. The package is not published on npm: %s" % (cwd or os.getcwd(), NOT_FOUND_HELP))
