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
   per family and transform); gitleaks is not measured (no binary in the package registries);
4. false positives on hard negatives for both (texts with any finding), with the subtotal
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
from workbench.redaction.baseline import detect_secrets_redact, detect_secrets_scan  # noqa: E402
from workbench.synth import secrets as S  # noqa: E402
from workbench.synth.secrets.negatives import SLOT_NEGATIVE_KINDS  # noqa: E402
from workbench.synth.secrets.slots import SLOT_CONTEXTS, SLOT_FORMATS  # noqa: E402
from workbench.synth.secrets.vendors import VENDOR_FORMATS, VENDOR_NEGATIVE_KINDS  # noqa: E402

RECORDED = ROOT.parent / "shared" / "datasets" / "recorded" / "claude-code"


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


def _table(title: str, label: str, rows: dict[str, list[int]], keys) -> None:
    print(title)
    print(f"{label:20s} {'n':>5s} {'harness caught':>15s} {'flagged':>8s}"
          f" {'detect-secrets caught':>22s} {'flagged':>8s}")
    tot = [0, 0, 0, 0, 0]
    for k in keys:
        n, hc, hf, dc, df = rows[k]
        tot = [a + b for a, b in zip(tot, rows[k], strict=True)]
        print(f"{k:20s} {n:5d} {hc / n:15.3f} {hf / n:8.3f} {dc / n:22.3f} {df / n:8.3f}")
    n, hc, hf, dc, df = tot
    print(f"{'ALL':20s} {n:5d} {hc / n:15.3f} {hf / n:8.3f} {dc / n:22.3f} {df / n:8.3f}")


def _score(plants) -> tuple[list[list[int]], float, float]:
    """Per plant: [1, harness caught, harness flagged, detect-secrets caught, flagged], and
    the seconds each tool took (the harness's including its leak checks)."""
    all_texts = [t for p in plants for t in p.texts]
    w = time.perf_counter()
    ds_texts = iter(detect_secrets_redact(all_texts))
    ds_scan = iter(detect_secrets_scan(all_texts))
    ds_time = time.perf_counter() - w
    w = time.perf_counter()
    hits = []
    for p in plants:
        res = H.redact_messages(p.texts)
        d_out = [next(ds_texts) for _ in p.texts]
        d_spans = [next(ds_scan).spans for _ in p.texts]
        hits.append([1, not H.leaked(p.value, [r.text for r in res]),
                     any(any(s < e0 and s0 < e for s, e, _ in r.spans)
                         for (_, s0, e0), r in zip(p.parts, res, strict=True)),
                     not H.leaked(p.value, d_out),
                     any(any(s < e0 and s0 < e for s, e, _ in sp)
                         for (_, s0, e0), sp in zip(p.parts, d_spans, strict=True))])
    return hits, time.perf_counter() - w, ds_time


def recall(seeds: int) -> None:
    # rows: n, harness caught, harness flagged, detect-secrets caught, detect-secrets flagged
    per_t: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    per_f: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    per_c: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    per_old: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    plants = []
    for seed in range(seeds):
        rng = np.random.default_rng(4000 + seed)
        plants += [S.plant_secret(rng, *c) for c in S.compatible_combinations()]
    hits, h_time, ds_time = _score(plants)
    for p, hit in zip(plants, hits, strict=True):
        rows = [per_t[p.transform], per_f[p.kind], per_c[p.context]]
        if p.kind not in SLOT_FORMATS and p.context not in SLOT_CONTEXTS:
            rows.append(per_old[p.transform])
        for row in rows:
            for i, h in enumerate(hit):
                row[i] += h
    _table(f"\nrecall per transform over {len(plants)} planted secrets "
           f"(harness {h_time:.1f}s incl. leak checks, detect-secrets {ds_time:.1f}s)",
           "transform", per_t, S.TRANSFORMS)
    _table("\n  the same, token formats in the original contexts only (no command-line or "
           "header format or context)", "transform", per_old, [t for t in S.TRANSFORMS if per_old[t][0]])
    _table("\ncommand-line and header families (issue 15): recall per format, every context "
           "and transform", "format", per_f, SLOT_FORMATS)
    _table("\ncommand-line and header contexts: recall of every format planted there", "context",
           per_c, SLOT_CONTEXTS)
    _table("\nrecall per family (core formats), every context and transform", "family", per_f,
           S.SECRET_FORMATS)


def vendor_recall(seeds: int, contexts_per_pair: int | None) -> None:
    """The vendor families of the coverage table (docs/redaction-coverage.md): recall per
    family and per encoding, every compatible context (or ``contexts_per_pair`` of them per
    family and transform, round-robin, in quick runs)."""
    print("\ngitleaks: not measured: no gitleaks binary is installable from the package "
          "registries (PyPI has no gitleaks distribution, Debian no gitleaks package)")
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
    hits, h_time, ds_time = _score(plants)
    per_f: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    per_t: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for p, hit in zip(plants, hits, strict=True):
        for row in (per_f[p.kind], per_t[p.transform]):
            for i, h in enumerate(hit):
                row[i] += h
    _table(f"\nvendor families (coverage table): recall per family over {len(plants)} planted "
           f"secrets (harness {h_time:.1f}s incl. leak checks, detect-secrets {ds_time:.1f}s)",
           "family", per_f, [f for f in VENDOR_FORMATS if per_f[f][0]])
    _table("\nvendor families: recall per encoding (transform)", "transform", per_t,
           [t for t in S.TRANSFORMS if per_t[t][0]])
    missed = [(p.kind, p.context, p.transform) for p, h in zip(plants, hits, strict=True) if not h[1]]
    if missed:
        print(f"harness leaks ({len(missed)}): {missed[:12]}")


def _false_positives(kinds, count: int, seed: int):
    """``count`` hard negatives drawn round-robin over ``kinds``: how many of each kind there
    are, and how many of each our harness and detect-secrets flag (texts with any finding)."""
    rng = np.random.default_rng(seed)
    negs = [S.plant_negative(rng, kinds[i % len(kinds)]) for i in range(count)]
    texts = [n.parts[0][0] for n in negs]
    per_kind: dict[str, int] = defaultdict(int)
    h_fp: dict[str, int] = defaultdict(int)
    d_fp: dict[str, int] = defaultdict(int)
    for n, t, r in zip(negs, texts, detect_secrets_scan(texts), strict=True):
        per_kind[n.kind] += 1
        h_fp[n.kind] += bool(H.scan(t))
        d_fp[n.kind] += bool(r.spans)
    print(f"{'kind':22s} {'n':>5s} {'harness':>8s} {'detect-secrets':>15s}")
    for k in kinds:
        print(f"{k:22s} {per_kind[k]:5d} {h_fp[k]:8d} {d_fp[k]:15d}")
    print(f"{'ALL':22s} {count:5d} {sum(h_fp.values()):8d} {sum(d_fp.values()):15d}")
    return per_kind, h_fp, d_fp


def negatives(count: int) -> None:
    print(f"\nfalse positives on {count} hard negatives (texts with any finding)")
    per_kind, h_fp, d_fp = _false_positives(S.NEGATIVE_KINDS, count, 99)
    fam = [k for k in S.NEGATIVE_KINDS if k in SLOT_NEGATIVE_KINDS]
    print(f"{'command-line/header':22s} {sum(per_kind[k] for k in fam):5d}"
          f" {sum(h_fp[k] for k in fam):8d} {sum(d_fp[k] for k in fam):15d}")


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
    args = ap.parse_args(argv)
    quick = args.quick or bool(os.environ.get("BENCH_QUICK"))
    throughput(repeats=2 if quick else 5)
    recall(seeds=1)
    vendor_recall(seeds=1, contexts_per_pair=2 if quick else None)
    negatives(700 if quick else 2800)
    vendor_negatives(400 if quick else 1600)
    fragments(per_format=20 if quick else 60, seeds=1 if quick else 2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
