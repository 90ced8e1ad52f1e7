"""The coverage table (gitleaks' default rules, detect-secrets' installed plugins) and the
vendor families it names: every upstream rule has a row, every covered row is redacted in
every encoding, and hard negatives of the same shapes are left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.redaction import harness as H
from workbench.redaction.rules import coverage as C
from workbench.redaction.rules.markers import KNOWN_KINDS
from workbench.redaction.rules.vendors import VENDOR_RULES
from workbench.synth import secrets as S
from workbench.synth.secrets.negatives import ALL_NEGATIVE_KINDS, NEGATIVE_KINDS
from workbench.synth.secrets.registry import ALL_FORMATS, ALL_SECRET_FORMATS, SECRET_FORMATS
from workbench.synth.secrets.vendors import VENDOR_FORMATS, VENDOR_NEGATIVE_KINDS

ROOT = Path(__file__).resolve().parents[2]
REPORTED_KINDS = set(KNOWN_KINDS) | {k for k, _, _ in VENDOR_RULES}


def test_every_upstream_rule_has_a_row():
    assert C.uncovered() == []
    assert len(C.gitleaks_rules()) >= 200
    assert "AzureStorageKeyDetector" in C.detect_secrets_plugins()


def test_a_new_upstream_rule_shows_up_uncovered(monkeypatch):
    rules = C.gitleaks_rules() + [{"id": "acme-new-token", "detects": "Acme tokens"}]
    monkeypatch.setattr(C, "gitleaks_rules", lambda: rules)
    plugins = {**C.detect_secrets_plugins(), "AcmeDetector": "Acme Token"}
    monkeypatch.setattr(C, "detect_secrets_plugins", lambda: plugins)
    assert C.uncovered() == ["gitleaks:acme-new-token", "detect-secrets:AcmeDetector"]
    assert "| `acme-new-token` | Acme tokens | **no row** |" in C.markdown()


def test_rows_name_real_kinds_and_families_or_a_reason():
    rows = list(C.GITLEAKS.values()) + list(C.DETECT_SECRETS.values())
    for row in rows:
        if row.kind is None:
            assert row.fakes is None and len(row.note) > 20
        else:
            assert row.kind in REPORTED_KINDS, row
            assert row.fakes in ALL_FORMATS, row
    # every vendor family tests some row, and no row is left without a reason
    assert set(VENDOR_FORMATS) <= {r.fakes for r in rows}
    assert set(C.GITLEAKS) == {r["id"] for r in C.gitleaks_rules()}


def test_upstream_facts_hold_no_patterns():
    for r in C.gitleaks_rules():
        assert set(r) == {"id", "detects"}
        assert not any(c in r["detects"] for c in "[]\\{}|^$"), r


def test_coverage_doc_is_current():
    assert (ROOT / "docs" / "redaction-coverage.md").read_text(encoding="utf-8") == C.markdown()


def test_core_draws_are_unchanged():
    # the vendor families are drawn only when asked for: profiles keep their plans
    assert VENDOR_FORMATS and not set(VENDOR_FORMATS) & set(SECRET_FORMATS)
    assert len(S.compatible_combinations()) == 3816
    assert not set(VENDOR_NEGATIVE_KINDS) & set(NEGATIVE_KINDS)
    assert ALL_SECRET_FORMATS[:len(SECRET_FORMATS)] == SECRET_FORMATS
    assert ALL_NEGATIVE_KINDS[:len(NEGATIVE_KINDS)] == NEGATIVE_KINDS


_TRANSFORMS = ("none", "split_messages", "split_lines", "base64", "hex", "percent",
               "unicode_escape", "zero_width", "homoglyph", "fullwidth", "placeholder_marker")


@pytest.mark.parametrize("fmt", VENDOR_FORMATS)
def test_vendor_family_is_redacted_in_every_encoding(fmt):
    rng = np.random.default_rng(2026 + VENDOR_FORMATS.index(fmt))
    contexts = ("env_dump", "json_tool_result", "shell_export", "yaml")
    n = 0
    for i, t in enumerate(_TRANSFORMS):
        ctx = contexts[i % len(contexts)]
        if not S.compatible(fmt, ctx, t):
            continue
        p = S.plant_secret(rng, fmt, ctx, t)
        out = [r.text for r in H.redact_messages(p.texts)]
        assert not H.leaked(p.value, out), (fmt, ctx, t, p.texts, out)
        n += 1
    assert n >= 9


@pytest.mark.parametrize("fmt", [f for f in VENDOR_FORMATS if f != "keyed_vendor_secret"])
def test_vendor_token_is_found_bare_in_prose(fmt):
    """A token with a shape of its own needs no key: it is found in a sentence, named by
    its own kind (not only as a random piece)."""
    rng = np.random.default_rng(11)
    row_kinds = {r.kind for r in C.GITLEAKS.values() if r.fakes == fmt} | {
        r.kind for r in C.DETECT_SECRETS.values() if r.fakes == fmt}
    for _ in range(5):
        raw = ALL_FORMATS[fmt](rng)
        text = f"I pasted {raw} into the chat by mistake."
        kinds = {k for _, _, k in H.scan(text)}
        assert kinds & row_kinds, (fmt, raw, H.scan(text))
        assert not H.leaked(raw[slice(*S.secret_span(fmt, raw))], H.redact(text).text)


def test_vendor_hard_negatives_are_left_alone():
    rng = np.random.default_rng(99)
    flagged = []
    for i in range(800):
        neg = S.plant_negative(rng, VENDOR_NEGATIVE_KINDS[i % len(VENDOR_NEGATIVE_KINDS)])
        text = neg.parts[0][0]
        if H.scan(text):
            flagged.append((text, H.scan(text)))
    assert flagged == []


@pytest.mark.parametrize("text", [
    # placeholders written in a token's shape (flagged by the header and keyed rules before)
    "curl -H 'Authorization: Bearer dapi0000000000000000000000' https://api.acme.dev/v1/me",
    "curl -H 'Authorization: Bearer AKCp0000000000000000000000000000' https://api.acme.dev/",
    "For example, VAULT_TOKEN=v1.0-DoNotUseThisInProduction\n",
    "For example, API_TOKEN=sq0atp-thisIsNotARealToken\n",
    "For example, NEW_RELIC_API_KEY=4b1dDoNotUseThisInProduction\n",
    "The README shows glpat-DoNotUseThisInProduction as a sample.",
    "Docs: tokens are issued with the ATATT3xFfGF0 prefix followed by a random body.",
])
def test_placeholder_in_a_token_shape_is_no_finding(text):
    assert H.scan(text) == []


def test_marker_tail_with_a_colon_is_a_leak():
    # half of a Sidekiq credential (two hex halves joined by ':') glued to a marker
    text = "API_TOKEN=<REDACTED:sidekiq_secret>8:ba01b5d3 expired"
    assert H.leaked("cafe0128:ba01b5d3", H.redact(text).text) is False
    assert H.scan(text) and H.scan(text)[0][1] == text.index(" expired")
