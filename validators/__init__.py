"""The validator cascade: small, pure checks, each returning a uniform `Verdict`.

format -> toolcall -> grounding -> toolargs -> the shortcut rules -> scenario -> planning are rule-based
and run in order, stopping at the first failure; relevancy and critique are LLM judges run
side by side afterwards. On a dialogue with tool results, answers (what the assistant says after a
result is grounded in it) runs after the rules. `cascade` owns the stage list and the first-failure rule.

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, llm.
"""
