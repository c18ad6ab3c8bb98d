"""Adaptive concurrency, the fruitless-run rule, the fingerprint, the cache key and the server probe."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from utcgen.pipeline.core.errors import InputError, UtcgenError
from utcgen.pipeline.core.records import Dialogue, Verdict
from utcgen.pipeline.llm.limits import OVERLOAD_SHARE, PRIORITY, RECENT, TRACE_LIMIT, AdaptiveLimit, Limits
from utcgen.pipeline.settings.config import RunConfig, load_config
from utcgen.pipeline.synthesis.journal import JobRecord, Journal
from utcgen.pipeline.synthesis.schedule import check_fruitless, rejection_category

# --------------------------------------------------------------------------- AIMD


def test_limit_doubles_until_the_first_rate_limit_then_grows_by_one_per_window() -> None:
    limit = AdaptiveLimit("m", maximum=8, start=2)
    for _ in range(2):
        limit.success()
    assert limit.limit == 4  # slow start: a window of successes doubles it
    for _ in range(3):
        limit.success()
    assert limit.limit == 4  # not a whole window yet
    limit.success()
    assert limit.limit == 8
    for _ in range(20):
        limit.success()
    assert limit.limit == 8  # never above the maximum
    limit.rate_limited(1.0)
    assert limit.limit == 8  # one 429 among 27 answers is sporadic: the retry absorbs it
    while limit.limit == 8:  # a burst of them is an overload
        limit.rate_limited(1.0)
    assert limit.limit == 4 and sum(limit._recent) >= OVERLOAD_SHARE * len(limit._recent)
    limit.rate_limited()  # the same overload (fewer than `limit` calls since): no second halving
    assert limit.limit == 4
    for _ in range(5):
        limit.success()
    assert limit.limit == 5
    limit.rate_limited()
    assert limit.limit == 2
    for _ in range(3):
        limit.success()
    limit.rate_limited()
    assert limit.limit == 1
    for _ in range(3):
        limit.rate_limited()
    assert limit.limit == 1  # never below 1
    report = limit.report()
    assert report["low"] == 1 and report["peak"] == 8 and report["maximum"] == 8
    assert [c[1:] for c in report["trace"][:3]] == [[2, "start"], [4, "slow start"], [8, "slow start"]]
    assert report["trace"][3][1:] == [4, "rate limited (Retry-After 1s)"]
    assert [c[2] for c in report["trace"][4:]] == ["increase", "rate limited", "increase", "rate limited"]


def test_sporadic_rate_limits_keep_the_limit_a_steady_overload_halves_it() -> None:
    flaky = AdaptiveLimit("m", maximum=32)
    for i in range(2000):  # one answer in ten a 429, spread out: a flaky endpoint, not an overloaded one
        if i % 10 == 9:
            flaky.rate_limited()
        else:
            flaky.success()
    assert flaky.limit == 32 and flaky.decreases == 0
    overloaded = AdaptiveLimit("m", maximum=32)
    for i in range(2000):  # half the answers 429s: halved down to the floor
        if i % 2:
            overloaded.rate_limited()
        else:
            overloaded.success()
    assert overloaded.limit <= 2 and overloaded.decreases >= 5
    assert RECENT >= 20


def test_the_trace_is_bounded() -> None:
    limit = AdaptiveLimit("m", maximum=1000, start=1)
    for _ in range(RECENT // 2):  # an overload ends slow start: one change per window
        limit.rate_limited()
    for _ in range(50_000):
        limit.success()
    report = limit.report()
    assert len(report["trace"]) <= TRACE_LIMIT and report["trace_dropped"] > 0
    assert report["trace"][-1][1] == limit.limit


def test_calls_in_flight_never_pass_the_limit_as_it_moves() -> None:
    async def main() -> tuple[int, int]:
        limits = Limits(maximum=6, start=4)
        lim = limits.get("openai/x", "http://127.0.0.1:1/v1")
        assert limits.get("openai/x", "http://127.0.0.1:1/v1") is lim
        assert limits.get("openai/x", "http://127.0.0.1:2/v1") is not lim  # per api_base
        peak_over = 0

        async def call(i: int) -> None:
            nonlocal peak_over
            async with lim:
                peak_over = max(peak_over, lim.in_flight - lim.limit)
                await asyncio.sleep(0.001)
            if i % 7 == 0:
                lim.rate_limited()
            else:
                lim.success()

        await asyncio.gather(*(call(i) for i in range(300)))
        return peak_over, lim.in_flight

    peak_over, left = asyncio.run(main())
    assert peak_over <= 0 and left == 0


def test_a_cancelled_waiter_does_not_leak_a_slot() -> None:
    async def main() -> int:
        lim = AdaptiveLimit("m", maximum=1)
        await lim.acquire()
        waiter = asyncio.ensure_future(lim.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        lim.release()
        await asyncio.gather(waiter, return_exceptions=True)
        async with lim:
            pass
        return lim.in_flight

    assert asyncio.run(main()) == 0


def test_a_freed_slot_goes_to_the_lowest_priority_waiting_then_to_the_first_come() -> None:
    async def main() -> list[str]:
        lim = AdaptiveLimit("m", maximum=1)
        order: list[str] = []
        await lim.acquire()

        async def call(name: str, priority: int) -> None:
            PRIORITY.set(priority)  # each task has its own context: as a generation job sets its number
            async with lim:
                order.append(name)
                await asyncio.sleep(0)

        waiting = [asyncio.ensure_future(call(name, p)) for name, p in
                   [("job 9", 9), ("job 2 first", 2), ("job 5", 5), ("job 2 second", 2), ("job 0", 0)]]
        await asyncio.sleep(0)  # all five wait for the one slot
        lim.release()
        await asyncio.gather(*waiting)
        return order

    assert asyncio.run(main()) == ["job 0", "job 2 first", "job 2 second", "job 5", "job 9"]


# --------------------------------------------------------------------------- fruitless runs


def _rejected(job: int, validator: str, reason: str, finished_at: float, **details) -> JobRecord:
    d = Dialogue.model_construct(accepted=False, rejection_reason=f"{validator}: {reason}",
                                 validation=[Verdict(validator=validator, passed=False, reason=reason, details=details)])
    return JobRecord.model_construct(job=job, seed_tool="t", accepted=False, dialogues=[d], elapsed_s=0.0,
                                     finished_at=finished_at)


def _accepted(job: int, finished_at: float) -> JobRecord:
    d = Dialogue.model_construct(accepted=True, rejection_reason=None, validation=[])
    return JobRecord.model_construct(job=job, seed_tool="t", accepted=True, dialogues=[d], elapsed_s=0.0,
                                     finished_at=finished_at)


@pytest.mark.parametrize(("validator", "reason", "details", "category"), [
    ("format", "assistant turn 1 could not be parsed: x", {"rule": "parse_error"}, "unparseable reply"),
    ("toolcall", "final call is to distractor 'a'", {"rule": "wrong_tool"}, "wrong tool selected"),
    ("selection", "wrong tool selected: 'a' instead of 'b'", {}, "wrong tool selected"),
    ("toolargs", "value of 'x' differs", {"rule": "value_mismatch"}, "wrong argument value"),
    ("toolargs", "x: not a date", {"rule": "schema"}, "schema violation"),
    ("relevancy", "about something else", {"relevant": False}, "judge: off-topic"),
    ("relevancy", "judge reply unparseable", {"error": "unparseable"}, "judge: unparseable reply"),
    ("synthesis", "unusable model reply: no JSON object in the reply", {}, "unparseable reply"),
    ("synthesis", "unusable model reply: no usable slot values for t in 4 replies; the last reply's values "
                  "failed their schema (a: bad)", {}, "schema violation"),
])
def test_rejections_fall_into_a_small_set_of_categories(validator, reason, details, category) -> None:
    assert rejection_category(_rejected(0, validator, reason, 0.0, **details).final) == (validator, category)


def test_n_consecutive_rejections_for_the_same_reason_stop_the_run_even_after_acceptances() -> None:
    records = {0: _accepted(0, 1.0)}
    for job in range(1, 6):
        records[job] = _rejected(job, "format", f"turn {job} could not be parsed", 1.0 + job, rule="parse_error")
    check_fruitless(records, stop_after=6)  # one of the last six was accepted
    records[6] = _rejected(6, "format", "turn could not be parsed", 10.0, rule="parse_error")
    with pytest.raises(UtcgenError, match=r"last 6 seed jobs .* same reason \(unparseable reply\)") as raised:
        check_fruitless(records, stop_after=6)
    assert "6x format / unparseable reply" in str(raised.value)
    assert "stop_after_same_rejections" in str(raised.value)
    check_fruitless(records, stop_after=0)  # 0 = never
    check_fruitless(records, stop_after=7)


def test_mixed_reasons_do_not_stop_the_run_and_completion_order_counts() -> None:
    records = {job: _rejected(job, "format", "x", float(job), rule="parse_error") for job in range(5)}
    records[5] = _rejected(5, "toolcall", "wrong", 2.5, rule="wrong_tool")  # finished before jobs 3 and 4
    check_fruitless(records, stop_after=3)  # the last three to finish: 5, 3, 4 disagree
    with pytest.raises(UtcgenError):
        check_fruitless(records, stop_after=2)  # 3 and 4 agree
    records[5] = _rejected(5, "toolcall", "wrong", 99.0, rule="wrong_tool")  # the last to finish differs
    check_fruitless(records, stop_after=3)


# --------------------------------------------------------------------------- fingerprint and cache key


def test_the_fingerprint_holds_every_input_that_changes_a_reply_and_nothing_else() -> None:
    base = load_config(None, {"models": {r: "openai/m" for r in ("goal", "slots", "user", "assistant",
                                                                  "relevancy", "critic")}})
    fp = base.fingerprint()

    def changed(**llm) -> str:
        c = base.model_copy(deep=True)
        for k, v in llm.items():
            setattr(c.llm, k, v)
        return c.fingerprint()

    for reply_changing in ({"api_base": "http://127.0.0.1:9/v1"}, {"temperature": 0.1}, {"max_tokens": 64}):
        assert changed(**reply_changing) != fp, reply_changing
    for transport in ({"max_in_flight": 3}, {"timeout": 5}, {"max_retries": 1}, {"cache": False}):
        assert changed(**transport) == fp, transport
    c = base.model_copy(deep=True)
    c.budget.max_cost_usd, c.synthesis.stop_after_same_rejections, c.num_dialogues = 1.0, 0, 7
    assert c.fingerprint() == fp
    offline = load_config()
    moved = offline.model_copy(deep=True)
    moved.llm.api_base = "http://127.0.0.1:9/v1"  # the offline backend never uses it
    assert moved.fingerprint() == offline.fingerprint()


def test_a_changed_api_base_refuses_to_resume_unless_allowed(tmp_path: Path) -> None:
    cfg = RunConfig(models={r: "openai/m" for r in ("goal", "slots", "user", "assistant", "relevancy", "critic")},
                    llm={"api_base": "http://127.0.0.1:1000/v1"})
    Journal(tmp_path, cfg)
    moved = cfg.model_copy(deep=True)
    moved.llm.api_base = "http://127.0.0.1:2000/v1"
    with pytest.raises(InputError, match=r"different configuration \(llm.api_base\).*--allow-config-change"):
        Journal(tmp_path, moved)
    Journal(tmp_path, moved, allow_config_change=True)
    Journal(tmp_path, moved)  # the manifest now holds the new configuration
    with pytest.raises(InputError):
        Journal(tmp_path, cfg)


def test_the_cache_key_is_made_of_everything_sent(tmp_path: Path) -> None:
    from utcgen.pipeline.llm.gateway import Gateway
    from utcgen.pipeline.llm.registry import ModelRegistry

    def gw(**llm) -> Gateway:
        return Gateway(ModelRegistry.from_config(RunConfig(models={r: "openai/m" for r in ("goal", "slots", "user", "assistant", "relevancy",
                                                                   "critic")},
                                 llm={"cache": False, "api_base": "http://127.0.0.1:1/v1", **llm})))

    from tests.support.factories import make_persona, make_tool
    from utcgen.pipeline.llm.requests import GoalRequest
    from utcgen.pipeline.llm.structured import Shape

    msgs = [{"role": "user", "content": "hi"}]
    goal = GoalRequest(tool=make_tool(), persona=make_persona())
    a = gw()
    key = a._key(a._request_kwargs(goal, msgs, Shape()), "")
    for other in (gw(api_base="http://127.0.0.1:2/v1"), gw(temperature=0.2), gw(max_tokens=99)):
        assert other._key(other._request_kwargs(goal, msgs, Shape()), "") != key
    same = gw(timeout=3, max_retries=1, max_in_flight=2)
    assert same._key(same._request_kwargs(goal, msgs, Shape()), "") == key
    kwargs = a._request_kwargs(goal, msgs, Shape())
    assert a._key({**kwargs, "response_format": {"type": "json_object"}}, "") != key
    assert a._key({**kwargs, "tools": [{"type": "function"}]}, "") != key
    assert a._key(kwargs, "retry-1") != key


def test_local_servers_get_a_low_start_and_a_longer_timeout_unless_set() -> None:
    from utcgen.pipeline.llm.registry import LOCAL_START_IN_FLIGHT, LOCAL_TIMEOUT, ModelRegistry

    models = {r: "openai/m" for r in ("goal", "slots", "user", "assistant", "relevancy", "critic")}

    def effective(**llm: Any) -> tuple[Any, int | None]:
        """The gateway's settings and first in-flight limit, as the gateway asks the registry for them."""
        return ModelRegistry.from_config(RunConfig(models=models, llm=llm)).effective()

    settings, start = effective(api_base="http://localhost:8080/v1")
    assert (settings.timeout, start) == (LOCAL_TIMEOUT, LOCAL_START_IN_FLIGHT)
    settings, start = effective(api_base="http://localhost:8080/v1", timeout=20, max_in_flight=8)
    assert (settings.timeout, start) == (20, LOCAL_START_IN_FLIGHT)  # a lower maximum keeps the low start
    settings, start = effective(api_base="http://localhost:8080/v1", start_in_flight=64, max_in_flight=8)
    assert start == 8  # an explicit start, never above the maximum
    settings, start = effective(api_base="https://api.example.com/v1")
    assert (settings.timeout, start) == (60, None)
    settings, start = effective(api_base="https://api.example.com/v1", start_in_flight=4)
    assert start == 4


# --------------------------------------------------------------------------- probe


def test_a_server_that_is_down_is_named_with_its_url_at_once() -> None:
    from utcgen.pipeline.llm.probe import probe_servers

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    cfg = RunConfig(models={"user": "openai/m"}, llm={"api_base": url})
    [problem] = probe_servers(cfg, timeout=2)
    assert f"connection refused at {url}" in problem and "models.user" in problem
    assert probe_servers(RunConfig(llm={"api_base": url})) == []  # offline roles are never probed


def test_a_busy_local_server_is_told_apart_from_a_down_one() -> None:
    import threading
    import time as _time

    from utcgen.pipeline.llm.probe import probe_servers

    with socket.socket() as listener:  # accepts connections, never answers: a server busy with a request
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        held: list[socket.socket] = []
        threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
        started = _time.monotonic()
        [problem] = probe_servers(RunConfig(models={"assistant": "openai/m"}, llm={"api_base": url}), timeout=1.5)
        assert 1.4 < _time.monotonic() - started < 10
        assert f"{url} accepted the connection but sent no answer within 1.5s" in problem
        assert "one request at a time" in problem  # the local-server hint
        for conn in held:
            conn.close()


def test_a_freed_slot_goes_to_the_attempt_with_the_fewest_calls_made_then_the_lowest_job() -> None:
    """A run ends when its last chain of calls does: the attempt furthest from its end goes first."""
    from utcgen.pipeline.llm.limits import QueuePlace

    async def main() -> list[str]:
        lim = AdaptiveLimit("m", maximum=1)
        order: list[str] = []
        await lim.acquire()

        async def call(name: str, progress: QueuePlace) -> None:
            PRIORITY.set(progress)
            async with lim:
                order.append(name)
                await asyncio.sleep(0)

        far_along, fresh_late, fresh_early = QueuePlace(1, calls=9), QueuePlace(7, calls=2), QueuePlace(3, calls=2)
        waiting = [asyncio.ensure_future(call(name, p)) for name, p in
                   [("job 1, 9 calls made", far_along), ("job 7, 2 calls", fresh_late), ("job 3, 2 calls", fresh_early)]]
        await asyncio.sleep(0)
        lim.release()
        await asyncio.gather(*waiting)
        assert (far_along.calls, fresh_late.calls, fresh_early.calls) == (10, 3, 3)  # each acquired slot counts
        return order

    assert asyncio.run(main()) == ["job 3, 2 calls", "job 7, 2 calls", "job 1, 9 calls made"]
