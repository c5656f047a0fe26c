"""Which build of Brook this process runs, and whether its compiled modules are current.

``compiled``: the modules setup.py lists are mypyc extensions (the ``.so`` beside each ``.py``,
which Python imports in its place); ``pure``: every module is interpreted, with the same
behaviour. ``INFO server`` reports it as ``brook_build``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

# Where the dispatcher (compiled in every compiled build) is loaded from, without importing it.
_DISPATCH = str(importlib.util.find_spec("brook.dispatch").origin)  # type: ignore[union-attr]

BUILD = "compiled" if _DISPATCH.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else "pure"


def stale_modules() -> list[str]:
    """Compiled modules (mypyc's from ``.py``, hand-written ones from ``.c``) whose source
    changed after they were built (``make build`` rebuilds them): Python imports the
    extension, so the change would not run."""
    package = Path(_DISPATCH).parent
    stale = []
    for extension in package.rglob("*.so"):
        name = extension.name.split(".", 1)[0]
        for source in (extension.with_name(name + ".py"), extension.with_name(name + ".c")):
            if source.exists() and source.stat().st_mtime > extension.stat().st_mtime:
                stale.append(str(source.relative_to(package.parent)))
    return sorted(stale)
