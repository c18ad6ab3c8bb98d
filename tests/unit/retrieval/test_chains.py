"""Chain pairs planned from small hand-built catalogs: a field of an output schema feeding a required
parameter, a lookup tool's name feeding one when no schema says, and no pair between unrelated tools."""

from __future__ import annotations

from typing import Any

import numpy as np

from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.retrieval.chains import NAME_COSINE, ChainPair, plan_chains


def tool(name: str, description: str, required: dict[str, dict[str, Any]] | None = None,
         output: dict[str, Any] | None = None, **optional: dict[str, Any]) -> Tool:
    props = {**(required or {}), **optional}
    return Tool(name=name, description=description, output_schema=output,
                parameters={"type": "object", "properties": props, "required": list(required or {})})


STR = {"type": "string"}
PLAYLISTS = {"title": "PagingPlaylists", "type": "object", "properties": {
    "total": {"type": "integer"},
    "items": {"type": "array", "items": {"title": "SimplifiedPlaylistObject", "type": "object", "properties": {
        "id": STR, "name": STR,
        "owner": {"title": "PublicUserObject", "type": "object", "properties": {"id": STR, "display_name": STR}},
    }}},
}}
REPOS = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {
    "name": STR, "owner": {"type": "object", "properties": {"login": STR, "id": {"type": "integer"}}},
}}}}}

MUSIC = [
    tool("list-my-playlists", "List the playlists of the current user.", output=PLAYLISTS),
    tool("get-playlist", "Get a playlist.", {"playlist_id": {**STR, "description": "The playlist's id."}}),
    tool("get-user-profile", "Get a user's public profile.", {"user_id": STR}),
    tool("set-volume", "Set the playback volume.", {"volume_percent": {"type": "integer"}}),
    tool("play-genre", "Play music of a genre.", {"genre": {**STR, "enum": ["rock", "jazz"]}}),
]


def test_schema_fields_feed_the_parameters_they_name() -> None:
    pairs = plan_chains(MUSIC)
    assert pairs == [
        ChainPair(producer="list-my-playlists", consumer="get-playlist", parameter="playlist_id",
                  source_path="items[].id", evidence="schema", score=0.9),
        ChainPair(producer="list-my-playlists", consumer="get-user-profile", parameter="user_id",
                  source_path="items[].owner.id", evidence="schema", score=0.9),
    ]


def test_a_named_parameter_takes_an_objects_label() -> None:
    """`owner` <- `owner.login` and `repo` <- the name of the listed repository (known by the producer's
    name, the top-level object having no title)."""
    tools = [tool("search_repositories", "Find repositories by keyword.", {"query": STR}, output=REPOS),
             tool("list_branches", "List the branches of a repository.", {"owner": STR, "repo": STR})]
    pairs = {(p.parameter, p.source_path) for p in plan_chains(tools)}
    assert pairs == {("owner", "items[].owner.login"), ("repo", "items[].name")}


def test_a_producer_told_the_value_feeds_nothing_nor_a_tool_itself() -> None:
    tools = [tool("get-playlist", "Get a playlist.", {"playlist_id": STR},
                  output={"type": "object", "properties": {"id": STR, "title": STR}}),
             tool("rename-playlist", "Rename a playlist.", {"playlist_id": STR, "name": STR})]
    assert plan_chains(tools) == []


def test_types_must_agree() -> None:
    tools = [tool("list-orders", "List orders.", output={"type": "object", "properties": {
                 "orders": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "boolean"}}}}}}),
             tool("cancel-order", "Cancel an order.", {"order_id": STR})]
    assert plan_chains(tools) == []


def fake_embed(close: set[str]):
    """Unit vectors: the texts in `close` all point one way, every other text its own way."""
    def embed(texts):
        out = np.zeros((len(texts), len(texts) + 1), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i, 0 if text in close else i + 1] = 1.0
        return out
    return embed


SUPPORT = [
    tool("list_open_tickets", "List the open support tickets of a queue.", {"queue": STR}),
    tool("escalate_ticket", "Escalate a ticket.", {"ticket_id": {**STR, "description": "The ticket to escalate."}}),
    tool("list_purchase_orders", "List purchase orders.", {}),
    tool("get_sales_order", "Get a sales order.", {"sales_order_id": STR}),
    tool("book_room", "Book a meeting room.", {"room": STR, "start": STR}),
]


def test_without_a_schema_a_lookup_name_confirmed_by_embeddings_feeds_an_id() -> None:
    embed = fake_embed({"List the open support tickets of a queue.", "ticket id: The ticket to escalate."})
    pairs = plan_chains(SUPPORT, embed=embed)
    assert pairs == [ChainPair(producer="list_open_tickets", consumer="escalate_ticket", parameter="ticket_id",
                               source_path=None, evidence="name", score=1.0)]


def test_embeddings_that_disagree_refuse_the_name_match_and_no_embed_means_schema_only() -> None:
    assert plan_chains(SUPPORT, embed=fake_embed(set())) == []  # cosine 0 < NAME_COSINE
    assert NAME_COSINE > 0
    assert plan_chains(SUPPORT) == []


def test_another_kind_of_the_same_thing_is_no_pair() -> None:
    """A list of purchase orders does not give a sales order's id, however close the texts."""
    embed = fake_embed({"List purchase orders.", "sales order id"})
    assert plan_chains(SUPPORT, embed=embed) == []


def test_order_is_deterministic_and_one_pair_per_parameter() -> None:
    shuffled = list(reversed(MUSIC))
    assert plan_chains(shuffled) == plan_chains(MUSIC)
    keys = [(p.producer, p.consumer, p.parameter) for p in plan_chains(MUSIC)]
    assert keys == sorted(set(keys))


def test_a_producer_told_the_same_thing_by_another_key_feeds_nothing() -> None:
    """`get-album(id)` was given the album's id, so it gives `get-albums` no `ids`; a list gives them."""
    album = {"title": "AlbumObject", "type": "object", "properties": {"id": STR, "name": STR}}
    tools = [tool("get-album", "Get an album.", {"id": {**STR, "description": "The id of the album."}}, output=album),
             tool("get-albums", "Get several albums.", {"ids": {**STR, "description": "The ids of the albums."}}),
             tool("list-new-albums", "List new albums.", output={"type": "object", "properties": {
                 "albums": {"type": "array", "items": album}}})]
    assert [(p.producer, p.consumer, p.source_path) for p in plan_chains(tools)] == [
        ("list-new-albums", "get-album", "albums[].id"), ("list-new-albums", "get-albums", "albums[].id")]
