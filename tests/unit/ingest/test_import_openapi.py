"""OpenAPI documents shaped like the real ones users bring: names shared by parameters and
body fields, bodies as forms and multipart, bodies that cannot be arguments, documents
with nothing but webhooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import CATALOGS
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.ingest.reader import load_catalog, read_catalog

FIXTURES = CATALOGS
STORE = FIXTURES / "store_openapi.yaml"


@pytest.fixture(scope="module")
def store() -> tuple[dict[str, Tool], list[str]]:
    catalog = read_catalog(STORE)
    return {t.name: t for t in catalog.tools}, catalog.warnings


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path


def one_operation(path: str, op: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "paths": {path: {"post": {"operationId": "op", "summary": "Do it.", **op}}}, **top}


def test_store_imports_every_operation(store: tuple[dict[str, Tool], list[str]]) -> None:
    tools, _ = store
    assert list(tools) == [
        "updatePet", "addPet", "getPetById", "updatePetWithForm", "uploadFile", "updateUser",
        "replaceOrder", "submitApplication", "subscribe", "setAvatar",
    ]


def test_json_body_is_preferred_over_xml_and_form_alternatives(store: tuple[dict[str, Tool], list[str]]) -> None:
    pet = store[0]["updatePet"]
    assert list(pet.properties) == ["id", "name", "category", "photoUrls", "tags", "status"]
    assert pet.required == ["name", "photoUrls"]
    assert pet.properties["status"]["enum"] == ["available", "pending", "sold"]


def test_form_urlencoded_body_becomes_arguments_with_required_fields(
    store: tuple[dict[str, Tool], list[str]]
) -> None:
    add = store[0]["addPet"]  # offered only as a form
    assert list(add.properties) == ["id", "name", "category", "photoUrls", "tags", "status"]
    assert add.required == ["name", "photoUrls"]


def test_query_params_and_form_fields_of_the_same_name_merge(store: tuple[dict[str, Tool], list[str]]) -> None:
    tool = store[0]["updatePetWithForm"]
    assert list(tool.properties) == ["petId", "name", "status"]
    # The parameter's description is kept; the body's example and enum are added.
    assert tool.properties["name"] == {
        "type": "string", "description": "New name for the pet.", "examples": ["Pepper"],
    }
    assert tool.properties["status"] == {
        "type": "string", "description": "New sales status for the pet.", "enum": ["available", "pending", "sold"],
    }
    assert tool.required == ["petId"]


def test_path_param_and_body_field_of_the_same_name_merge(store: tuple[dict[str, Tool], list[str]]) -> None:
    user = store[0]["updateUser"]
    assert list(user.properties) == ["username", "id", "email", "phone"]
    assert user.properties["username"] == {
        "type": "string", "description": "Login name of the user to update.", "examples": ["mlopez"],
    }
    assert user.required == ["username"]


def test_type_clash_keeps_both_under_names_saying_where_they_come_from(
    store: tuple[dict[str, Tool], list[str]]
) -> None:
    tools, warnings = store
    order = tools["replaceOrder"]
    assert list(order.properties) == ["path_id", "body_id", "quantity"]
    assert order.properties["path_id"] == {"title": "ID", "type": "integer", "description": "Internal order number."}
    assert order.properties["body_id"] == {"title": "ID", "type": "string",
                                           "description": "The customer's own order reference."}
    assert order.required == ["path_id", "body_id", "quantity"]
    assert (
        f"{STORE}: tool #6 'replaceOrder' (PUT /store/order/{{id}}): "
        "paths./store/order/{id}.put.requestBody.content.application/json.schema.properties.id: "
        "the path parameter (integer) and the request body field (string) share the name 'id' "
        "but disagree on type: kept each under its own name, 'path_id' and 'body_id'"
    ) in warnings


def test_multipart_and_vendor_json_bodies(store: tuple[dict[str, Tool], list[str]]) -> None:
    tools, _ = store
    application = tools["submitApplication"]
    assert list(application.properties) == ["applicant_name", "resume", "start_date"]
    assert application.required == ["applicant_name", "resume"]
    subscribe = tools["subscribe"]
    assert subscribe.properties["weekly"] == {"type": "boolean", "default": True}
    assert subscribe.required == ["email"]


def test_bodies_that_cannot_be_arguments_are_left_out_with_a_warning(
    store: tuple[dict[str, Tool], list[str]]
) -> None:
    tools, warnings = store
    assert list(tools["uploadFile"].properties) == ["petId", "additionalMetadata"]
    assert list(tools["setAvatar"].properties) == ["username"]
    assert warnings == [
        f"{STORE}: tool #4 'uploadFile' (POST /pet/{{petId}}/uploadImage): "
        "paths./pet/{petId}/uploadImage.post.requestBody.content: media type 'application/octet-stream' "
        "cannot be passed as tool arguments (only JSON and form bodies can): the request body is left out",
        f"{STORE}: tool #6 'replaceOrder' (PUT /store/order/{{id}}): "
        "paths./store/order/{id}.put.requestBody.content.application/json.schema.properties.id: "
        "the path parameter (integer) and the request body field (string) share the name 'id' "
        "but disagree on type: kept each under its own name, 'path_id' and 'body_id'",
        f"{STORE}: tool #9 'setAvatar' (PUT /user/{{username}}/avatar): "
        "paths./user/{username}/avatar.put.requestBody.content: media types 'image/png', 'image/jpeg' "
        "cannot be passed as tool arguments (only JSON and form bodies can): "
        "the request body (which the API requires) is left out",
    ]


def test_agreeing_types_with_different_constraints_merge_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path / "api.json", one_operation("/scales/{weight}", {
        "parameters": [
            {"name": "weight", "in": "path", "required": True, "schema": {"type": "number"}},
            {"name": "unit", "in": "query", "schema": {"type": "string", "enum": ["kg", "lb"]}},
        ],
        "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {
            "type": "object", "required": ["unit"],
            "properties": {"weight": {"type": "integer"}, "unit": {"type": "string", "enum": ["kg", "lb", "st"]}},
        }}}},
    }))
    catalog = read_catalog(path)
    (tool,) = catalog.tools
    assert tool.properties == {"weight": {"type": "number"}, "unit": {"type": "string", "enum": ["kg", "lb"]}}
    assert tool.required == ["weight", "unit"]  # required where either side requires it
    field = "paths./scales/{weight}.post.requestBody.content.application/x-www-form-urlencoded.schema.properties"
    where = f"{path}: tool #0 'op' (POST /scales/{{weight}})"
    assert catalog.warnings == [
        f"{where}: {field}.weight: merged with the path parameter 'weight'; they differ in type: "
        "kept the path parameter's",
        f"{where}: {field}.unit: merged with the query parameter 'unit'; they differ in enum: "
        "kept the query parameter's",
    ]


def test_path_and_query_parameter_of_the_same_name_with_different_types(tmp_path: Path) -> None:
    path = write(tmp_path / "api.json", one_operation("/files/{version}", {"parameters": [
        {"name": "version", "in": "path", "required": True, "schema": {"type": "string"}},
        {"name": "version", "in": "query", "schema": {"type": "integer"}},
    ]}))
    catalog = read_catalog(path)
    assert catalog.tools[0].properties == {"path_version": {"title": "version", "type": "string"},
                                           "query_version": {"title": "version", "type": "integer"}}
    assert catalog.tools[0].required == ["path_version"]
    assert catalog.warnings == [
        f"{path}: tool #0 'op' (POST /files/{{version}}): paths./files/{{version}}.post.parameters[1]: "
        "the path parameter (string) and the query parameter (integer) share the name 'version' "
        "but disagree on type: kept each under its own name, 'path_version' and 'query_version'"
    ]


def test_body_without_schema_or_content_is_left_out_with_a_warning(tmp_path: Path) -> None:
    doc = one_operation("/a", {"requestBody": {"required": True, "content": {"application/json": {}}}})
    doc["paths"]["/b"] = {"put": {"operationId": "b", "summary": "B.", "requestBody": {"description": "x"}}}
    catalog = read_catalog(write(tmp_path / "api.json", doc))
    assert [t.properties for t in catalog.tools] == [{}, {}]
    assert [w.split(": ", 2)[2] for w in catalog.warnings] == [
        "paths./a.post.requestBody.content.application/json: has no schema: "
        "the request body (which the API requires) is left out",
        "paths./b.put.requestBody.content: missing or empty: the request body is left out",
    ]


def test_webhooks_only_document_says_no_operations_found(tmp_path: Path) -> None:
    path = tmp_path / "events.yaml"
    path.write_text(
        "openapi: 3.1.0\n"
        "info: {title: Events, version: '1'}\n"
        "webhooks:\n"
        "  orderShipped:\n"
        "    post:\n"
        "      requestBody:\n"
        "        content:\n"
        "          application/json:\n"
        "            schema: {type: object, properties: {order_id: {type: string}}}\n"
        "      responses: {'200': {description: ok}}\n"
    )
    with pytest.raises(InputError) as info:
        load_catalog(path)
    assert info.value.problems == [
        f"{path}: no operations found: 'paths' is missing; its 1 webhook is a request the API sends, "
        "not operations a user calls"
    ]


def test_empty_paths_says_no_operations_found(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.json", {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
                                            "paths": {"/health": {"summary": "only a summary"}}})
    with pytest.raises(InputError) as info:
        load_catalog(path)
    assert info.value.problems == [f"{path}: no operations found: 'paths' holds no operations"]
    assert "paths missing" not in str(info.value)


def test_webhooks_next_to_operations_are_reported_not_imported(tmp_path: Path) -> None:
    doc = one_operation("/a", {}, webhooks={"ping": {"post": {"summary": "p"}}, "pong": {"post": {}}})
    catalog = read_catalog(write(tmp_path / "api.json", doc))
    assert [t.name for t in catalog.tools] == ["op"]
    assert catalog.warnings == [
        f"{tmp_path / 'api.json'}: webhooks: 2 webhooks not imported "
        "(requests the API sends, not operations a user calls)"
    ]


def test_deprecated_operations_are_named_in_a_warning_not_imported(tmp_path: Path) -> None:
    def op(name: str, deprecated: bool) -> dict[str, Any]:
        return {"operationId": name, "summary": f"{name} summary", "deprecated": deprecated,
                "responses": {"200": {"description": "ok"}}}

    doc = {"openapi": "3.0.3", "info": {"title": "Music", "version": "1"},
           "paths": {"/me/tracks": {"put": op("save-tracks-user", True), "get": op("get-saved-tracks", False)},
                     "/me/library": {"put": op("save-library-items", False)}}}
    catalog = read_catalog(write(tmp_path / "music.json", doc))
    assert [t.name for t in catalog.tools] == ["get-saved-tracks", "save-library-items"]
    assert catalog.warnings == [f"{tmp_path / 'music.json'}: 1 operation marked deprecated not imported "
                                "(the API asks callers to use others): save-tracks-user"]
    for ops in doc["paths"].values():
        for o in ops.values():
            o["deprecated"] = True
    with pytest.raises(InputError) as info:
        load_catalog(write(tmp_path / "old.json", doc))
    assert info.value.problems == [f"{tmp_path / 'old.json'}: no operations found: all 3 operations are marked deprecated"]
