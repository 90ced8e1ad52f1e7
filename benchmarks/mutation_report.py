"""The mutation report of the seed-rule modules (`make mutate` runs mutmut, then this):
per module, how many mutants the tests killed (a timeout counts as killed: the mutant hung
the code), how many survived or had no test, the kill rate, and every survivor by name
(``mutmut show NAME`` prints its diff). Writes benchmarks/mutation.md and prints it.

    .venv/bin/python benchmarks/mutation_report.py
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
KILLED = ("killed", "timeout")
# survivors that behave exactly as the original (no test can tell them apart), with why
EQUIVALENT = {
    "workbench.engine.checkpoints.x_select_checkpoint__mutmut_6":
        "`>` becomes `>=` on (to_seq, frame_seq): frame seqs are unique in a stream, no two frames tie",
    "workbench.conformance.invariants.x__dataset_events__mutmut_12":
        "`ds.events(columns=[...])` becomes `ds.events(columns=None)`: all columns are read, then the same "
        "ones selected; only slower",
}


def results() -> list[tuple[str, str]]:
    mutmut = Path(sys.executable).with_name("mutmut")
    out = subprocess.run([str(mutmut), "results", "--all", "true"], capture_output=True, text=True, check=True,
                         cwd=PROJECT).stdout
    rows = []
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and "__mutmut_" in name:
            rows.append((name, status.strip()))
    return rows


def module_of(name: str) -> str:
    head = name.split("__mutmut_")[0]
    parts = head.split(".")
    return ".".join(p for p in parts if not p.startswith(("x_", "xǁ")))


def main() -> None:
    rows = results()
    if not rows:
        sys.exit("no mutmut results: run `make mutate` first")
    by_module: dict[str, Counter] = defaultdict(Counter)
    survivors: dict[str, list[str]] = defaultdict(list)
    for name, status in rows:
        m = module_of(name)
        by_module[m][status] += 1
        if status not in KILLED:
            why = EQUIVALENT.get(name)
            survivors[m].append(f"`{name}` ({status})" + (f": equivalent, {why}" if why else ""))
    lines = ["# Mutation report (mutmut) of the seed-rule modules", "",
             "Written by `make mutate` (benchmarks/mutation_report.py); a timeout counts as killed.", "",
             "| module | mutants | killed | timeout | survived | no tests | kill rate |",
             "|---|---|---|---|---|---|---|"]
    total = Counter()
    for m, c in sorted(by_module.items()):
        n = sum(c.values())
        total += c
        rate = (c["killed"] + c["timeout"]) / n if n else 0.0
        lines.append(f"| {m} | {n} | {c['killed']} | {c['timeout']} | {c['survived']} | {c['no tests']} | "
                     f"{rate:.1%} |")
    n = sum(total.values())
    lines.append(f"| all | {n} | {total['killed']} | {total['timeout']} | {total['survived']} | "
                 f"{total['no tests']} | {(total['killed'] + total['timeout']) / n:.1%} |")
    lines += ["", "## Survivors", ""]
    for m, names in sorted(survivors.items()):
        lines += [f"- {m}:"] + [f"  - {s}" for s in names]
    if not survivors:
        lines.append("none")
    text = "\n".join(lines) + "\n"
    (PROJECT / "benchmarks" / "mutation.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
