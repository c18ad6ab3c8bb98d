"""Reading catalog files: which files a catalog path names, and each file parsed and handed to its importer.

Apart from the checks (utcgen.pipeline.ingest.checks) and the assembly of messages
(utcgen.pipeline.ingest.reader), so that what can go wrong while reading bytes, JSON and
YAML is in one place: every problem here is file-level (the reader prefixes it with the file).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import yaml

from ..core.errors import InputError
from .common import Extracted
from .formats import FormatError, detect_format, extract

CATALOG_SUFFIXES: tuple[str, ...] = (".json", ".jsonl", ".yaml", ".yml")


def catalog_files(path: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    """(path as shown in messages, path) of each file a catalog path stands for."""
    root = Path(path)
    shown = os.fspath(path)
    if root.is_dir():
        try:
            entries = sorted(root.iterdir(), key=lambda p: p.name)
        except OSError as exc:
            raise InputError(f"{shown}: cannot list directory: {exc.strerror}") from exc
        files = [
            p for p in entries
            if p.is_file() and p.suffix.lower() in CATALOG_SUFFIXES and not p.name.startswith(".")
        ]
        if not files:
            raise InputError(f"{shown}: no catalog files ({', '.join(CATALOG_SUFFIXES)}) in this directory")
        return [(os.path.join(shown, p.name), p) for p in files]
    if not root.exists():
        raise InputError(f"{shown}: no such file or directory")
    if root.suffix.lower() not in CATALOG_SUFFIXES:
        raise InputError(
            f"{shown}: unsupported file type {root.suffix or '(none)'!r} "
            f"(expected {', '.join(CATALOG_SUFFIXES)})"
        )
    return [(shown, root)]


def read_file(file: Path, forced: str | None) -> tuple[str | None, Extracted]:
    """(format, what its importer found) of one file; format None if unknown. File-level
    messages are not prefixed with the file: the reader says where they are."""
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, Extracted(problems=[f"not UTF-8 text (bad byte at offset {exc.start})"])
    except OSError as exc:
        return None, Extracted(problems=[f"cannot read: {exc.strerror or exc}"])
    if not text.strip():
        return None, Extracted(problems=["file is empty"])
    data, lines, problems = _parse(text, file.suffix.lower())
    if problems:
        return None, Extracted(problems=problems)
    try:
        fmt = forced or detect_format(data)
    except FormatError as exc:
        return None, Extracted(problems=[f"{exc}"])
    found = extract(data, fmt, lines)
    if not found.candidates and not found.problems:
        found.problems.append("contains no tools")
    return fmt, found


def _parse(text: str, suffix: str) -> tuple[Any, list[int | None] | None, list[str]]:
    """Parse by extension. A .json file holding one JSON value per line (as BFCL ships its
    data) is read as JSONL. Returns (data, line of each item for JSONL, problems)."""
    if suffix == ".jsonl":
        return _parse_jsonl(text)
    if suffix == ".json":
        try:
            return json.loads(text), None, []
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":
                data, lines, problems = _parse_jsonl(text)
                if not problems:
                    return data, lines, []
            return None, None, [f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]
    return _parse_yaml(text)


def _parse_jsonl(text: str) -> tuple[list[Any], list[int | None], list[str]]:
    items: list[Any] = []
    lines: list[int | None] = []
    problems: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
            lines.append(lineno)
        except json.JSONDecodeError as exc:
            problems.append(f"invalid JSON at line {lineno}, column {exc.colno}: {exc.msg}")
    return items, lines, problems


def _parse_yaml(text: str) -> tuple[Any, None, list[str]]:
    try:
        return yaml.load(text, Loader=_yaml_loader()), None, []
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(x for x in (exc.context, exc.problem) if x) or str(exc)
        return None, None, [f"invalid YAML{where}: {what}"]
    except yaml.YAMLError as exc:
        return None, None, [f"invalid YAML: {exc}"]


@functools.cache
def _yaml_loader() -> type:
    """A safe loader that keeps dates as strings: tool schemas must stay JSON values."""
    class JsonishLoader(yaml.SafeLoader):
        pass

    JsonishLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return JsonishLoader
