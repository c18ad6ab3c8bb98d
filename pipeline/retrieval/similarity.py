"""The near-duplicate composite similarity of DiaFORGE Appendix A.4.

S = 0.40 * S_name + 0.35 * S_desc + 0.25 * S_param; a pair is a near duplicate iff S >= 0.70.
Pure functions: the description cosine is passed in, so this module needs no model.
`composite_similarities` scores many pairs at once (a catalog's retrieved neighbours), with the
same values as `composite_similarity` pair by pair.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.records import Tool

W_NAME, W_DESC, W_PARAM = 0.40, 0.35, 0.25
NEAR_DUPLICATE_THRESHOLD = 0.70


def lcs_length(a: str, b: str) -> int:
    """Character LCS length, bit-parallel (Hyyrö): one big-int step per character of `b`."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for ch in b:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def name_similarity(a: str, b: str) -> float:
    """2 * LCS / (|a| + |b|) on lowercased names."""
    a, b = a.lower(), b.lower()
    if not a and not b:
        return 1.0
    return 2.0 * lcs_length(a, b) / (len(a) + len(b))


def description_similarity(cosine: float) -> float:
    """Rescales a cosine in [-1, 1] to [0, 1]."""
    return float(_description_similarities(np.array(cosine)))


def _description_similarities(cosines: np.ndarray) -> np.ndarray:
    return np.clip((1.0 + np.asarray(cosines, dtype=np.float64)) / 2.0, 0.0, 1.0)


def base_type(schema: dict[str, Any]) -> str:
    """The normalised base type of a parameter: string, integer, float, date, bool, array, object."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string" and schema.get("format") in ("date", "date-time"):
        return "date"
    return {"number": "float", "boolean": "bool", None: "any"}.get(kind, str(kind))


def _required_types(tool: Tool) -> dict[str, str]:
    """Each required key of `tool` with its base type."""
    return {key: base_type(tool.properties.get(key, {})) for key in tool.required}


def _param_score(a: dict[str, str], b: dict[str, str]) -> float:
    union, shared = a.keys() | b.keys(), a.keys() & b.keys()
    s_set = len(shared) / len(union) if union else 1.0
    s_type = sum(a[k] == b[k] for k in shared) / len(shared) if shared else 0.0
    return 0.5 * s_set + 0.5 * s_type


def param_similarity(a: Tool, b: Tool) -> float:
    """1/2 Jaccard of required keys + 1/2 type agreement on the shared keys (empty conventions of A.4)."""
    return _param_score(_required_types(a), _required_types(b))


def composite_similarity(a: Tool, b: Tool, description_cosine: float) -> float:
    return (
        W_NAME * name_similarity(a.name, b.name)
        + W_DESC * description_similarity(description_cosine)
        + W_PARAM * param_similarity(a, b)
    )


def _name_similarities(names: list[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`name_similarity(names[a[p]], names[b[p]])` for every pair p: the bit-parallel LCS of
    `lcs_length` run on all pairs at once in uint64 lanes, for names of up to 64 characters;
    longer names go pair by pair."""
    lowered = [name.lower() for name in names]
    lengths = np.array([len(name) for name in lowered], dtype=np.int64)
    out = np.empty(len(a), dtype=np.float64)
    short = (lengths[a] <= 64) & (lengths[b] <= 64)
    for p in np.flatnonzero(~short):
        out[p] = name_similarity(names[a[p]], names[b[p]])
    if not short.any():
        return out
    a, b = a[short], b[short]
    alphabet = {ch: code for code, ch in enumerate(sorted(set("".join(lowered))))}
    width = int(min(64, lengths.max()))
    fits = np.where(lengths <= 64, lengths, 0)
    rows = np.repeat(np.arange(len(names)), fits)  # (name, position) of every character of a short name
    cols = np.arange(len(rows)) - np.repeat(np.cumsum(fits) - fits, fits)
    flat = np.fromiter((alphabet[ch] for name in lowered if len(name) <= 64 for ch in name), dtype=np.int64, count=len(rows))
    codes = np.zeros((len(names), max(width, 1)), dtype=np.int64)  # each name's characters, as codes
    codes[rows, cols] = flat
    masks = np.zeros((len(names), len(alphabet)), dtype=np.uint64)  # per name: where each character is
    np.bitwise_or.at(masks, (rows, flat), np.uint64(1) << cols.astype(np.uint64))
    full = np.where(lengths >= 64, np.uint64(2**64 - 1), (np.uint64(1) << lengths.clip(0, 63).astype(np.uint64)) - np.uint64(1))
    v = full_a = full[a]
    for j in range(width):  # one step per character of b, as in lcs_length
        u = v & masks[a, codes[b, j]]
        step = ((v + u) | (v - u)) & full_a  # wraps at 64 bits, which the mask discards anyway
        v = np.where(j < lengths[b], step, v)
    lcs = lengths[a] - np.bitwise_count(v).astype(np.int64)
    total = lengths[a] + lengths[b]
    out[short] = np.where(total == 0, 1.0, 2.0 * lcs / np.maximum(total, 1))
    return out


def composite_similarities(tools: list[Tool], a: np.ndarray, b: np.ndarray, cosines: np.ndarray) -> np.ndarray:
    """`composite_similarity(tools[a[p]], tools[b[p]], cosines[p])` for every pair p, with each
    tool's name, required keys and their types read once."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    names = _name_similarities([tool.name for tool in tools], a, b)
    desc = _description_similarities(cosines)
    required = [_required_types(tool) for tool in tools]
    params = np.array([_param_score(required[i], required[j]) for i, j in zip(a.tolist(), b.tolist())], dtype=np.float64)
    return W_NAME * names + W_DESC * desc + W_PARAM * params
