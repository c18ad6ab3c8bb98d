"""Personas: loading (ours or PersonaHub-style JSONL) and the top-k retrieval-with-randomisation sampler."""

from __future__ import annotations

import hashlib
import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from ..errors import InputError
from ..records import Persona, Tool
from .embeddings import Embedder
from .index import tool_text

HUB_FIELDS: tuple[str, ...] = ("persona", "input persona")  # where PersonaHub's files keep the text
SHOWN = 3  # problems of one kind listed one by one; more are summarised

log = logging.getLogger("utcgen.personas")


@dataclass
class _Problem:
    kind: str  # problems of one kind are summarised together when there are many
    where: str  # "FILE: line N" or "FILE: persona #N"
    message: str
    fields: list[str] | None = None  # the record's fields, when the text was not found


def _records(path: Path) -> tuple[list[tuple[str, object]], list[_Problem]]:
    """(location, raw item) pairs from a JSONL file or a JSON list, and unreadable lines."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{path}: cannot read personas: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from exc
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from exc
        if not isinstance(data, list):
            raise InputError(f"{path}: expected a JSON list of personas")
        return [(f"{path}: persona #{i}", item) for i, item in enumerate(data)], []
    out, problems = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((f"{path}: line {lineno}", json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(_Problem("json", f"{path}: line {lineno}", f"invalid JSON: {exc.msg}"))
    return out, problems


def load_personas(path: str | Path, field: str | None = None) -> list[Persona]:
    """Personas from a JSONL file (or a JSON list): our records or PersonaHub-style ones.

    Without `field`, a record with a `text` field is one of ours (id, text, role, ...);
    otherwise its text is read from `persona` or `input persona` (PersonaHub names it
    either way, depending on the file). With `field`, every record's text is read from that
    field. Records read for their text keep only it and their `id` (else the id is a hash of
    the text, and a repeated text is the same persona, kept once).

    Every problem is reported at once, naming file, line and field; when more than three
    records fail the same way they are summarised (how many, the first three, the fix).
    """
    path = Path(path)
    items, problems = _records(path)
    personas: list[Persona] = []
    seen: set[str] = set()
    repeats = 0
    for where, item in items:
        if not isinstance(item, dict):
            problems.append(_Problem("not-object", where, f"expected an object, got {type(item).__name__}"))
            continue
        if field is not None:
            source: str | None = field
        elif "text" in item:
            source = None  # one of ours
        else:
            source = next((f for f in HUB_FIELDS if f in item), None)
            if source is None:
                problems.append(_Problem("no-text", where, "no persona text", [str(k) for k in item]))
                continue
        if source is not None:
            if source not in item:
                problems.append(_Problem("no-text", where, "no persona text", [str(k) for k in item]))
                continue
            text = item[source]
            if not isinstance(text, str) or not text.strip():
                problems.append(_Problem(f"bad-text:{source}", where, f"field {source!r}: must be a non-empty string"))
                continue
            derived = not item.get("id")
            pid = "ph-" + hashlib.sha1(text.strip().encode()).hexdigest()[:10] if derived else str(item["id"])
            if derived and pid in seen:
                repeats += 1
                continue
            item = {"id": pid, "text": text.strip()}
        try:
            persona = Persona.model_validate(item)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"])
                problems.append(_Problem(f"field:{loc}:{err['type']}", where, f"field '{loc}': {err['msg']}"))
            continue
        if not persona.text.strip():
            problems.append(_Problem("empty-text", where, "field 'text': must not be empty"))
        elif persona.id in seen:
            problems.append(_Problem("duplicate-id", where, f"field 'id': duplicate persona id '{persona.id}'"))
        seen.add(persona.id)
        personas.append(persona)
    if problems:
        raise InputError(_report(path, problems, len(items) + sum(p.kind == "json" for p in problems), field))
    if not personas:
        raise InputError(f"{path}: no personas found")
    if repeats:
        log.warning("%s: %d records repeat a persona text already read; each is kept once", path, repeats)
    return personas


def _report(path: Path, problems: list[_Problem], total: int, field: str | None) -> list[str]:
    """One line per problem, except for kinds met more than SHOWN times: those get a count,
    the first SHOWN examples and what to do."""
    by_kind: dict[str, list[_Problem]] = {}
    for p in problems:
        by_kind.setdefault(p.kind, []).append(p)
    lines: list[str] = []
    for kind, group in by_kind.items():
        if kind == "no-text":
            wanted = f"field {field!r}" if field is not None else (
                "'text', " + " or ".join(repr(f) for f in HUB_FIELDS) + " field"
            )
            for p in group[:SHOWN] if len(group) > SHOWN else group:
                shown_fields = ", ".join(repr(f) for f in p.fields or []) or "none"
                p.message = f"no persona text: no {wanted} (fields: {shown_fields})"
        count = len(group)
        if count <= SHOWN and (count < total or total == 1):
            lines += [f"{p.where}: {p.message}" for p in group]
            continue
        how_many = f"all {count} records" if count == total else f"{count} of {total} records"
        first = f"; the first {SHOWN}:" if count > SHOWN else ":"
        lines.append(f"{path}: {how_many} fail the same way{first}")
        lines += [f"  {p.where}: {p.message}" for p in group[:SHOWN]]
        lines.append(f"  fix: {_fix(kind, group, field)}")
    return lines


def _fix(kind: str, group: list[_Problem], field: str | None) -> str:
    if kind == "no-text":
        seen = list(dict.fromkeys(f for p in group for f in p.fields or []))
        listed = ", ".join(repr(f) for f in seen[:12]) + (", ..." if len(seen) > 12 else "")
        return (f"pass --persona-field NAME (persona_field: NAME in a run config) naming the field that "
                f"holds the persona text; fields seen: {listed or 'none'}")
    if kind == "json":
        return "personas are JSON Lines: one JSON object per line"
    if kind.startswith("field:"):
        return ("records with a 'text' field are read as utcgen personas (id, text, role, seniority, "
                "line_of_business, style, attributes); to read only the text of other records, "
                "pass --persona-field NAME")
    return "correct these records or leave them out of the file"


class PersonaSampler:
    """pi_rand^(k): rank personas by cosine to the seed tool, pick uniformly among the top k.

    Deterministic for (seed, tool name): the same run always gives a tool the same persona.
    """

    def __init__(self, personas: list[Persona], embedder: Embedder, k: int = 8, seed: int = 0) -> None:
        self.personas = personas
        self.embedder = embedder
        self.k = max(1, min(k, len(personas)))
        self.seed = seed
        self.vectors = embedder.encode([p.text for p in personas])

    def top_k(self, tool: Tool, tool_vector: np.ndarray | None = None) -> list[Persona]:
        vec = tool_vector if tool_vector is not None else self.embedder.encode([tool_text(tool)])[0]
        scores = self.vectors @ vec
        top = np.argsort(-scores, kind="stable")[: self.k]
        return [self.personas[i] for i in top]

    def fit(self, persona: Persona, tool: Tool, tool_vector: np.ndarray | None = None) -> float:
        """Cosine between the persona's text and the tool's: the score `top_k` ranks by."""
        vec = tool_vector if tool_vector is not None else self.embedder.encode([tool_text(tool)])[0]
        i = next(i for i, p in enumerate(self.personas) if p.id == persona.id)
        return float(self.vectors[i] @ vec)

    def sample(self, tool: Tool, tool_vector: np.ndarray | None = None, attempt: int = 0) -> Persona:
        rng = random.Random(f"{self.seed}:{tool.name}:{attempt}:persona")
        return rng.choice(self.top_k(tool, tool_vector))
