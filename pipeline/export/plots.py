"""The paper's Appendix A.3 figures (5, 6, 7) drawn from stats.json's distributions, as PNG bytes."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

# File name -> what it shows (the card's alt text).
PLOT_TITLES = {
    "turns_per_dialogue.png": "Turns per dialogue",
    "parameters_per_seed_tool.png": "Parameters per seed tool",
    "turns_per_phase.png": "Tool-selection and argument-filling turns",
}


def _bar(ax: Axes, histogram: Mapping[str, int], xlabel: str, ylabel: str, title: str) -> None:
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if not histogram:
        ax.text(0.5, 0.5, "no accepted dialogues", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    xs = [int(k) for k in histogram]
    ys = list(histogram.values())
    bars = ax.bar(xs, ys, width=0.7, color="#4C72B0", edgecolor="black", linewidth=0.6)
    ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(min(xs), max(xs) + 1))
    ax.set_xlim(min(xs) - 1, max(xs) + 1)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, max(ys) * 1.15)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    return buf.getvalue()


def render_plots(stats: Mapping[str, Any]) -> dict[str, bytes]:
    """The paper's Appendix A.3 figures (5, 6, 7) as PNG bytes keyed by file name.

    Built on `Figure` directly (no pyplot): no global backend state, Agg rendering.
    """
    dist = stats["distributions"]
    n = stats["counts"]["accepted"]
    out: dict[str, bytes] = {}

    single = [  # (distribution, x label, title): the paper's Figures 5 and 6
        ("turns_per_dialogue", "Assistant turns per dialogue", "Conversation length"),
        ("parameters_per_seed_tool", "Parameters of the seed tool", "Parameters per seed tool"),
    ]
    for key, xlabel, title in single:
        fig = Figure(figsize=(6, 4))
        _bar(fig.subplots(), dist[key]["histogram"], xlabel, "Dialogues", f"{title} (n={n})")
        out[f"{key}.png"] = _png(fig)

    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    _bar(left, dist["tool_selection_turns"]["histogram"], "Tool-selection turns", "Dialogues", "Tool disambiguation")
    _bar(
        right,
        dist["argument_filling_turns"]["histogram"],
        "Argument-filling turns",
        "Dialogues",
        "Parameter specification",
    )
    fig.suptitle(f"Turns per phase (n={n})")
    out["turns_per_phase.png"] = _png(fig)
    return out
