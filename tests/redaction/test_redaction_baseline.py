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
