"""Prompt templates kept as files in prompts/: version lines, then `=== role` sections, each a Jinja
template; and the one Jinja set-up that prompts and cards render with (`jinja_environment`).

A section is rendered in Jinja's sandbox with undefined names as errors: a silently empty prompt is
worse than a failed run, and the error names the template's file and the missing name. Values are
`{{name}}`, so JSON examples with single braces need no escaping. What differs between variants (a
phase, a scenario's prompts) is a conditional block, `{% if name %} ... {% else %} ... {% endif %}`;
a block tag alone on its line takes its line with it, so a section reads as it renders. A section
renders exactly its text: the newlines at its ends are not part of it, and a list of optional lines
writes `{%- if name +%}` and `{%- endif %}` so that no blank line is left whichever are kept.

Versions: `version: <name>/<n>` records the template under its file name; `version <variant>:
<name>/<n>` lines (after it, or alone) record variants of the template under their own names, so
a variant that once was a file of its own keeps its recorded name and version. Every version is
recorded in every generated record (`prompt_versions`) and enters the resume fingerprint: bump
the one whose rendered text changes.

A user's own templates (`prompts_dir:` in the run config) override the shipped ones file by
file: `prompts_from(folder)` makes `load_prompt` read a template from `folder` when the folder
has a file of that name, and the shipped one otherwise, for the code run inside it. The choice
is a context variable, so it holds for the thread or asyncio task that set it and for the tasks
it starts, and never leaks into another run's jobs sharing the process (a Dask worker, a Prefect
task thread). Each user template is checked against the shipped one of its name when it is read
(its sections, and only names the shipped one is given); `template_digests` hashes their texts for
the resume fingerprint.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import BaseLoader, StrictUndefined, Template, TemplateRuntimeError, TemplateSyntaxError, meta
from jinja2.sandbox import SandboxedEnvironment

from ..core.errors import InputError, UtcgenError
from ..core.files import write_atomic
from ..core.resources import shipped
from ..scenarios import section_versions as scenario_prompts

_SECTION = re.compile(r"^=== (system|user|assistant)\s*$", re.MULTILINE)
_VERSION = re.compile(r"^version(?:\s+([a-zA-Z_][a-zA-Z0-9_]*))?\s*:\s*(\S.*?)\s*$")
# the block tags of the renderer before Jinja, which a user's older template may still hold
_OLD_TAG = re.compile(r"\{\{\s*(?:#if\s+[a-zA-Z_]\w*|else|/if)\s*\}\}")


class PromptError(UtcgenError):
    pass


def jinja_environment(loader: BaseLoader | None = None, autoescape: bool = False) -> SandboxedEnvironment:
    """The Jinja set-up of every prompt and card: sandboxed (a template is text, never code), an
    undefined name an error, a block tag alone on its line taking its line, a file's last newline kept."""
    return SandboxedEnvironment(loader=loader, undefined=StrictUndefined, autoescape=autoescape,
                                trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


_ENV = jinja_environment()


@cache
def _compiled(where: str, role: str, text: str) -> Template:
    """A section's text as a Jinja template, compiled once per text; a syntax error names the file,
    the section and the line within it."""
    if m := _OLD_TAG.search(text):
        raise PromptError(f"{where}: section '=== {role}' uses '{m.group(0)}', the block syntax before Jinja; "
                          "write {% if name %} ... {% else %} ... {% endif %}")
    try:
        return _ENV.from_string(text)
    except TemplateSyntaxError as exc:
        raise PromptError(f"{where}: section '=== {role}', line {exc.lineno}: {exc.message}") from None


@cache
def _names(text: str) -> frozenset[str]:
    return frozenset(meta.find_undeclared_variables(_ENV.parse(text)))


@dataclass(frozen=True)
class Prompt:
    name: str
    versions: tuple[tuple[str, str], ...]   # (recorded name, version): the file's own and its variants'
    sections: tuple[tuple[str, str], ...]   # (role, template text)
    source: str = ""                        # the file, as errors name it (default: prompts/<name>.txt)

    @property
    def where(self) -> str:
        return self.source or f"prompts/{self.name}.txt"

    @property
    def version(self) -> str:
        """The file's own version, else its first variant's."""
        return dict(self.versions).get(self.name, self.versions[0][1])

    @property
    def placeholders(self) -> set[str]:
        """Every name the template reads, in every branch: the values and the conditions."""
        return {name for _, text in self.sections for name in _names(text)}

    def render(self, **values: Any) -> list[dict[str, str]]:
        out = []
        for role, text in self.sections:
            try:
                out.append({"role": role, "content": _compiled(self.where, role, text).render(values)})
            except TemplateRuntimeError as exc:  # an undefined name, or what the sandbox refuses
                raise PromptError(f"{self.where}, section '=== {role}': {exc.message}") from None
        return out


def parse_prompt(name: str, text: str, source: str = "") -> Prompt:
    """The template `name` from its text; `source` names its file in errors (default: prompts/<name>.txt)."""
    where = source or f"prompts/{name}.txt"
    lines = text.split("\n")
    versions: list[tuple[str, str]] = []
    while lines and (m := _VERSION.match(lines[0])):
        versions.append((m.group(1) or name, m.group(2)))
        lines.pop(0)
    if not versions:
        raise PromptError(f"{where}: first line must be 'version: <name>/<n>'")
    parts = _SECTION.split("\n".join(lines))
    sections = tuple((parts[i], parts[i + 1].strip("\n")) for i in range(1, len(parts), 2))
    if not sections:
        raise PromptError(f"{where}: no '=== system' or '=== user' section")
    for role, body in sections:
        _compiled(where, role, body)  # a syntax error fails when the file is read
    return Prompt(name=name, versions=tuple(versions), sections=sections, source=source)


@cache
def _prompt_names(directory: Path | None = None) -> tuple[str, ...]:
    return tuple(sorted(path.stem for path in (directory or shipped("prompts")).glob("*.txt")))


# Templates of a feature a run switches on, with the dotted name of the switch (`RunConfig.switched_on`):
# a run without the feature never renders them, so its records and fingerprint do not list them, and
# a run made before the feature existed lists what it listed then.
SWITCHED_PROMPTS: dict[str, str] = {"tool_result": "execution.results", "rules_answer": "execution.results"}


def prompt_versions(directory: Path | None = None, switched_on: Collection[str] = ()) -> dict[str, str]:
    """Version of every prompt and prompt variant a run may render, by recorded name: what a dialogue and
    the dataset card record. The shipped prompts include the sections the registered scenario types add;
    a switched template (`SWITCHED_PROMPTS`) is listed only when its switch is in `switched_on`."""
    found = {name: version for stem in _prompt_names(directory)
             if stem not in SWITCHED_PROMPTS or SWITCHED_PROMPTS[stem] in switched_on
             for name, version in load_prompt(stem, directory).versions}
    if directory is None:
        found.update(scenario_prompts(switched_on))
    return dict(sorted(found.items()))


def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    """The template `name`: from `directory` when given; else the user's own when `prompts_from` chose a
    folder that has it, else the shipped one."""
    if directory is None and (own := _ACTIVE.get()) is not None and name in own:
        return own[name]
    return _load(name, directory)


@cache
def _load(name: str, directory: Path | None = None) -> Prompt:
    path = (directory or shipped("prompts")) / f"{name}.txt"
    try:
        return parse_prompt(name, path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PromptError(f"{path}: cannot read prompt: {exc.strerror or exc}") from exc


# ---------------------------------------------------------------- a user's own templates (`prompts_dir:`)

# The user's templates in force for this thread or task (`prompts_from`), by name; None: the shipped ones.
_ACTIVE: ContextVar[Mapping[str, Prompt] | None] = ContextVar("utcgen_user_prompts", default=None)


def shipped_names() -> tuple[str, ...]:
    """The names of the shipped templates (their files are prompts/<name>.txt)."""
    return _prompt_names()


def _user_files(folder: Path) -> dict[str, Path]:
    """The folder's templates by name; a folder that is missing, or a .txt no shipped template is named
    after (a typo would silently leave the shipped one in force), is refused."""
    if not folder.is_dir():
        raise InputError(f"prompts_dir {folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    names = shipped_names()
    files = {path.stem: path for path in sorted(folder.glob("*.txt"))}
    if unknown := sorted(set(files) - set(names)):
        raise InputError([f"{files[u]}: no shipped template is named '{u}.txt', so it would never be used; "
                          f"the templates are {', '.join(n + '.txt' for n in names)}" for u in unknown])
    return files


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the template: {getattr(exc, 'strerror', None) or exc}") from exc


@cache
def _checked(name: str, source: str, text: str) -> Prompt:
    """A user's template, parsed and held against the shipped one of its name: the same sections in the
    same order, and no placeholder or condition the code does not give that template."""
    try:
        prompt = parse_prompt(name, text, source)
        given = _load(name).placeholders
        used = prompt.placeholders
    except PromptError as exc:
        raise InputError(str(exc)) from None
    problems = []
    roles, expected = [r for r, _ in prompt.sections], [r for r, _ in _load(name).sections]
    if roles != expected:
        problems.append(f"{source}: its sections are {', '.join('=== ' + r for r in roles)}; the shipped "
                        f"template has {', '.join('=== ' + r for r in expected)}, and the code reads them in that order")
    if unknown := sorted(used - given):
        problems.append(f"{source}: unknown name(s) {', '.join(unknown)}; "
                        f"this template is given {', '.join(sorted(given)) or 'none'}")
    if problems:
        raise InputError(problems)
    return prompt


def user_prompts(folder: str | Path) -> dict[str, Prompt]:
    """The user's templates in `folder`, by name, each read now and checked (`InputError` naming the file)."""
    return {name: _checked(name, str(path), _read(path)) for name, path in _user_files(Path(folder)).items()}


def template_digests(folder: str | Path | None) -> dict[str, str]:
    """sha256 of the text of each user template in `folder` that differs from the shipped one (by file
    name): what the resume fingerprint hashes, so that an edited template is never mixed with replies
    made from the old text, whatever its version line says. A copy left as shipped changes nothing and
    is not listed; empty without a folder. Each template is checked as it is read."""
    if folder is None:
        return {}
    user_prompts(folder)
    out = {}
    for name, path in _user_files(Path(folder)).items():
        text = _read(path)
        if text != _read(shipped("prompts") / f"{name}.txt"):
            out[path.name] = hashlib.sha256(text.encode()).hexdigest()
    return out


@contextmanager
def prompts_from(folder: str | Path | None) -> Iterator[None]:
    """Inside: `load_prompt` takes a template from `folder` when the folder has one of that name (None:
    the shipped templates only). Set for the current thread or task and the tasks started inside."""
    token = _ACTIVE.set(user_prompts(folder) if folder is not None else None)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def export_prompts(folder: str | Path, force: bool = False) -> list[Path]:
    """Writes the shipped templates into `folder` (made if missing), to edit and name as `prompts_dir`;
    refuses to replace any existing file unless `force`. Returns the files written."""
    folder = Path(folder)
    targets = {name: folder / f"{name}.txt" for name in shipped_names()}
    if not force and (present := [str(p) for p in targets.values() if p.exists()]):
        raise InputError(f"{folder}: already holds {len(present)} of the templates ({', '.join(present[:3])}"
                         f"{', ...' if len(present) > 3 else ''}); pass --force to overwrite them")
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in targets.items():
        write_atomic(target, (shipped("prompts") / f"{name}.txt").read_text(encoding="utf-8"))
    return list(targets.values())
