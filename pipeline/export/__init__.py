"""Stage 5, export: a run's dialogues become a Hugging Face dataset folder, then a Hub repo.

`run_info` (the run-level facts the export records), `rows` (row models and the schema of
each config), `column_types` (arrow types and card columns from the models), `flatten` (a
dialogue as a row), `slicing` (SFT turn slices), `wrong_turns`, `wrong_answers` and `preference`
(the `preference` config's pairs), `stats` (stats.json), `plots`, `card` (README.md, rendered from
`card.md.j2`), `dataset` (the folder writer and `load_split`), `hub` (upload), `reading` and
`audit` (a folder's dialogues read back and audited), `view` (one HTML page to browse them).

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, llm, validators.
"""
