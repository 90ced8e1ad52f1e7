"""The planting library: shapes per secret-formats.md, spans, transforms, determinism."""

from __future__ import annotations

import base64
import json
import re
import unicodedata
import urllib.parse

import numpy as np
import pytest

from workbench.synth import secrets as S
from workbench.synth.secrets.slots import SCHEMES, slot_line
from workbench.synth.secrets.transforms import _WRAPPERS

EXPECTED_FORMATS = {
    "aws_access_key_id", "aws_secret_key", "github_classic", "github_fine_grained", "gitlab_pat",
    "openai_project", "openai_legacy", "anthropic_api", "slack_token", "stripe_key",
    "google_api_key", "jwt", "pem_private_key", "huggingface", "npm", "sendgrid",
    "url_credentials", "password_in_prose",
    # command lines and HTTP headers (slots.py)
    "http_authorization", "api_key_header", "cli_password",
}

# exact total lengths from the table (a set where the table allows alternatives)
LENGTHS = {
    "aws_access_key_id": {20}, "aws_secret_key": {40}, "github_classic": {40},
    "github_fine_grained": {93}, "gitlab_pat": {26}, "openai_legacy": {51},
    "anthropic_api": {108, 110}, "stripe_key": {32, 107}, "google_api_key": {39},
    "huggingface": {37}, "npm": {40}, "sendgrid": {69},
}


def _b64url_json(seg: str):
    return json.loads(base64.urlsafe_b64decode(seg + "=" * (-len(seg) % 4)))


def test_registry_covers_every_row_of_the_table():
    assert set(S.FORMATS) == EXPECTED_FORMATS
    assert set(S.SECRET_FORMATS) == EXPECTED_FORMATS
    assert set(S.FORMAT_REGEX) == EXPECTED_FORMATS


@pytest.mark.parametrize("fmt", sorted(EXPECTED_FORMATS))
def test_shapes_per_format(fmt):
    for seed in range(40):
        raw = S.FORMATS[fmt](np.random.default_rng(seed))
        assert re.fullmatch(S.FORMAT_REGEX[fmt], raw), (fmt, raw)
        if fmt in LENGTHS:
            assert len(raw) in LENGTHS[fmt], (fmt, raw)
        if fmt == "openai_project":
            assert 132 <= len(raw) <= 164
            assert "T3BlbkFJ" in raw[20:-20]
        elif fmt == "anthropic_api":
            assert len(raw) == (108 if raw.startswith("sk-ant-api03-") else 110)
        elif fmt == "slack_token":
            assert (50 <= len(raw) <= 60) if raw.startswith("xoxb-") else (70 <= len(raw) <= 80)
        elif fmt == "jwt":
            h, p, sig = raw.split(".")
            assert _b64url_json(h)["typ"] == "JWT" and "sub" in _b64url_json(p)
            assert len(sig) >= 43
        elif fmt == "pem_private_key":
            lines = raw.split("\n")
            assert lines[0].startswith("-----BEGIN ") and lines[-1].startswith("-----END ")
            base64.b64decode("".join(lines[1:-1]), validate=True)
        elif fmt == "url_credentials":
            s, e = S.secret_span(fmt, raw)
            pw = raw[s:e]
            assert raw[s - 1] == ":" and raw[e] == "@" and len(pw) >= 12
            assert re.fullmatch(r"(?:[A-Za-z0-9!$&'()*+,;=]|%[0-9A-F]{2})+", pw)
        elif fmt == "password_in_prose":
            assert len(raw) >= 10 and raw[-1].isalnum() and any(c.isdigit() for c in raw)
        elif fmt == "aws_secret_key":
            assert any(c.isdigit() for c in raw)
        elif fmt == "http_authorization":
            s, e = S.secret_span(fmt, raw)
            scheme, cred = raw[:s].split(" ", 1)[0], raw[s:e]
            assert scheme in SCHEMES and len(cred) >= 16 and " " not in cred
            if scheme == "Basic":
                user, pw = base64.b64decode(cred).decode().split(":", 1)
                assert user and re.fullmatch(S.FORMAT_REGEX["cli_password"], pw)
            elif scheme in ("Digest", "AWS4-HMAC-SHA256"):
                assert re.fullmatch(r"[0-9a-f]{32}|[0-9a-f]{64}", cred)
        elif fmt == "cli_password":
            assert raw[0].isalnum() and raw[-1].isalnum() and any(c.isdigit() for c in raw)
            assert any(c.isupper() for c in raw) and any(c.islower() for c in raw)


def test_generators_are_deterministic_and_vary():
    for fmt, gen in S.FORMATS.items():
        a = [gen(np.random.default_rng(11)) for _ in range(2)]
        assert a[0] == a[1], fmt
        assert len({gen(np.random.default_rng(s)) for s in range(12)}) >= 10, fmt


def _unescape(p: S.PlantedSecret, surface: str) -> str:
    return S.json_unescape(surface) if p.escaped else surface


_INVERSE = {g: latin for latin, gs in S.HOMOGLYPHS.items() for g in gs}


def _check_planted(p: S.PlantedSecret) -> None:
    surfaces = [_unescape(p, t[s:e]) for t, s, e in p.parts]
    v, carrier = p.value, p.carrier
    tr = p.transform
    assert len(p.parts) == (2 if tr == "split_messages" else 1)
    if tr == "none":
        assert surfaces[0] == v
    elif tr == "split_messages":
        assert surfaces[0] + surfaces[1] == v and surfaces[0] and surfaces[1]
        t0, s0, e0 = p.parts[0]
        assert e0 == len(t0), "part one ends its message"
        assert p.parts[1][1] == 0, "part two starts its message"
    elif tr == "split_lines":
        sf = surfaces[0]
        assert len(sf) == len(v) + 1
        assert any(sf == v[:k] + "\n" + v[k:] for k in range(1, len(v)))
    elif tr == "base64":
        assert base64.b64decode(surfaces[0]).decode() == carrier
    elif tr == "hex":
        assert bytes.fromhex(surfaces[0]).decode() == carrier
    elif tr == "percent":
        assert urllib.parse.unquote(surfaces[0]) == carrier
        assert surfaces[0].count("%") >= len(carrier) // 2
    elif tr == "unicode_escape":
        assert surfaces[0].encode().decode("unicode_escape") == carrier
    elif tr == "zero_width":
        assert surfaces[0] != v
        assert "".join(c for c in surfaces[0] if c not in S.ZERO_WIDTH) == v
    elif tr == "homoglyph":
        assert surfaces[0] != v and not surfaces[0].isascii()
        assert "".join(_INVERSE.get(c, c) for c in surfaces[0]) == v
    elif tr == "fullwidth":
        assert unicodedata.normalize("NFKC", surfaces[0]) == v
    elif tr == "wrap_punct":
        assert surfaces[0] == v
        t, s, e = p.parts[0]
        if p.kind != "url_credentials":
            assert (t[s - 1], t[e]) in _WRAPPERS or (t[s - 2:s], t[e:e + 2]) in (('\\"', '\\"'),)
    elif tr == "placeholder_marker":
        t, s, e = p.parts[0]
        if p.variant == "byok":
            assert surfaces[0] == v
            assert "[BYOK:" in t[:s]
        else:
            assert p.variant == "redacted_tail"
            assert v.endswith(surfaces[0]) and 0.35 * len(v) <= len(surfaces[0]) <= 0.65 * len(v) + 1
            assert t[:s].endswith(f"<REDACTED:{p.kind}>")
    else:  # pragma: no cover
        raise AssertionError(tr)


def test_every_compatible_combination_plants_correctly():
    combos = S.compatible_combinations()
    assert len(combos) > 2000
    rng = np.random.default_rng(2026)
    for combo in combos:
        p = S.plant_secret(rng, *combo)
        assert (p.kind, p.context, p.transform) == combo
        assert not p.negative
        _check_planted(p)


def test_transforms_seen_with_both_placeholder_variants():
    variants = {S.plant_secret(np.random.default_rng(i), "github_classic", "prose",
                               "placeholder_marker").variant for i in range(20)}
    assert variants == {"byok", "redacted_tail"}


def test_url_credentials_value_is_the_password():
    p = S.plant_secret(np.random.default_rng(4), "url_credentials", "env_dump", "none")
    t, s, e = p.parts[0]
    assert "://" in p.carrier and p.carrier.index(p.value) > p.carrier.index("://")
    assert t[s - 1] == ":" and t[e] == "@"


def test_determinism_of_plants():
    combos = S.compatible_combinations()[::37]
    a = [S.plant_secret(np.random.default_rng(99), *c) for c in combos]
    b = [S.plant_secret(np.random.default_rng(99), *c) for c in combos]
    assert a == b
    rng1, rng2 = np.random.default_rng(5), np.random.default_rng(5)
    seq1 = [S.plant_secret(rng1, *c) for c in combos]
    seq2 = [S.plant_secret(rng2, *c) for c in combos]
    assert seq1 == seq2
    c = [S.plant_secret(np.random.default_rng(100), *c) for c in combos]
    assert sum(x.value != y.value for x, y in zip(a, c, strict=True)) > 0.9 * len(a)


def test_incompatible_combinations_raise():
    assert not S.compatible("pem_private_key", "curl_bearer", "none")
    assert not S.compatible("github_classic", "url_query", "wrap_punct")
    assert not S.compatible("nope", "prose", "none")
    with pytest.raises(ValueError):
        S.plant_secret(np.random.default_rng(0), "pem_private_key", "url_query", "none")
    for (f, c), why in S.INCOMPATIBLE_FORMAT_CONTEXT.items():
        assert f in S.FORMATS and c in S.CONTEXTS and why
    for (c, t), why in S.INCOMPATIBLE_CONTEXT_TRANSFORM.items():
        assert c in S.CONTEXTS and t in S.TRANSFORMS and why


def test_json_contexts_stay_valid_json():
    for fmt in S.SECRET_FORMATS:
        for ctx in ("json_tool_call", "json_tool_result"):
            if not S.compatible(fmt, ctx, "none"):
                continue
            p = S.plant_secret(np.random.default_rng(1), fmt, ctx, "none")
            obj = json.loads(p.parts[0][0])
            assert p.value in json.dumps(obj, ensure_ascii=False) or p.escaped


def test_homoglyph_table_is_cyrillic_or_greek():
    for latin, glyphs in S.HOMOGLYPHS.items():
        assert latin.isascii() and latin.isalpha()
        for g in glyphs:
            assert unicodedata.name(g).split()[0] in ("CYRILLIC", "GREEK"), g


@pytest.mark.parametrize("kind", S.NEGATIVE_KINDS)
def test_negatives(kind):
    seen = set()
    for seed in range(15):
        n = S.plant_negative(np.random.default_rng(seed), kind)
        assert n.negative and n.kind == kind
        t, s, e = n.parts[0]
        assert t[s:e] == n.value
        assert n == S.plant_negative(np.random.default_rng(seed), kind)
        seen.add(n.value)
    assert len(seen) >= 2


def test_negative_shapes():
    rng = np.random.default_rng(3)
    assert re.fullmatch(r"[0-9a-f]{40}", S.plant_negative(rng, "git_sha").value)
    assert re.fullmatch(r"[0-9a-f]{64}", S.plant_negative(rng, "sha256").value)
    assert re.fullmatch(r"[0-9a-f]{128}", S.plant_negative(rng, "sha512").value)
    assert re.fullmatch(r"sha512-[A-Za-z0-9+/]{86}==", S.plant_negative(rng, "npm_integrity").value)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                        S.plant_negative(rng, "uuid").value)
    b = S.plant_negative(rng, "base64_text").value
    assert base64.b64decode(b).decode().isprintable() or "\n" in base64.b64decode(b).decode()
    with pytest.raises(ValueError):
        S.plant_negative(rng, "nope")


def test_every_scheme_and_header_shape_is_drawn():
    rng = np.random.default_rng(0)
    raws = [S.FORMATS["http_authorization"](rng) for _ in range(400)]
    assert {r.split(" ", 1)[0] for r in raws} == set(SCHEMES)
    keys = [S.FORMATS["api_key_header"](rng) for _ in range(200)]
    assert any(re.fullmatch(r"[0-9a-f]{32}", k) for k in keys)
    assert any(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", k)
               for k in keys)


@pytest.mark.parametrize("form", [
    "curl -u ", "--user '", "mysql -h", "mysqldump -u root -p'", "mariadb -u", "sshpass -p '",
    "sshpass -p {S} scp", "PGPASSWORD={S} psql", "export PGPASSWORD=", "MYSQL_PWD={S} mysql",
    "docker login -u", "--password {S}", "podman login", "git clone https://", "git push https://",
    "redis-cli -h", "wget --user=", "http -a", "SSHPASS='{S}' sshpass -e",
])
def test_command_line_forms_of_the_brief_are_planted(form):
    """Every command-line form of issue 15 is among the generated cli_password lines."""
    lines = {slot_line(np.random.default_rng(i), "cli_password", "x") for i in range(400)}
    assert any(form in line for line in lines), form


def test_slot_contexts_put_the_secret_in_a_flag_or_header():
    rng = np.random.default_rng(8)
    for fmt in ("http_authorization", "api_key_header", "cli_password", "github_classic"):
        for ctx in ("shell_command", "http_request", "json_headers", "python_headers"):
            if not S.compatible(fmt, ctx, "none"):
                assert fmt == "cli_password" and ctx != "shell_command"
                continue
            p = S.plant_secret(rng, fmt, ctx, "none")
            text = p.parts[0][0]
            assert p.value in text and ("Authorization" in text or "-" in text), text
            if ctx == "json_headers":
                assert '"headers"' in text and json.loads(text)
