"""Stage 5, export: a run's dialogues become a Hugging Face dataset folder, then a Hub repo.

`run_info` (the run-level facts the export records), `rows` (row models and the schema of
each config), `column_types` (arrow types and card columns from the models), `flatten` (a
dialogue as a row), `slicing` (SFT turn slices), `stats` (stats.json), `plots`, `card` (README.md,
rendered from `card.md.j2`), `dataset` (the folder writer and `load_split`), `hub` (upload).

May import: `records`, `config`, `errors`, `files`, `prompts`, and `validators.cascade`
for the stage list and the first failing verdict. Never synthesis, the LLM gateway or flows.
"""
