"""The four leaks of the full redaction benchmark (``benchmarks/bench_redaction.py``, 14,506
vendor plants), each with its root cause:

* a 1Password service token whose base64 JSON body holds ``YOUR`` by chance read as a
  placeholder (a filler word inside a long issued body is chance, not filler);
* a Twitter bearer token split across lines: the left half's run of ``A`` (the token's fixed
  head) read as filler, so the junction was refused;
* two ``keyed_vendor_secret`` values split across lines that the generator planted in a
  private key's multi-line templates (``tls: key:``, ``key data: b'...'``), whose keys name no
  credential: the generator now keeps the credential key for the families only a key names.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from workbench.redaction import harness as H
from workbench.synth import secrets as S

# the claims of the leaked fake (the 1Password service token shape of
# workbench.synth.secrets.vendors); its salt encodes to ``...xYOURGIn...``
_OPS_CLAIMS = {
    "signInAddress": "acme.1password.eu",
    "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256", "iterations": 650000,
                 "salt": "NyQZ2rCXfW3qV_mUgLX9DF"},
    "email": "et3nhzlq2njdx@1passwordserviceaccounts.com",
    "srpX": "2192f19d405a602530b87f974a2a301837e7a7b1483bb50905ce4392a0eee546",
    "muk": {"alg": "A256GCM", "ext": True, "k": "DyvKgBjb5U27IMocLqkvgjX8R2LBQPqwLRD02TOGHJr"},
    "secretKey": "A3-H4S6G4-DL84EQ",
    "deviceUuid": "hugmcnvgm54s5w9mqj4fb99tym",
}
OPS_TOKEN = "ops_" + base64.urlsafe_b64encode(
    json.dumps(_OPS_CLAIMS, separators=(",", ":")).encode()).decode().rstrip("=")


def test_filler_word_by_chance_in_a_long_token_body_is_no_placeholder():
    assert "your" in OPS_TOKEN.lower()  # (what made it read as a placeholder)
    assert H.scan(OPS_TOKEN) == [(0, len(OPS_TOKEN), "onepassword_service_token")]
    # as the benchmark planted it: base64-encoded in a JSON tool call's YAML edit
    enc = base64.b64encode(OPS_TOKEN.encode()).decode()
    call = json.dumps({"type": "tool_use", "name": "Edit", "input": {
        "file_path": "config/settings.yaml", "old_string": "  api_token: ''\n",
        "new_string": f"  api_token: '{enc}'\n"}})
    assert not H.leaked(OPS_TOKEN, H.redact(call).text)


@pytest.mark.parametrize("text", [
    # a placeholder in the token's shape stays a placeholder, however long
    "OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ" + "YOUR_SERVICE_ACCOUNT_TOKEN_" * 4,
    "OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ" + "yourServiceAccountTokenGoesHere" * 3,
    "export OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ" + "x" * 120,
])
def test_long_placeholder_in_a_token_shape_is_still_no_finding(text):
    assert H.scan(text) == []


TWITTER = "AAAAAAAAAAAAAAAAAAAAAwNWlklvZjuJZ7Q%3DW6atSklmtnt5VDUrK6szf2eTjqskzn8q7fqBYlGBo2kPGwNvdF"


def test_twitter_bearer_token_split_across_lines_in_prose():
    text = ("I found the API token in the old deploy notes: " + TWITTER[:28] + "\n"
            + TWITTER[28:] + ". Rotating it now.")
    assert not H.leaked(TWITTER, H.redact(text).text)
    assert [k for _, _, k in H.scan(text)] == ["twitter_bearer_token"]


@pytest.mark.parametrize("text", [
    # a run of A at the end of a line followed by filler or a word is no split token
    "bearer AAAAAAAAAAAAAAAAAAAAAxxxxxxxxxxxxxxxx\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "token: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA next",
])
def test_filler_after_a_fixed_head_at_a_line_break_is_no_finding(text):
    assert H.scan(text) == []


@pytest.mark.parametrize("context", ["yaml", "stack_trace", "env_dump", "shell_export",
                                     "json_tool_call", "json_tool_result", "fence", "ini"])
def test_key_named_secret_split_over_lines_keeps_its_credential_key(context):
    """A value only its key names (a bare UUID or hex) is planted under a key that names a
    credential also when split over lines, and is redacted there."""
    from workbench.synth.secrets.vendors import KEY_NAMED_FORMATS

    assert "keyed_vendor_secret" in KEY_NAMED_FORMATS
    for fmt in sorted(KEY_NAMED_FORMATS):
        for seed in range(12):
            rng = np.random.default_rng(seed)
            p = S.plant_secret(rng, fmt, context, "split_lines")
            text = p.texts[0]
            assert "tls:" not in text and "key data" not in text, text
            assert not H.leaked(p.value, [r.text for r in H.redact_messages(p.texts)]), text
