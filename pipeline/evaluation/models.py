"""The model under test: one interface, `reply(case, history) -> (Message, Usage)`, three kinds.

* a litellm model string (`openai/...`, `hosted_vllm/...`, `utcgen-offline/default`): called
  through its own `Gateway` (its own API base, key, structured output and tool format) with
  exactly the system prompt a model trained on our `sft` rows sees (`build_system_prompt`,
  json or chat format) and the evaluated dialogue so far. `json` tool format: the candidate
  specs are in the system prompt and the reply is the JSON protocol (`parse_assistant`);
  `native`: the specs go in the request's `tools` and the calls come back as the API's
  (`parse_native`). Sampling is greedy (temperature 0) so a run is reproducible. The offline
  backend as a model under test (role `under_test`) gets the candidates and the history only,
  never the gold tool or values (see `simulator/evaluation.py` for how it infers them);
* `reference/<name>`: a pure reference policy (`evaluation.policies`), no model calls;
* `hf:PATH`: a local Hugging Face checkpoint, or a PEFT LoRA adapter folder (its base model is
  read from adapter_config.json), run in this process on CPU with transformers: the chat
  template renders the candidates (`tools=`), greedy decoding, then the reply is read as
  `<think>` + `<tool_call>` blocks, else the JSON protocol, else plain text. One model instance,
  one generation at a time, in a worker thread.

The model always sees all candidates C_k (a multi-step case: both steps' pools, `Case.shown`) and answers in one
phase: its first call ends the dialogue (a multi-step case: the step).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ..core.errors import InputError, UtcgenError
from ..core.records import Message, ToolCall, Usage
from ..dialogue.results import has_results
from ..export.slicing import build_system_prompt, chat_message
from ..llm import replies
from ..llm.gateway import Gateway, LLMError
from ..llm.probe import probe_servers
from ..llm.registry import ModelRegistry, check_models
from ..llm.requests import SaidWithThought, UnderTestRequest
from ..settings.config import load_config
from ..synthesis.roles import ReplyError, parse_assistant, parse_native
from . import policies
from .cases import Case
from .run_settings import DEFAULT_MAX_NEW_TOKENS

ToolFormat = Literal["json", "native"]
ROLE = "under_test"  # the gateway role of the model under test (and the offline policy that plays it)
# One reply per turn: with greedy sampling a retry repeats the same reply, and a turn the model
# cannot write in its format is what the invalid-format pattern counts, not something to hide.
REPLY_RETRIES = 0


class ModelUnderTest:
    """What static and dynamic evaluation call; `gateway` (if any) feeds the progress bar."""

    name: str = ""
    gateway: Gateway | None = None
    usage: Usage  # of a model without a gateway (hf:), for the progress bar

    def __init__(self) -> None:
        self.usage = Usage()

    async def reply(self, case: Case, history: list[Message]) -> tuple[Message, Usage]:
        raise NotImplementedError

    def close(self) -> None:
        if self.gateway is not None:
            self.gateway.close()


def make_gateway(roles: dict[str, str], *, config: str | Path | None = None, api_base: str | None = None,
                 tool_format: ToolFormat = "json", temperature: float | None = None,
                 max_in_flight: int | None = None, cache: bool | None = None) -> Gateway:
    """A gateway whose roles call the given models, with the call settings of `config`'s `llm`
    section (default: the shipped one) and these overrides; every model is checked (provider,
    key, server up) first."""
    updates: dict[str, Any] = {"tool_format": tool_format}
    if api_base:
        updates["api_base"] = api_base
    if temperature is not None:
        updates["temperature"] = temperature
    if max_in_flight:
        updates["max_in_flight"] = max_in_flight
    if cache is not None:
        updates["cache"] = cache
    settings = load_config(config).llm.model_copy(update=updates)
    problems: list[str] = []
    for model in dict.fromkeys(roles.values()):
        single = ModelRegistry.of({r: m for r, m in roles.items() if m == model}, settings)
        found = check_models(single) or probe_servers(single)
        problems += [f"{p} (for {', '.join(r for r, m in roles.items() if m == model)})" for p in found]
    if problems:
        raise InputError(problems)
    return Gateway(ModelRegistry.of(roles, settings))


class LiteLLMModel(ModelUnderTest):
    """Any litellm model string, through its own gateway (see the module docstring)."""

    def __init__(self, model: str, *, api_base: str | None = None, tool_format: ToolFormat = "json",
                 config: str | Path | None = None, max_in_flight: int | None = None) -> None:
        super().__init__()
        self.name, self.tool_format = model, tool_format
        self.gateway = make_gateway({ROLE: model}, config=config, api_base=api_base, tool_format=tool_format,
                                    temperature=0.0, max_in_flight=max_in_flight)

    def messages(self, case: Case, history: list[Message]) -> list[dict[str, Any]]:
        """System prompt and history exactly as the sft rows of this format show them."""
        native = self.tool_format == "native"
        system = build_system_prompt(case.shown, "chat" if native else "json")
        out: list[dict[str, Any]] = [{"role": "system", "content": system}]
        ids = has_results(history)  # a multi-step case: each call carries the id its result names
        for at, m in enumerate(history):
            if m.role == "system":
                continue
            if native and m.role in ("assistant", "tool"):
                turn = chat_message(m, "chat", at if ids else None)
                turn.pop("reasoning_content", None)  # an API request takes none
                out.append(turn)
            else:
                out.append(chat_message(m, "json"))
        return out

    async def reply(self, case: Case, history: list[Message]) -> tuple[Message, Usage]:
        assert self.gateway is not None
        native = self.tool_format == "native"
        messages = self.messages(case, history)
        # what any model sees: the candidates and the dialogue (its own earlier thoughts included)
        request = UnderTestRequest(candidates=case.shown, history=[
            SaidWithThought(role=m.role, content=m.content, thought=m.thought) for m in history])
        names = [c.name for c in case.shown]
        usage, error = Usage(), ""
        turn = sum(m.role == "assistant" for m in history)
        for retry in range(REPLY_RETRIES + 1):
            nonce = f"eval/{case.id}/{turn}/{retry}"
            if native:
                reply = await self.gateway.chat(request, messages, nonce=nonce,
                                                tools=[c.openai_spec() for c in case.shown])
            else:
                reply = await self.gateway.chat(request, messages, nonce=nonce,
                                                schema=replies.schema_of("assistant", tool_names=names))
            usage.add(reply.usage)
            try:
                message = parse_native(reply, "tool_selection") if native else parse_assistant(reply.text, "tool_selection")
                return message.model_copy(update={"phase": None}), usage
            except ReplyError as exc:
                shown = reply.text if not reply.tool_calls else f"{reply.text} + tool_calls {reply.tool_calls}"
                error = f"{exc}; reply was {shown[:160]!r}"
        return Message(role="assistant", parse_error=error), usage


class ReferenceModel(ModelUnderTest):
    """A reference policy: a pure function of the case and the history, no model calls."""

    def __init__(self, name: str, policy: Callable[[Case, list[Message]], Message]) -> None:
        super().__init__()
        self.name, self.policy = name, policy

    async def reply(self, case: Case, history: list[Message]) -> tuple[Message, Usage]:
        return self.policy(case, list(history)), Usage()


# ---- hf:PATH --------------------------------------------------------------------------------------------

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
KEEP_TAGS = ("<think>", "</think>", "<tool_call>", "</tool_call>")


def parse_generation(text: str) -> Message:
    """A local model's raw text as an assistant turn: `<think>` -> thought, `<tool_call>{json}</tool_call>`
    blocks -> calls, else the JSON reply protocol, else plain text; nothing usable -> parse_error."""
    thought = None
    if match := _THINK.search(text):
        thought = match.group(1).strip() or None
        text = text[:match.start()] + text[match.end():]
    blocks = _CALL.findall(text)
    if blocks:
        calls = []
        for block in blocks:
            try:
                data = json.loads(block.strip())
                call = replies.ToolCallReply.model_validate(data)
            except (ValueError, TypeError) as exc:
                return Message(role="assistant", thought=thought,
                               parse_error=f"<tool_call> block is not a tool call ({str(exc)[:80]}): {block[:120]!r}")
            calls.append(ToolCall(name=call.name, arguments=call.arguments))
        content = _CALL.sub("", text).strip()
        return Message(role="assistant", content=content, thought=thought, tool_calls=calls)
    body = text.strip()
    if body.startswith(("{", "```")):
        try:
            message = parse_assistant(body, "tool_selection")
            return message.model_copy(update={"phase": None, "thought": message.thought or thought})
        except ReplyError as exc:
            return Message(role="assistant", thought=thought, parse_error=f"not a JSON reply ({exc}): {body[:120]!r}")
    if not body and thought is None:
        return Message(role="assistant", parse_error="empty generation")
    return Message(role="assistant", content=body, thought=thought)


def check_hf_path(path: Path) -> Path:
    """The folder of a checkpoint (config.json) or a PEFT adapter (adapter_config.json), or InputError."""
    if not path.is_dir():
        raise InputError(f"--model hf:{path}: no such folder")
    if not (path / "config.json").is_file() and not (path / "adapter_config.json").is_file():
        raise InputError(f"--model hf:{path}: neither a checkpoint (no config.json) nor a PEFT adapter "
                         "(no adapter_config.json)")
    return path


TRAIN_EXTRA = "train"  # pyproject.toml's optional dependencies for LoRA adapters and training: trl, peft, accelerate


class HFModel(ModelUnderTest):
    """A local checkpoint or LoRA adapter, generating greedily on CPU (see the module docstring)."""

    def __init__(self, path: Path, *, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
                 tool_format: ToolFormat = "native") -> None:
        super().__init__()
        self.path = check_hf_path(Path(path))
        self.name = f"hf:{path}"
        self.max_new_tokens, self.tool_format = max_new_tokens, tool_format
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = asyncio.Lock()
        try:  # now, so a bad folder is reported before any case runs
            self._load()
        except (OSError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"--model hf:{path}: cannot load it: {type(exc).__name__}: {str(exc)[:300]}") from exc

    def _load(self) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: seconds to import; only hf: models

        adapter = self.path / "adapter_config.json"
        if adapter.is_file():
            try:
                from peft import PeftModel  # lazy: the train extra, optional (a LoRA adapter as the model)
            except ImportError as exc:
                raise UtcgenError(f"--model hf:{self.path} is a LoRA adapter, which needs the optional package peft; "
                                  f"install it with: pip install 'utcgen[{TRAIN_EXTRA}]'") from exc

            base = json.loads(adapter.read_text(encoding="utf-8")).get("base_model_name_or_path")
            if not base or not Path(base).is_dir():
                raise InputError(f"{adapter}: base_model_name_or_path {base!r} is not a local folder")
            model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), str(self.path))
            tok_dir = self.path if (self.path / "tokenizer_config.json").is_file() else Path(base)
        else:
            model = AutoModelForCausalLM.from_pretrained(str(self.path))
            tok_dir = self.path
        tokenizer = AutoTokenizer.from_pretrained(str(tok_dir))
        if not tokenizer.chat_template:
            raise InputError(f"{tok_dir}: the tokenizer has no chat template; set one (e.g. examples/chatml_tools.jinja)")
        model.eval()
        self._model, self._tokenizer = model, tokenizer

    def messages(self, case: Case, history: list[Message]) -> list[dict[str, Any]]:
        fmt = "chat" if self.tool_format == "native" else "json"
        system = {"role": "system", "content": build_system_prompt(case.shown, fmt)}
        ids = has_results(history)
        return [system, *(chat_message(m, fmt, at if ids else None) for at, m in enumerate(history) if m.role != "system")]

    def _generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> tuple[str, Usage]:
        import torch  # lazy: as transformers above

        tok = self._tokenizer
        inputs = tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True, return_tensors="pt",
                                         return_dict=True)
        with torch.no_grad():
            out = self._model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False,
                                       pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
        new = out[0][inputs["input_ids"].shape[1]:]
        text = tok.decode(new, skip_special_tokens=False)
        for special in tok.all_special_tokens:
            if special not in KEEP_TAGS:
                text = text.replace(special, "")
        return text, Usage(calls=1, prompt_tokens=int(inputs["input_ids"].shape[1]), completion_tokens=len(new))

    async def reply(self, case: Case, history: list[Message]) -> tuple[Message, Usage]:
        tools = [c.openai_spec() for c in case.shown] if self.tool_format == "native" else None
        async with self._lock:  # one model instance: one generation at a time
            try:
                text, usage = await asyncio.to_thread(self._generate, self.messages(case, history), tools)
            except (RuntimeError, ValueError) as exc:
                if isinstance(exc, InputError):
                    raise
                raise LLMError(f"{self.name}: generation failed: {type(exc).__name__}: {str(exc)[:300]}") from exc
        self.usage.add(usage)
        return parse_generation(text), usage


# ---- resolving --model --------------------------------------------------------------------------------------

def reference_policies() -> dict[str, Callable[[Case, list[Message]], Message]]:
    """name -> policy function of `evaluation.policies` (its own table)."""
    table = getattr(policies, "POLICIES", None) or getattr(policies, "REFERENCE_POLICIES", None)
    if table is None:
        raise InputError("utcgen.pipeline.evaluation.policies has no name -> policy table")
    return {name.removeprefix("reference/"): fn for name, fn in table.items()}


def load_model(spec: str, *, api_base: str | None = None, tool_format: ToolFormat | None = None,
               max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, config: str | Path | None = None,
               max_in_flight: int | None = None) -> ModelUnderTest:
    """The model named by `--model`, or InputError naming the flag."""
    if spec.startswith("reference/"):
        table = reference_policies()
        name = spec.removeprefix("reference/")
        if name not in table:
            raise InputError(f"--model {spec}: no such reference policy; known: "
                             + ", ".join(f"reference/{n}" for n in sorted(table)))
        return ReferenceModel(spec, table[name])
    if spec.startswith("hf:"):
        return HFModel(Path(spec[3:]), max_new_tokens=max_new_tokens, tool_format=tool_format or "native")
    if "/" not in spec:
        raise InputError(f"--model {spec}: expected provider/model (e.g. openai/gpt-4o-mini), reference/<policy> "
                         "or hf:PATH")
    return LiteLLMModel(spec, api_base=api_base, tool_format=tool_format or "json", config=config,
                        max_in_flight=max_in_flight)
