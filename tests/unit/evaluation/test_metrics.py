"""The C.1 metrics against hand-worked examples, the intervals, and the reference policies."""

from __future__ import annotations

import pytest

from tests.support.evalcases import CASE_TOOL, GOLD, INCIDENT, TICKET, calls, case, replay, result, tool
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.text import word_tokens as tokens
from utcgen.pipeline.dialogue.arguments import same_arguments
from utcgen.pipeline.evaluation.intervals import bootstrap, wilson
from utcgen.pipeline.evaluation.metrics import METRIC_KEYS, compute_metrics
from utcgen.pipeline.evaluation.policies import POLICIES


def values(report) -> dict[str, float | None]:
    return {k: m.value for k, m in report.metrics.items()}


# Six dialogues on create_ticket (V* = {title, priority}), hand-worked:
#   d1 oracle call                        Acc 1 FTR 0 TAR 0 aligned  |tn(c)| 1 hit 1  keys(c) 2 hit 2
#   d2 create_ticket(V*) + create_incident Acc 0 FTR 1 TAR 0 aligned  |tn(c)| 2 hit 1  keys(c) 2+1=3 hit 2
#   d3 no call                            Acc 0 FTR 0 TAR 1          |tn(c)| 0        keys(c) 0
#   d4 create_incident only               Acc 0 FTR 1 TAR 0 not aligned |tn(c)| 1 hit 0 keys(c) 2 hit 0
#   d5 V* + note (extra key)              Acc 0 FTR 0 TAR 0 aligned  |tn(c)| 1 hit 1  keys(c) 3 hit 2
#   d6 title only (missing key)           Acc 0 FTR 0 TAR 0 aligned  |tn(c)| 1 hit 1  keys(c) 1 hit 1
# Acc 1/6, FTR 2/6, TAR 1/6; TCP = 4/6, TCR = 4/6 (Σ|tn(g)| = N = 6);
# PKP = (2+2+0+0+2+1) / (2+3+0+2+3+1) = 7/11, PKR = 7 / (6 * 2) = 7/12.
SIX = [
    ("d1", calls(("create_ticket", GOLD))),
    ("d2", calls(("create_ticket", GOLD), ("create_incident", {"title": "Printer jam"}))),
    ("d3", None),
    ("d4", calls(("create_incident", {"title": "Printer jam", "severity": 2}))),
    ("d5", calls(("create_ticket", {**GOLD, "note": "floor 3"}))),
    ("d6", calls(("create_ticket", {"title": "Printer jam"}))),
]


def test_six_dialogues_by_hand():
    cases = [case(i) for i, _ in SIX]
    report = compute_metrics(cases, [result(i, c) for i, c in SIX], resamples=200)
    v = values(report)
    assert v["acc"] == pytest.approx(1 / 6, abs=1e-6)
    assert v["ftr"] == pytest.approx(2 / 6, abs=1e-6)
    assert v["tar"] == pytest.approx(1 / 6, abs=1e-6)
    assert v["tcp"] == pytest.approx(4 / 6, abs=1e-6)
    assert v["tcr"] == pytest.approx(4 / 6, abs=1e-6)
    assert v["pkp"] == pytest.approx(7 / 11, abs=1e-6)
    assert v["pkr"] == pytest.approx(7 / 12, abs=1e-6)
    assert report.counts["aligned"] == 4 and report.counts["with_call"] == 5 and report.counts["scored"] == 6
    per = {s.case_id: s for s in report.scores}
    assert (per["d2"].acc, per["d2"].ftr, per["d2"].aligned) == (0, 1, True)
    assert (per["d4"].ftr, per["d4"].aligned) == (1, False)
    assert per["d3"].tar == 1
    assert set(report.metrics) == set(METRIC_KEYS)


def test_multi_call_turn_alone():
    # τ* and a distractor in one turn: FTR 1, Acc 0, aligned, TCP 1/2, TCR 1; keys 2 of 3 predicted are gold.
    report = compute_metrics([case("d2")], [result("d2", SIX[1][1])], resamples=50)
    v = values(report)
    assert (v["acc"], v["ftr"], v["tar"], v["tcp"], v["tcr"]) == (0.0, 1.0, 0.0, 0.5, 1.0)
    assert v["pkp"] == pytest.approx(2 / 3, abs=1e-6) and v["pkr"] == 1.0


def test_extra_key_and_missing_key():
    extra = values(compute_metrics([case("x")], [result("x", SIX[4][1])], resamples=50))
    assert extra["pkp"] == pytest.approx(2 / 3, abs=1e-6) and extra["pkr"] == 1.0 and extra["acc"] == 0.0
    missing = values(compute_metrics([case("m")], [result("m", SIX[5][1])], resamples=50))
    assert missing["pkp"] == 1.0 and missing["pkr"] == 0.5 and missing["acc"] == 0.0


def test_ftr_counts_every_superfluous_tool():
    # two distractors and τ* in the first tool turn: FTR(d) = 2; with an oracle dialogue FTR = (2 + 0) / 2 = 1
    two = calls(("create_ticket", GOLD), ("create_incident", {}), ("open_case", {}))
    report = compute_metrics([case("a"), case("b")], [result("a", two), result("b", calls(("create_ticket", GOLD)))],
                             resamples=200)
    assert report.metrics["ftr"].value == 1.0
    assert report.metrics["ftr"].low <= 1.0 <= report.metrics["ftr"].high  # bootstrap: counts are not 0/1
    assert report.metrics["tcp"].value == pytest.approx(2 / 4)  # hits 1 + 1 over called 3 + 1


def test_only_the_first_tool_turn_counts():
    later = result("l", calls(("create_incident", {"title": "x", "severity": 1})))
    later.messages.append(later.messages[0])
    from utcgen.pipeline.core.records import Message, ToolCall
    later.messages.append(Message(role="assistant", tool_calls=[ToolCall(name="create_ticket", arguments=GOLD)]))
    later.first_calls = []  # read from the messages: the first tool-bearing turn is the wrong one
    v = values(compute_metrics([case("l")], [later], resamples=20))
    assert (v["acc"], v["ftr"], v["tcp"]) == (0.0, 1.0, 0.0)


def test_value_normalisation():
    # Acc compares with the validators' schema-aware comparison: strings stripped, case kept
    # (create_ticket's title and priority are plain strings), numbers by value under a number schema.
    counted = tool("count_items", {"title": "string", "n": "integer"})
    assert same_arguments({"title": " Printer jam ", "n": "5"}, {"title": "Printer jam", "n": 5.0}, counted)
    assert not same_arguments({"title": "Printer JAM"}, {"title": "printer jam"}, counted)
    assert not same_arguments({"title": "Printer jam"}, {"title": "Printer jam", "priority": "high"}, TICKET)
    assert not same_arguments({"title": "00123-A"}, {"title": "123-A"}, TICKET)
    scored = compute_metrics([case("n"), case("m")],
                             [result("n", calls(("create_ticket", {"title": "Printer jam ", "priority": "high"}))),
                              result("m", calls(("create_ticket", {"title": "Printer jam", "priority": "HIGH"})))],
                             resamples=5)
    assert [s.acc for s in scored.scores] == [1, 0]


def test_conv_rel_ttr_and_ngd_by_hand():
    # assistant texts "The cat sat." and "The cat ran!": tokens the cat sat the cat ran -> TTR 4/6;
    # bigrams (the cat)(cat sat) | (the cat)(cat ran) -> NGD_2 = 3/4 (no bigram across turns);
    # trigrams (the cat sat)(the cat ran) -> 2/2; 4-grams: none -> undefined. Thoughts are not counted.
    r1 = result("t1", calls(("create_ticket", GOLD)), text=["The cat sat.", "The cat ran!"], conv_rel=[1.0, 0.5])
    r2 = result("t2", calls(("create_ticket", GOLD)), conv_rel=[0.0])
    r3 = result("t3", calls(("create_ticket", GOLD)))  # no rubric scores: skipped by ConvRel
    report = compute_metrics([case("t1"), case("t2"), case("t3")], [r1, r2, r3], resamples=100)
    v = values(report)
    assert v["conv_rel"] == pytest.approx((0.75 + 0.0) / 2)
    assert report.metrics["conv_rel"].n == 2
    assert v["ttr"] == pytest.approx(4 / 6) and v["ngd_2"] == pytest.approx(3 / 4) and v["ngd_3"] == 1.0
    assert v["ngd_4"] is None
    assert tokens("Don't e-mail ME at 10.30!") == ["don't", "e-mail", "me", "at", "10.30"]


def test_flagged_and_errored_are_excluded_and_counted():
    cases = [case("a"), case("b"), case("c"), case("d")]
    results = [result("a", calls(("create_ticket", GOLD))), result("b", None, flagged="user proxy hallucinated"),
               result("c", None, error="timeout")]
    report = compute_metrics(cases, results, resamples=20)
    assert report.metrics["acc"].value == 1.0 and report.metrics["acc"].n == 1
    assert report.counts == {**report.counts, "flagged": 1, "errored": 1, "excluded": 2, "missing": 1, "scored": 1}
    with pytest.raises(InputError, match="zzz"):
        compute_metrics(cases, [result("zzz", None)])


def test_wilson_known_value():
    low, high = wilson(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)


def test_intervals_contain_the_value_and_are_reproducible():
    cases = [case(f"r{i}") for i in range(30)]
    results = [result(f"r{i}", calls(("create_ticket", GOLD)) if i % 3 else None) for i in range(30)]
    a = compute_metrics(cases, results, resamples=300)
    b = compute_metrics(cases, results, resamples=300)
    assert a.metrics == b.metrics
    assert a.metrics["tcp"].value == 1.0  # every call is to τ*: no resample can change it
    for key in ("acc", "tar", "tcr", "pkr"):
        m = a.metrics[key]
        assert m.low <= m.value <= m.high and m.low < m.high, key
    assert bootstrap(0, lambda w: 1.0) == (None, None)


def test_breakdowns_split_the_cases():
    cases = [case("a", near_duplicate=True, line_of_business="finance"), case("b"),
             case("c", gold=INCIDENT, arguments={"title": "t", "severity": 1}, candidates=[INCIDENT, TICKET])]
    results = [result("a", calls(("create_ticket", GOLD))), result("b", None),
               result("c", calls(("create_incident", {"title": "t", "severity": 1})))]
    report = compute_metrics(cases, results, resamples=20)
    nd = report.breakdowns["near_duplicate"]
    assert nd["near-duplicate"]["acc"].value == 1.0 and nd["near-duplicate"]["acc"].n == 1
    assert nd["no near-duplicate"]["acc"].value == 0.5
    assert report.breakdowns["line_of_business"]["finance"]["acc"].n == 1
    assert set(report.breakdowns["required_parameters"]) == {"2"}


# ---------------------------------------------------------------------------------------- reference policies

# Fixture benchmark of three cases. first-candidate, by hand:
#   f1 candidates [create_ticket, ...]      -> calls create_ticket(V*)          Acc 1 FTR 0
#   f2 candidates [create_incident, ticket] -> calls create_incident({title})   Acc 0 FTR 1
#   f3 candidates [open_case, ticket]       -> calls open_case({})              Acc 0 FTR 1
# Acc 1/3, FTR 2/3, TAR 0, TCP 1/3.
FIXTURE = [case("f1"), case("f2", candidates=[INCIDENT, TICKET]), case("f3", candidates=[CASE_TOOL, TICKET])]


def run_policy(name: str):
    return compute_metrics(FIXTURE, [replay(c, POLICIES[name]) for c in FIXTURE], resamples=50)


def test_oracle_scores_perfectly():
    v = values(run_policy("reference/oracle"))
    assert (v["acc"], v["ftr"], v["tar"], v["tcp"], v["tcr"], v["pkp"], v["pkr"]) == (1, 0, 0, 1, 1, 1, 1)


def test_never_call_abstains():
    v = values(run_policy("reference/never-call"))
    assert (v["tar"], v["acc"], v["ftr"]) == (1.0, 0.0, 0.0)
    assert v["tcp"] is None  # no call at all: precision has an empty denominator


def test_first_candidate_by_hand():
    v = values(run_policy("reference/first-candidate"))
    assert v["acc"] == pytest.approx(1 / 3, abs=1e-6) and v["ftr"] == pytest.approx(2 / 3, abs=1e-6)
    assert v["tar"] == 0.0 and v["tcp"] == pytest.approx(1 / 3, abs=1e-6)


def test_extra_key_lowers_precision_only():
    v = values(run_policy("reference/extra-key"))
    assert v["pkp"] < 1 and v["pkr"] == 1.0 and v["acc"] == 0.0
    assert v["pkp"] == pytest.approx(6 / 9, abs=1e-6)  # 2 gold keys of 3 supplied, three times


def test_extra_key_without_optional_parameter_adds_a_new_key():
    bare = case("e", gold=INCIDENT, arguments={"title": "t", "severity": 1}, candidates=[INCIDENT, TICKET])
    call = POLICIES["reference/extra-key"](bare, []).tool_calls[0]
    assert set(call.arguments) == {"title", "severity", "comment"}
    assert tool("x", {}).required == []


def test_type_ratio_intervals_are_jackknife_and_contain_the_value():
    # leave-one-out by brute force: TTR of the corpus without each dialogue, then the jackknife standard error
    texts = [["the printer on floor three is jammed again"], ["the printer is fine"], ["scanner broken since monday"],
             ["please book a room for the printer training"], ["the the the the"]]
    cases = [case(f"j{i}") for i in range(len(texts))]
    results = [result(f"j{i}", None, text=t) for i, t in enumerate(texts)]
    report = compute_metrics(cases, results, resamples=50)
    words = [tokens(t[0]) for t in texts]

    def ttr(parts):
        flat = [w for p in parts for w in p]
        return len(set(flat)) / len(flat)

    loo = [ttr(words[:i] + words[i + 1:]) for i in range(len(words))]
    mean = sum(loo) / len(loo)
    se = ((len(loo) - 1) / len(loo) * sum((v - mean) ** 2 for v in loo)) ** 0.5
    m = report.metrics["ttr"]
    assert m.value == pytest.approx(ttr(words), abs=1e-6)
    assert m.low == pytest.approx(max(0.0, m.value - 1.959964 * se), abs=1e-5)
    assert m.high == pytest.approx(min(1.0, m.value + 1.959964 * se), abs=1e-5)
    for key in ("ttr", "ngd_2", "ngd_3"):
        assert report.metrics[key].low <= report.metrics[key].value <= report.metrics[key].high, key


# The three values on which the validators and the evaluation used to disagree: one comparison
# now decides both. Each case runs the toolargs validator on a dialogue whose final call carries
# `said` for gold `gold`, and Acc on an evaluation case whose model call carries the same value.
AGREEMENT = [  # schema, gold, said, the same value?, a spelling the schema accepts?
    # enum members unique under case-folding: "eur" names EUR
    ({"type": "string", "enum": ["EUR", "USD"]}, "EUR", "eur", True, False),
    ({"type": "string", "enum": ["EUR", "USD"]}, "EUR", "USD", False, True),
    ({"type": "string", "enum": ["team", "Team"]}, "team", "Team", False, True),  # case decides here
    # a date compares by the day it denotes
    ({"type": "string", "format": "date"}, "2025-01-05", "20250105", True, False),
    ({"type": "string", "format": "date"}, "2025-01-05", "2025-01-06", False, True),
    # a numeric-looking string under a plain string schema is text
    ({"type": "string"}, "5", "5.0", False, True),
    ({"type": "string"}, "5", " 5 ", True, True),
    ({"type": "number"}, 5, 5.0, True, True),
]


@pytest.mark.parametrize("schema,gold,said,same,valid", AGREEMENT)
def test_toolargs_and_acc_agree_on_argument_values(schema: dict, gold, said, same: bool, valid: bool) -> None:
    from tests.support.factories import make_dialogue, make_tool
    from utcgen.pipeline.core.records import ToolCall
    from utcgen.pipeline.evaluation.cases import Case
    from utcgen.validators.toolargs import check_toolargs

    seed = make_tool(name="convert_amount", description="Convert an amount of money.",
                     properties={"value": {**schema, "description": "the value"}})
    d = make_dialogue(seed_tool=seed, gold_arguments={"value": gold})
    d.messages[-1].tool_calls = [ToolCall(name=seed.name, arguments={"value": said})]
    verdict = check_toolargs(d)
    rules = {p["rule"] for p in verdict.details.get("problems", [])}
    validator_same = "value_mismatch" not in rules

    c = Case.model_validate({**case("agree").model_dump(), "gold_tool": seed.model_dump(),
                             "gold_arguments": {"value": gold}, "candidates": [seed.model_dump()]})
    report = compute_metrics([c], [result("agree", calls((seed.name, {"value": said})))], resamples=5)
    acc = report.scores[0].acc

    assert validator_same is same
    # Whether the raw value is a spelling a strict API accepts is the validator's separate schema
    # rule: "eur" and "20250105" are equal values, not schema-valid spellings. Acc asks both
    # questions (`arguments.correct_arguments`), so the validator's argument verdict and Acc agree.
    assert ("schema" in rules) is not valid
    assert acc == int(same and valid)
    assert bool(acc) is not ({"value_mismatch", "schema"} & rules)
