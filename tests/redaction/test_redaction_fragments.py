"""Partial secrets, as a summariser copies them (a fragment with an ellipsis, one half of a
split secret): recall per format at the level the harness achieves, and no finding on hard
negatives (whole or quoted cut short), planted facts, ids and identifiers of real agent
logs, or the recorded logs themselves; redaction stays idempotent.

Recall floors are the measured levels (``workbench.redaction.probes``, seeds 1-8 x 50 probes
per format: the minimum over seeds, rounded down), asserted on a seed of their own, so a
change that loses recall fails here. The residual gaps are documented with each floor.
"""

from __future__ import annotations

import numpy as np
import pytest
from bundled_logs import BUNDLED_LOGS

from workbench.redaction import harness as H
from workbench.redaction import probes as P
from workbench.redaction import rules as R
from workbench.synth import secrets as S
from workbench.synth.facts import plant_fact
from workbench.synth.secrets.slots import SLOT_FORMATS

#: Guaranteed recall on fragment probes per format (measured minimum over 8 seeds).
#: The probes draw from every context, the command-line and header contexts included
#: (``shell_command``, ``http_request``, ``json_headers``, ``python_headers``); there the
#: second half of a split token often stands alone before ``"})`` or a URL, which lowered
#: the minima of aws_secret_key (0.95 -> 0.9), gitlab_pat and npm (0.9 -> 0.85),
#: google_api_key (0.95 -> 0.9), slack_token (0.82 -> 0.8) and password_in_prose (0.6 ->
#: 0.55). On the original contexts alone every minimum is unchanged or higher.
RECALL_FLOOR = {
    "anthropic_api": 0.95, "aws_secret_key": 0.9, "github_classic": 0.95,
    "github_fine_grained": 0.92, "gitlab_pat": 0.85, "google_api_key": 0.9,
    "openai_legacy": 0.95, "openai_project": 0.95, "sendgrid": 0.95, "stripe_key": 0.95,
    "jwt": 0.88, "npm": 0.85, "url_credentials": 0.9, "slack_token": 0.8,
    "pem_private_key": 0.75,
    # residual gaps: prefix-less halves of 10-14 uppercase characters (AWS key ids), of
    # mixed-case letters only (Hugging Face) and of human passwords look like words,
    # acronyms or identifiers without the keyword that vouches for them
    "aws_access_key_id": 0.65, "huggingface": 0.55, "password_in_prose": 0.55,
    # command lines and headers: a fragment quoted with its flag or header is caught
    # (partial >= 0.9); the second half of a split value, alone at the start of the next
    # message, is a bare hex run, UUID piece or password piece with nothing to vouch for it
    "http_authorization": 0.7, "api_key_header": 0.75, "cli_password": 0.6,
}
#: Overall floors per shape, for the token formats and for the command-line/header family.
OVERALL_FLOOR = {
    "token": {"partial": 0.93, "half": 0.86, "all": 0.9},
    "slot": {"partial": 0.9, "half": 0.5, "all": 0.7},
}


@pytest.fixture(scope="module")
def probes():
    return P.all_probes(2024, 40)


def test_fragments_of_every_format_are_redacted(probes):
    got = P.fragment_recall(probes)
    assert set(got) == set(S.SECRET_FORMATS)
    low = {k: f"{c}/{n}" for k, (c, n) in got.items() if c / n < RECALL_FLOOR[k]}
    assert not low, low


@pytest.mark.parametrize("family", ["token", "slot"])
def test_fragment_recall_by_shape(probes, family):
    ps = [p for p in probes if (p.fmt in SLOT_FORMATS) == (family == "slot")]
    got = P.fragment_recall(ps, key=lambda p: p.shape)
    for shape, (c, n) in got.items():
        assert c / n >= OVERALL_FLOOR[family][shape], (shape, c, n)
    c = sum(v[0] for v in got.values())
    n = sum(v[1] for v in got.values())
    assert c / n >= OVERALL_FLOOR[family]["all"]


def test_probes_leak_before_redaction(probes):
    assert all(H.leaked(p.value, p.text) for p in probes)


@pytest.mark.parametrize("text,secret", [
    # the evaluation's survivors (secret value, then the summary line that kept part of it)
    ("- export AWS_ACCESS_KEY_ID='AQ3YOO3TBABZVCX\u2026'.", "AKIAQ3YOO3TBABZVCX7T"),
    ('- 1iigMUoIoLDPuBopdcpLeoxtOcLn"', "7oJr1dOQAXW71iigMUoIoLDPuBopdcpLeoxtOcLn"),
    ("- huq11DzPqv4ZHmy2xhP96ycvzQNbrP9LkYFRt ./scripts/deploy.sh --env staging\\n",
     "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"),
    ("- rhjvfst8k5i3k8r9)", "npm_1z0scdjwjg4xhfqhc6u5rhjvfst8k5i3k8r9"),
    ("- $ git clone https://x-access-token:AKIA2NKEJ274", "AKIA2NKEJ274JBMAGSJM"),
    ("- Replace the hard-coded `sk-f4W4rzf0OPTYZOdHR",
     "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"),
    ("- anthropic_api_key = sk-ant-admin01-Pa1\u2026",
     "sk-ant-admin01-Pa16g14N249eLvR3owknXw4K6brQziP9gFAvxDnw64zU7Wx7bvSCc-6HYkaTnCcSnblVxmkBp"),
    ("- $ git remote set-url origin https://oauth2:github_pat_KlfNxQG7mkb1IcMOI6MG59_4T",
     "github_pat_KlfNxQG7mkb1IcMOI6MG59_4Tbam1QMcFLSsWDWXiv7hfiydcVgvFk0lh11hkbLbWYm5YE6Ro5tx"),
    ("- SLACK_TOKEN=xoxp-188112327015-68\u2026",
     "xoxp-188112327015-682669149300-3511814364062-4234d1f7e5de10531bf34e9c112ab2cc"),
    ("- 32-5091720358927-eec8be44a6ec3c316afd2378634d61a0', retries=3",
     "xoxp-1881123270-9091720358932-5091720358927-eec8be44a6ec3c316afd2378634d61a0"),
    ("- v1/charges (token=eyJhbGciOiJIUzI1NiIsInR\u2026)",
     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtYmlsbGluZyJ9.uEiGlZyw39EJOlwFMH8v3I"),
    ("- HF_TOKEN: QGCRkZNqQoHkDYd\u2026", "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"),
    ("- slack_token = bbc41ae9456602\u2026",
     "xoxp-858553781997-110271233466-1258899733978-087bbc41ae9456602fd7d90cea632efd"),
    ("- REDIS_URL=mongodb://billing_svc:XfhruA0)It!o", "XfhruA0)It!o4Rw"),
    ("- 5+ds,zqWCeXRYfm@cache-01.acme.internal:5432/billing' python", "Pq1;5+ds,zqWCeXRYfm"),
    ("- AWS_ACCESS_KEY_ID: QUtJQUxQQkNVQ0JN\u2026", "AKIALPBCUCBMTH3QXRQK"),
    ("- export AWS_ACCESS_KEY_ID=414b4941355150425732334644485043434\u2026",
     "AKIA5QPBW23FDHPCCWSS"),
    ("- -----END RSA PRIVATE KEY---\u2026", "-----END RSA PRIVATE KEY-----"),
    ('- DB_PASSWORD="lLk+N^I\\\u2026"', "lLk+N^I!o2Op"),
])
def test_examples_from_the_evaluation(text, secret):
    assert H.leaked(secret, text)
    out = H.redact(text).text
    assert not H.leaked(secret, out), out


# --------------------------------------------------------------------------- precision


#: The header of the documentation JWT (jwt.io), shared by every HS256 JWT.
DOC_JWT_HEAD = next(d for d in S.DOC_EXAMPLES if d.startswith("eyJ")).split(".")[0] + "."


def _negative_lines(rng, count):
    """Hard negatives whole, quoted cut short (a prefix and an ellipsis) and as a tail."""
    for i in range(count):
        kind = S.NEGATIVE_KINDS[i % len(S.NEGATIVE_KINDS)]
        neg = S.plant_negative(rng, kind)
        text, s, e = neg.parts[0]
        tok = text[s:e]
        k = int(rng.integers(min(8, len(tok)), len(tok) + 1))
        yield kind, f"- {tok}"
        yield kind, f"- {tail}" if (tail := tok[len(tok) - k:]) else f"- {tok}"
        j = tok.find(DOC_JWT_HEAD)
        if not (j >= 0 and k < j + 53):
            # (the documentation JWT cut inside its header or the first 16 characters of
            # its payload reads like any HS256 JWT with a "sub" claim: redacted)
            yield kind, f"- {text[:s]}{tok[:k]}\u2026{text[e:]}"


def test_hard_negatives_whole_and_cut_short_are_untouched():
    hits = [(kind, line, H.scan(line)) for kind, line in
            _negative_lines(np.random.default_rng(77), 2800) if H.scan(line)]
    assert not hits, hits[:5]


def test_hard_negatives_in_summary_bullets_are_untouched():
    rng = np.random.default_rng(78)
    for i in range(1400):
        neg = S.plant_negative(rng, S.NEGATIVE_KINDS[i % len(S.NEGATIVE_KINDS)])
        line = "- " + " ".join(neg.parts[0][0].split())
        assert H.scan(line) == [], line


def test_planted_facts_in_summary_bullets_are_untouched():
    rng = np.random.default_rng(79)
    for i in range(600):
        f = plant_fact(rng, i)
        assert H.scan(f"- {f.text}") == [], f.text


@pytest.mark.parametrize("text", [
    '"id": "toolu_01VzQ2DNRY9oieQdcxz6kpn9"', '"requestId":"req_011CY4K3HXfgRxtBDTKT1WE4"',
    '{"id":"msg_01XnP8V9m3LNbxPnXbuinNKs"}', '"call_id": "call_5iDdbOYybq7L19vqXmR0DPaU"',
    "agent_msg_0184sjfFV1sinxvhH3bAStsb", "msg_bdrk_01BLtx63vrcQg5Lge2x4eJ9C",
    '{\\"x-request-id\\", \\"GJOGAOf-hoLS20MAABCM\\"}', "1768566866671-3a48c2c4de4ca8",
    "sessionId 196820da-1026-4b6f-a513-a6aae42d8e1f", "commit 3f2a9c1e0b7d4a6f9e8d7c6b5a4f3e2d1c0b9a8f",
    "__ZN4Napi7details18ThreadSafeFinalizeIvZNS_18ThreadSafeFunction3NewIPKcvEES2_P10napi_env__",
    "/var/folders/ty/3c7j5qqx5mq5llgxnfd6q2500000gn/T", "src/utils/windows-path.ts programFilesX86",
    "claude-haiku-4-5-20251001 and claude-sonnet-4-5-20250929", "ephemeral_5m_input_tokens",
    "/openhands/poetry/openhands-ai-5O4_aCHf-py3", "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional",
    "- Anthropic keys: `sk-ant-[alphanumeric-_]{95,}`", "patterns: ghp_/gho_/ghu_/ghs_/ghr_ (GitHub), AKIA/ASIA",
    "const apiKey = 'sk-ant-' + 'a'.repeat(95);", "in-app browser to http://localhost:3000 or http://localhost:4000.",
    "Author: Dana Ortiz <dana@acme.dev>", "git@github.com:acme/billing-service.git",
    "npm i @types/node@20.11.5", "SecureContext2 UTF-8assertion 2mPreCompact",
    "frontend-7d4b9c8f6-x2kqp is Running", "sha512-Xy7Qk2Vb9NwLp3TzXy7Qk2Vb9NwLp3Tz",
    "the build id is 20260107-abc123", "https://api.acme.dev/v2/export?cursor=eyJwYWdlIjozfQ",
    "cursor=eyJwYWdlIjoz\u2026 ok", "Running setup for AshSqlite.DataLayer...",
    "export API_TOKEN=sk_live_0000\u2026", "DATABASE_URL=postgres://app:${DB_PASSWORD:-change\u2026@db",
    "token: toHaveBeenCalledTimes", "<REDACTED:secret> and <REDACTED:aws_access_key_id>",
])
def test_ids_identifiers_and_docs_of_real_logs(text):
    assert H.scan(text) == [], H.scan(text)


def _recorded_lines():
    for f in sorted(BUNDLED_LOGS.rglob("*")):
        if f.is_file() and f.name != "SOURCES.md":
            yield from ((f.name, line) for line in f.read_text(encoding="utf-8").splitlines())


def test_recorded_real_logs_have_no_finding():
    hits = [(name, line[:200], H.scan(line)) for name, line in _recorded_lines() if H.scan(line)]
    assert not hits, hits[:3]


# --------------------------------------------------------------------------- idempotence


def test_redacting_probe_lines_is_idempotent(probes):
    for p in probes[::2]:
        once = H.redact(p.text)
        assert H.redact(once.text).text == once.text, p.text
        assert all(0 <= s < e <= len(p.text) for s, e, _ in once.spans)


def test_redacting_split_halves_is_idempotent():
    rng = np.random.default_rng(80)
    for fmt in S.SECRET_FORMATS:
        for ctx in ("prose", "json_tool_result", "shell_export", "env_dump"):
            if not S.compatible(fmt, ctx, "split_messages"):
                continue
            p = S.plant_secret(rng, fmt, ctx, "split_messages")
            once = [r.text for r in H.redact_messages(p.texts)]
            assert [r.text for r in H.redact_messages(once)] == once
            assert not H.leaked(p.value, once)


def test_random_shape_rules():
    assert R.random_shape("huq11DzPqv4ZHmy2xhP96ycvzQNbrP9LkYFRt")
    assert R.random_shape("rhjvfst8k5i3k8r9")
    assert R.random_shape("XVFFIMEALCG7GMN2Q")
    assert not R.random_shape("toHaveBeenCalledTimes2")
    assert not R.random_shape("toolu_01VzQ2DNRY9oieQdcxz6kpn9")
    assert not R.random_shape("3f2a9c1e0b7d4a6f9e8d")  # hex
    assert not R.random_shape("HgKPYaftLyjaNa")  # letters only: needs a keyword
    assert R.random_shape("HgKPYaftLyjaNa", loose=True)


def test_split_value_written_in_a_code_fence():
    """A summary writes a value that was split across lines in a fence of its own."""
    pw = "- locals: user='app', password='\n```\nEmberjunip\ner#4204\n```\n'\n- next"
    url = "- export BROKER_URL=postgres://billing_svc:\n```\nlx$,PfEW\n1tkP\n```\n@db.internal/x"
    for text, value in ((pw, "Emberjuniper#4204"), (url, "lx$,PfEW1tkP")):
        assert H.leaked(value, text)
        assert not H.leaked(value, H.redact(text).text)
    for text in ("password:\n```\nos.environ['DB_PASSWORD']\n```\n",
                 "Set the password:\n```\nchangeme\n```\n", "see\n```\nclass Foo:\n    pass\n```\n"):
        assert H.scan(text) == [], text
