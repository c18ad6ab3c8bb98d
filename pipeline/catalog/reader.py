"""Load a tool catalog from files in any supported format, validated as a whole.

Every stage trusts the tools it is given, so a catalog is checked completely before any
of it is used: `load_catalog` either returns every tool or raises one InputError listing
every problem found, each as ``FILE: tool #N 'name': field: message``. ``#N`` counts from
0 in the file's own order (operations in document order for OpenAPI); JSONL problems also
give the line, OpenAPI ones the operation (``GET /pets``). Fields are named as in the
source format (``inputSchema`` for MCP, ``function.parameters`` for OpenAI).

What an importer had to change or leave out to import a tool (a BFCL enum rewritten, an
OpenAPI body whose media type cannot be arguments...) is a warning, in the same shape:
`read_catalog` returns them on the `Catalog`, `load_catalog` logs each on the
``utcgen.catalog`` logger.

Which format a file is in is decided per file; see utcgen.pipeline.catalog.formats for the rules.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..records import Tool
from .formats import (
    FORMATS,
    JSON_TYPES,
    Candidate,
    Extracted,
    FormatError,
    RefError,
    detect_format,
    extract,
    kind_of,
    resolve_pointer,
    walk_schema,
)

__all__ = [
    "CATALOG_SUFFIXES",
    "FORMATS",
    "Catalog",
    "CatalogFile",
    "catalog_files",
    "check_parameters",
    "check_tool",
    "load_catalog",
    "read_catalog",
]

CATALOG_SUFFIXES: tuple[str, ...] = (".json", ".jsonl", ".yaml", ".yml")
NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")
MAX_NAME_LENGTH = 64  # what OpenAI-style function calling accepts
TOOL_FIELDS = tuple(Tool.model_fields)

log = logging.getLogger("utcgen.catalog")

Problem = tuple[str, str]  # (field, message)


@dataclass(frozen=True)
class CatalogFile:
    """One file that went into a catalog: where, in which format, how many tools."""

    path: str
    format: str
    tools: int


@dataclass(frozen=True)
class Catalog:
    """A loaded catalog: the tools in file order, the files they came from, and one line per
    change an importer made to get them (``FILE: tool #N 'name' (where): field: what``)."""

    tools: list[Tool]
    files: list[CatalogFile]
    warnings: list[str] = field(default_factory=list)

    @property
    def formats(self) -> list[str]:
        """The formats of the files, each once, in the order first met."""
        return list(dict.fromkeys(f.format for f in self.files))


def load_catalog(path: str | os.PathLike[str], format: str | None = None) -> list[Tool]:
    """All tools of a catalog file or directory; raises InputError listing every problem.

    Warnings (see `read_catalog`) go to the ``utcgen.catalog`` logger, one record each.
    """
    catalog = read_catalog(path, format)
    for warning in catalog.warnings:
        log.warning("catalog warning: %s", warning)
    return catalog.tools


def read_catalog(path: str | os.PathLike[str], format: str | None = None) -> Catalog:
    """Like load_catalog, also saying which files (and formats) the tools came from.

    `path` is a .json/.jsonl/.yaml/.yml file or a directory whose such files (not hidden,
    not in subdirectories) are read in name order. `format` forces one of FORMATS for
    every file instead of detecting it per file.
    """
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown format {format!r} (expected one of: {', '.join(FORMATS)})")
    problems: list[str] = []
    warnings: list[str] = []
    found: list[tuple[str, Candidate]] = []
    files: list[CatalogFile] = []
    for shown, file in catalog_files(path):
        fmt, extracted = _read_file(file, shown, format)
        candidates = extracted.candidates
        problems += extracted.problems
        warnings += extracted.warnings
        if fmt is not None:
            files.append(CatalogFile(shown, fmt, len(candidates)))
        for cand in candidates:
            warnings += [_problem(shown, cand, f, m) for f, m in cand.warnings]
            problems += [_problem(shown, cand, f, m) for f, m in cand.problems]
            problems += [_problem(shown, cand, _source_field(cand, f), m) for f, m in check_tool(cand.data)]
            found.append((shown, cand))
    problems += _duplicates(found)
    if problems:
        raise InputError(problems)
    tools: list[Tool] = []
    for shown, cand in found:
        try:
            tools.append(Tool.model_validate(cand.data))
        except ValidationError as exc:  # our checks should have caught it; say where anyway
            problems += [
                _problem(shown, cand, ".".join(map(str, e["loc"])), e["msg"]) for e in exc.errors()
            ]
    if problems:
        raise InputError(problems)
    return Catalog(tools, files, warnings)


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


# --------------------------------------------------------------------------- reading


def _read_file(file: Path, shown: str, forced: str | None) -> tuple[str | None, Extracted]:
    """(format, what its importer found) of one file, file-level messages prefixed with
    the file; format None if unknown."""
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, Extracted(problems=[f"{shown}: not UTF-8 text (bad byte at offset {exc.start})"])
    except OSError as exc:
        return None, Extracted(problems=[f"{shown}: cannot read: {exc.strerror or exc}"])
    if not text.strip():
        return None, Extracted(problems=[f"{shown}: file is empty"])
    data, lines, problems = _parse(text, file.suffix.lower(), shown)
    if problems:
        return None, Extracted(problems=problems)
    try:
        fmt = forced or detect_format(data)
    except FormatError as exc:
        return None, Extracted(problems=[f"{shown}: {exc}"])
    found = extract(data, fmt, lines)
    found.problems = [f"{shown}: {p}" for p in found.problems]
    found.warnings = [f"{shown}: {w}" for w in found.warnings]
    if not found.candidates and not found.problems:
        found.problems.append(f"{shown}: contains no tools")
    return fmt, found


def _parse(text: str, suffix: str, shown: str) -> tuple[Any, list[int | None] | None, list[str]]:
    """Parse by extension. A .json file holding one JSON value per line (as BFCL ships its
    data) is read as JSONL. Returns (data, line of each item for JSONL, problems)."""
    if suffix == ".jsonl":
        return _parse_jsonl(text, shown)
    if suffix == ".json":
        try:
            return json.loads(text), None, []
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":
                data, lines, problems = _parse_jsonl(text, shown)
                if not problems:
                    return data, lines, []
            return None, None, [f"{shown}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]
    return _parse_yaml(text, shown)


def _parse_jsonl(text: str, shown: str) -> tuple[list[Any], list[int | None], list[str]]:
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
            problems.append(f"{shown}: invalid JSON at line {lineno}, column {exc.colno}: {exc.msg}")
    return items, lines, problems


def _parse_yaml(text: str, shown: str) -> tuple[Any, None, list[str]]:
    import yaml

    try:
        return yaml.load(text, Loader=_yaml_loader()), None, []
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(x for x in (exc.context, exc.problem) if x) or str(exc)
        return None, None, [f"{shown}: invalid YAML{where}: {what}"]
    except yaml.YAMLError as exc:
        return None, None, [f"{shown}: invalid YAML: {exc}"]


@functools.cache
def _yaml_loader() -> type:
    """A safe loader that keeps dates as strings: tool schemas must stay JSON values."""
    import yaml

    class JsonishLoader(yaml.SafeLoader):
        pass

    JsonishLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return JsonishLoader


# --------------------------------------------------------------------------- checking


def _problem(shown: str, cand: Candidate, field: str, message: str) -> str:
    return f"{_where(shown, cand)}: {field}: {message}" if field else f"{_where(shown, cand)}: {message}"


def _where(shown: str, cand: Candidate) -> str:
    label = f"{shown}: tool #{cand.index}"
    if cand.name is not None:
        label += f" {cand.name!r}"
    extras = [x for x in (f"line {cand.line}" if cand.line else None, cand.origin) if x]
    return label + (f" ({', '.join(extras)})" if extras else "")


def _source_field(cand: Candidate, field: str) -> str:
    for ours, theirs in cand.field_map.items():
        if field == ours or field.startswith((ours + ".", ours + "[")):
            return theirs + field[len(ours):]
    return field


def check_tool(data: Any) -> list[Problem]:
    """Every problem with one tool in native shape, as (field, message) pairs."""
    if not isinstance(data, dict):
        return []  # already reported by the importer
    problems: list[Problem] = []
    for key in data:
        if key not in TOOL_FIELDS:
            problems.append((str(key), f"unknown field (a tool has: {', '.join(TOOL_FIELDS)})"))
    problems += _check_name(data)
    description = data.get("description")
    if "description" not in data:
        problems.append(("description", "missing"))
    elif not isinstance(description, str):
        problems.append(("description", f"must be a string, got a {kind_of(description)}"))
    elif not description.strip():
        problems.append(("description", "is empty"))
    if "parameters" in data:
        problems += check_parameters(data["parameters"])
    lob = data.get("line_of_business")
    if lob is not None and not isinstance(lob, str):
        problems.append(("line_of_business", f"must be a string or null, got a {kind_of(lob)}"))
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        problems.append(("tags", "must be a list of strings"))
    return problems


def _check_name(data: dict[str, Any]) -> list[Problem]:
    if "name" not in data:
        return [("name", "missing")]
    name = data["name"]
    if not isinstance(name, str):
        return [("name", f"must be a string, got a {kind_of(name)}")]
    if not name.strip():
        return [("name", "is empty")]
    problems: list[Problem] = []
    if len(name) > MAX_NAME_LENGTH:
        problems.append(("name", f"is {len(name)} characters long (at most {MAX_NAME_LENGTH})"))
    if not NAME_RE.fullmatch(name):
        bad = "".join(sorted(set(re.sub(r"[A-Za-z0-9_.-]", "", name))))
        problems.append(
            ("name", f"{name!r} contains {bad!r}: only letters, digits, '_', '.' and '-' are allowed")
        )
    return problems


def check_parameters(params: Any) -> list[Problem]:
    """Problems with a tool's `parameters` schema: our rules first, then the 2020-12 metaschema
    (whose findings are skipped where ours already explain the same spot)."""
    if not isinstance(params, dict):
        return [("parameters", f"must be a JSON Schema object, got a {kind_of(params)}")]
    problems: list[Problem] = []
    if params.get("type") != "object":
        got = f"got {params['type']!r}" if "type" in params else "it is missing"
        problems.append(("parameters.type", f"must be 'object' (arguments are a JSON object); {got}"))
    for path, node in walk_schema(params):
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            problems.append((path, f"must be a schema object, got a {kind_of(node)}"))
            continue
        problems += _check_node(node, path, params, is_root=path == "parameters")
    ours = [where for where, _ in problems]
    for where, message in _metaschema_errors(params):
        if not any(_overlaps(where, other) for other in ours):
            problems.append((where, message))
    return list(dict.fromkeys(problems))


def _overlaps(a: str, b: str) -> bool:
    """Whether one field path is the other or lies inside it."""
    short, long = sorted((a, b), key=len)
    return long == short or long.startswith((short + ".", short + "["))


def _check_node(node: dict[str, Any], path: str, root: dict[str, Any], is_root: bool) -> list[Problem]:
    problems: list[Problem] = []
    declared: list[str] = []
    if "type" in node and not is_root:  # the root's type is check_parameters' business
        t = node["type"]
        names = [t] if isinstance(t, str) else t if isinstance(t, list) else None
        if names is None:
            problems.append((f"{path}.type", f"must be a type name or a list of them, got a {kind_of(t)}"))
        for name in names or []:
            if isinstance(name, str) and name in JSON_TYPES:
                declared.append(name)
            else:
                problems.append(
                    (f"{path}.type", f"unknown type {name!r} (allowed: {', '.join(sorted(JSON_TYPES))})")
                )
    props = node.get("properties", {})
    if not isinstance(props, dict):
        problems.append((f"{path}.properties", f"must be a mapping of name to schema, got a {kind_of(props)}"))
        props = {}
    for key, sub in props.items():
        if not isinstance(key, str):
            problems.append((f"{path}.properties", f"property name {key!r} is not a string (quote it in YAML)"))
        if isinstance(sub, bool):
            problems.append((f"{path}.properties.{key}", "must be a schema object, got a boolean"))
    if "required" in node:
        problems += _check_required(node["required"], props, f"{path}.required",
                                    check_names=is_root or "properties" in node)
    for keyword in ("enum", "const"):
        if keyword not in node:
            continue
        values = node[keyword] if keyword == "enum" else [node[keyword]]
        if keyword == "enum" and not isinstance(values, list):
            problems.append((f"{path}.enum", f"must be a list of values, got a {kind_of(values)}"))
            continue
        if keyword == "enum" and not values:
            problems.append((f"{path}.enum", "is empty: no value could ever be valid"))
        if declared:
            for value in values:
                if not any(_is_type(value, t) for t in declared):
                    problems.append(
                        (f"{path}.{keyword}", f"value {value!r} is not of the declared type {' or '.join(declared)}")
                    )
    if "pattern" in node:
        problems += _check_regex(node["pattern"], f"{path}.pattern")
    if isinstance(node.get("patternProperties"), dict):
        for rx in node["patternProperties"]:
            problems += _check_regex(rx, f"{path}.patternProperties")
    ref = node.get("$ref")
    if isinstance(ref, str):
        if not ref.startswith("#"):
            problems.append((f"{path}.$ref", f"{ref!r}: only local references ('#/...') are supported"))
        else:
            try:
                resolve_pointer(root, ref)
            except RefError:
                problems.append((f"{path}.$ref", f"{ref!r} does not resolve within parameters"))
    return problems


def _check_required(required: Any, props: dict[str, Any], field: str, check_names: bool) -> list[Problem]:
    if not isinstance(required, list):
        return [(field, f"must be a list of property names, got a {kind_of(required)}")]
    problems: list[Problem] = []
    seen: set[str] = set()
    for name in required:
        if not isinstance(name, str):
            problems.append((field, f"{name!r} is not a property name (a string)"))
            continue
        if name in seen:
            problems.append((field, f"{name!r} is listed twice"))
        seen.add(name)
        if check_names and name not in props:
            problems.append((field, f"{name!r} is not in properties"))
    return problems


def _check_regex(pattern: Any, field: str) -> list[Problem]:
    if not isinstance(pattern, str):
        return [(field, f"must be a string, got a {kind_of(pattern)}")]
    try:
        re.compile(pattern)
    except re.error as exc:
        return [(field, f"{pattern!r} does not compile: {exc}")]
    return []


def _is_type(value: Any, type_name: str) -> bool:
    """JSON Schema's notion of a value's type (1.0 is an integer; True is not a number)."""
    if isinstance(value, bool):
        return type_name == "boolean"
    if type_name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, {
        "string": str, "number": (int, float), "boolean": bool,
        "null": type(None), "array": list, "object": dict,
    }[type_name])


@functools.cache
def _metaschema_validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(
        Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _metaschema_errors(params: dict[str, Any]) -> list[Problem]:
    out: list[Problem] = []
    for err in _metaschema_validator().iter_errors(params):
        field = "parameters" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path
        )
        out.append((field, f"invalid JSON Schema: {err.message}"))
    return out


def _duplicates(found: list[tuple[str, Candidate]]) -> list[str]:
    """One problem per repeated name, naming where it was first defined."""
    first: dict[str, tuple[str, Candidate]] = {}
    problems: list[str] = []
    for shown, cand in found:
        name = cand.name
        if name is None:
            continue
        if name in first:
            other_file, other = first[name]
            problems.append(_problem(shown, cand, "name", f"already used by {_where(other_file, other)}"))
        else:
            first[name] = (shown, cand)
    return problems
