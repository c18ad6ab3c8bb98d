"""Keys never reach a file or a terminal: `redaction.redact` and the boundaries that apply it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from utcgen.pipeline.core import redaction
from utcgen.pipeline.export.folder import DatasetFolder
from utcgen.pipeline.llm.failures import describe

KEY = "zq8Wk2LmN4pR7tY1uV3xB6cD"  # shaped like nothing: only the variable's value says it is a key


def test_a_watched_variables_value_is_masked_wherever_it_appears(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_ENDPOINT_CREDENTIAL", KEY)
    assert redaction.redact(f"server said: {KEY} is wrong") == f"server said: {KEY} is wrong"  # not yet known
    redaction.watch(["MY_ENDPOINT_CREDENTIAL"])
    assert redaction.redact(f"server said: {KEY} is wrong") == "server said: *** is wrong"


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_API_KEY", "GEMINI_API_KEY",
                                  "HF_TOKEN", "SOME_VENDOR_API_KEY", "INTERNAL_PROXY_TOKEN"])
def test_provider_and_credential_named_variables_are_masked(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, KEY)
    assert KEY not in redaction.redact(f"echo {KEY}!")


def test_short_values_are_not_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "none")  # a local server that ignores keys
    assert redaction.redact("none of the tools fit") == "none of the tools fit"


@pytest.mark.parametrize(("text", "kept"), [
    ("Authorization: Bearer abcDEF0123456789xyz", "Authorization: Bearer ***"),
    ("header was 'bearer abcdefgh12345678'", "header was 'bearer ***'"),
    ("key sk-proj-abcdefgh1jklmnopqrstuvwx rejected", "key *** rejected"),
    ("token hf_abcdefghijklmn0pqrstuvwx expired", "token *** expired"),
    ('{"api_key": "Q2xhc3NpZmllZFNlY3JldDEyMw"}', '{"api_key": "***"}'),
    ("x-api-key=Q2xhc3NpZmllZFNlY3JldDEyMw", "x-api-key=***"),
])
def test_credential_shaped_tokens_are_masked(text: str, kept: str) -> None:
    assert redaction.redact(text) == kept
    assert redaction.redact(kept) == kept  # idempotent


@pytest.mark.parametrize("text", [
    json.dumps({"prompt_tokens": 1234567, "max_tokens": 512, "api_key_env": "OPENAI_API_KEY",
                "content": "Which ticket do you mean, the token refund or the invoice?"}),
    "I only need basic information about the bearer instrument.",
    "Is the pipeline sk-learn-compatible-pipeline-wrapper ready?",
    "token: transferablecertificates, password = correcthorsebatterystaple",
])
def test_ordinary_text_and_json_are_left_alone(text: str) -> None:
    assert redaction.redact(text) == text


def test_an_llm_error_description_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    exc = RuntimeError(f"400 Bad Request: invalid header Authorization: Bearer {KEY} (echoed by the proxy)")
    text = describe(exc, "http://127.0.0.1:1")
    assert KEY not in text and "Bearer ***" in text


def test_the_dataset_folder_writer_redacts_json_text_and_parquet_cells(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = DatasetFolder(tmp_path)
    schema = pa.schema([("reason", pa.string()), ("n", pa.int64())])
    folder.write_config("rejected", [{"reason": f"synthesis: 400 key {KEY}", "n": 1}], schema)
    folder.write_json("stats.json", {"reasons": {f"synthesis: 400 key {KEY}": 1}})
    folder.write_text("README.md", f"| synthesis: 400 key {KEY} | 1 |")
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert pq.read_table(folder.config_path("rejected")).to_pylist() == [{"reason": "synthesis: 400 key ***", "n": 1}]


def test_log_records_are_redacted_by_the_handlers_filter(monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    record = logging.LogRecord("utcgen.test", logging.WARNING, __file__, 1, "call failed: %s", (f"key {KEY}",), None)
    assert redaction.RedactingFilter().filter(record)
    assert record.getMessage() == "call failed: key ***"
