"""Personas: loading (ours or PersonaHub-style JSONL) and the top-k retrieval-with-randomisation sampler."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from utcgen.pipeline.retrieval.embeddings import Embedder
from utcgen.pipeline.errors import InputError
from utcgen.pipeline.retrieval.index import tool_text
from utcgen.pipeline.records import Persona, Tool


def _records(path: Path) -> list[tuple[str, object]]:
    """(location, raw item) pairs from a JSONL file or a JSON list."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read personas: {exc.strerror or exc}") from exc
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from exc
        if not isinstance(data, list):
            raise InputError(f"{path}: expected a JSON list of personas")
        return [(f"{path}: persona #{i}", item) for i, item in enumerate(data)]
    out, problems = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((f"{path}: line {lineno}", json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(f"{path}: line {lineno}: invalid JSON: {exc.msg}")
    if problems:
        raise InputError(problems)
    return out


def load_personas(path: str | Path) -> list[Persona]:
    """Reads our persona records, or PersonaHub-style records whose text is in a `persona` field."""
    path = Path(path)
    personas, problems, seen = [], [], set()
    for where, item in _records(path):
        if not isinstance(item, dict):
            problems.append(f"{where}: expected an object, got {type(item).__name__}")
            continue
        if "persona" in item and "text" not in item:
            text = item.get("persona")
            if not isinstance(text, str) or not text.strip():
                problems.append(f"{where}: field 'persona': must be a non-empty string")
                continue
            pid = str(item.get("id") or "ph-" + hashlib.sha1(text.encode()).hexdigest()[:10])
            item = {"id": pid, "text": text.strip()}
        try:
            persona = Persona.model_validate(item)
        except ValidationError as exc:
            for err in exc.errors():
                field = ".".join(str(p) for p in err["loc"])
                problems.append(f"{where}: field '{field}': {err['msg']}")
            continue
        if not persona.text.strip():
            problems.append(f"{where}: field 'text': must not be empty")
        elif persona.id in seen:
            problems.append(f"{where}: field 'id': duplicate persona id '{persona.id}'")
        seen.add(persona.id)
        personas.append(persona)
    if problems:
        raise InputError(problems)
    if not personas:
        raise InputError(f"{path}: no personas found")
    return personas


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

    def sample(self, tool: Tool, tool_vector: np.ndarray | None = None, attempt: int = 0) -> Persona:
        rng = random.Random(f"{self.seed}:{tool.name}:{attempt}:persona")
        return rng.choice(self.top_k(tool, tool_vector))
