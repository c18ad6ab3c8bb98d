"""How a row model's field types become columns: the arrow type, the storage form and the card's column list.

The row models (utcgen.pipeline.export.rows) say what each column is; this module reads their
annotations so no column is declared twice. Nested, open-ended values (tool specs, argument maps,
verdict details, model maps) are `JsonText`, JSON strings, so a schema never depends on the
content of a run. `JsonValue` is arrow's JSON extension type, which `datasets` reads as its
`Json()` feature and decodes to Python objects on load.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Union

import pyarrow as pa
from pydantic import BaseModel

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class _Json:
    """Marks a column that holds a JSON document: as text (`native=False`) or as arrow JSON (`native=True`)."""

    native: bool = False


JsonText = Annotated[str, _Json()]
# Any JSON value; stored as arrow `json` (string storage), decoded by `datasets` (feature `Json()`).
JsonValue = Annotated[Any, _Json(native=True)]


def json_text(value: Any) -> str:
    """Compact JSON; `default=str` keeps odd values (dates, paths) from aborting an export."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _unwrap(annotation: Any) -> tuple[Any, _Json | None]:
    """(type without `| None` and `Annotated`, its JSON marker if it holds a JSON document)."""
    marker = None
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            base, *meta = typing.get_args(annotation)
            marker = marker or next((m for m in meta if isinstance(m, _Json)), None)
            annotation = base
        elif origin in (Union, types.UnionType):
            (annotation,) = [a for a in typing.get_args(annotation) if a is not type(None)]
        else:
            return annotation, marker


def _field_type(model: type[BaseModel], name: str) -> tuple[Any, _Json | None]:
    info = model.model_fields[name]
    base, marker = _unwrap(info.annotation)
    return base, marker or next((m for m in info.metadata if isinstance(m, _Json)), None)


# Python type -> (pyarrow type factory, the card's name for it).
_SCALARS = {str: ("string", "string"), int: ("int64", "int"), float: ("float64", "float"), bool: ("bool_", "bool")}


def _arrow_type(annotation: Any, marker: _Json | None = None) -> pa.DataType:
    if marker is not None and marker.native:
        return pa.json_()
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return pa.list_(_arrow_type(*_unwrap(item)))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct([(name, _arrow_type(*_field_type(annotation, name))) for name in annotation.model_fields])
    return getattr(pa, _SCALARS[annotation][0])()


def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    """The parquet schema of a row model: one column per field, in field order."""
    return pa.schema([(name, _arrow_type(*_field_type(model, name))) for name in model.model_fields])


def _encode(value: Any, annotation: Any, marker: _Json | None) -> Any:
    """A dumped field value in its arrow storage form: arrow JSON values become JSON text."""
    if value is None:
        return None
    if marker is not None and marker.native:
        return json_text(value)
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return [_encode(v, *_unwrap(item)) for v in value]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {name: _encode(value[name], *_field_type(annotation, name)) for name in annotation.model_fields}
    return value


def storage_row(row: BaseModel) -> dict[str, Any]:
    """A row as `pa.Table.from_pylist` takes it for `storage_schema`: JSON values as text."""
    dumped = row.model_dump()
    return {name: _encode(dumped[name], *_field_type(type(row), name)) for name in type(row).model_fields}


def _storage_type(t: pa.DataType) -> pa.DataType:
    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    if pa.types.is_list(t):
        return pa.list_(_storage_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([(f.name, _storage_type(f.type)) for f in t])
    return t


def storage_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with extension types (arrow JSON) replaced by their storage: what a pylist converts to."""
    return pa.schema([(f.name, _storage_type(f.type)) for f in schema])


@dataclass(frozen=True)
class Column:
    """One documented column or nested field, e.g. `messages[].tool_calls[].name`."""

    name: str
    type: str
    description: str


def _type_label(annotation: Any, marker: _Json | None) -> tuple[str, type[BaseModel] | None]:
    """A reader's name for a type ('list of JSON string') and the struct model inside it, if any."""
    if marker is not None and marker.native:
        return "JSON", None
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        label, struct = _type_label(*_unwrap(item))
        return f"list of {label}", struct
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "struct", annotation
    return ("JSON string" if marker is not None else _SCALARS[annotation][1]), None


def columns(model: type[BaseModel], prefix: str = "") -> list[Column]:
    """Every column of a row model with its type and description, nested struct fields after their column."""
    out: list[Column] = []
    for name, info in model.model_fields.items():
        label, struct = _type_label(*_field_type(model, name))
        path = f"{prefix}{name}"
        out.append(Column(path, label, info.description or ""))
        if struct is not None:
            out += columns(struct, f"{path}[]." if label.startswith("list") else f"{path}.")
    return out
