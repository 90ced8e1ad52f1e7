"""Generator profiles: which turn patterns a continuity is made of, and its rhythm.

A *turn pattern* is a short fixed list of events (e.g. thought, tool call, observation);
a continuity is a sequence of episodes, each a task turn, ``steps`` work turns and a
final answer. Everything here is data, so the generator can expand it with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.continuity.enums import EventKind as K
from workbench.continuity.enums import Origin as O
from workbench.continuity.enums import Role as R

# one event of a pattern: (kind, role, origin, text class, is model output)
Ev = tuple[int, int, int, str, bool]

TASK: tuple[Ev, ...] = ((K.MESSAGE, R.USER, O.USER, "user_task", False),)
STEP: tuple[Ev, ...] = (
    (K.MESSAGE, R.ASSISTANT, O.AGENT, "thought", True),
    (K.TOOL_CALL, R.ASSISTANT, O.AGENT, "tool_call", True),
    (K.TOOL_RESULT, R.TOOL, O.TOOL, "observation", False),
)
STEP_REASONING: tuple[Ev, ...] = ((K.REASONING, R.ASSISTANT, O.AGENT, "reasoning", True), *STEP)
SWE_STEP: tuple[Ev, ...] = (
    (K.MESSAGE, R.ASSISTANT, O.AGENT, "swe_thought", True),
    (K.TOOL_CALL, R.ASSISTANT, O.AGENT, "tool_call", True),
    (K.TOOL_RESULT, R.TOOL, O.TOOL, "observation", False),
)
FINAL: tuple[Ev, ...] = ((K.MESSAGE, R.ASSISTANT, O.AGENT, "chat_assistant", True),)
CHAT_USER: tuple[Ev, ...] = ((K.MESSAGE, R.USER, O.USER, "chat_user", False),)
CHAT_REPLY: tuple[Ev, ...] = ((K.MESSAGE, R.ASSISTANT, O.AGENT, "chat_assistant", True),)
SIDE: Ev = (K.SIDE_EFFECT, R.NONE, O.HARNESS, "side_effect", False)
MEMORY: Ev = (K.MEMORY_WRITE, R.NONE, O.BACKGROUND, "memory", False)
SYSTEM: Ev = (K.MESSAGE, R.SYSTEM, O.SYSTEM, "system", False)


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    # turn patterns: index 0 opens an episode, index 1 closes it, the rest are work turns
    open_turn: tuple[Ev, ...]
    close_turn: tuple[Ev, ...]
    work_turns: tuple[tuple[Ev, ...], ...]
    work_weights: tuple[float, ...]
    steps_min: int  # work turns per episode
    steps_max: int
    # > 0: work turns per episode are lognormal (median, sigma), clipped to [min, max];
    # 0: uniform in [min, max]
    steps_median: float = 0.0
    steps_sigma: float = 0.0
    side_effects_mean: float = 0.0  # side-effect events after each event (geometric)
    memory_write_rate: float = 0.0  # chance a background memory write follows an event
    interrupt_rate: float = 0.01  # chance a tool result never arrives (unpaired call)
    user_actors: tuple[str, ...] = ("user",)
    agent_actors: tuple[str, ...] = ("agent",)
    # gaps (seconds, lognormal median / sigma): user think time, model latency, tool time
    think_median_s: float = 90.0
    think_sigma: float = 1.6
    model_median_s: float = 4.0
    tool_median_s: float = 1.5


def _swe_bench_profile() -> Profile:
    import math

    from workbench.synth.swe_bench import SHAPE

    return Profile(
        name="swe-bench",
        description="SWE-agent on SWE-bench Verified, one instance per episode: lognormal turns "
                    f"(median {math.exp(SHAPE['turns_log_mean'].value):.0f}, sigma "
                    f"{SHAPE['turns_log_sd'].value}) up to the {SHAPE['step_limit'].value:.0f}-turn "
                    "step limit, observations ~84% of a turn's tokens, no thinking "
                    "(sources: workbench/synth/swe_bench.py)",
        open_turn=TASK, close_turn=FINAL, work_turns=(SWE_STEP,), work_weights=(1.0,),
        steps_min=1, steps_max=int(SHAPE["step_limit"].value) - 1,  # the final answer is a turn too
        steps_median=math.exp(SHAPE["turns_log_mean"].value), steps_sigma=SHAPE["turns_log_sd"].value,
        interrupt_rate=0.0,
    )


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            name="coding",
            description="SWE-agent-shaped coding runs: 40-250 tool turns per task, observations ~84% of tokens",
            open_turn=TASK, close_turn=FINAL, work_turns=(STEP, STEP_REASONING),
            work_weights=(0.8, 0.2), steps_min=40, steps_max=250,
        ),
        Profile(
            name="chat",
            description="chat assistant: user/assistant exchanges, an occasional tool call",
            open_turn=CHAT_USER, close_turn=CHAT_REPLY,
            work_turns=(CHAT_USER + CHAT_REPLY, STEP),
            work_weights=(0.93, 0.07), steps_min=2, steps_max=30, think_median_s=45.0,
            model_median_s=6.0,
        ),
        Profile(
            name="long-running",
            description=("long-running agent: coding turns buried in dense non-message side-effect events "
                         "and memory writes"),
            open_turn=TASK, close_turn=FINAL, work_turns=(STEP, STEP_REASONING),
            work_weights=(0.85, 0.15), steps_min=40, steps_max=250, side_effects_mean=6.0,
            memory_write_rate=0.01, think_median_s=600.0, think_sigma=2.0,
        ),
        Profile(
            name="multi-actor",
            description="shared continuity: several people and agents, a background summarizer writing memory",
            open_turn=CHAT_USER, close_turn=CHAT_REPLY,
            work_turns=(CHAT_USER + CHAT_REPLY, STEP, STEP_REASONING),
            work_weights=(0.5, 0.4, 0.1), steps_min=5, steps_max=60, side_effects_mean=0.5,
            memory_write_rate=0.02, user_actors=("alice", "bob", "carol"),
            agent_actors=("planner", "coder"), think_median_s=120.0,
        ),
        _swe_bench_profile(),
    )
}
