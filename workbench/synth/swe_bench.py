"""The published shape of SWE-agent trajectories on SWE-bench Verified: the facts the
``swe-bench`` generator profile is fitted to, each with where it was published.

Only trajectory shape is taken from the sources (turns per instance, the step limit, how
a turn's tokens split between observation and model output); the cost ratios the
replication study compares against (:mod:`workbench.replicate`) are never used to fit.

Turn statistics are of the Raw Agent runs (no context management) of the three
non-thinking configurations of the Complexity Trap (Qwen3-32B, Qwen3-Coder-480B, Gemini
2.5 Flash; 1,498 instances with at least one turn), from the per-instance table its
authors published; the lognormal is the maximum-likelihood fit of those turn counts
(mean and standard deviation of their logarithm).
"""

from __future__ import annotations

from dataclasses import dataclass

COSTS_CSV = ("Recursive-Safeguarding/the-complexity-trap, "
             "auxiliary-data/experiment_instance_costs_sweagent.csv (Raw Agent rows, non-thinking)")
PAPER = ("Lindenbauer et al., The Complexity Trap (NeurIPS 2025 DL4Code), arXiv:2508.21433, "
         "section 3.2 and introduction")


@dataclass(frozen=True)
class Fact:
    value: float
    source: str
    note: str = ""


SHAPE: dict[str, Fact] = {
    "turns_median": Fact(38.0, COSTS_CSV, "median turns per instance"),
    "turns_mean": Fact(53.6, COSTS_CSV, "mean turns per instance"),
    "turns_p10": Fact(9.0, COSTS_CSV, "10th percentile of turns per instance"),
    "turns_p90": Fact(121.0, COSTS_CSV, "90th percentile of turns per instance"),
    "turns_log_mean": Fact(3.549, COSTS_CSV, "mean of ln(turns): lognormal location"),
    "turns_log_sd": Fact(0.967, COSTS_CSV, "sd of ln(turns): lognormal scale"),
    "at_step_limit": Fact(0.027, COSTS_CSV, "share of instances that reach the step limit"),
    "step_limit": Fact(250.0, PAPER, "'we ... set the turn limit to 250'"),
    "observation_share": Fact(0.84, PAPER, "'observation tokens make up around 84% of an average "
                                           "SWE-agent turn'"),
    "output_tokens_per_turn": Fact(91.5, COSTS_CSV, "mean completion tokens per turn (thought + action)"),
    "thinking": Fact(0.0, PAPER, "the non-thinking configurations: no reasoning turns; Gemini 2.5 "
                                 "Flash thinking had a budget of 800 tokens, Qwen3-32B thinking none"),
}
