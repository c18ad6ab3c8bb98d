"""Prompt templates kept as files in prompts/: a version line, then `=== role` sections.

Placeholders are `{{name}}`, so JSON examples with single braces need no escaping.
Rendering fails loudly on a missing placeholder: a silently empty prompt is worse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .errors import UtcgenError
from .resources import shipped

_PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
_SECTION = re.compile(r"^=== (system|user|assistant)\s*$", re.MULTILINE)


class PromptError(UtcgenError):
    pass


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    sections: tuple[tuple[str, str], ...]

    @property
    def placeholders(self) -> set[str]:
        return {m for _, text in self.sections for m in _PLACEHOLDER.findall(text)}

    def render(self, **values: Any) -> list[dict[str, str]]:
        missing = self.placeholders - values.keys()
        if missing:
            raise PromptError(f"prompt '{self.name}': no value for {sorted(missing)}")

        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)

        return [{"role": role, "content": fill(text)} for role, text in self.sections]


def parse_prompt(name: str, text: str) -> Prompt:
    first, _, body = text.partition("\n")
    if not first.startswith("version:"):
        raise PromptError(f"prompts/{name}.txt: first line must be 'version: <name>/<n>'")
    parts = _SECTION.split(body)
    sections = tuple((parts[i], parts[i + 1].strip("\n")) for i in range(1, len(parts), 2))
    if not sections:
        raise PromptError(f"prompts/{name}.txt: no '=== system' or '=== user' section")
    return Prompt(name=name, version=first.split(":", 1)[1].strip(), sections=sections)


@cache
def _prompt_names(directory: Path | None = None) -> tuple[str, ...]:
    return tuple(sorted(path.stem for path in (directory or shipped("prompts")).glob("*.txt")))


def prompt_versions(directory: Path | None = None) -> dict[str, str]:
    """Version of every prompt file, by file name: what a dialogue and the dataset card record."""
    return {name: load_prompt(name, directory).version for name in _prompt_names(directory)}


@cache
def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    path = (directory or shipped("prompts")) / f"{name}.txt"
    try:
        return parse_prompt(name, path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PromptError(f"{path}: cannot read prompt: {exc.strerror or exc}") from exc
