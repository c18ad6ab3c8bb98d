"""Personas: loading (ours or PersonaHub-style JSONL) and the top-k retrieval-with-randomisation sampler.

The sampler draws only personas whose role would plausibly use the tool (`rolefit`: judged on
the role, not the text) and, of those, personas whose text reaches the persona-fit threshold
(MIN_FIT); validators/personafit.py enforces both. When no persona of the pool does, it composes
one for the tool's domain, so a catalog unlike the pool does not lose its seed tools.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lemminflect import getAllLemmas
from pydantic import ValidationError

from ..core.errors import InputError
from ..core.records import Persona, Tool
from ..core.text import content_words, stem
from ..dialogue.shortcuts import GENERIC
from .embeddings import Embedder
from .model import index_text
from .rolefit import MAX_SCORE, RoleJudge

HUB_FIELDS: tuple[str, ...] = ("persona", "input persona")  # where PersonaHub's files keep the text
SHOWN = 3  # problems of one kind listed one by one; more are summarised
# Cosine between persona and tool text below which the user is not someone who would need the tool.
# Measured with the shipped pool: a persona of an unrelated line of business scores 0.07-0.12 at the
# median; a tool's best persona scores 0.21-0.28 at the 5th percentile, on the shipped catalog and on
# real MCP, OpenAPI and BFCL catalogs.
MIN_FIT = 0.15
COMPOSED = "composed-"  # id prefix of a persona composed for a tool no pooled persona fits
# Added to the ranking score (not to the recorded fit) of a persona whose line of business is the
# tool's: on the shipped catalog it raises same-line personas in the top 8 from 33% to 61% and keeps
# consumers and developers (20% -> 12%) for the tools they fit best; imported catalogs, whose
# lines match no persona's, are ranked by plain cosine.
LINE_BONUS = 0.05

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
    if not text.strip():
        raise InputError(f"{path}: the personas file is empty")
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
    """pi_rand^(k): rank personas by cosine to the seed tool (LINE_BONUS for the tool's own line of
    business), pick uniformly among the top k.

    Only personas whose role agrees with the tool (`rolefit`, score up to MAX_SCORE) are ranked, when any does
    (a persona without a role cannot be judged and is not excluded); of their top k, only those whose
    fit reaches `min_fit` are drawn (the persona-fit validator would reject the others, wasting the
    attempt). When no persona of the pool does both, `sample` returns a persona composed for the
    tool's domain (`compose`), unless `compose_missing` is off. Deterministic for (seed, tool name):
    the same run always gives a tool the same persona.
    """

    def __init__(self, personas: list[Persona], embedder: Embedder, k: int = 8, seed: int = 0,
                 min_fit: float = MIN_FIT, compose_missing: bool = True) -> None:
        self.personas = personas
        self.embedder = embedder
        self.k = max(1, min(k, len(personas)))
        self.seed = seed
        self.min_fit = min_fit
        self.compose_missing = compose_missing
        self.vectors = embedder.encode([p.text for p in personas])
        self._row = {p.id: i for i, p in enumerate(personas)}
        self._lines = np.array([p.line_of_business or "" for p in personas])
        self.judge = RoleJudge(embedder.encode)
        self._roles = np.array([bool((p.role or "").strip()) for p in personas])
        self._role_vectors = self.judge.role_vectors([((p.role or "").strip(), p.line_of_business or None)
                                                     for p in personas])
        self._role_lines = [p.line_of_business for p in personas]

    def role_scores(self, tool: Tool, tool_vector: np.ndarray | None = None,
                    neighbours: np.ndarray | None = None) -> np.ndarray:
        """Per persona: its role's fit to the tool (`rolefit`: agrees up to MAX_SCORE; NaN: no role), the
        tool read with `neighbours`, its distractors' vectors. The judgement embeds the tools' index
        texts, so the index's vectors serve."""
        scores = self.judge.judged(self._role_vectors, self._role_lines, self._vector(tool, tool_vector), neighbours)
        return np.where(self._roles, scores, np.nan)

    def role_fit(self, persona: Persona, tool: Tool, tool_vector: np.ndarray | None = None,
                 neighbours: np.ndarray | None = None) -> float | None:
        """The score `role_scores` gives the persona's role (None: a persona without a role)."""
        if not (persona.role or "").strip():
            return None
        row = self._row.get(persona.id)
        if row is None or self.personas[row].role != persona.role:
            vector = self.judge.role_vectors([((persona.role or "").strip(), persona.line_of_business)])
            return float(self.judge.judged(vector, [persona.line_of_business], self._vector(tool, tool_vector),
                                           neighbours)[0])
        return float(self.role_scores(tool, tool_vector, neighbours)[row])

    def _agreeing(self, tool: Tool, tool_vector: np.ndarray | None = None,
                  neighbours: np.ndarray | None = None) -> np.ndarray:
        """Per persona: whether its role agrees with the tool (a persona without a role does)."""
        scores = self.role_scores(tool, tool_vector, neighbours)
        return ~self._roles | (np.nan_to_num(scores, nan=np.inf) <= MAX_SCORE)

    def _vector(self, tool: Tool, tool_vector: np.ndarray | None) -> np.ndarray:
        return tool_vector if tool_vector is not None else self.embedder.encode([index_text(tool)])[0]

    def ranked(self, tool: Tool, tool_vector: np.ndarray | None = None,
               neighbours: np.ndarray | None = None) -> list[tuple[Persona, float]]:
        """The k personas closest to the tool of those whose role agrees with it (of all, when none
        does), best first, with their fit (personas of the tool's line of business ranked LINE_BONUS
        higher than their fit)."""
        scores = self.vectors @ self._vector(tool, tool_vector)
        rank = scores + LINE_BONUS * (self._lines == tool.line_of_business) if tool.line_of_business else scores
        agreeing = self._agreeing(tool, tool_vector, neighbours)
        if agreeing.any():
            rank = np.where(agreeing, rank, -np.inf)
        top = np.argsort(-rank, kind="stable")[: min(self.k, int(agreeing.sum()) or self.k)]
        return [(self.personas[i], float(scores[i])) for i in top]

    def top_k(self, tool: Tool, tool_vector: np.ndarray | None = None,
              neighbours: np.ndarray | None = None) -> list[Persona]:
        """The personas `sample` draws from: the top k that reach `min_fit` (all top k when none does)."""
        ranked = self.ranked(tool, tool_vector, neighbours)
        fitting = [p for p, score in ranked if score >= self.min_fit]
        return fitting or [p for p, _ in ranked]

    def fit(self, persona: Persona, tool: Tool, tool_vector: np.ndarray | None = None) -> float:
        """Cosine between the persona's text and the tool's: the score `top_k` ranks by."""
        row = self._row.get(persona.id)
        vector = self.vectors[row] if row is not None else self.embedder.encode([persona.text])[0]
        return float(vector @ self._vector(tool, tool_vector))

    def _best_role(self, tool: Tool, tool_vector: np.ndarray | None,
                   neighbours: np.ndarray | None) -> tuple[str, str | None] | None:
        """The pool's role that agrees best with the tool (None: no persona has a role)."""
        scores = np.nan_to_num(self.role_scores(tool, tool_vector, neighbours), nan=np.inf)
        if not np.isfinite(scores).any():
            return None
        best = self.personas[int(np.argmin(scores))]
        return (best.role or "").strip(), best.line_of_business

    def sample(self, tool: Tool, tool_vector: np.ndarray | None = None, attempt: int = 0,
               neighbours: np.ndarray | None = None) -> Persona:
        """A persona for the tool (`neighbours`: its distractors' vectors, which the role judgement reads)."""
        rng = random.Random(f"{self.seed}:{tool.name}:{attempt}:persona")
        ranked = self.ranked(tool, tool_vector, neighbours)
        if self.compose_missing and not self._agreeing(tool, tool_vector, neighbours).any():
            return compose(tool, rng)  # no role of the pool would use the tool
        if self.compose_missing and ranked[0][1] < self.min_fit:
            composed = compose(tool, rng, self._best_role(tool, tool_vector, neighbours))
            if self.fit(composed, tool, tool_vector) > ranked[0][1]:
                log.debug("%s: no persona reaches fit %.2f; composed one", tool.name, self.min_fit)
                return composed
        return rng.choice(self.top_k(tool, tool_vector, neighbours))


_NEEDS = ("keeps needing answers about", "regularly has to deal with", "often has questions on",
          "spends part of most weeks on")
_HOW = ("They know the outcome they want but not which tool gives it, and say it in their own words.",
        "They describe what they are after in everyday words, not in the tool's terms.",
        "They can say what they need and why, but have never looked at the tool list.")
# Words of a description that say what a tool does or how, not what it is about.
_VAGUE = GENERIC | set(
    "provide return returns calculate compute convert given specific based using used certain several "
    "together potential mainly multiple various particular current following within between also "
    "function tool value values number numbers type specified provided".split())


def _topics(tool: Tool) -> list[str]:
    """Up to four words naming what the tool is about: description nouns first, then name words."""
    described = content_words(tool.description, min_len=4)
    first = content_words(tool.description.split(maxsplit=1)[0]) if tool.description.strip() else []
    if described and first and described[0] == first[0]:
        described = described[1:]  # a description opens with what the tool does ("Reserve a table ...")
    words = described + content_words(text_of_name(tool.name), min_len=4)
    by_stem: dict[str, str] = {}
    for w in words:
        classes = getAllLemmas(w.lower())
        if w not in _VAGUE and not w.isdigit() and ("NOUN" in classes or not classes):  # not 'different', 'nearby'
            by_stem.setdefault(stem(w), w)  # "colors" and "color" are one topic
    return list(by_stem.values())[:4]


def text_of_name(name: str) -> str:
    return name.replace("_", " ").replace(".", " ").replace("-", " ")


def compose(tool: Tool, rng: random.Random, role: tuple[str, str | None] | None = None) -> Persona:
    """A persona for a tool no pooled persona's text fits: one of `role` (role, line of business), the pool's
    role that agrees best with the tool, or else someone in the tool's line of business, who needs what its
    description is about (two of its words, never a run of it).

    Its id starts with COMPOSED, so data made with composed personas can be told apart.
    """
    topic = _topics(tool)[:2] or ["this kind of task"]
    listed = " and ".join(topic)
    area = (tool.line_of_business or "").replace("_", " ")
    if role and role[0]:
        who, line = f"{'An' if role[0][:1].lower() in 'aeiou' else 'A'} {role[0]}", role[1]
    else:
        who, line = (f"Someone working in {area}" if area else "Someone"), tool.line_of_business
    text = f"{who} who {rng.choice(_NEEDS)} {listed}. {rng.choice(_HOW)}"
    pid = COMPOSED + hashlib.sha1(f"{tool.name}\n{text}".encode()).hexdigest()[:10]
    return Persona(id=pid, text=text, role=role[0] if role and role[0] else None, line_of_business=line)
