"""OpenAPI 3.x documents: one tool per operation, in document order.

An operation's arguments are its path and query parameters plus the fields of its request
body (header and cookie parameters are transport details a user never says):

* The body is read from the first JSON media type (``application/json``,
  ``application/*+json``), else from ``application/x-www-form-urlencoded`` or
  ``multipart/form-data``. An object schema contributes its fields (``readOnly`` ones are
  never sent, so they are left out); any other schema travels whole as one ``body``
  argument. A body with none of those media types (``application/octet-stream``,
  ``image/png``...) cannot be passed as arguments: it is left out with a warning naming
  the operation and the media types.
* Required: path parameters, required query parameters, and the body's required fields.
* A name used by more than one of path, query and body is one argument when they agree on
  the type, else one per source under a prefixed name (rules in
  utcgen.pipeline.ingest.importers.openapi_args).

Schemas have local ``$ref`` inlined (a recursive one is cut at the repeat) and OpenAPI 3.0's
dialect rewritten as JSON Schema 2020-12 (utcgen.pipeline.ingest.importers.openapi_schema).
``webhooks`` (requests the API sends, not operations a user calls) are not imported, nor are
operations marked ``deprecated: true``: their owners ask callers to use others, so data that calls
them would teach the wrong call (a warning names them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..common import Candidate, Extracted, Note, RefError, json_type_name, map_schema, resolve_pointer
from .openapi_args import Arg, settle
from .openapi_schema import (
    drop_openapi_only,
    fit_output,
    flatten_allof,
    from_openapi30,
    is_object_schema,
    resolve_refs,
)

HTTP_METHODS: tuple[str, ...] = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

_JSON_MEDIA = re.compile(r"^application/([\w.-]+\+)?json(\s*;.*)?$", re.IGNORECASE)
_SUCCESS = re.compile(r"^2(\d\d|XX)$", re.IGNORECASE)
_ANY_JSON = re.compile(r"^\*/\*(\s*;.*)?$|^[\w.*-]+/([\w.-]+\+)?json(\s*;.*)?$", re.IGNORECASE)
_FORM_MEDIA = re.compile(r"^(application/x-www-form-urlencoded|multipart/form-data)(\s*;.*)?$", re.IGNORECASE)


def _join_text(*parts: Any) -> str:
    texts = [p.strip() for p in parts if isinstance(p, str) and p.strip()]
    if len(texts) == 2 and texts[1].startswith(texts[0]):
        texts = texts[1:]
    out = ""
    for text in texts:
        if out:
            out += " " if out[-1] in ".!?:" else ". "
        out += text
    return out


def _slug(method: str, path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", f"{method}_{path}").strip("_")


# --------------------------------------------------------------------------- operations


class _Operation:
    """Reads one operation's arguments, collecting problems and warnings on the way."""

    def __init__(self, doc: dict[str, Any], path: str, method: str, is30: bool) -> None:
        self.doc = doc
        self.path = path
        self.where = f"paths.{path}.{method}"
        self.fix: Callable[[dict[str, Any]], None] = from_openapi30 if is30 else (lambda _n: None)
        self.problems: list[Note] = []
        self.warnings: list[Note] = []

    def schema_of(self, raw: Any, at: str, output: bool = False) -> dict[str, Any] | None:
        """`raw` as a JSON Schema; what is wrong with it a problem, or for an `output` schema a warning."""
        notes = self.warnings if output else self.problems
        left_out = ": the output schema is left out" if output else ""
        try:
            schema = resolve_refs(raw, self.doc, titled=output)
        except RefError as exc:
            notes.append((at, f"{exc}{left_out}"))
            return None
        if not isinstance(schema, dict):
            notes.append((at, f"expected a schema object, got a {json_type_name(schema)}{left_out}"))
            return None
        map_schema(schema, self.fix)
        map_schema(schema, drop_openapi_only)
        return schema

    def parameters(self, common: Any, own: Any) -> list[Arg]:
        # Operation parameters override path-level ones with the same (name, in).
        params: dict[tuple[Any, Any], tuple[str, Any]] = {}
        for at, plist in ((f"paths.{self.path}.parameters", common), (f"{self.where}.parameters", own)):
            if not isinstance(plist, list):
                self.problems.append((at, f"expected a list, got a {json_type_name(plist)}"))
                continue
            for i, raw in enumerate(plist):
                try:
                    param = resolve_refs(raw, self.doc)
                except RefError as exc:
                    self.problems.append((f"{at}[{i}]", str(exc)))
                    continue
                if not isinstance(param, dict):
                    self.problems.append((f"{at}[{i}]", f"expected a parameter object, got a {json_type_name(param)}"))
                    continue
                params[(param.get("name"), param.get("in"))] = (f"{at}[{i}]", param)
        args: list[Arg] = []
        for at, param in params.values():
            name, loc = param.get("name"), param.get("in")
            if loc in ("header", "cookie"):
                continue  # transport detail, not something a user says
            if loc not in ("path", "query"):
                self.problems.append((f"{at}.in", f"expected path, query, header or cookie, got {loc!r}"))
                continue
            if not isinstance(name, str) or not name:
                self.problems.append((f"{at}.name", "missing or not a string"))
                continue
            raw_schema: Any = param.get("schema")
            if raw_schema is None and isinstance(param.get("content"), dict) and param["content"]:
                media_obj = next(iter(param["content"].values()))
                raw_schema = media_obj.get("schema") if isinstance(media_obj, dict) else None
            schema = self.schema_of(raw_schema if raw_schema is not None else {"type": "string"}, f"{at}.schema")
            if schema is None:
                continue
            if isinstance(param.get("description"), str) and "description" not in schema:
                schema = {**schema, "description": param["description"]}
            args.append(Arg(loc, name, schema, loc == "path" or param.get("required") is True, at))
        return args

    def body(self, raw: Any) -> tuple[list[Arg], list[str]]:
        """Arguments from the request body, and required names it never defines."""
        at = f"{self.where}.requestBody"
        try:
            body = resolve_refs(raw, self.doc)
        except RefError as exc:
            self.problems.append((at, str(exc)))
            return [], []
        if not isinstance(body, dict):
            self.problems.append((at, f"expected a request body object, got a {json_type_name(body)}"))
            return [], []
        content = body.get("content")
        needed = " (which the API requires)" if body.get("required") is True else ""
        if not isinstance(content, dict) or not content:
            self.warnings.append((f"{at}.content", f"missing or empty: the request body{needed} is left out"))
            return [], []
        media = next((m for m in content if _JSON_MEDIA.match(str(m))), None)
        media = media or next((m for m in content if _FORM_MEDIA.match(str(m))), None)
        if media is None:
            kinds = ", ".join(repr(str(m)) for m in content)
            noun = "media type" if len(content) == 1 else "media types"
            self.warnings.append((
                f"{at}.content",
                f"{noun} {kinds} cannot be passed as tool arguments (only JSON and form bodies can): "
                f"the request body{needed} is left out",
            ))
            return [], []
        media_obj = content[media]
        if not isinstance(media_obj, dict) or "schema" not in media_obj:
            self.warnings.append((f"{at}.content.{media}", f"has no schema: the request body{needed} is left out"))
            return [], []
        schema_at = f"{at}.content.{media}.schema"
        schema = self.schema_of(media_obj["schema"], schema_at)
        if schema is None:
            return [], []
        schema = flatten_allof(schema)
        if is_object_schema(schema):
            fields = schema.get("properties") or {}
            body_required = schema.get("required") or []
            field_at = f"{schema_at}.properties."
        else:  # arrays and scalars travel whole, as one "body" argument
            fields = {"body": schema}
            body_required = ["body"] if body.get("required") is True else []
            field_at = None
        if not isinstance(fields, dict):
            self.problems.append((f"{schema_at}.properties", f"expected a mapping, got a {json_type_name(fields)}"))
            fields = {}
        if not isinstance(body_required, list):
            self.problems.append((f"{schema_at}.required", f"expected a list, got a {json_type_name(body_required)}"))
            body_required = []
        args: list[Arg] = []
        for name, sub in fields.items():
            if isinstance(sub, dict) and sub.get("readOnly") is True:
                continue  # readOnly fields are never sent in requests
            args.append(Arg("body", name, sub, name in body_required,
                             f"{field_at}{name}" if field_at else schema_at))
        read_only = {n for n, s in fields.items() if isinstance(s, dict) and s.get("readOnly") is True}
        # Names required but never defined stay, so validation reports them.
        undefined = [r for r in body_required if r not in fields and r not in read_only]
        return args, undefined


    def output(self, responses: Any) -> dict[str, Any] | None:
        """The schema of the lowest 2xx response that has one (see the module doc), trimmed; None if none."""
        if not isinstance(responses, dict):
            return None
        codes = sorted((c for c in responses if _SUCCESS.match(str(c))), key=lambda c: str(c).upper())
        for code in codes:
            at = f"{self.where}.responses.{code}"
            response = responses[code]
            try:
                for _ in range(8):  # a response may be a $ref to a $ref; its schema is resolved below, titled
                    if not (isinstance(response, dict) and isinstance(response.get("$ref"), str)):
                        break
                    response = resolve_pointer(self.doc, response["$ref"])
            except RefError as exc:
                self.warnings.append((at, f"{exc}: the output schema is left out"))
                return None
            if not isinstance(response, dict):
                continue
            raw, where = response.get("schema"), f"{at}.schema"
            content = response.get("content")
            if isinstance(content, dict):
                usable = [m for m in content if isinstance(content[m], dict) and "schema" in content[m]]
                media = next((m for m in usable if _JSON_MEDIA.match(str(m))), None)
                media = media or next((m for m in usable if _ANY_JSON.match(str(m))), None)
                if media is not None:
                    raw, where = content[media]["schema"], f"{at}.content.{media}.schema"
            if raw is None:
                continue
            schema = self.schema_of(raw, where, output=True)
            return fit_output(schema) if schema else None
        return None


def _operation(
    doc: dict[str, Any], path: str, method: str, op: dict[str, Any], common: Any, is30: bool
) -> tuple[dict[str, Any], list[Note], list[Note]]:
    reader = _Operation(doc, path, method, is30)
    args = reader.parameters(common, op.get("parameters", []))
    undefined: list[str] = []
    if op.get("requestBody") is not None:
        body_args, undefined = reader.body(op["requestBody"])
        args += body_args
    props, required = settle(args, reader.problems, reader.warnings)
    required += [r for r in undefined if r not in required]
    tags = op.get("tags") if isinstance(op.get("tags"), list) else []
    data: dict[str, Any] = {
        "name": op["operationId"] if "operationId" in op else _slug(method, path),
        "description": _join_text(op.get("summary"), op.get("description")),
        "parameters": {"type": "object", "properties": props, "required": required},
        "tags": tags,
    }
    if tags and isinstance(tags[0], str):
        data["line_of_business"] = tags[0]
    if (output := reader.output(op.get("responses"))) is not None:
        data["output_schema"] = output
    return data, reader.problems, reader.warnings


def extract(doc: Any) -> Extracted:
    """One candidate per operation of an OpenAPI 3.x document (see the module doc)."""
    if not isinstance(doc, dict):
        return Extracted(problems=[f"expected an OpenAPI 3.x document (a mapping), got a {json_type_name(doc)}"])
    version = doc.get("openapi")
    if not isinstance(version, str) or not version.startswith("3."):
        return Extracted(problems=[f"openapi: unsupported version {version!r} (expected 3.x)"])
    paths = doc.get("paths")
    if paths is None:
        paths = {}  # optional since 3.1 (a document may hold only webhooks or components)
    if not isinstance(paths, dict):
        return Extracted(problems=[f"paths: expected a mapping of path to path item, got a {json_type_name(paths)}"])
    out = Extracted()
    deprecated: list[str] = []
    for path, item in paths.items():
        if isinstance(item, dict) and isinstance(item.get("$ref"), str):
            # Only the path item itself: responses and the like are never read, so a
            # broken $ref there must not stop the import.
            try:
                target = resolve_pointer(doc, item["$ref"])
            except RefError as exc:
                out.problems.append(f"paths.{path}: {exc}")
                continue
            if isinstance(target, dict):
                item = {**target, **{k: v for k, v in item.items() if k != "$ref"}}
        if not isinstance(item, dict):
            out.problems.append(f"paths.{path}: expected a path item (mapping), got a {json_type_name(item)}")
            continue
        for method, op in item.items():
            if not isinstance(method, str) or method.lower() not in HTTP_METHODS:
                continue
            origin = f"{method.upper()} {path}"
            index = len(out.candidates)
            if not isinstance(op, dict):
                out.candidates.append(Candidate(
                    index, op, origin=origin, problems=[("", f"expected an operation object, got a {json_type_name(op)}")]
                ))
                continue
            if op.get("deprecated") is True:
                deprecated.append(str(op.get("operationId") or origin))
                continue
            data, problems, warnings = _operation(
                doc, str(path), method.lower(), op, item.get("parameters", []), version.startswith("3.0")
            )
            out.candidates.append(Candidate(index, data, origin=origin, problems=problems, warnings=warnings,
                                            optional=("output_schema",)))
    webhooks = doc.get("webhooks")
    hooks = f"{len(webhooks)} webhook{'s' if len(webhooks) != 1 else ''}" if isinstance(webhooks, dict) else None
    if not out.candidates and not out.problems:
        where = "'paths' is missing" if "paths" not in doc else "'paths' holds no operations"
        hint = ""
        if webhooks:
            are = "is a request" if len(webhooks) == 1 else "are requests"
            hint = f"; its {hooks} {are} the API sends, not operations a user calls"
        if deprecated:
            where, hint = f"all {len(deprecated)} operations are marked deprecated", ""
        out.problems.append(f"no operations found: {where}{hint}")
    elif hooks and webhooks:
        out.warnings.append(f"webhooks: {hooks} not imported (requests the API sends, not operations a user calls)")
    if deprecated and out.candidates:
        shown = ", ".join(deprecated[:5]) + (", ..." if len(deprecated) > 5 else "")
        out.warnings.append(f"{len(deprecated)} operation{'s' if len(deprecated) != 1 else ''} marked deprecated not "
                            f"imported (the API asks callers to use others): {shown}")
    return out
