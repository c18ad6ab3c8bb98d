"""The validator cascade: small, pure checks, each returning a uniform `Verdict`.

format -> toolcall -> grounding -> toolargs -> the shortcut rules -> scenario -> planning are rule-based
and run in order, stopping at the first failure; relevancy and critique are LLM judges run
side by side afterwards. `cascade` owns the stage list and the first-failure rule.

May import: `utcgen.pipeline.core.records`, `arguments`, `prompts`, `errors`, `labels`,
`scenarios`, `planning` and, for the LLM
judges, `utcgen.pipeline.llm`. Never synthesis, export, the CLI or flows.
"""
