"""An evolving task state planted into a synthetic continuity: a todo list the agent keeps
with TodoWrite / update_plan-style tool calls, whose items move from open to done, and the
step it says comes next — what users most often say compaction loses (docs/targets.md,
issue 27: "the task state — what is done, what remains, the next action").

The plan is a list of updates; each update is one tool call that writes the whole list as
Codex's ``update_plan`` and Claude Code's TodoWrite render it — ``- [x]`` done (the latest
:data:`SHOWN_DONE`; older ones are counted), ``- [ ]`` open — followed by ``Next step: ...``.
The first update opens :data:`OPENING_ITEMS` items; every later one marks the oldest open
item done and, while items remain to draw, opens a new one, so the list always has open work.
Each update labels, as facts of kind
``task`` (the kind real logs' task state has, :mod:`workbench.evaluate.log_facts`):

* every item it opens — the answer is the item's text (``role`` ``open``);
* every item it marks done — the answer is the checked line ``[x] item`` (``role`` ``done``):
  a summary that names the item but not as done has not kept that it is done;
* its next step — the answer is the line ``Next step: ...`` (``role`` ``next_step``).

Items are drawn without repetition from verb x object x scope, so every answer is unique in
the continuity. Planting is opt-in (``GeneratorConfig.task_state``) and draws after every
other label, so the facts, secrets and hard negatives of a dataset are the same with it on.

>>> import numpy as np
>>> ups = plan_updates(np.random.default_rng(0), 3)
>>> [len(u.opened) for u in ups], [len(u.done) for u in ups]
([3, 1, 1], [0, 1, 1])
>>> u = ups[1]
>>> u.text[u.facts[0].start:u.facts[0].end] == u.facts[0].answer
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TASK_KIND = "task"
OPENING_ITEMS = 3
SHOWN_DONE = 5  # done items the list still shows (older ones are counted), as agents prune their lists
TOOL_NAMES = ("TodoWrite", "update_plan")

_VERBS = ("Add", "Fix", "Write tests for", "Refactor", "Document", "Benchmark", "Remove dead code in",
          "Migrate")
_OBJECTS = ("the retry budget in the ledger sync", "the invoice totals rounding", "the rate limiter burst logic",
            "the checkout cart merge", "the search reindex batch size", "the SSO callback handler",
            "the push token cleanup job", "the schema v7 migration", "the feature flag loader",
            "the export CSV encoder", "the webhook signature check", "the session expiry sweep")
# every item has a scope, so no item is a part of another (answers are found as substrings)
_SCOPES = (" on staging", " for the EU region", " behind the beta flag", " for the mobile client")
_STEPS = ("run it against qa before anything else", "read the failing test output first", "open a draft PR",
          "ask the owner to review the approach", "profile it with the production sample")


@dataclass(frozen=True)
class TaskFact:
    role: str  # open | done | next_step
    start: int
    end: int
    answer: str
    probe: str


@dataclass(frozen=True)
class TaskUpdate:
    tool: str
    text: str
    opened: tuple[str, ...]
    done: tuple[str, ...]
    facts: tuple[TaskFact, ...]


def role_of(answer: str) -> str:
    """The role of a planted task-state fact, from its answer: ``done``, ``next_step`` or ``open``."""
    if answer.startswith("[x] "):
        return "done"
    return "next_step" if answer.startswith("Next step: ") else "open"


def item_pool() -> list[str]:
    return [f"{v} {o}{s}" for v in _VERBS for o in _OBJECTS for s in _SCOPES]


def max_updates() -> int:
    """Updates a plan can hold before every item is drawn (a later one only closes items)."""
    return len(item_pool()) - OPENING_ITEMS + 1


def plan_updates(rng: np.random.Generator, n_updates: int) -> list[TaskUpdate]:
    """``n_updates`` successive todo-list updates (see the module docstring)."""
    pool = item_pool()
    order = rng.permutation(len(pool)).tolist()
    drawn = 0
    done: list[str] = []
    open_items: list[str] = []
    updates = []
    for u in range(n_updates):
        closed: list[str] = []
        if u == 0:
            opened = [pool[i] for i in order[:OPENING_ITEMS]]
            drawn = OPENING_ITEMS
        else:
            if open_items:
                closed = [open_items.pop(0)]
                done.extend(closed)
            opened = [pool[order[drawn]]] if drawn < len(order) else []
            drawn += len(opened)
        open_items.extend(opened)
        # the oldest open item comes next; it changes at every update, so each step is unique
        step = (f"start '{open_items[0]}' ({_STEPS[int(rng.integers(len(_STEPS)))]})" if open_items
                else f"write the hand-off note: all {len(done)} items are done")
        tool = TOOL_NAMES[int(rng.integers(len(TOOL_NAMES)))]
        updates.append(_render(tool, done, open_items, closed, opened, step))
    return updates


def _render(tool: str, done: list[str], open_items: list[str], closed: list[str], opened: list[str],
            step: str) -> TaskUpdate:
    lines = [f"{tool}: the plan as it stands"]
    if len(done) > SHOWN_DONE:
        lines.append(f"({len(done) - SHOWN_DONE} earlier items done)")
    facts = []
    at = sum(len(line) + 1 for line in lines)
    for item in done[-SHOWN_DONE:]:
        line = f"- [x] {item}"
        if item in closed:
            answer = f"[x] {item}"
            facts.append(TaskFact("done", at + 2, at + 2 + len(answer), answer, f"Is '{item}' done?"))
        lines.append(line)
        at += len(line) + 1
    for item in open_items:
        line = f"- [ ] {item}"
        if item in opened:
            s = at + len("- [ ] ")
            facts.append(TaskFact("open", s, s + len(item), item, "Which items are on the todo list?"))
        lines.append(line)
        at += len(line) + 1
    answer = f"Next step: {step}"
    facts.append(TaskFact("next_step", at, at + len(answer), answer, "What is the next step?"))
    lines.append(answer)
    return TaskUpdate(tool, "\n".join(lines), tuple(opened), tuple(closed), tuple(facts))


def default_updates(events: int) -> int:
    """Updates planted in a continuity of ``events`` events: one per 1,500 events, at least 3."""
    return int(min(max_updates(), max(3, events // 1_500)))
