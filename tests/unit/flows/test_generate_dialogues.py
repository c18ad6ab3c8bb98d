"""The generate flow's summary artifact, built without Prefect running: counts, stages and usage as markdown."""

from __future__ import annotations

from utcgen.flows.generate_dialogues import summary_markdown


def test_summary_markdown_lists_counts_validators_and_usage() -> None:
    stats = {"counts": {"requested": 2, "generated": 3, "accepted": 2, "rejected": 1, "sft_rows": 5},
             "acceptance_rate": 0.6667,
             "validators": {"stages": {"format": {"kind": "rule", "evaluated": 3, "passed": 2, "pass_rate": 0.6667}}},
             "usage": {"calls": 9, "cached_calls": 0, "prompt_tokens": 100, "completion_tokens": 20, "cost_usd": 0.5}}
    text = summary_markdown(stats, "/tmp/x", 1, 3, "local")
    assert "Task runner: local, 1 wave(s), 3 seed jobs journaled" in text
    assert "| Accepted (`dialogues`) | 2 |" in text and "| Acceptance rate | 66.7% |" in text
    assert "| format | rule | 3 | 2 | 66.7% |" in text
    assert "Model calls: 9 (0 cached), 100 prompt + 20 completion tokens, $0.5000" in text
