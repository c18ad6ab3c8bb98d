"""Files shipped with utcgen: prompts, the default config, the tool catalog and personas.

They are found through `importlib.resources`, so the same code works from a checkout,
an editable install and an installed wheel, whatever the working directory.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

# Repository folder -> installed package holding it.
SHIPPED = {"catalog": "utcgen.catalog", "configs": "utcgen.configs", "prompts": "utcgen.prompts"}


def shipped(folder: str, *parts: str) -> Path:
    """A path inside one of the shipped folders (`shipped("catalog", "tools")`)."""
    return Path(str(files(SHIPPED[folder]))).joinpath(*parts)


def resolve(path: str) -> str:
    """A user path as given when it exists (or is absolute); else, when it names a shipped file
    such as `catalog/tools`, that file; else the path unchanged, so the error names it."""
    p = Path(path)
    if p.is_absolute() or p.exists():
        return str(p)
    head, *rest = p.parts or ("",)
    if head in SHIPPED:
        candidate = shipped(head, *rest)
        if candidate.exists():
            return str(candidate)
    return str(p)
