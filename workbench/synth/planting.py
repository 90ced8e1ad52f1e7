"""Write planted facts, secrets and hard negatives into chosen events of a continuity.

Each plant is appended to its event's pooled text (``pool text + "\\n\\n" + plant``) and
recorded in a side table with the character span of the planted value in the final
event text, so evaluations can trace it through summaries and compiled contexts.
Secrets split across messages occupy two consecutive model-visible events. With
``task_state`` on, todo-list updates are planted last into tool calls
(:mod:`workbench.synth.task_state`), each labelling its facts of kind ``task``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from workbench.continuity.enums import EventKind, Role

SEPARATOR = "\n\n"


@dataclass
class Planted:
    rows: np.ndarray  # int64 event rows whose text was replaced (sorted)
    texts: list[str]  # final text of those rows, same order
    facts: object  # pyarrow.Table (facts schema)
    secrets: object  # pyarrow.Table (secrets schema)


def secret_plan(n_secrets: int, rng, families: str = "core") -> list[tuple[str, str, str]]:
    """(format, context, transform) triples covering formats and transforms evenly
    (``families="all"``: the vendor families too)."""
    from workbench.synth import secrets as sec
    from workbench.synth.secrets.registry import ALL_SECRET_FORMATS

    formats = ALL_SECRET_FORMATS if families == "all" else sec.SECRET_FORMATS
    combos = [c for c in itertools.product(formats, sec.CONTEXTS, sec.TRANSFORMS)
              if sec.compatible(*c)]
    order = rng.permutation(len(combos))
    # round-robin over transforms so small plans still see every transform
    by_transform: dict[str, list] = {}
    for i in order:
        by_transform.setdefault(combos[i][2], []).append(combos[i])
    plan = []
    for group in itertools.zip_longest(*by_transform.values()):
        plan.extend(c for c in group if c is not None)
        if len(plan) >= n_secrets:
            break
    return plan[:n_secrets]


def plant_labels(cfg, st, pool, pool_idx, rng) -> Planted:
    import pyarrow as pa

    from workbench.continuity.schema import facts_schema, secrets_schema

    if cfg.facts:
        from workbench.synth import facts as fct
    if cfg.secrets or cfg.hard_negatives:
        from workbench.synth import secrets as sec

    kind, role = st["kind"], st["role"]
    text_bearing = (((kind == EventKind.MESSAGE) & (role != Role.SYSTEM))
                    | (kind == EventKind.TOOL_CALL) | (kind == EventKind.TOOL_RESULT))
    rows_tb = np.flatnonzero(text_bearing)
    taken = np.zeros(kind.size, bool)
    taken[0] = True  # never the system prompt
    plants: dict[int, list[tuple[str, int, int]]] = {}  # row -> parts (text, start, end)
    leading: dict[int, tuple[str, int, int]] = {}  # row -> a part placed before the pool text

    def place(row: int, part: tuple[str, int, int]) -> tuple[int, int]:
        parts = plants.setdefault(row, [])
        parts.append(part)
        return row, len(parts) - 1

    def place_first(row: int, part: tuple[str, int, int]) -> tuple[int, int]:
        leading[row] = part
        plants.setdefault(row, [])
        return row, -1

    def take(candidates: np.ndarray, k: int) -> np.ndarray:
        free = candidates[~taken[candidates]]
        if free.size == 0 or k <= 0:
            return np.zeros(0, np.int64)
        chosen = np.sort(rng.choice(free, size=min(k, free.size), replace=False))
        taken[chosen] = True
        return chosen

    # facts: in user messages and tool observations, spread over the whole continuity
    fact_cands = np.flatnonzero(((kind == EventKind.MESSAGE) & (role == Role.USER))
                                | (kind == EventKind.TOOL_RESULT))
    placed_facts = []
    for i, row in enumerate(take(fact_cands, cfg.facts)):
        f = fct.plant_fact(rng, i)
        placed_facts.append((place(int(row), (f.text, f.start, f.end)), f))

    families = getattr(cfg, "secret_families", "core")
    plan = secret_plan(cfg.secrets, rng, families) if cfg.secrets else []
    single = [p for p in plan if p[2] != "split_messages"]
    split = [p for p in plan if p[2] == "split_messages"]
    placed_secrets = []  # ([(row, j), ...], PlantedSecret)
    for (fmt, ctx, tr), row in zip(single, take(rows_tb, len(single)), strict=False):
        s = sec.plant_secret(rng, fmt, ctx, tr)
        placed_secrets.append(([place(int(row), s.parts[0])], s))
    if split:
        # consecutive model-visible events (nothing visible between them), both still free:
        # part 1 ends the first, part 2 opens the second, so a reader sees them joined
        visible_rows = np.flatnonzero(text_bearing | (kind == EventKind.REASONING))
        pair_rows = []
        for i in rng.permutation(visible_rows.size - 1):
            a, b = int(visible_rows[i]), int(visible_rows[i + 1])
            if not (text_bearing[a] and text_bearing[b]):
                continue
            if not taken[a] and not taken[b]:
                taken[a] = taken[b] = True
                pair_rows.append((a, b))
                if len(pair_rows) == len(split):
                    break
        for (fmt, ctx, tr), (a, b) in zip(split, sorted(pair_rows), strict=False):
            s = sec.plant_secret(rng, fmt, ctx, tr)
            placed_secrets.append(([place(a, s.parts[0]), place_first(b, s.parts[1])], s))
    neg_kinds = []
    if cfg.hard_negatives:
        from workbench.synth.secrets.negatives import ALL_NEGATIVE_KINDS

        neg_kinds = list(ALL_NEGATIVE_KINDS if families == "all" else sec.NEGATIVE_KINDS)
    for i, row in enumerate(take(rows_tb, cfg.hard_negatives)):
        s = sec.plant_negative(rng, neg_kinds[i % len(neg_kinds)])
        placed_secrets.append(([place(int(row), s.parts[0])], s))

    # the task state draws last, so every label above is the same with it on or off
    placed_tasks = []  # (where, TaskUpdate)
    if getattr(cfg, "task_state", False):
        from workbench.synth import task_state as ts

        calls = take(np.flatnonzero(kind == EventKind.TOOL_CALL), ts.default_updates(kind.size))
        for row, update in zip(calls, ts.plan_updates(rng, calls.size), strict=True):
            placed_tasks.append((place(int(row), (update.text, 0, len(update.text))), update))

    # final texts, and where each part begins inside them
    rows = np.array(sorted(plants), dtype=np.int64)
    base: dict[tuple[int, int], int] = {}
    texts = []
    for row in rows.tolist():
        text = pool.texts[int(pool_idx[row])]
        if row in leading:
            base[(row, -1)] = 0
            text = leading[row][0] + SEPARATOR + text
        for j, (part_text, _, _) in enumerate(plants[row]):
            text += SEPARATOR
            base[(row, j)] = len(text)
            text += part_text
        texts.append(text)

    def span(where: tuple[int, int]) -> tuple[int, int]:
        row, j = where
        _, start, end = leading[row] if j == -1 else plants[row][j]
        return base[where] + start, base[where] + end

    frows = []
    for where, f in placed_facts:
        start, end = span(where)
        frows.append({"continuity": 0, "seq": where[0], "start": start, "end": end,
                      "fact_id": f.fact_id, "kind": f.kind, "probe": f.probe, "answer": f.answer})
    task_facts = [(where, f) for where, update in placed_tasks for f in update.facts]
    for i, (where, f) in enumerate(task_facts):
        start, _ = span(where)
        frows.append({"continuity": 0, "seq": where[0], "start": start + f.start, "end": start + f.end,
                      "fact_id": f"task-{i:05d}", "kind": "task", "probe": f.probe, "answer": f.answer})
    srows = []
    for places, s in placed_secrets:
        for part_no, where in enumerate(places, start=1 if len(places) > 1 else 0):
            start, end = span(where)
            srows.append({"continuity": 0, "seq": where[0], "start": start, "end": end,
                          "secret_id": s.secret_id, "kind": s.kind, "context": s.context,
                          "transform": s.transform, "part": part_no, "negative": s.negative,
                          "value": s.value})
    facts = pa.Table.from_pylist(frows, schema=facts_schema())
    secrets = pa.Table.from_pylist(srows, schema=secrets_schema())
    return Planted(rows=rows, texts=texts, facts=facts, secrets=secrets)
