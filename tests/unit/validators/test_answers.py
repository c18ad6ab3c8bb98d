"""The answers validator: what the assistant says after a tool result is grounded in it (validators/answers.py).

Each rule both ways on hand-built dialogues with `tool` turns, and a corpus of well-written answers to
realistic results (music, code, travel, tickets, finance, people) that must all pass: the false-reject
rate the rule is held to.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from tests.support.factories import make_dialogue, make_tool
from utcgen.pipeline.core.records import Dialogue, Message, ToolCall
from utcgen.pipeline.dialogue.results import Known, has_results, known_before, results
from utcgen.pipeline.dialogue.stated import stated
from utcgen.pipeline.settings.config import load_config
from utcgen.pipeline.settings.templates import prompt_versions
from utcgen.validators import answers, cascade
from utcgen.validators.answers import check_answers, instructions

Step = tuple[str, dict[str, Any], Any]  # a call's tool, its arguments, the result it gets back


def exchange(user: str, steps: list[Step], answer: str | None, *, said: str = "") -> Dialogue:
    """user -> (assistant call -> tool result) per step -> the assistant's answer (None: the dialogue ends on the result).
    `said` is what the assistant writes beside its first call."""
    messages = [Message(role="user", content=user)]
    for n, (tool, arguments, result) in enumerate(steps):
        at = len(messages)
        messages.append(Message(role="assistant", content=said if n == 0 else "",
                                tool_calls=[ToolCall(name=tool, arguments=arguments)]))
        messages.append(Message(role="tool", tool_call_id=f"call_{at}_0", content=json.dumps(result)))
    if answer is not None:
        messages.append(Message(role="assistant", content=answer))
    return make_dialogue().model_copy(update={"messages": messages})


def codes(d: Dialogue) -> list[str]:
    verdict = check_answers(d)
    return [p["rule"] for p in verdict.details.get("problems", [])]


def error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


ISSUES_ARGS = {"owner": "granite-dev", "repo": "inventory-cli", "state": "open"}
ISSUES = {"total_count": 3, "items": [
    {"number": 412, "title": "Login fails on Safari", "state": "open", "labels": [{"name": "bug"}],
     "assignee": {"login": "mkowalski"}, "created_at": "2026-03-02T09:14:00Z", "comments": 4},
    {"number": 415, "title": "Dark mode toggle resets after reload", "state": "open",
     "labels": [{"name": "bug"}, {"name": "ui"}], "assignee": None, "created_at": "2026-03-05T16:40:00Z", "comments": 1},
    {"number": 420, "title": "Add CSV export for inventory reports", "state": "open",
     "labels": [{"name": "enhancement"}], "assignee": {"login": "jnakamura"}, "created_at": "2026-03-11T11:02:00Z",
     "comments": 0}]}
ASK_ISSUES = "Can you list the open issues in granite-dev/inventory-cli?"
LIST_ISSUES: Step = ("list_repository_issues", ISSUES_ARGS, ISSUES)
TICKET = {"ticket_id": "INC-20931", "priority": "P2", "status": "in_progress", "assigned_group": "Network Operations",
          "updated_at": "2026-03-18T10:22:00Z"}
ASK_TICKET = "What's the status of ticket INC-20931?"
GET_TICKET: Step = ("get_ticket", {"ticket_id": "INC-20931"}, TICKET)
CLOSE_ARGS = {"owner": "granite-dev", "repo": "inventory-cli", "issue_number": 412}
ASK_CLOSE = "Please close issue 412 in granite-dev/inventory-cli."


# ---------------------------------------------------------------- a dialogue without results


def test_a_dialogue_without_results_passes_untouched() -> None:
    d = make_dialogue()
    assert not has_results(d.messages)
    verdict = check_answers(d)
    assert verdict.passed and verdict.validator == answers.NAME and "no tool result" in verdict.reason
    assert d == make_dialogue()  # read, never changed


def test_the_documented_rule_codes_are_the_ones_it_reports() -> None:
    doc = " ".join((answers.__doc__ or "").split())
    match = re.search(r"Rule codes:\s*([a-z_, ]+)\.", doc)
    assert match
    assert {c.strip() for c in match.group(1).split(",")} == {
        "invented_value", "contradicted_value", "wrong_count", "success_after_error", "unacknowledged_error",
        "unanswered_error", "repeated_call"}


def test_the_cascade_runs_it_only_on_a_dialogue_with_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """Alone in the cascade (the other stages set aside): a verdict for a dialogue with results, none without."""
    monkeypatch.setattr(cascade, "RULES", ())
    monkeypatch.setattr(cascade, "JUDGES", ())
    bad = exchange(ASK_TICKET, [GET_TICKET], "The status is resolved.")
    verdicts = asyncio.run(cascade.run_cascade(bad, gateway=None))  # type: ignore[arg-type]
    assert [(v.validator, v.passed) for v in verdicts] == [("answers", False)]
    assert cascade.failed_stage(verdicts) == "answers" and cascade.stage_kind("answers") == "rule"
    assert asyncio.run(cascade.run_cascade(make_dialogue(), gateway=None)) == []  # type: ignore[arg-type]


def test_no_existing_stage_list_names_it() -> None:
    """Stats, the audit, the rows and the prompt contract read these: they stay as they were."""
    assert answers.NAME not in cascade.STAGES and answers.NAME not in cascade.RULE_STAGES
    assert [r.name for r in cascade.AFTER_RESULTS] == [answers.NAME]


def test_the_assistant_is_told_each_rule() -> None:
    told = instructions()
    # the answers rules, and the multi-step rule (the scenario validator's chain_unused) a later call keeps
    assert told.count("\n- ") == 5 and "{" not in told
    for words in ("tool result", "contradict", "error", "same arguments", "earlier result returned"):
        assert words in told, words


def test_the_rules_prompt_is_recorded_and_hashed_only_by_runs_with_results() -> None:
    assert "rules_answer" not in prompt_versions()
    assert prompt_versions(switched_on={"execution.results"})["rules_answer"] == "rules-answer/2"
    off, on = load_config(), load_config(overrides={"execution": {"results": True}})
    assert "rules_answer" not in off.prompt_versions() and on.prompt_versions()["rules_answer"] == "rules-answer/2"


# ---------------------------------------------------------------- rule 1: every stated value has a source


def test_a_grounded_answer_passes() -> None:
    d = exchange(ASK_ISSUES, [LIST_ISSUES],
                 "I found 3 open issues in granite-dev/inventory-cli: #412 'Login fails on Safari' (assigned to "
                 "mkowalski), #415 'Dark mode toggle resets after reload' (unassigned) and #420 'Add CSV export for "
                 "inventory reports' (jnakamura). Two of them are labelled bug.")
    assert codes(d) == []


def test_an_invented_number_is_rejected_naming_the_turn_and_the_value() -> None:
    d = exchange(ASK_ISSUES, [LIST_ISSUES],
                 "I found 3 open issues. The oldest, #412 'Login fails on Safari', already has 12 comments.")
    verdict = check_answers(d)
    assert not verdict.passed and codes(d) == ["invented_value"]
    assert "assistant turn 2" in verdict.reason and "'12'" in verdict.reason


def test_an_invented_id_is_rejected() -> None:
    good = exchange(ASK_TICKET, [GET_TICKET], "Ticket INC-20931 is in progress with Network Operations.")
    bad = exchange(ASK_TICKET, [GET_TICKET], "Ticket INC-20931 is in progress; it was merged into INC-20977.")
    assert codes(good) == []
    assert codes(bad) == ["invented_value"] and "INC-20977" in check_answers(bad).reason


def test_an_invented_name_is_rejected() -> None:
    good = exchange(ASK_TICKET, [GET_TICKET], "It sits with Network Operations, at priority P2.")
    bad = exchange(ASK_TICKET, [GET_TICKET], "It sits with Network Operations and Sarah Lindqvist is working on it.")
    assert codes(good) == []
    assert codes(bad) == ["invented_value"] and "Sarah Lindqvist" in check_answers(bad).reason


def test_an_invented_quoted_title_and_date_are_rejected() -> None:
    d = exchange(ASK_ISSUES, [LIST_ISSUES], "The newest, #420 'Add PDF export', was opened on March 12.")
    reasons = [p["message"] for p in check_answers(d).details["problems"]]
    assert codes(d) == ["invented_value", "invented_value"]
    assert "'Add PDF export'" in reasons[0] and "'March 12'" in reasons[1]


def test_values_from_the_user_and_the_call_arguments_are_sources() -> None:
    d = exchange("Add the 2 tracks I picked to my 'Road Trip' playlist, id 3cEYpjA9oz9GiPac4AsH4n.",
                 [("add_tracks_to_playlist", {"playlist_id": "3cEYpjA9oz9GiPac4AsH4n",
                                              "uris": ["spotify:track:4uLU6hMCjMI75M1A2tKUQC",
                                                       "spotify:track:7ouMYWpwJ422jRcDASZB7P"]},
                   {"snapshot_id": "MTAsZDFkNjQ3YjE2ZTdhMWM2"})],
                 "Done: both tracks are now in 'Road Trip' (playlist 3cEYpjA9oz9GiPac4AsH4n).")
    assert codes(d) == []


def test_general_knowledge_beside_the_result_is_an_invented_value() -> None:
    d = exchange(ASK_REFUND, [REFUND_STEP], "The refund went through: re_3P9xQ2LkT8 returns $49.99. It usually takes "
                                            "5–10 business days to show up on the card.")
    assert codes(d) == ["invented_value", "invented_value"]


def test_a_name_the_called_tools_description_holds_is_a_source() -> None:
    album = make_tool(name="get_album", description="Get Spotify catalog information for a single album.",
                      properties={"id": {"type": "string"}})
    said = "After Hours by The Weeknd has 14 tracks on Spotify."
    d = exchange("Tell me about After Hours.", [("get_album", {"id": "4yP0hdKOZPNshxUOjY0cZj"}, ALBUM)], said)
    assert codes(d) == ["invented_value"]  # no offered tool says Spotify
    offered = d.model_copy(update={"candidate_tools": [*d.candidate_tools, album]})
    assert codes(offered) == []


def test_a_day_the_user_said_without_a_year_is_a_source() -> None:
    said = exchange("Is anything due on April 30?", [("get_invoice", {"invoice_id": "INV-2026-0147"}, {"status": "unpaid"})],
                    "Yes, the invoice is still unpaid, and April 30 is its due day.")
    unsaid = exchange("Is anything due?", [("get_invoice", {"invoice_id": "INV-2026-0147"}, {"status": "unpaid"})],
                      "Yes, the invoice is still unpaid, and April 30 is its due day.")
    assert codes(said) == [] and codes(unsaid) == ["invented_value"]


def test_counting_words_positions_and_list_markers_are_no_facts() -> None:
    d = exchange(ASK_ISSUES, [LIST_ISSUES],
                 "Here are the 3 open issues:\n1. #412 Login fails on Safari\n2. #415 Dark mode toggle resets after "
                 "reload\n3. #420 Add CSV export for inventory reports\nThe first one is the oldest; one of them has "
                 "no assignee.")
    assert codes(d) == []


def test_reading_what_an_answer_states() -> None:
    found = [(s.kind, s.text) for s in stated(
        "On March 2, 2026 at 9:14 am, 'Login fails' (#412, see https://x.io/i/412) got 1.3k views from Ana Costa; "
        "Mar 11 is next.\n1. First item")]
    assert found == [("date", "March 2, 2026"), ("time", "9:14 am"), ("quoted", "Login fails"), ("number", "#412"),
                     ("code", "https://x.io/i/412"), ("number", "1.3k"), ("name", "Ana Costa"), ("date", "Mar 11")]


def test_numbers_are_compared_by_value() -> None:
    known = Known()
    known.add_value({"amount": 1200, "ratio": 0.7249, "change": -1.85, "tracks": [{"duration_ms": 200040}]})
    for text in ("1200", "1,200", "1,200.00", "1.2k", "72%", "down 1.85%", "3:20", "about 1,190"):
        (s,) = [x for x in stated(f"it is {text} here") if x.kind in ("number", "time")]
        assert known.grounds(s), text
    for text in ("1,300", "75%", "1.1k", "3:25"):
        (s,) = [x for x in stated(f"it is {text} here") if x.kind in ("number", "time")]
        assert not known.grounds(s), text


def test_only_what_came_before_the_answer_is_a_source() -> None:
    d = exchange(ASK_TICKET, [GET_TICKET, ("get_ticket", {"ticket_id": "INC-20940"}, {"ticket_id": "INC-20940"})],
                 "Done.")
    second_call = 3  # the assistant turn that makes the second call: its result comes after it
    assert not known_before(d.messages, second_call).grounds(stated("see INC-20940 here")[0])
    assert known_before(d.messages, second_call).grounds(stated("see INC-20931 here")[0])
    assert known_before(d.messages, len(d.messages)).grounds(stated("see INC-20940 here")[0])
    assert [r.call_id for r in results(d.messages)] == ["call_1_0", "call_3_0"]


# ---------------------------------------------------------------- rule 2: no contradiction


def test_a_wrong_status_is_rejected() -> None:
    good = exchange(ASK_TICKET, [GET_TICKET], "The status is in progress, and the priority is P2.")
    bad = exchange(ASK_TICKET, [GET_TICKET], "The status is resolved, so nothing is left to do.")
    assert codes(good) == []
    assert codes(bad) == ["contradicted_value"] and "'status is resolved'" in check_answers(bad).reason


def test_a_status_said_with_filler_or_negation_is_not_a_contradiction() -> None:
    for text in ("The status is still in progress.", "Its status is not resolved yet.",
                 "The status is currently in_progress and it was updated on March 18."):
        assert codes(exchange(ASK_TICKET, [GET_TICKET], text)) == [], text


def test_a_code_holding_a_field_name_is_no_statement_of_that_field() -> None:
    step: Step = ("add_to_queue", {"uri": "spotify:track:10ZFJOg7rjKyPSO8H73Cqg"},
                  {"status": "created", "uri": "spotify:track:10ZFJOg7rjKyPSO8H73Cqg", "spotify": "open"})
    good = exchange("Queue that track.", [step], "Done: the uri is spotify:track:10ZFJOg7rjKyPSO8H73Cqg.")
    assert codes(good) == []
    assert codes(exchange("Queue that track.", [step], "Done. Spotify: closed.")) == ["contradicted_value"]


def test_a_wrong_count_is_rejected() -> None:
    bad = exchange(ASK_ISSUES, [LIST_ISSUES], "There are 4 open issues: #412, #415 and #420.")
    assert "wrong_count" in codes(bad) and "'4 open issues'" not in check_answers(bad).reason
    assert any("4 issues" in p["message"] for p in check_answers(bad).details["problems"])
    part = exchange(ASK_ISSUES, [LIST_ISSUES], "There are 3 open issues; 2 issues are labelled bug.")
    assert codes(part) == []


# ---------------------------------------------------------------- rule 3: errors are owned up to


NOT_FOUND = error("not_found", "Repository granite-dev/inventroy-cli not found")
TYPO_ARGS = {"owner": "granite-dev", "repo": "inventroy-cli", "state": "open"}
TYPO = "List the open issues in granite-dev/inventroy-cli."


def test_success_claimed_after_an_error_is_rejected() -> None:
    d = exchange(TYPO, [("list_repository_issues", TYPO_ARGS, NOT_FOUND)],
                 "Here are the open issues in granite-dev/inventroy-cli, all set.")
    assert "success_after_error" in codes(d)
    assert "call_1_0 (not_found)" in check_answers(d).reason


def test_an_explanation_after_an_error_passes() -> None:
    d = exchange(TYPO, [("list_repository_issues", TYPO_ARGS, NOT_FOUND)],
                 "I couldn't find a repository called granite-dev/inventroy-cli, so I have no issues to show. "
                 "Could you double-check the repository name?")
    assert codes(d) == []


def test_asking_for_a_corrected_value_after_an_error_passes() -> None:
    d = exchange(TYPO, [("list_repository_issues", TYPO_ARGS, NOT_FOUND)], "Which repository did you mean?")
    assert codes(d) == []


def test_recovery_after_an_error_passes() -> None:
    d = exchange(TYPO, [("list_repository_issues", TYPO_ARGS, NOT_FOUND), LIST_ISSUES],
                 "The repository is granite-dev/inventory-cli. It has 3 open issues, the oldest #412 "
                 "'Login fails on Safari'.")
    assert codes(d) == []


def test_an_error_answered_by_nothing_is_rejected() -> None:
    ends = exchange(TYPO, [("list_repository_issues", TYPO_ARGS, NOT_FOUND)], None)
    goes_on = exchange(TYPO, [("list_repository_issues", TYPO_ARGS, NOT_FOUND)],
                       "Is there anything else I can help you with today?")
    assert codes(ends) == ["unanswered_error"]
    assert codes(goes_on) == ["unacknowledged_error"] and "assistant turn 2" in check_answers(goes_on).reason


def test_a_conditional_or_negated_success_is_no_claim() -> None:
    denied = error("permission_denied", "Must have push access to close issues")
    d = exchange(ASK_CLOSE, [("close_issue", CLOSE_ARGS, denied)],
                 "I wasn't able to close #412: your account doesn't have push access to granite-dev/inventory-cli, "
                 "so it has not been closed. Once someone with write access closes it, it will be updated.")
    assert codes(d) == []


# ---------------------------------------------------------------- rule 4: no call repeated after its answer


def test_a_call_repeated_after_a_successful_result_is_rejected() -> None:
    d = exchange(ASK_ISSUES, [LIST_ISSUES, ("list_repository_issues", dict(ISSUES_ARGS), ISSUES)],
                 "I found 3 open issues.")
    assert codes(d) == ["repeated_call"]
    assert "repeats list_repository_issues with the arguments of call_1_0" in check_answers(d).reason


def test_a_call_repeated_after_an_error_or_with_new_arguments_passes() -> None:
    limited = error("rate_limited", "API rate limit exceeded, retry after 30 seconds")
    retry = exchange(ASK_ISSUES, [("list_repository_issues", ISSUES_ARGS, limited), LIST_ISSUES],
                     "I found 3 open issues.")
    closed = {**ISSUES_ARGS, "state": "closed"}
    other = exchange(ASK_ISSUES, [LIST_ISSUES, ("list_repository_issues", closed, {"total_count": 0, "items": []})],
                     "I found 3 open issues and no closed ones.")
    assert codes(retry) == [] and codes(other) == []


# ---------------------------------------------------------------- false rejects on well-written answers

PLAYLISTS = {"total": 3, "items": [
    {"id": "37i9dQZF1DXcBWIGoYBM5M", "name": "Today's Top Hits", "type": "playlist", "tracks": {"total": 50},
     "owner": {"display_name": "Spotify"}},
    {"id": "3cEYpjA9oz9GiPac4AsH4n", "name": "Road Trip", "type": "playlist", "tracks": {"total": 42},
     "owner": {"display_name": "maya.l"}},
    {"id": "1h0CEZCm6IbFTbxThn6Xcs", "name": "Deep Focus", "type": "playlist", "tracks": {"total": 128},
     "owner": {"display_name": "maya.l"}}]}
SEARCH = {"tracks": {"items": [
    {"name": "Blinding Lights", "artists": [{"name": "The Weeknd"}], "album": {"name": "After Hours",
     "release_date": "2020-03-20"}, "duration_ms": 200040, "popularity": 87},
    {"name": "Save Your Tears", "artists": [{"name": "The Weeknd"}], "album": {"name": "After Hours",
     "release_date": "2020-03-20"}, "duration_ms": 215626, "popularity": 83}]}}
PULL = {"number": 88, "title": "Batch inventory sync", "state": "closed", "merged": True,
        "merged_at": "2026-02-27T14:05:11Z", "additions": 1240, "deletions": 310, "changed_files": 17,
        "user": {"login": "akira-t"}}
REPO = {"full_name": "granite-dev/inventory-cli", "stargazers_count": 1284, "forks_count": 97,
        "open_issues_count": 23, "language": "Go", "license": {"name": "MIT License"},
        "pushed_at": "2026-03-19T08:47:00Z"}
WEATHER = {"location": "Lisbon", "temperature_c": 18.4, "condition": "Partly cloudy", "humidity": 0.72, "wind_kph": 14}
BOOKING = {"booking_reference": "QX7H2L", "status": "confirmed", "flight": {"number": "TP1352",
           "departure": "2026-04-14T07:35:00+01:00", "from": "LIS", "to": "LHR"},
           "price": {"amount": 189.9, "currency": "EUR"}}
INVOICE = {"invoice_id": "INV-2026-0147", "vendor": "Nordhaus GmbH", "amount_due": 12480.5, "currency": "EUR",
           "due_date": "2026-04-30", "status": "unpaid"}
REQUISITION = {"requisition_id": "PR-558201", "material_id": "MAT-10442", "quantity": 250, "plant_code": "DE01",
               "status": "pending_approval", "approver": "Lena Fischer"}
EMPLOYEE = {"employee_id": "E-40127", "name": "Priya Raman", "title": "Senior Data Engineer",
            "department": "Analytics", "manager": "Tomás Ortega", "location": "Toronto", "start_date": "2021-09-13"}
EVENT = {"event_id": "evt_9f2k1", "title": "Quarterly planning", "start": "2026-04-02T14:00:00Z",
         "end": "2026-04-02T15:30:00Z", "attendees": ["ana@acme.io", "li.wei@acme.io", "sam@acme.io"]}
PLAYING = {"is_playing": True, "progress_ms": 81000,
           "item": {"name": "Harvest Moon", "artists": [{"name": "Neil Young"}], "duration_ms": 303000}}
QUOTE = {"symbol": "ACME", "price": 142.37, "change_percent": -1.85, "currency": "USD", "as_of": "2026-03-20T20:00:00Z"}
ORDER = {"order_id": "112-7730291-5521046", "status": "shipped", "carrier": "UPS",
         "tracking_number": "1Z999AA10123456784", "estimated_delivery": "2026-03-24"}
ARTISTS = {"items": [{"name": n, "type": "artist"} for n in
                     ("Phoebe Bridgers", "Fontaines D.C.", "Big Thief", "Mitski", "Alvvays")]}

ALBUM = {"id": "4yP0hdKOZPNshxUOjY0cZj", "name": "After Hours", "artists": [{"name": "The Weeknd"}],
         "release_date": "2020-03-20", "total_tracks": 14, "label": "Republic Records", "popularity": 88}
COMMITS = [{"sha": "a3f9c2e1b7d04f6e8a21c5d9e0b4f7a1c2d3e4f5", "commit": {
               "message": "Fix null pointer in CSV importer",
               "author": {"name": "Mira Kowalski", "date": "2026-03-18T16:02:11Z"}}},
           {"sha": "9b8e7d6c5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d", "commit": {
               "message": "Bump cobra to v1.8.1", "author": {"name": "dependabot[bot]", "date": "2026-03-17T03:15:40Z"}}}]
HOTELS = {"results": [{"hotel_id": "H-88213", "name": "Hotel Baixa Verde", "price_per_night": {"amount": 142, "currency": "EUR"},
                       "rating": 4.6, "distance_km": 0.8},
                      {"hotel_id": "H-90417", "name": "Casa do Rio", "price_per_night": {"amount": 118, "currency": "EUR"},
                       "rating": 4.3, "distance_km": 2.1}], "check_in": "2026-05-08", "check_out": "2026-05-11"}
LEAVE = {"employee_id": "E-40127", "annual_leave": {"entitled_days": 25, "taken_days": 11, "remaining_days": 14},
         "as_of": "2026-03-20"}
FX = {"base": "EUR", "target": "USD", "rate": 1.0862, "amount": 2500, "converted": 2715.5, "as_of": "2026-03-20T16:00:00Z"}
REFUND = {"refund_id": "re_3P9xQ2LkT8", "status": "succeeded", "amount": 4999, "currency": "usd", "charge": "ch_3P9x1aLkT8"}
RUNS = {"total_count": 2, "workflow_runs": [
    {"id": 8123456790, "name": "CI", "status": "completed", "conclusion": "failure", "head_branch": "main",
     "run_started_at": "2026-03-19T09:12:00Z"},
    {"id": 8123456001, "name": "CI", "status": "completed", "conclusion": "success", "head_branch": "main",
     "run_started_at": "2026-03-18T17:40:00Z"}]}
REFUND_STEP: Step = ("create_refund", {"charge": "ch_3P9x1aLkT8", "amount": 4999}, REFUND)
ASK_REFUND = "Refund the $49.99 charge ch_3P9x1aLkT8."

PODCAST = {"items": [{"id": "5CfCWKI5pZ28U0uOzXkDHe", "name": "The Daily", "publisher": "The New York Times", "total_episodes": 2213, "type": "show"},
                     {"id": "2MAi0BvDc6GTFvKFPXnkCL", "name": "Hard Fork", "publisher": "The New York Times", "total_episodes": 178, "type": "show"}]}
RELEASE = {"tag_name": "v2.4.0", "name": "Inventory CLI 2.4", "published_at": "2026-03-12T15:30:00Z", "assets": [{"name": "inventory-cli_2.4.0_linux_amd64.tar.gz", "download_count": 341}, {"name": "inventory-cli_2.4.0_darwin_arm64.tar.gz", "download_count": 127}], "author": {"login": "akira-t"}}
PO = {"po_number": "4500018822", "supplier": "Kessler Industrietechnik", "status": "approved", "lines": [{"material": "MAT-10442", "qty": 250, "unit_price": 18.4}, {"material": "MAT-20871", "qty": 40, "unit_price": 112.0}], "total": 9080.0, "currency": "EUR", "delivery_date": "2026-04-07"}
EXPENSE = {"report_id": "ER-7731", "status": "submitted", "total": {"amount": 486.2, "currency": "GBP"}, "items": 5, "approver": "Dana Whitfield", "submitted_at": "2026-03-21T09:05:00Z"}
TRAIN = {"journeys": [{"departure": "08:15", "arrival": "11:02", "changes": 0, "operator": "Deutsche Bahn", "price": {"amount": 59.9, "currency": "EUR"}}, {"departure": "09:43", "arrival": "12:51", "changes": 1, "operator": "Deutsche Bahn", "price": {"amount": 44.9, "currency": "EUR"}}]}
SLA = {"ticket_id": "REQ-55102", "sla": {"target_hours": 24, "elapsed_hours": 19.5, "breached": False}, "status": "open", "assignee": "Karim Haddad"}
QUEUE = {"tracks": [{"name": "Motion Sickness", "artists": [{"name": "Phoebe Bridgers"}]}, {"name": "Not", "artists": [{"name": "Big Thief"}]}, {"name": "Archie, Marry Me", "artists": [{"name": "Alvvays"}]}]}

WELL_WRITTEN: list[tuple[str, Dialogue]] = [
    ("playlists", exchange("Show me my playlists.", [("get_current_user_playlists", {"limit": 20}, PLAYLISTS)],
                           "You have 3 playlists: Today's Top Hits (50 tracks, by Spotify), Road Trip (42 tracks) and "
                           "Deep Focus, your biggest at 128 tracks.")),
    ("playlist-ids", exchange("Which of my playlists are mine?", [("get_current_user_playlists", {}, PLAYLISTS)],
                              "Two of your 3 playlists are your own: 'Road Trip' (3cEYpjA9oz9GiPac4AsH4n) and "
                              "'Deep Focus' (1h0CEZCm6IbFTbxThn6Xcs).")),
    ("search", exchange("Find Blinding Lights by The Weeknd.", [("search_tracks", {"q": "Blinding Lights"}, SEARCH)],
                        "I found 'Blinding Lights' by The Weeknd, from the album After Hours (released March 20, "
                        "2020). It runs 3:20 and has a popularity score of 87. 'Save Your Tears' from the same "
                        "album came up too.")),
    ("issues", exchange(ASK_ISSUES, [LIST_ISSUES],
                        "I found 3 open issues in granite-dev/inventory-cli: #412 'Login fails on Safari', #415 "
                        "'Dark mode toggle resets after reload' and #420 'Add CSV export for inventory reports'. "
                        "Two are bugs, and #415 has no assignee yet.")),
    ("issues-list", exchange(ASK_ISSUES, [LIST_ISSUES],
                             "Here are the open issues:\n\n1. **#412** Login fails on Safari (mkowalski, 4 comments)\n"
                             "2. **#415** Dark mode toggle resets after reload (unassigned)\n3. **#420** Add CSV "
                             "export for inventory reports (jnakamura)\n\nThe oldest was opened on March 2.")),
    ("pull", exchange("Was PR 88 in granite-dev/inventory-cli merged?",
                      [("get_pull_request", {"owner": "granite-dev", "repo": "inventory-cli", "pull_number": 88}, PULL)],
                      "Yes, PR #88 'Batch inventory sync' by akira-t was merged on February 27, 2026 at 14:05 UTC. "
                      "It touched 17 files, with 1,240 additions and 310 deletions.")),
    ("repo", exchange("How popular is granite-dev/inventory-cli?",
                      [("get_repository", {"owner": "granite-dev", "repo": "inventory-cli"}, REPO)],
                      "granite-dev/inventory-cli has about 1.3k stars and 97 forks, with 23 open issues. It's "
                      "written in Go under the MIT License, and the last push was on March 19.")),
    ("weather", exchange("What's the weather in Lisbon right now?", [("get_current_weather", {"city": "Lisbon"}, WEATHER)],
                         "It's 18.4°C and partly cloudy in Lisbon, with 72% humidity and wind around 14 km/h.")),
    ("booking", exchange("Book me on TP1352 from Lisbon to London on April 14.",
                         [("book_flight", {"flight_number": "TP1352", "date": "2026-04-14"}, BOOKING)],
                         "You're booked! Your reference is QX7H2L for flight TP1352 from LIS to LHR, departing "
                         "April 14 at 07:35. The fare was €189.90.")),
    ("ticket", exchange(ASK_TICKET, [GET_TICKET],
                        "Ticket INC-20931 is in progress with the Network Operations group at priority P2. It was "
                        "last updated on 18 March 2026 at 10:22.")),
    ("invoice", exchange("Is invoice INV-2026-0147 paid?", [("get_invoice", {"invoice_id": "INV-2026-0147"}, INVOICE)],
                         "Not yet: invoice INV-2026-0147 from Nordhaus GmbH is still unpaid. The amount due is "
                         "€12,480.50, and it's due on April 30, 2026.")),
    ("requisition", exchange("Order 250 units of MAT-10442 for plant DE01.",
                             [("create_purchase_requisition", {"material_id": "MAT-10442", "quantity": 250,
                                                               "plant_code": "DE01"}, REQUISITION)],
                             "I've created requisition PR-558201 for 250 units of MAT-10442 at plant DE01. It's now "
                             "pending approval with Lena Fischer.")),
    ("employee", exchange("Who is employee E-40127?", [("get_employee", {"employee_id": "E-40127"}, EMPLOYEE)],
                          "E-40127 is Priya Raman, a Senior Data Engineer in Analytics based in Toronto. She reports "
                          "to Tomás Ortega and started on 13 September 2021.")),
    ("event", exchange("Set up quarterly planning on April 2 at 2pm UTC with Ana, Li and Sam.",
                       [("create_event", {"title": "Quarterly planning", "start": "2026-04-02T14:00:00Z",
                                          "duration_minutes": 90}, EVENT)],
                       "Done! 'Quarterly planning' is on your calendar for April 2 from 14:00 to 15:30 UTC, and "
                       "I've invited all 3 attendees (ana@acme.io, li.wei@acme.io and sam@acme.io).")),
    ("playing", exchange("What's playing?", [("get_currently_playing", {}, PLAYING)],
                         "You're listening to Harvest Moon by Neil Young, about 1:21 into the 5:03 track.")),
    ("quote", exchange("How did ACME do today?", [("get_stock_quote", {"symbol": "ACME"}, QUOTE)],
                       "ACME closed at $142.37, down 1.85% on the day (prices in USD as of March 20).")),
    ("order", exchange("Where is my order 112-7730291-5521046?",
                       [("get_order_status", {"order_id": "112-7730291-5521046"}, ORDER)],
                       "Your order 112-7730291-5521046 has shipped with UPS (tracking number 1Z999AA10123456784) "
                       "and should arrive on Tuesday, March 24.")),
    ("artists", exchange("Who are my top artists this month?",
                         [("get_top_artists", {"time_range": "short_term", "limit": 5}, ARTISTS)],
                         "Here are your top 5 artists this month:\n1. Phoebe Bridgers\n2. Fontaines D.C.\n"
                         "3. Big Thief\n4. Mitski\n5. Alvvays\nPhoebe Bridgers is at the top again.")),
    ("empty", exchange("Any open issues assigned to me in the PAY project?",
                       [("search_issues", {"jql": "project = PAY AND assignee = currentUser()"}, {"issues": [], "total": 0})],
                       "I didn't find any open issues assigned to you in the PAY project.")),
    ("not-found", exchange(TYPO, [("list_repository_issues", TYPO_ARGS, NOT_FOUND)],
                           "I couldn't find a repository named granite-dev/inventroy-cli. Could you check the "
                           "spelling of the repository name?")),
    ("denied", exchange(ASK_CLOSE, [("close_issue", CLOSE_ARGS, error("permission_denied",
                                                                       "Must have push access to close issues"))],
                        "I wasn't able to close #412: your account doesn't have push access to "
                        "granite-dev/inventory-cli. Would you like me to leave a comment on the issue instead?")),
    ("invalid", exchange("Move the review to 2026-02-30.",
                         [("reschedule_event", {"event_id": "evt_9f2k1", "start": "2026-02-30"},
                           error("invalid_value", "start: 2026-02-30 is not a valid date"))],
                         "The calendar rejected 2026-02-30 because it isn't a valid date. Which date should I use "
                         "instead?")),
    ("rate-limited", exchange(ASK_ISSUES, [("list_repository_issues", ISSUES_ARGS,
                                            error("rate_limited", "API rate limit exceeded")), LIST_ISSUES],
                              "I found 3 open issues in granite-dev/inventory-cli, the newest being #420 'Add CSV "
                              "export for inventory reports'.", said="Let me look that up for you.")),
    ("status", exchange(ASK_TICKET, [GET_TICKET],
                        "The status of INC-20931 is in progress and its priority is P2; Network Operations has it.")),
    # written after the rule was tuned on the cases above, and measured before any change for them
    ("album", exchange("Tell me about the album After Hours.", [("get_album", {"id": "4yP0hdKOZPNshxUOjY0cZj"}, ALBUM)],
                       "After Hours by The Weeknd came out on March 20, 2020 on Republic Records. It has 14 tracks "
                       "and a popularity of 88.")),
    ("commits", exchange("What were the last two commits on main in granite-dev/inventory-cli?",
                         [("list_commits", {"owner": "granite-dev", "repo": "inventory-cli", "sha": "main",
                                            "per_page": 2}, COMMITS)],
                         "The latest commit is a3f9c2e by Mira Kowalski on March 18: \"Fix null pointer in CSV "
                         "importer\". Before that, dependabot bumped cobra to v1.8.1 on March 17.")),
    ("hotels", exchange("Find me a hotel in Lisbon from May 8 to 11 under 150 euros.",
                        [("search_hotels", {"city": "Lisbon", "check_in": "2026-05-08", "check_out": "2026-05-11",
                                            "max_price": 150}, HOTELS)],
                        "I found 2 options for May 8–11:\n- Hotel Baixa Verde: €142 a night, rated 4.6, 0.8 km from "
                        "the centre\n- Casa do Rio: €118 a night, rated 4.3, 2.1 km away\nCasa do Rio is the cheaper "
                        "of the two.")),
    ("leave", exchange("How much leave do I have left? I'm E-40127.",
                       [("get_leave_balance", {"employee_id": "E-40127"}, LEAVE)],
                       "You've taken 11 of your 25 annual leave days, so 14 days remain as of March 20, 2026.")),
    ("fx", exchange("Convert 2,500 EUR to USD.", [("convert_currency", {"from": "EUR", "to": "USD", "amount": 2500}, FX)],
                    "2,500 EUR is about 2,715.50 USD at today's rate of 1.0862.")),
    ("refund", exchange(ASK_REFUND, [REFUND_STEP],
                        "The refund went through: re_3P9xQ2LkT8 returns $49.99 for charge ch_3P9x1aLkT8.")),
    ("runs", exchange("Did CI pass on main?", [("list_workflow_runs", {"owner": "granite-dev", "repo": "inventory-cli",
                                                                       "branch": "main"}, RUNS)],
                      "Not on the latest run: CI run 8123456790 on main, started March 19 at 09:12, finished with a "
                      "failure. The run before it, on March 18, succeeded.")),
    ("issues-short", exchange(ASK_ISSUES, [LIST_ISSUES],
                              "There are three open issues right now. The one most worth looking at is #412, Safari "
                              "logins failing, which has 4 comments and is with mkowalski.")),
    ("ticket-short", exchange(ASK_TICKET, [GET_TICKET],
                              "INC-20931 is still being worked on by Network Operations (priority P2); the last update "
                              "came in on March 18.")),
    ("pull-short", exchange("Is PR 88 merged?", [("get_pull_request", {"owner": "granite-dev", "repo": "inventory-cli",
                                                                       "pull_number": 88}, PULL)],
                            "Yes — it was merged on Feb 27. The change was fairly large: 17 files changed, "
                            "+1,240/−310.")),
    ("invoice-short", exchange("What do we owe Nordhaus?", [("get_invoice", {"invoice_id": "INV-2026-0147"}, INVOICE)],
                               "We owe Nordhaus GmbH €12,480.50 on invoice INV-2026-0147, due by the end of April.")),
    ("employee-short", exchange("Who manages Priya Raman?", [("get_employee", {"employee_id": "E-40127"}, EMPLOYEE)],
                                "Priya's manager is Tomás Ortega. She's been with the Analytics team since September "
                                "2021.")),
    ("rate-then-ok", exchange("Show my playlists.", [("get_current_user_playlists", {},
                                                      error("rate_limited", "Too many requests")),
                                                     ("get_current_user_playlists", {"limit": 50}, PLAYLISTS)],
                              "Sorry for the wait, the service was limiting requests for a moment. You have 3 "
                              "playlists: Today's Top Hits, Road Trip and Deep Focus.")),
    ("not-found-ticket", exchange("Get ticket INC-99999.", [("get_ticket", {"ticket_id": "INC-99999"},
                                                             error("not_found", "No ticket with id INC-99999"))],
                                  "There's no ticket with the ID INC-99999 in the system. Could it have a different "
                                  "number? If you have the ticket's title I can search for it instead.")),
    # a second round, written after every change above and measured as it stands
    ("podcasts", exchange("Find podcasts from the New York Times.", [("search_shows", {"q": "New York Times"}, PODCAST)],
   "I found 2 shows from The New York Times: The Daily, with 2,213 episodes, and Hard Fork, with 178.")),
    ("po", exchange("Show me PO 4500018822.", [("get_purchase_order", {"po_number": "4500018822"}, PO)],
   "PO 4500018822 with Kessler Industrietechnik is approved. It has 2 lines: 250 × MAT-10442 at €18.40 and 40 × MAT-20871 at €112.00, €9,080.00 in total, for delivery on 7 April 2026.")),
    ("expense", exchange("Submit my expense report ER-7731.", [("submit_expense_report", {"report_id": "ER-7731"}, EXPENSE)],
   "Done — expense report ER-7731 (5 items, £486.20) was submitted this morning at 09:05 and is now with Dana Whitfield for approval.")),
    ("train", exchange("Trains from Munich to Frankfurt tomorrow morning?", [("search_trains", {"from": "Munich", "to": "Frankfurt", "date": "2026-03-22"}, TRAIN)],
   "There are two morning options with Deutsche Bahn: the 08:15 gets in at 11:02 with no changes for €59.90, and the 09:43 arrives at 12:51 with one change for €44.90.")),
    ("queue", exchange("What's in my queue?", [("get_queue", {}, QUEUE)],
   "Next up: Motion Sickness by Phoebe Bridgers, then 'Not' by Big Thief and 'Archie, Marry Me' by Alvvays.")),
    ("forbidden", exchange("Delete the release v2.4.0.", [("delete_release", {"owner": "granite-dev", "repo": "inventory-cli", "tag": "v2.4.0"}, error("permission_denied", "Resource not accessible by integration"))],
   "I can't delete v2.4.0: the integration I'm using isn't allowed to manage releases in granite-dev/inventory-cli. A maintainer of the repository would need to remove it, or grant the integration write access.")),
    ("invalid-qty", exchange("Order -5 units of MAT-10442.", [("create_purchase_requisition", {"material_id": "MAT-10442", "quantity": -5, "plant_code": "DE01"}, error("invalid_value", "quantity must be greater than 0"))],
   "The order didn't go through because the quantity has to be greater than 0. How many units of MAT-10442 do you need?")),
    ("retry-ok", exchange("Show me PO 4500018822.", [("get_purchase_order", {"po_number": "4500018822"}, error("rate_limited", "Try again in 10 seconds")), ("get_purchase_order", {"po_number": "4500018822"}, PO)],
   "PO 4500018822 is approved; delivery is due on April 7.")),
]


@pytest.mark.parametrize("name,dialogue", WELL_WRITTEN, ids=[n for n, _ in WELL_WRITTEN])
def test_a_well_written_answer_passes(name: str, dialogue: Dialogue) -> None:
    verdict = check_answers(dialogue)
    assert verdict.passed, verdict.details["problems"]


def test_the_corpus_is_large_enough_to_measure_false_rejects() -> None:
    assert len(WELL_WRITTEN) >= 40 and all(has_results(d.messages) for _, d in WELL_WRITTEN)


def test_words_of_a_state_or_a_key_made_of_function_words_are_no_claim_and_no_field() -> None:
    revoked = error("permission_denied", "Token lacks the repo scope")
    d = exchange(ASK_CLOSE, [("close_issue", CLOSE_ARGS, revoked)],
                 "Your token's access has been limited to public repositories, so #412 is still open. Could you "
                 "grant it the repo scope and ask again?")
    assert codes(d) == []
    booking = exchange("Book TP1352 to London.", [("book_flight", {"flight_number": "TP1352"},
                                                   {"from": "LIS", "to": "LHR", "status": "confirmed"})],
                       "Your seat from LIS to LHR is confirmed; the flight to London is on time.")
    assert codes(booking) == []


@pytest.mark.parametrize("answer", [
    "**Ticket INC-20931**\n- Status: In Progress\n- Priority: P2\n- Group: Network Operations\n"
    "- Last updated: 2026-03-18 10:22 UTC",
    "| Ticket | Status | Group |\n|---|---|---|\n| INC-20931 | in progress | Network Operations |",
    "✅ Found it. 🛠️ Network Operations is working on INC-20931 (P2).",
])
def test_markdown_and_emoji_layouts_are_read_as_text(answer: str) -> None:
    assert codes(exchange(ASK_TICKET, [GET_TICKET], answer)) == []


def test_a_wrong_value_in_a_markdown_list_is_still_caught() -> None:
    d = exchange(ASK_TICKET, [GET_TICKET], "**Ticket INC-20931**\n- Status: Resolved\n- Priority: P1")
    assert codes(d) == ["invented_value", "contradicted_value", "contradicted_value"]


def test_a_field_said_rounded_is_no_contradiction_and_another_noun_of_the_tool_name_is_no_count() -> None:
    rated = exchange("How is Casa do Rio rated?", [("get_hotel", {"hotel_id": "H-90417"}, {"rating": 4.57, "reviews": 812})],
                     "Its rating is 4.6 from 812 reviews.")
    assert codes(rated) == []
    wrong = exchange("How is Casa do Rio rated?", [("get_hotel", {"hotel_id": "H-90417"}, {"rating": 4.57})],
                     "Its rating is 4.2.")
    assert "contradicted_value" in codes(wrong)
    across = exchange(ASK_ISSUES, [LIST_ISSUES], "I looked across 1 repository and 2 labels: 3 issues are open.")
    assert codes(across) == []


def test_a_value_worked_out_from_the_results_is_no_source() -> None:
    """Arithmetic on results (24 - 19.5) states a number no source holds: the rules ask the assistant not to."""
    d = exchange("Is REQ-55102 close to breaching its SLA?", [("get_ticket_sla", {"ticket_id": "REQ-55102"}, SLA)],
                 "Not yet: REQ-55102 has used 19.5 of its 24 hours, so about 4.5 hours are left.")
    assert codes(d) == ["invented_value"] and "'4.5'" in check_answers(d).reason


def test_a_field_named_inside_a_longer_field_is_judged_under_the_longer_name() -> None:
    result = {"media_type": "audio", "copyrights": [{"text": "2024 Label", "type": "C"}, {"text": "2024 Label", "type": "P"}]}
    ask = "Could you look up the audiobook B0123456789 for me?"
    good = exchange(ask, [("get_audiobook", {"id": "B0123456789"}, result)],
                    "Here's what I found: the media type is audio and there are 2 copyrights.")
    assert check_answers(good).passed, check_answers(good).reason
    bad = exchange(ask, [("get_audiobook", {"id": "B0123456789"}, result)],
                   "Here's what I found: the media type is video and there are 2 copyrights.")
    assert not check_answers(bad).passed
