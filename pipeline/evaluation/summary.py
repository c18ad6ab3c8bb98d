"""What a benchmark build sums up (`BenchmarkSummary`): written by `benchmark.build_benchmark` into
`benchmark.json` and read by the folder's card (`benchmark_folder`), so it sits below both."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..retrieval.similarity import NEAR_DUPLICATE_THRESHOLD
from ..scenarios import names as scenario_names
from .cases import Group


class BenchmarkSummary(BaseModel):
    """What `build_benchmark` wrote, and the paper's DiaBENCH descriptors (App. C.5) of the cases."""

    model_config = ConfigDict(extra="forbid")

    out_dir: str
    source: str
    catalog: str
    by: Group
    holdout: float
    seed: int
    accepted: int                          # accepted dialogues in the source
    cases: int
    held_out_groups: int
    held_out_tools: int
    catalog_tools: int
    families: int                          # near-duplicate families of the catalog (singletons included)
    family_size_max: int
    family_size_mean: float
    families_with_near_duplicates: int     # families of two or more tools
    share_near_duplicate: float            # cases with a distractor at A.4 >= 0.70 (DiaBENCH 29.2%)
    mean_overlap: float                    # mean over cases of the mean A.4 score τ* vs its distractors (DiaBENCH 0.47)
    share_required: float                  # cases whose τ* has required parameters (DiaBENCH 75.6%)
    mean_distractors: float                # distractors per case (DiaBENCH ~5.2)
    lines_of_business: dict[str, int]      # cases per line of business of τ*
    # cases per scenario type, and the accepted source dialogues per type (the mix the split keeps)
    scenarios: dict[str, int] = Field(default_factory=dict)
    source_scenarios: dict[str, int] = Field(default_factory=dict)

    def to_text(self) -> str:
        lob = ", ".join(f"{k} {v}" for k, v in sorted(self.lines_of_business.items(), key=lambda kv: (-kv[1], kv[0])))
        return "\n".join([
            f"benchmark {self.out_dir}: {self.cases} cases from {self.accepted} accepted dialogues of {self.source}",
            f"held out by {self.by}: {self.held_out_groups} group(s), {self.held_out_tools} of {self.catalog_tools} "
            f"catalog tools (seed {self.seed}, target share {self.holdout:.0%}, got "
            f"{self.cases / self.accepted if self.accepted else 0:.1%})",
            f"catalog {self.catalog}: {self.families} near-duplicate families, "
            f"{self.families_with_near_duplicates} with 2+ tools, largest {self.family_size_max}, "
            f"mean size {self.family_size_mean:.2f}",
            f"cases with a near-duplicate distractor (A.4 >= {NEAR_DUPLICATE_THRESHOLD:.2f}) "
            f"{self.share_near_duplicate:.1%} (DiaBENCH 29.2%)",
            f"mean retrieval-set semantic overlap {self.mean_overlap:.3f} (DiaBENCH 0.47)",
            f"cases whose gold tool has required parameters {self.share_required:.1%} (DiaBENCH 75.6%)",
            f"mean distractors per case {self.mean_distractors:.2f} (DiaBENCH ~5.2)",
            f"lines of business: {lob}",
            f"scenarios (cases / accepted): {self.scenario_mix()}",
        ])

    def scenario_mix(self) -> str:
        """`name cases/accepted` per scenario type, in registration order (`scenarios.names`)."""
        names = [n for n in scenario_names() if n in self.scenarios or n in self.source_scenarios]
        return ", ".join(f"{n} {self.scenarios.get(n, 0)}/{self.source_scenarios.get(n, 0)}" for n in names) or "none"
