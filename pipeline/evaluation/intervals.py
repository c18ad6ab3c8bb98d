"""The 95% intervals behind every evaluation metric: Wilson for rates, a percentile bootstrap over
cases for ratios and means, and the delete-one jackknife for the distinct-n-gram ratios (TTR, NGD).
Which metric takes which interval is written in `metrics` and `scenario_metrics`."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy.sparse import csr_matrix

Z95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0


class Metric(BaseModel):
    """One corpus metric: its value, 95% interval and how many cases it is over (None: undefined)."""

    model_config = ConfigDict(extra="forbid")

    value: float | None
    low: float | None
    high: float | None
    n: int



def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (successes of n)."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap(n: int, statistic: Callable[[np.ndarray], float | None], resamples: int = BOOTSTRAP_RESAMPLES,
              seed: int = BOOTSTRAP_SEED) -> tuple[float | None, float | None]:
    """Percentile interval of `statistic(weights)`, weights = how often each of the n cases was drawn."""
    if n == 0:
        return (None, None)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)
    values = [v for w in draws if (v := statistic(w)) is not None and math.isfinite(v)]
    if not values:
        return (None, None)
    return (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5)))



def ratio(num: np.ndarray, den: np.ndarray) -> Callable[[np.ndarray], float | None]:
    """The statistic (weights · num) / (weights · den) for `bootstrap`; None when the denominator is 0."""
    def stat(w: np.ndarray) -> float | None:
        d = float(w @ den)
        return float(w @ num) / d if d else None
    return stat


class Distinct:
    """unique / all n-grams of a weighted resample, via a sparse case × n-gram incidence matrix."""

    def __init__(self, per_case: list[list[tuple[str, ...]]]) -> None:
        vocab: dict[tuple[str, ...], int] = {}
        rows, cols = [], []
        self.totals = np.array([len(grams) for grams in per_case], dtype=float)
        for i, grams in enumerate(per_case):
            for g in set(grams):
                rows.append(i)
                cols.append(vocab.setdefault(g, len(vocab)))
        self.incidence = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(per_case), max(1, len(vocab))))

    def __call__(self, w: np.ndarray) -> float | None:
        total = float(w @ self.totals)
        if not total:
            return None
        return float(np.count_nonzero(self.incidence.T @ w)) / total

    def jackknife(self, z: float = Z95) -> tuple[float | None, float | None]:
        """value ± z · the delete-one jackknife standard error, clipped to [0, 1].

        A bootstrap resample repeats dialogues, and a repeated dialogue adds tokens but no new
        types, so bootstrapped unique/all ratios sit below the corpus value; leaving one dialogue
        out at a time has no such bias. Without dialogue i: the n-grams found only in i are lost."""
        n = len(self.totals)
        total = float(self.totals.sum())
        if n < 2 or not total:
            return (None, None)
        spread = np.asarray(self.incidence.sum(axis=0)).ravel()
        unique = float(np.count_nonzero(spread))
        only_here = np.asarray(self.incidence @ (spread == 1).astype(float)).ravel()
        remaining = total - self.totals
        keep = remaining > 0
        if keep.sum() < 2:
            return (None, None)
        values = (unique - only_here[keep]) / remaining[keep]
        m = len(values)
        se = math.sqrt((m - 1) / m * float(((values - values.mean()) ** 2).sum()))
        value = unique / total
        return (max(0.0, value - z * se), min(1.0, value + z * se))


def make_metric(value: float | None, interval: tuple[float | None, float | None], n: int) -> Metric:
    """A `Metric`, rounded to 6 places, with non-finite numbers as None."""
    def clean(x: float | None) -> float | None:
        return None if x is None or not math.isfinite(x) else round(float(x), 6)
    return Metric(value=clean(value), low=clean(interval[0]), high=clean(interval[1]), n=n)

