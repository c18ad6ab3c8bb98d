"""Flag values checked while the command line is parsed, with the bounds the settings models declare.

A flag that sets a field of a pydantic model (`--max-in-flight` -> `LLMSettings.max_in_flight`) takes
its type and its `Field(ge=..., gt=..., le=..., lt=...)` limits from that field, so the command line
and the configuration file accept exactly the same values. A bad value is argparse's own error: exit
status 2 and a message naming the flag (`argument --max-in-flight: must be >= 1, got -1`), before any
file is read.

Models are named through a zero-argument callable so that a heavy module is imported only when its
flag is actually given.

Values that need the file system are checked after parsing but before any work starts, so a
mistake costs no model call and leaves nothing half-written: the output folder (`runner.outdir.claimed`,
held by `api.run_generation`: refusals and the run lock) and a tokenizer folder (`check_tokenizer`).
"""

from __future__ import annotations

import argparse
import json
import math
import operator
import os
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from ..core.errors import MAX_NESTING, InputError, check_nesting
from ..ingest.parsing import catalog_files

Bound = tuple[str, float]
ModelRef = Callable[[], type[BaseModel]]

# pydantic keeps Field(ge=1) as an annotated-types constraint object with a `ge` attribute
_OPERATORS: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {
    "ge": (">=", operator.ge), "gt": (">", operator.gt), "le": ("<=", operator.le), "lt": ("<", operator.lt)}


def field_bounds(model: type[BaseModel], name: str) -> list[Bound]:
    """The numeric limits a model declares on one field, as (attribute, limit) pairs: ("ge", 1), ..."""
    try:
        info = model.model_fields[name]
    except KeyError:
        raise LookupError(f"{model.__name__} has no field {name!r}") from None
    out: list[Bound] = []
    for constraint in info.metadata:
        for attr in _OPERATORS:
            limit = getattr(constraint, attr, None)
            if limit is not None:
                out.append((attr, limit))
    return out


def field_kind(model: type[BaseModel], name: str) -> type[int] | type[float]:
    """int or float: the number type of a field, optional or not."""
    annotation = model.model_fields[name].annotation
    kinds = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    for kind in kinds:
        if kind is int or kind is float:
            return kind
    raise TypeError(f"{model.__name__}.{name} is not a number field ({annotation})")


def number(kind: type[int] | type[float],
           bounds: Callable[[], list[Bound]] | list[Bound] | None = None) -> Callable[[str], Any]:
    """An argparse `type=`: parses an int or a finite float and checks it against `bounds`
    (a list, or a callable giving one on first use)."""
    noun = "an integer" if kind is int else "a number"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        for attr, limit in bounds() if callable(bounds) else bounds or []:
            symbol, holds = _OPERATORS[attr]
            if not holds(value, limit):
                shown = f"{limit:,}" if isinstance(limit, int) else f"{limit:g}"
                raise argparse.ArgumentTypeError(f"must be {symbol} {shown}, got {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in some messages
    return parse


def field(model: ModelRef, name: str, kind: type[int] | type[float] | None = None) -> Callable[[str], Any]:
    """An argparse `type=` for a flag that sets `model().name`: that field's number type and limits."""

    def bounds() -> list[Bound]:
        return field_bounds(model(), name)

    if kind is None:
        kind = field_kind(model(), name)
    return number(kind, bounds)


def choices(model: type[BaseModel], name: str) -> list[str]:
    """The values a Literal field (optional or not) allows, in declaration order: for `choices=`."""
    annotation = model.model_fields[name].annotation
    parts = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    out = [value for part in parts if typing.get_origin(part) is typing.Literal for value in typing.get_args(part)]
    if not out:
        raise TypeError(f"{model.__name__}.{name} is not a Literal field ({annotation})")
    return out


def pair(text: str) -> tuple[int, int]:
    """`N,M` with both numbers at least 1 (the eval proxy's drafts and voters)."""
    try:
        n, m = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N,M (drafts, voters), e.g. 3,3, got {text!r}") from None
    if n < 1 or m < 1:
        raise argparse.ArgumentTypeError(f"both numbers must be >= 1, got {text}")
    return n, m


def check_tokenizer(path: str | None, flag: str = "--tokenizer") -> None:
    """A tokenizer folder that exists and holds a tokenizer's files: checked at start, not after the run."""
    if not path:
        return
    folder = Path(path).expanduser()
    if not folder.exists():
        raise InputError(f"{flag} {path}: no such folder (give a local tokenizer folder, e.g. a model's snapshot)")
    if not folder.is_dir():
        raise InputError(f"{flag} {path}: not a folder (give the folder holding tokenizer_config.json)")
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise InputError(f"{flag} {path}: holds no tokenizer ({' or '.join(TOKENIZER_FILES)} not found)")


TOKENIZER_FILES = ("tokenizer_config.json", "tokenizer.json")


def quiet_progress_bars() -> None:
    """`--no-progress`: no tqdm bar from any library either (the embedding model's "Loading weights",
    the Hub's downloads, datasets' progress)."""
    os.environ["TQDM_DISABLE"] = "1"  # read by tqdm itself as the default of `disable`
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if (transformers := sys.modules.get("transformers")) is not None:  # loaded already: tell it too
        transformers.utils.logging.disable_progress_bar()


def check_catalog_nesting(path: str | None, flag: str = "--catalog") -> None:
    """Every catalog file nests at most `errors.MAX_NESTING` levels: a schema built 100+ levels deep is
    refused naming the file and the flag, before the reader recurses into it. Files that do not parse
    are left to the catalog reader, which says what is wrong with them."""
    if not path or not Path(path).exists():
        return  # the catalog reader reports a missing path
    for shown, file in catalog_files(path):
        suffix = Path(file).suffix.lower()
        try:
            text = Path(file).read_text(encoding="utf-8")
            if suffix == ".jsonl":
                docs = [json.loads(line) for line in text.splitlines() if line.strip()]
            elif suffix in (".yaml", ".yml"):
                docs = [yaml.safe_load(text)]
            else:
                docs = [json.loads(text)]
        except RecursionError:
            raise InputError(f"{flag} {shown}: nested too deeply to read; utcgen accepts at most "
                             f"{MAX_NESTING} levels in a schema: flatten it") from None
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
            continue
        for doc in docs:
            check_nesting(doc, f"{flag} {shown}")



