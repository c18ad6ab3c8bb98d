"""Whether a tool call's result is an error, and which kind: the configured share, the same for every attempt."""

from __future__ import annotations

from collections import Counter

import pytest

from utcgen.pipeline.dialogue.outcomes import ERROR_KINDS, result_error

JOBS = 4000


@pytest.mark.parametrize("share", [0.0, 0.05, 0.15, 0.5, 1.0])
def test_the_share_of_errors_over_many_jobs_is_the_configured_one(share: float) -> None:
    errors = [result_error(7, job, 0, share) for job in range(JOBS)]
    failed = sum(e is not None for e in errors) / JOBS
    assert abs(failed - share) <= 0.02  # 4000 draws: a binomial's standard deviation is at most 0.008
    if share in (0.0, 1.0):
        assert failed == share


def test_every_kind_is_drawn_about_evenly() -> None:
    kinds = Counter(result_error(3, job, "call_1_0", 1.0) for job in range(JOBS))
    assert set(kinds) == set(ERROR_KINDS)
    assert all(abs(n / JOBS - 1 / len(ERROR_KINDS)) < 0.03 for n in kinds.values())


def test_the_decision_is_deterministic_per_seed_job_and_call() -> None:
    first = [result_error(11, job, call, 0.3) for job in range(200) for call in range(3)]
    assert first == [result_error(11, job, call, 0.3) for job in range(200) for call in range(3)]
    # another run seed, or another call of the same job, is another draw
    assert first != [result_error(12, job, call, 0.3) for job in range(200) for call in range(3)]
    assert [result_error(11, j, 0, 0.3) for j in range(200)] != [result_error(11, j, 1, 0.3) for j in range(200)]


def test_a_larger_share_fails_every_call_a_smaller_one_fails() -> None:
    """The kind of a call does not move with the share: raising it only adds errors."""
    low = [result_error(5, job, 0, 0.1) for job in range(500)]
    high = [result_error(5, job, 0, 0.4) for job in range(500)]
    assert all(h == lo for lo, h in zip(low, high, strict=True) if lo is not None)
    assert sum(h is not None for h in high) > sum(lo is not None for lo in low)


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="error share must be in"):
        result_error(0, 0, 0, share)
