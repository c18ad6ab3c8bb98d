"""The offline assistant after a tool result: what the result says, in its own values, or, after an
error result, what went wrong and what would fix it.

It reads only what the prompt shows: the dialogue's last `tool` turn and the settled tool. A
successful result is reported by its short facts (a list's size and the first few items' names,
then a few scalar fields, each by its key said aloud and its value as the result writes it), so
every value it states is one the result holds (the answers rule). An error result is said as the
API said it; a wrong or unknown value is asked for again once, since the user may have mistyped
it; a refusal, a busy service or a second failure is explained, and nothing is claimed done.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from ..core.records import Tool
from ..core.text import spoken
from ..dialogue.parameter_labels import copula, is_plural, label
from ..llm.requests import Said
from .seeding import seeded
from .wording import reply_json

FACTS = 3  # scalar fields an answer states at most
_NAMES = ("name", "title", "display_name", "full_name", "login", "summary", "label", "subject")
_READS = ("get", "list", "search", "find", "fetch", "read", "show", "view", "check", "lookup", "query", "retrieve")


def last_result(history: Sequence[Said]) -> Any | None:
    """The last turn's result when the last turn is a tool's, else None."""
    if not history or history[-1].role != "tool":
        return None
    try:
        return json.loads(history[-1].content)
    except ValueError:
        return history[-1].content


def _success(turn: Said) -> Any | None:
    """A tool turn's result when it is no error, else None."""
    if turn.role != "tool":
        return None
    try:
        value = json.loads(turn.content)
    except ValueError:
        return turn.content
    return None if isinstance(value, dict) and isinstance(value.get("error"), dict) else value


def current_task(history: Sequence[Said]) -> tuple[list[Said], Any | None]:
    """(the turns of the request under way, the last successful result before it): once a result has
    been answered, the user's next turn starts a new request, which reads the result but not the
    questions and answers of the one done. The whole history and None when no result succeeded."""
    done = [i for i, m in enumerate(history) if _success(m) is not None]
    if not done:
        return list(history), None
    start = next((i for i in range(done[-1], len(history)) if history[i].role == "user"), len(history))
    return list(history[start:]), _success(history[done[-1]])


def answer(tool: Tool, history: Sequence[Said], seed: int) -> str:
    """The assistant's turn right after a tool result, in the JSON reply protocol."""
    result = last_result(history)
    rng = seeded(seed, tool.name, "answer", len(history))
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, dict):
        return _after_error(tool, history, error, rng)
    said = _report(tool, result, history, rng)
    thought = f"{tool.name} returned its result; I tell the user what it holds, and nothing it does not."
    return reply_json(thought, said)


def _after_error(tool: Tool, history: Sequence[Said], error: dict[str, Any], rng: random.Random) -> str:
    kind, message = str(error.get("type") or "error"), str(error.get("message") or "").strip()
    said = message if message.endswith((".", "!", "?")) else f"{message}." if message else ""
    failures = sum(m.role == "tool" and '"error"' in m.content for m in history)
    if kind in ("not_found", "invalid_value") and failures == 1:
        key = _about(tool, message)
        what = label(key, tool.properties.get(key) or {}) if key else "details"
        ask = rng.choice([f"Could you check the {what} and give it to me again?",
                          f"Could you double-check the {what} for me, so I can try again?",
                          f"Would you confirm the {what}, please? Then I'll run it again."])
        lead = rng.choice(["I'm sorry, that didn't go through", "That didn't work, I'm afraid",
                           "The request was turned down"])
        thought = f"{tool.name} failed ({kind}); the value may be wrong, so I ask for it again before retrying."
        return reply_json(thought, f"{lead}: {said} {ask}".strip())
    why = {"permission_denied": "Your account doesn't have access to this, so an administrator would need to grant it.",
           "rate_limited": "The service is limiting requests right now, so it's best to try again shortly.",
           }.get(kind, "I can't fix this from here, so it may need a look from whoever manages the system.")
    lead = rng.choice(["I'm sorry, I couldn't complete that", "Unfortunately that didn't go through",
                       "I wasn't able to finish this"])
    thought = f"{tool.name} failed ({kind}); I say what went wrong and do not claim it worked."
    return reply_json(thought, f"{lead}: {said} Nothing was changed. {why}".replace("  ", " ").strip())


def _about(tool: Tool, message: str) -> str | None:
    """The required argument an error message is about (its key or label in the message), else the first."""
    low = message.lower()
    for key in tool.required:
        if key.lower() in low or spoken(key) in low or label(key, tool.properties.get(key) or {}).lower() in low:
            return key
    return tool.required[0] if tool.required else None


def _report(tool: Tool, result: Any, history: Sequence[Said], rng: random.Random) -> str:
    """What a successful result adds to what the user said: a list's size and first names, counts, new
    fields (an id the call made), and the status a change ended in; echoed values are not repeated."""
    reads = tool.name.lower().replace("-", "_").startswith(_READS)
    heard = " ".join(m.content for m in history if m.role == "user").casefold()
    parts: list[str] = []
    if (items := _items(result)) is not None:
        key, values = items
        names = [n for n in (_name(v) for v in values[:3]) if n]
        what = spoken(key) if key else "results"
        count = f"{len(values)} {what}" if len(values) != 1 else f"one entry in {what}"
        parts.append(f"there {'are' if len(values) != 1 else 'is'} {count}" +
                     (f", starting with {_listed(names)}" if names else ""))
    facts = [(k, v) for k, v in _facts(result if not isinstance(result, list) else {})
             if k != "status" and not _heard(v, heard)]
    rng.shuffle(facts)
    kept = sorted(facts[:FACTS - len(parts)], key=lambda f: f[0])
    counts = [f"{v} {spoken(k)}" for k, v in kept if v.isdigit() and is_plural(spoken(k))]
    named = [f"the {spoken(k)} {copula(spoken(k))} {v}" for k, v in kept if not (v.isdigit() and is_plural(spoken(k)))]
    status = result.get("status") if isinstance(result, dict) and isinstance(result.get("status"), str) else None
    if status and status.casefold() not in ("ok", "success", "succeeded") and not reads:
        done = status.casefold().endswith("ed") or status.casefold() in ("sent", "done")
        parts.insert(0, f"it has been {status}" if done else f"it is now {status}")
    parts += named  # an id or a field first, then how many of each thing: 'there are 16 flights and 36 trips'
    if counts:
        parts.append(f"there {'is' if counts[0].startswith('1 ') and len(counts) == 1 else 'are'} {_listed(counts)}")
    if reads:
        lead = rng.choice(["Here's what I found", "Here is what came back", "I've looked it up"])
    else:
        lead = rng.choice(["Done", "All set", "That went through"])
    if not parts:
        return f"{lead}: everything matches what you gave me, and there was nothing more to report."
    said = _listed(parts) if not counts or len(parts) < 2 else f"{', '.join(parts[:-1])}, and {parts[-1]}"
    return f"{lead}: {said}."


def _heard(value: str, heard: str) -> bool:
    """Whether the user said `value` (as a whole word: 24 is not said by AGR-1682494)."""
    said = re.escape(value.strip('"').casefold())
    return re.search(rf"(?<![\w-]){said}(?![\w-])", heard) is not None


def _items(result: Any) -> tuple[str, list[Any]] | None:
    """The result's main list: the result itself, or its largest top-level list of objects."""
    if isinstance(result, list):
        return "", result
    if not isinstance(result, dict):
        return None
    found = [(k, v) for k, v in result.items() if isinstance(v, list) and v and all(isinstance(i, dict) for i in v)]
    return max(found, key=lambda kv: len(kv[1])) if found else None


def _name(item: Any) -> str | None:
    if not isinstance(item, dict):
        return str(item) if isinstance(item, str | int) and len(str(item)) <= 40 else None
    for key in _NAMES:
        if isinstance(item.get(key), str) and 0 < len(item[key]) <= 60:
            return f'"{item[key]}"'
    value = item.get("id")
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def _facts(result: Any) -> list[tuple[str, str]]:
    """Top-level scalar fields worth saying: short strings and numbers, never flags, links or long text."""
    if not isinstance(result, dict):
        return [("result", str(result))] if isinstance(result, str | int | float) and str(result) else []
    out = []
    for key, value in result.items():
        if isinstance(value, bool) or value is None or not isinstance(value, str | int | float):
            continue
        text = str(value)
        if 0 < len(text) <= 50 and not text.startswith(("http://", "https://")) and "\n" not in text:
            out.append((str(key), f'"{text}"' if isinstance(value, str) and " " in text else text))
    return out


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
