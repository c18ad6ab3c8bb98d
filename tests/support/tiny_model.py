"""A tiny Llama and a BPE tokenizer trained on the texts at hand, with a ChatML template that reads tools,
`reasoning_content`, native tool calls and tool results: a model that trains and generates in seconds on a CPU."""

from __future__ import annotations

# ChatML with a tools block, <think> for reasoning_content, <tool_call> for native tool calls, and each run of
# `tool` messages as one user turn of <tool_response> blocks (as Qwen's templates render results).
CHAT_TEMPLATE = """\
{%- set sys = messages[0].content if messages and messages[0].role == 'system' else none -%}
{%- if tools or sys is not none -%}
<|im_start|>system
{% if sys is not none %}{{ sys }}{% endif %}
{%- if tools %}

# Tools
<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools>
{%- endif %}<|im_end|>
{% endif -%}
{%- for message in messages -%}
{%- if message.role == 'assistant' -%}
<|im_start|>assistant
{% if message.reasoning_content %}<think>
{{ message.reasoning_content }}
</think>
{% endif %}{{ message.content }}
{%- for call in message.tool_calls or [] %}
<tool_call>
{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{% elif message.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user
{% endif -%}
<tool_response>
{{ message.content }}
</tool_response>
{% if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>
{% endif -%}
{% elif message.role != 'system' or not loop.first -%}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% endif -%}
"""

SPECIALS = ["<|pad|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>",
            "</tool_call>"]


def build_tokenizer(texts: list[str]):
    # lazy: tokenizers, transformers and torch load in seconds; only the tests that train need them
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    core.train_from_iterator(texts, trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<|endoftext|>", eos_token="<|im_end|>",
                                  pad_token="<|pad|>", unk_token="<|endoftext|>")
    tok.chat_template = CHAT_TEMPLATE
    return tok


def build_model(tok):
    import torch  # lazy: as above
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16384,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                         bos_token_id=tok.bos_token_id, tie_word_embeddings=True)
    return LlamaForCausalLM(config)
