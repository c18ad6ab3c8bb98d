"""Evaluation (DiaFORGE §3.3, App. C): benchmarks built from accepted dialogues, a model under
test run statically or dynamically, the C.1 metrics and ToolScan error patterns, and reports.

Modules:
- `cases`: the records (Case, CaseResult) and the benchmark folder's file layout;
- `benchmark`: `utcgen eval build`, its summary and folder; `holdout`: the held-out split (by line of
  business or near-duplicate family) and the cases; `families`: near-duplicate families by A.4 score;
- `metrics`: Acc, FTR, TAR, TCP, TCR, PKP, PKR, ConvRel, TTR, NGD with breakdowns (the definitions);
  `scoring`: c(d) and one case's indicators; `intervals`: Wilson, bootstrap, jackknife;
  `scenario_metrics`: awareness, refusal, clarification, unsafe execution, redundancy per scenario;
- `patterns`: error patterns of every model call; `reward`: the RL reward of one sampled turn (`utcgen.reward_function`);
- `policies`: the reference policies `reference/oracle|never-call|first-candidate|extra-key`;
- `models`: the model under test (litellm string, `hf:PATH`, `reference/...`);
- `static`, `dynamic`, `voting`: the two evaluation modes and the voting user proxy;
- `checker`: the user-side checker that flags dialogues the proxy spoiled; `rubric`: ConvRel grading;
- `run`: the resumable runner behind `utcgen eval run` and the `evaluate-model` flow;
- `report`: metrics.json, dialogues.parquet, report.md, plot; `compare`: several runs side by side;
- `bfcl`: `utcgen eval import bfcl`, a benchmark folder from a BFCL file, scored by BFCL's rules.

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, llm, validators, export, synthesis.
"""
