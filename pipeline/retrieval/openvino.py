"""The packaged MiniLM run by OpenVINO at int8: the `openvino-int8` embedding backend.

The fastest backend on a CPU with int8 dot-product instructions (VNNI): about 1.3x ONNX Runtime's
int8, and closer to the fp32 vectors (cosine at least 0.99 against 0.98). Nothing is downloaded: the
shipped weights are exported to ONNX with plain (eager) attention, which OpenVINO fuses into one
kernel, then statically quantised by NNCF once, calibrated on the shipped catalog's tool texts, and
cached as `<cache>/int8/model.xml`. It needs the `openvino` extra (`pip install 'utcgen[openvino]'`).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov

from ..core.files import remove_stale_temporaries, temporary_folder
from ..core.resources import shipped
from ..ingest.reader import load_catalog
from .model import DIMENSION, index_text
from .onnx import export, mean_pooled, token_batches, tokenizer

os.environ.setdefault("NNCF_CI", "1")  # set before NNCF loads, else it reports its use over the network
import nncf  # after NNCF_CI is set

log = logging.getLogger("utcgen.retrieval")

CALIBRATION_BATCH = 32
# As many token_batches at once as the CPU runs best; what is not int8 computes in float32, since on a CPU
# with bfloat16 OpenVINO's default would make a text's vector depend on the batch it came in (about
# 4% faster, cosine 0.9996 between two batchings): a text always gets the same vector.
COMPILE = {"PERFORMANCE_HINT": "THROUGHPUT", "INFERENCE_PRECISION_HINT": "f32"}


def calibration_texts() -> list[str]:
    """The shipped catalog's tools as the index embeds them: the same texts on every machine, so one
    quantisation serves every catalog."""
    return [index_text(tool) for tool in load_catalog(str(shipped("catalog", "tools")))]


def model_file(cache: Path, model_dir: Path) -> Path:
    """The int8 OpenVINO model for the model in `model_dir`, made into `cache` on first use."""
    target = cache / "int8" / "model.xml"
    if target.exists():
        return target
    nncf.set_log_level(logging.ERROR)
    log.info("quantising the embedding model to int8 for OpenVINO (once): %s", target)
    remove_stale_temporaries(cache)  # what a killed quantisation left
    work = temporary_folder(cache)
    try:
        export(model_dir, work / "model.onnx", attention="eager")
        texts = calibration_texts()
        samples = [inputs for _, inputs in token_batches(tokenizer(model_dir), texts, CALIBRATION_BATCH)]
        with contextlib.redirect_stdout(io.StringIO()):  # NNCF's progress bars
            quantised = nncf.quantize(ov.Core().read_model(str(work / "model.onnx")), nncf.Dataset(samples),
                                      model_type=nncf.ModelType.TRANSFORMER, subset_size=len(texts))
        ov.save_model(quantised, str(work / "model.xml"))
        (work / "model.onnx").unlink()
        try:
            work.rename(target.parent)  # whole or absent: a killed quantisation is redone
        except OSError:
            if not target.exists():  # else another process finished first: its model is the same
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


class OpenVinoEncoder:
    """Encodes texts to L2-normalised float32 vectors with a compiled OpenVINO model, running as many
    token_batches at once as OpenVINO finds best for the CPU (its throughput hint)."""

    def __init__(self, model_dir: Path, cache: Path) -> None:
        core = ov.Core()
        self.compiled = core.compile_model(str(model_file(cache, model_dir)), "CPU", COMPILE)
        self.queue = ov.AsyncInferQueue(self.compiled, int(self.compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
        self.tokenizer = tokenizer(model_dir)

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        failures: list[BaseException] = []

        def done(request: Any, job: tuple[list[int], np.ndarray]) -> None:
            try:
                rows, mask = job
                out[rows] = mean_pooled(request.get_output_tensor(0).data, mask)
            except Exception as exc:  # raised in OpenVINO's thread: kept and re-raised in the caller's
                failures.append(exc)

        self.queue.set_callback(done)
        for rows, inputs in token_batches(self.tokenizer, texts, batch_size):
            self.queue.start_async(inputs, (rows, inputs["attention_mask"]))
        self.queue.wait_all()
        if failures:
            raise failures[0]
        return out
