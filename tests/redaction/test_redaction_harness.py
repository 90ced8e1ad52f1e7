"""The redaction harness: recall on every planted combination, zero false positives on
hard negatives, boundaries, markers, idempotence."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.redaction import harness as H
from workbench.redaction import rules as R
from workbench.synth import secrets as S
from workbench.synth.facts import FACT_KINDS, plant_fact
from workbench.synth.secrets import negatives as NEG

GH = "ghp_" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b"
AWS_ID = "AKIAQ7WE9RT2YU4IO6PA"
AWS_SECRET = "Kd90Ahoan4N1Xa36Klr+xnQEEvQ7wE9rT2yU4i/O"


def _overlaps(spans, start, end) -> bool:
    return any(s < end and start < e for s, e, _ in spans)


# --------------------------------------------------------------------------- recall


@pytest.mark.parametrize("seed", [11, 12])
def test_every_compatible_combination_is_fully_redacted(seed):
    """(format x context x transform): found at the planted span and no fragment survives
    (>= 12 chars or >= 50%), in the text or its normalised / decoded / line-joined views."""
    rng = np.random.default_rng(seed)
    failures = []
    for combo in S.compatible_combinations():
        p = S.plant_secret(rng, *combo)
        results = H.redact_messages(p.texts)
        for (_, start, end), res in zip(p.parts, results, strict=True):
            if not _overlaps(res.spans, start, end):
                failures.append((combo, "not found", p.texts))
        frag = H.surviving_fragment(p.value, [r.text for r in results])
        if frag is not None:
            failures.append((combo, f"leaked {frag!r}", [r.text for r in results]))
    assert not failures, failures[:5]


def test_split_messages_junction_names_the_format():
    p = S.plant_secret(np.random.default_rng(3), "aws_secret_key", "prose", "split_messages")
    alone = [H.redact(t) for t in p.texts]
    # each half alone is caught as a random piece, without knowing what it is a piece of
    assert not H.leaked(p.value, [r.text for r in alone])
    assert all(r.kinds == ("secret",) for r in alone)
    joined = [r.text for r in H.redact_messages(p.texts)]
    assert not H.leaked(p.value, joined)
    assert all("<REDACTED:aws_secret_key>" in t for t in joined)


def test_split_messages_needs_the_junction_for_short_halves():
    """A half too short for a random piece on its own (here 9 of a prefix-less key's 40
    characters ... plus the 31 on the other side) is found through the junction."""
    value = AWS_SECRET
    a, b = f"the key is {value[:9]}", f"{value[9:]} and more"
    assert H.redact(a).text == a  # 9 characters alone: nothing to go on
    out = [r.text for r in H.redact_messages([a, b])]
    assert out == ["the key is <REDACTED:aws_secret_key>", "<REDACTED:aws_secret_key> and more"]


# --------------------------------------------------------------------------- precision


def test_zero_false_positives_on_hard_negatives():
    rng = np.random.default_rng(2024)
    hits = []
    for i in range(3500):
        kind = S.NEGATIVE_KINDS[i % len(S.NEGATIVE_KINDS)]
        p = S.plant_negative(rng, kind)
        found = H.scan(p.parts[0][0])
        if found:
            hits.append((kind, p.parts[0][0], found))
    assert not hits, hits[:5]


def test_negatives_survive_inside_planted_texts_and_messages():
    rng = np.random.default_rng(5)
    for i in range(300):
        neg = S.plant_negative(rng, S.NEGATIVE_KINDS[i % len(S.NEGATIVE_KINDS)])
        sec = S.plant_secret(rng, "github_classic", "prose", "none")
        texts = [neg.parts[0][0], sec.parts[0][0], neg.parts[0][0]]
        out = H.redact_messages(texts)
        assert out[0].text == texts[0] and out[2].text == texts[2]
        assert not H.leaked(sec.value, [r.text for r in out])


def test_planted_facts_are_never_redacted():
    rng = np.random.default_rng(9)
    for i in range(400):
        f = plant_fact(rng, i)
        assert H.redact(f.text).text == f.text, f.text
    assert len(FACT_KINDS) >= 8


def test_documentation_examples_and_placeholders():
    for ex in S.DOC_EXAMPLES:
        assert H.scan(f"example: {ex}.") == [], ex
    for ph in NEG._PLACEHOLDERS + NEG._TEMPLATES:
        assert H.scan(f"TOKEN={ph}\n") == [], ph
    assert H.scan("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") == []
    assert H.scan("password: ${DB_PASSWORD}\npassword = os.environ['DB_PASSWORD']") == []
    assert H.scan("postgres://user:password@localhost/db and postgres://app:${PW}@db") == []


# --------------------------------------------------------------------------- boundaries


@pytest.mark.parametrize("after", [".", ",", ")", "]", ">", '"', "'", "`", "", "\n", "\\n"])
@pytest.mark.parametrize("before", ["", " ", "(", "[", "<", '"', "'", "`", "=", ":", "\\n"])
def test_boundaries(before, after):
    for secret, kind in ((GH, "github_classic"), (AWS_ID, "aws_access_key_id"),
                         (AWS_SECRET, "aws_secret_key")):
        text = f"x {before}{secret}{after} y"
        start = text.index(secret)
        assert H.scan(text) == [(start, start + len(secret), kind)], text


def test_glued_to_letters_is_not_a_token():
    assert H.scan("xAKIAQ7WE9RT2YU4IO6PA") == []
    assert H.scan(AWS_ID + "Z") == []


def test_jwt_covers_all_three_segments():
    raw = S.gen_jwt(np.random.default_rng(1))
    text = f"Authorization: Bearer {raw}."
    s = text.index(raw)
    assert H.scan(text) == [(s, s + len(raw), "jwt")]
    header_payload = raw.rsplit(".", 1)[0]
    assert H.scan(f"token {header_payload} end")[0][2] == "jwt"


def test_pem_whole_block_truncated_block_and_tail():
    pem = S.gen_pem_private_key(np.random.default_rng(2))
    text = f"key:\n{pem}\nthanks"
    s = text.index(pem)
    assert H.scan(text) == [(s, s + len(pem), "pem_private_key")]
    half = pem[: len(pem) // 2]
    assert H.scan(half)[0][:2] == (0, len(half))
    tail = pem[len(pem) // 2:]
    text = "rest: " + tail
    found = H.scan(text)
    assert found and found[0][1] == len(text) and found[0][0] <= 6 + tail.index("\n") + 1
    public = S.plant_negative(np.random.default_rng(2), "public_key_block").parts[0][0]
    assert H.scan(public) == []


def test_url_credentials_only_the_password():
    text = "DATABASE_URL=postgres://billing_svc:Xy7$k;Q(9)p%40z@db-prod-3.internal:5432/billing"
    s = text.index("Xy7")
    assert H.scan(text) == [(s, text.index("@db"), "url_credentials")]
    assert H.redact(text).text == ("DATABASE_URL=postgres://billing_svc:<REDACTED:url_credentials>"
                                   "@db-prod-3.internal:5432/billing")


@pytest.mark.parametrize("phrase", [
    "the staging database password is {v}.", "password: {v}", "DB_PASSWORD={v}\n",
    '"password": "{v}"', "PGPASSWORD='{v}' psql", "--password={v} --user x",
    "the admin password for billing was set to {v}, sorry", "password='{v}')",
])
def test_password_in_prose_value_only(phrase):
    v = "Velvet-harbor#4821"
    text = phrase.format(v=v)
    s = text.index(v)
    assert H.scan(text) == [(s, s + len(v), "password_in_prose")]


@pytest.mark.parametrize("text", [
    "Rotate the password every 90 days.", "password: required (min 12 chars)",
    "password = getpass.getpass()", "if password is None:", "self.password = password",
    "the password is stored in Vault", "password_hash: bcrypt", "--password-file /run/secrets/pw",
    "password: <your-password>", "bypass: Xy12#abcdQ", "password is 'hunter2'",
])
def test_password_negatives(text):
    assert H.scan(text) == []


@pytest.mark.parametrize("text,kind", [
    ("the token ghp_Q7wE9rT2yU4iO6pA\u2026 was revoked", "github_classic"),
    ("key AKIAQ7WE9RT2... (truncated)", "aws_access_key_id"),
    ("Credential seen in event 12 (github classic): Q7wE9rT2yU4iO6pA8sD\u2026", "secret"),
    ("API_TOKEN=Zq8xR2mN4vB7kL1pW9sT\n", "secret"),
    ('{"client_secret": "Zq8xR2mN4vB7kL1pW9sT"}', "secret"),
    ("curl -H 'Authorization: Bearer Zq8xR2mN4vB7kL1pW9sT' https://x", "http_authorization"),
])
def test_fragments_and_generic_credentials(text, kind):
    found = H.scan(text)
    assert [k for _, _, k in found] == [kind], found


@pytest.mark.parametrize("text", [
    "commit 3f2a9c1e0b7d4a6f\u2026 merged", "sessionId 196820da-1026-4b6f-a513-a6aae42d\u2026",
    "Running setup for AshSqlite.DataLayer...", "wait for it... and etc...",
    '"input_tokens": 12345, "output_tokens": 99', "max_tokens=4096", "Bearer ${TOKEN}",
    "client_secret: abc", "token: ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "Fallback secret: AES-256-CBC encrypted files", "the token expired at 2026-03-14T09:12:44Z",
    "SECRET_KEY = os.environ['SECRET_KEY']", "token = request.headers.get('X-Token')",
])
def test_fragment_and_generic_negatives(text):
    assert H.scan(text) == []


# --------------------------------------------------------------------------- markers


def test_markers_are_never_reflagged():
    for kind in ("aws_access_key_id", "github_classic", "marker_leak", "jwt"):
        for text in (f"key {H.marker(kind)} here", f"x={H.marker(kind)}.", H.marker(kind)):
            assert H.scan(text) == []


def test_marker_followed_by_a_raw_tail():
    tail = GH[-18:]
    text = f"token {H.marker('github_classic')}{tail}, then"
    r = H.redact(text)
    assert r.text == "token <REDACTED:github_classic>, then"
    assert r.spans == ((6, 6 + len(H.marker("github_classic")) + len(tail), "github_classic"),)


def test_byok_marker_leak():
    r = H.redact(f"use [BYOK:{GH}] for CI")
    assert r.text == "use <REDACTED:marker_leak> for CI"
    assert H.scan("[BYOK:openai] and [BYOK:anthropic-prod]") == []
    assert H.redact("[BYOK:Xq7-Rk2Vb9!NwLp3]").kinds == ("marker_leak",)


# --------------------------------------------------------------------------- decoding


@pytest.mark.parametrize("encode", [
    lambda s: base64.b64encode(s.encode()).decode(),
    lambda s: s.encode().hex(),
    lambda s: "".join(f"%{ord(c):02x}" for c in s),
    S.unicode_escape,
])
def test_encoded_secret_maps_to_the_encoded_run(encode):
    enc = encode(GH)
    text = f"blob: {enc} end"
    s = text.index(enc)
    assert H.scan(text) == [(s, s + len(enc), "github_classic")]


def test_base64_of_harmless_text_is_not_redacted():
    b = base64.b64encode(b"Hello from the staging cluster, all green!").decode()
    assert H.scan(f"message: {b}") == []


# --------------------------------------------------------------------------- idempotence

_SAMPLES = [GH, AWS_ID, AWS_SECRET, "Velvet-harbor#4821", S.gen_jwt(np.random.default_rng(0)),
            "postgres://app:Xy7$k;Q9p@db:5432/x", S.gen_pem_private_key(np.random.default_rng(0))]
_CHUNKS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(_SAMPLES),
    st.sampled_from([s[: len(s) // 2] for s in _SAMPLES] + [s[len(s) // 2:] for s in _SAMPLES]),
    st.sampled_from(["Kd90Ahoan4N1Xa36", "rhjvfst8k5i3k8r9", "AKIAQ7WE9RT2", "ghp_Q7wE9rT2yU4i",
                     "\u2026", "...", "- ", "https://x-access-token:", "@db.internal:5432/",
                     "-----END RSA PRIVATE KEY---", "AWS_ACCESS_KEY_ID=", "hf_token: ",
                     "toolu_01VzQ2DNRY9oieQdcxz6kpn9", "==", "sk-ant-api03-", "SG.uvqeb4Zj"]),
    st.sampled_from(["<REDACTED:github_classic>", "<REDACTED:", "[BYOK:", "]", "password is ",
                     "password: ", "\n", "\\n", "\u200b", "%41%4B", "\\u0041", " ", ".", "=",
                     "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "://",
                     "@", ":", "'", '"', "а", "Ａ"]),
)


@settings(max_examples=250, deadline=None)
@given(st.lists(_CHUNKS, max_size=10).map("".join))
def test_redact_is_idempotent(text):
    once = H.redact(text)
    assert H.redact(once.text).text == once.text
    spans = once.spans
    assert all(0 <= s < e <= len(text) for s, e, _ in spans)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))


@settings(max_examples=120, deadline=None)
@given(st.lists(st.lists(_CHUNKS, max_size=5).map("".join), min_size=1, max_size=4))
def test_redact_messages_is_idempotent(texts):
    once = [r.text for r in H.redact_messages(texts)]
    assert [r.text for r in H.redact_messages(once)] == once


def test_rules_helpers():
    assert R.is_placeholder("x" * 36) and R.is_placeholder("abcdefghijklmnopqrstuvwxyz0123")
    assert not R.is_placeholder(GH[4:])
    assert R.is_wordy("AbstractSingletonProxyFactoryBean") and not R.is_wordy(GH[4:])
    assert R.secretish("Xq7-Rk2Vb9!NwLp3") and not R.secretish("anthropic-prod")
