"""The param_keys rule at its edges: everyday phrases a user may say pass, a schema's wording and
keys written as identifiers fail (`shortcuts.distinctive_key_words`, `validators.paramkeys`)."""

from __future__ import annotations

import pytest

from tests.support.factories import make_dialogue
from utcgen.pipeline.core.records import Dialogue, Message, Tool
from utcgen.pipeline.dialogue import shortcuts
from utcgen.validators import paramkeys


@pytest.mark.parametrize(("text", "key", "description"), [
    ("My API key is in the vault.", "api_key", ""),
    ("Here is my API key.", "apiKey", "Your API key."),
    ("Send it to my e-mail please.", "e-mail", ""),
    ("The phone number is on file.", "phone_number", ""),
    ("Use my user name, not my real one.", "user_name", ""),
    ("The start date is Monday.", "start_date", ""),
    ("My date of birth is the 3rd of May.", "date_of_birth", "Date of birth, for individuals."),
    ("The expected close date is Friday.", "expected_close_date", "Expected close date of the deal."),
    ("The X component is 4.", "X_component", "The X component of the vector."),
    ("The max price is 40 euros.", "max_price", "Upper limit in EUR."),
    ("And the number of successes is 230.", "number_of_successes", "The desired number of successful outcomes."),
    ("I'd like the backstage pass as an add-on, two add-ons in fact.", "add_ons", "Add-ons for the concert."),
    ("The era name is Jurassic.", "era_name", "Name of the era."),
])
def test_everyday_phrases_pass(text: str, key: str, description: str) -> None:
    assert shortcuts.key_hits(text, [key], {key: description}) == []


@pytest.mark.parametrize(("text", "key", "description"), [
    ("The api_key is abc.", "api_key", "Your API key."),
    ("Set API_KEY to abc.", "api_key", ""),
    ("Which PO number is it?", "po_number", "Purchase order number, e.g. PO-4500123."),
    ("The GL account is 400100.", "gl_account", "Six-digit GL account, e.g. 400100."),
    ("The RFQ ID is 300127.", "rfq_id", "RFQ ID, e.g. RFQ-300127."),
    ("Move it from cost center 41020.", "from_cost_center", "Cost center giving up budget."),
    ("What is the cost center code?", "cost_center_code", "Cost center, e.g. CC-41020."),
    # the description says the words, but not as one phrase: still the schema's wording
    ("The access end date is June 1.", "access_end_date", "Date when the access should end."),
    ("Check the userName field.", "userName", ""),
    ("The add ons are listed.", "add_ons", "Extras for the concert."),  # no hyphenated word to say it as
    ("Which db of name is it?", "db_of_name", ""),
    ("The length of side1 is 4.", "side1", "The length of first side of the triangle."),
    ("It goes to cost-center-code 7.", "cost-center-code", ""),
])
def test_schema_wording_and_identifiers_fail(text: str, key: str, description: str) -> None:
    assert shortcuts.key_hits(text, [key], {key: description}) == [key]


def test_an_everyday_phrase_of_four_content_words_is_still_schema_wording() -> None:
    key, desc = "max_electric_field_strength", "The max electric field strength of the wave."
    assert shortcuts.distinctive_key_words(key, desc) == "max electric field strength"


def test_identifier_like_knows_hyphenated_english_from_identifiers() -> None:
    assert not shortcuts.identifier_like("e-mail") and not shortcuts.identifier_like("check-in")
    assert shortcuts.identifier_like("Check-In") and shortcuts.identifier_like("cost-center-code")
    assert shortcuts.identifier_like("api_key") and shortcuts.identifier_like("line2")


def _with_first_user_turn(d: Dialogue, text: str) -> Dialogue:
    i = next(i for i, m in enumerate(d.messages) if m.role == "user")
    return d.model_copy(update={"messages": [*d.messages[:i], Message(role="user", content=text), *d.messages[i + 1:]]})


def test_the_validator_lets_a_user_say_api_key_and_reads_the_description() -> None:
    tool = Tool(name="place_order", description="Place a stock order.", parameters={
        "type": "object", "required": ["api_key", "date_of_birth"],
        "properties": {"api_key": {"type": "string", "description": "Your broker API key."},
                       "date_of_birth": {"type": "string", "description": "Date of birth of the holder."}}})
    base = make_dialogue(seed_tool=tool, gold_arguments={"api_key": "K-77", "date_of_birth": "1990-02-03"})
    assert paramkeys.check_param_keys(base).passed
    said = _with_first_user_turn(base, "My API key is K-77 and my date of birth is 1990-02-03.")
    assert paramkeys.check_param_keys(said).passed
    verdict = paramkeys.check_param_keys(_with_first_user_turn(base, "The api_key is K-77."))
    assert not verdict.passed and "api_key" in verdict.reason


def test_a_numbered_key_is_said_with_an_ordinal_the_rule_lets_pass() -> None:
    """`side1` is an identifier; its label is "first side", which the rule does not read as the key."""
    from utcgen.pipeline.dialogue.parameter_labels import label

    assert [label(k) for k in ("side1", "array2", "address_line1", "db_name")] == [
        "first side", "second array", "first address line", "database name"]
    keys = ["side1", "side2", "address_line1", "db_name"]
    assert shortcuts.key_hits("The first side is 3, the second side 4; first address line: 1 Main St; database name: "
                              "sales.", keys) == []
