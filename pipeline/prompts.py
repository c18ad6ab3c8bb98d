"""Prompt templates kept as files in prompts/: version lines, then `=== role` sections.

Placeholders are `{{name}}`, so JSON examples with single braces need no escaping.
Rendering fails loudly on a missing placeholder: a silently empty prompt is worse.

One template per role: what differs between variants (a phase, a scenario's prompts) is a
conditional section, `{{#if name}} ... {{else}} ... {{/if}}` (nestable; `else` optional), kept
when the value `name` is truthy. A tag alone on its line takes its line with it, so a section
reads as it renders.

Versions: `version: <name>/<n>` records the template under its file name; `version <variant>:
<name>/<n>` lines (after it, or alone) record variants of the template under their own names, so
a variant that once was a file of its own keeps its recorded name and version. Every version is
recorded in every generated record (`prompt_versions`) and enters the resume fingerprint: bump
the one whose rendered text changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeAlias

from .errors import UtcgenError
from .resources import shipped

_PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
_SECTION = re.compile(r"^=== (system|user|assistant)\s*$", re.MULTILINE)
_TAG_TEXT = r"\{\{\s*(?:#if\s+[a-zA-Z_][a-zA-Z0-9_]*|else|/if)\s*\}\}"
_TAG = re.compile(r"\{\{\s*(?:#if\s+([a-zA-Z_][a-zA-Z0-9_]*)|(else)|(/if))\s*\}\}")
_STANDALONE = re.compile(rf"^[ \t]*({_TAG_TEXT})[ \t]*(?:\n|\Z)", re.MULTILINE)
_VERSION = re.compile(r"^version(?:\s+([a-zA-Z_][a-zA-Z0-9_]*))?\s*:\s*(\S.*?)\s*$")


class PromptError(UtcgenError):
    pass


@dataclass(frozen=True)
class _If:
    name: str
    then: tuple[_Node, ...]
    otherwise: tuple[_Node, ...]


_Node: TypeAlias = str | _If


@dataclass
class _Frame:
    cond: str | None
    then: list[_Node]
    otherwise: list[_Node] | None = None

    @property
    def open(self) -> list[_Node]:
        return self.then if self.otherwise is None else self.otherwise


@cache
def _parse_body(name: str, text: str) -> tuple[_Node, ...]:
    """The section's text as literal runs and conditional blocks (parsed once per text); unbalanced tags
    fail loudly."""
    text = _STANDALONE.sub(lambda m: m.group(1), text)
    stack = [_Frame(None, [])]
    pos = 0
    for m in _TAG.finditer(text):
        if m.start() > pos:
            stack[-1].open.append(text[pos:m.start()])
        pos = m.end()
        top = stack[-1]
        if m.group(1):
            stack.append(_Frame(m.group(1), []))
        elif m.group(2):
            if top.cond is None or top.otherwise is not None:
                raise PromptError(f"prompts/{name}.txt: '{{{{else}}}}' outside an '{{{{#if}}}}' block")
            top.otherwise = []
        else:
            if top.cond is None:
                raise PromptError(f"prompts/{name}.txt: '{{{{/if}}}}' without an '{{{{#if}}}}'")
            stack.pop()
            stack[-1].open.append(_If(top.cond, tuple(top.then), tuple(top.otherwise or ())))
    if len(stack) > 1:
        raise PromptError(f"prompts/{name}.txt: '{{{{#if {stack[-1].cond}}}}}' is never closed")
    if pos < len(text):
        stack[0].open.append(text[pos:])
    return tuple(stack[0].then)


def _conditions(nodes: tuple[_Node, ...]) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, _If):
            out |= {node.name} | _conditions(node.then) | _conditions(node.otherwise)
    return out


def _text(nodes: tuple[_Node, ...]) -> str:
    """Every branch's text, for the placeholders a template may need."""
    return "".join(n if isinstance(n, str) else _text(n.then) + _text(n.otherwise) for n in nodes)


def _resolve(nodes: tuple[_Node, ...], values: dict[str, Any]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        else:
            out.append(_resolve(node.then if values[node.name] else node.otherwise, values))
    return "".join(out)


@dataclass(frozen=True)
class Prompt:
    name: str
    versions: tuple[tuple[str, str], ...]   # (recorded name, version): the file's own and its variants'
    sections: tuple[tuple[str, str], ...]   # (role, template text)

    @property
    def version(self) -> str:
        """The file's own version, else its first variant's."""
        return dict(self.versions).get(self.name, self.versions[0][1])

    @property
    def placeholders(self) -> set[str]:
        """Every placeholder of every branch, and the conditions' names."""
        found = set()
        for _, text in self.sections:
            nodes = _parse_body(self.name, text)
            found |= set(_PLACEHOLDER.findall(_text(nodes))) | _conditions(nodes)
        return found

    def render(self, **values: Any) -> list[dict[str, str]]:
        out = []
        for role, text in self.sections:
            nodes = _parse_body(self.name, text)
            missing = _conditions(nodes) - values.keys()
            if missing:
                raise PromptError(f"prompt '{self.name}': no value for the condition(s) {sorted(missing)}")
            body = _resolve(nodes, values).strip("\n")
            missing = set(_PLACEHOLDER.findall(body)) - values.keys()
            if missing:
                raise PromptError(f"prompt '{self.name}': no value for {sorted(missing)}")
            out.append((role, _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), body)))
        return [{"role": role, "content": content} for role, content in out]


def parse_prompt(name: str, text: str) -> Prompt:
    lines = text.split("\n")
    versions: list[tuple[str, str]] = []
    while lines and (m := _VERSION.match(lines[0])):
        versions.append((m.group(1) or name, m.group(2)))
        lines.pop(0)
    if not versions:
        raise PromptError(f"prompts/{name}.txt: first line must be 'version: <name>/<n>'")
    parts = _SECTION.split("\n".join(lines))
    sections = tuple((parts[i], parts[i + 1].strip("\n")) for i in range(1, len(parts), 2))
    if not sections:
        raise PromptError(f"prompts/{name}.txt: no '=== system' or '=== user' section")
    for _, body in sections:
        _parse_body(name, body)  # unbalanced conditionals fail when the file is read
    return Prompt(name=name, versions=tuple(versions), sections=sections)


@cache
def _prompt_names(directory: Path | None = None) -> tuple[str, ...]:
    return tuple(sorted(path.stem for path in (directory or shipped("prompts")).glob("*.txt")))


def prompt_versions(directory: Path | None = None) -> dict[str, str]:
    """Version of every prompt and prompt variant, by recorded name: what a dialogue and the dataset
    card record. The shipped prompts include the sections the registered scenario types add."""
    found = {name: version for stem in _prompt_names(directory)
             for name, version in load_prompt(stem, directory).versions}
    if directory is None:
        from .scenarios import prompt_versions as scenario_prompts

        found.update(scenario_prompts())
    return dict(sorted(found.items()))


@cache
def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    path = (directory or shipped("prompts")) / f"{name}.txt"
    try:
        return parse_prompt(name, path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PromptError(f"{path}: cannot read prompt: {exc.strerror or exc}") from exc
