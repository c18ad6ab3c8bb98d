"""The near-duplicate composite similarity of DiaFORGE Appendix A.4.

S = 0.40 * S_name + 0.35 * S_desc + 0.25 * S_param; a pair is a near duplicate iff S >= 0.70.
Pure functions: the description cosine is passed in, so this module needs no model.
"""

from __future__ import annotations

from typing import Any

from ..records import Tool

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
    return min(1.0, max(0.0, (1.0 + cosine) / 2.0))


def base_type(schema: dict[str, Any]) -> str:
    """The normalised base type of a parameter: string, integer, float, date, bool, array, object."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string" and schema.get("format") in ("date", "date-time"):
        return "date"
    return {"number": "float", "boolean": "bool", None: "any"}.get(kind, str(kind))


def param_similarity(a: Tool, b: Tool) -> float:
    """1/2 Jaccard of required keys + 1/2 type agreement on the shared keys (empty conventions of A.4)."""
    keys_a, keys_b = set(a.required), set(b.required)
    union, shared = keys_a | keys_b, keys_a & keys_b
    s_set = len(shared) / len(union) if union else 1.0
    if shared:
        agree = sum(base_type(a.properties.get(k, {})) == base_type(b.properties.get(k, {})) for k in shared)
        s_type = agree / len(shared)
    else:
        s_type = 0.0
    return 0.5 * s_set + 0.5 * s_type


def composite_similarity(a: Tool, b: Tool, description_cosine: float) -> float:
    return (
        W_NAME * name_similarity(a.name, b.name)
        + W_DESC * description_similarity(description_cosine)
        + W_PARAM * param_similarity(a, b)
    )
