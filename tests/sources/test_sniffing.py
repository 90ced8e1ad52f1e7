"""Format detection on the bundled files: each file's own format wins unambiguously,
the other sniffers leave Claude Code and Codex alone, and no sniffer raises."""

from __future__ import annotations

from pathlib import Path

import pytest
from format_checks import (
    FILE_FORMATS,
    FILES,
)

from workbench.sources import load_formats


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(64 * 1024)


@pytest.mark.parametrize("rel", sorted(FILES))
def test_sniff_picks_own_format(recorded_dir, rel):
    path = recorded_dir / rel
    formats = load_formats()
    scores = {name: f.sniff(path, _head(path)) for name, f in formats.items()}
    best = max(scores, key=lambda n: scores[n].score)
    assert best == FILES[rel], {n: (d.score, d.reason) for n, d in scores.items()}
    mine = sorted((scores[n].score for n in FILE_FORMATS), reverse=True)
    assert mine[0] >= 0.5 and mine[0] > mine[1], "the winner must be unambiguous"
    assert scores[FILES[rel]].reason


def test_sniff_leaves_claude_code_and_codex_alone(recorded_dir):
    formats = load_formats()
    paths = sorted((recorded_dir / "claude-code").rglob("*.jsonl")) + sorted((recorded_dir / "codex").glob("*.jsonl"))
    assert paths
    for path in paths:
        head = _head(path)
        for name in FILE_FORMATS:
            det = formats[name].sniff(path, head)
            assert det.score < 0.1, (path.name, name, det)


def test_sniff_reason_names_what_it_saw(recorded_dir):
    from workbench.sources import swe_agent

    det = swe_agent.sniff(recorded_dir / "swe-agent/pydicom__pydicom-1458.traj",
                          _head(recorded_dir / "swe-agent/pydicom__pydicom-1458.traj"))
    assert det.score >= 0.9 and "history" in det.reason and "info.model_stats" in det.reason


def test_sniff_never_raises(tmp_path):
    formats = load_formats()
    missing = tmp_path / "nope.json"
    for name in FILE_FORMATS:
        assert formats[name].sniff(missing, b"\x00\xff{[").score >= 0.0
        assert formats[name].sniff(missing, b"").score == 0.0
