"""Stage 5, export: dataset rows, SFT turn slices, statistics, plots, the dataset card
(rendered from `card.md.j2`), the folder writer and the Hub upload.

May import: `records`, `config`, `errors`, `files`, `prompts`, and `validators.cascade`
for the stage list. Never synthesis, the LLM gateway or flows.
"""
