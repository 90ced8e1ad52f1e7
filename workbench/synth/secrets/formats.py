"""Secret formats: one generator per row of ``secret-formats.md`` (exact prefixes,
lengths and charsets; never a real key), their shapes (:data:`FORMAT_REGEX`) and which slice
of a generated string is the secret proper (:func:`secret_span`).

>>> import numpy as np
>>> gen_github_classic(np.random.default_rng(1))[:4] in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
True
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from workbench.synth.secrets.draw import (
    ALNUM,
    B32,
    B64,
    DIGITS,
    HEX,
    LOWER,
    UPPER,
    WORD_DASH,
    Rng,
    _b64url,
    _classes,
    _draw,
    _pick,
    _plausibly_random,
    _rand,
    _rand_bytes,
)

# --------------------------------------------------------------------------- formats


def gen_aws_access_key_id(rng: Rng) -> str:
    prefix = _pick(rng, ("AKIA", "AKIA", "AKIA", "ASIA", "ABIA", "ACCA"))
    return prefix + _draw(rng, lambda: _rand(rng, B32, 16))


def gen_aws_secret_key(rng: Rng) -> str:
    # [A-Za-z0-9/+]{40}; drawn until it has the mix real keys have (digit, 3+ upper/lower)
    def ok(s):
        return (_plausibly_random(s) and sum(c.isdigit() for c in s) >= 1
                and sum(c.isupper() for c in s) >= 3 and sum(c.islower() for c in s) >= 3)

    return _draw(rng, lambda: _rand(rng, B64, 40), ok)


def gen_github_classic(rng: Rng) -> str:
    prefix = _pick(rng, ("ghp_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"))
    return prefix + _draw(rng, lambda: _rand(rng, ALNUM, 36))


def gen_github_fine_grained(rng: Rng) -> str:
    return ("github_pat_" + _draw(rng, lambda: _rand(rng, ALNUM, 22)) + "_"
            + _draw(rng, lambda: _rand(rng, ALNUM, 59)))


def gen_gitlab_pat(rng: Rng) -> str:
    return "glpat-" + _draw(rng, lambda: _rand(rng, ALNUM, 1) + _rand(rng, WORD_DASH, 18)
                            + _rand(rng, ALNUM, 1))


def gen_openai_project(rng: Rng) -> str:
    prefix = _pick(rng, ("sk-proj-", "sk-proj-", "sk-svcacct-", "sk-admin-"))
    total = int(rng.integers(132, 165))
    rest = total - len(prefix) - 8
    left = rest // 2
    right = rest - left

    def body(n):
        return _rand(rng, ALNUM, 1) + _rand(rng, WORD_DASH, n - 2) + _rand(rng, ALNUM, 1)

    return prefix + _draw(rng, lambda: body(left)) + "T3BlbkFJ" + _draw(rng, lambda: body(right))


def gen_openai_legacy(rng: Rng) -> str:
    return ("sk-" + _draw(rng, lambda: _rand(rng, ALNUM, 20)) + "T3BlbkFJ"
            + _draw(rng, lambda: _rand(rng, ALNUM, 20)))


def gen_anthropic_api(rng: Rng) -> str:
    prefix = _pick(rng, ("sk-ant-api03-", "sk-ant-api03-", "sk-ant-admin01-"))
    body = _draw(rng, lambda: _rand(rng, ALNUM, 1) + _rand(rng, WORD_DASH, 92))
    return prefix + body + "AA"


def gen_slack_token(rng: Rng) -> str:
    if rng.random() < 0.5:  # bot: xoxb-<team>-<bot>-<24>  (~55-57)
        return (f"xoxb-{_rand(rng, DIGITS[1:], 1)}{_rand(rng, DIGITS, 11)}-"
                f"{_rand(rng, DIGITS[1:], 1)}{_rand(rng, DIGITS, 12)}-"
                + _draw(rng, lambda: _rand(rng, ALNUM, 24)))
    # user: xoxp-<team>-<user>-<app>-<32 hex>  (~75-77)
    return (f"xoxp-{_rand(rng, DIGITS[1:], 1)}{_rand(rng, DIGITS, 11)}-"
            f"{_rand(rng, DIGITS[1:], 1)}{_rand(rng, DIGITS, 11)}-"
            f"{_rand(rng, DIGITS[1:], 1)}{_rand(rng, DIGITS, 12)}-"
            + _draw(rng, lambda: _rand(rng, HEX, 32)))


def gen_stripe_key(rng: Rng) -> str:
    prefix = _pick(rng, ("sk_live_", "sk_live_", "sk_test_", "rk_live_"))
    n = 24 if rng.random() < 0.5 else 99
    return prefix + _draw(rng, lambda: _rand(rng, ALNUM, n))


def gen_google_api_key(rng: Rng) -> str:
    return "AIza" + _draw(rng, lambda: "Sy" + _rand(rng, WORD_DASH, 32) + _rand(rng, ALNUM, 1))


_JWT_SUBS = ("user_8812", "svc-billing", "alice@acme.io", "4f1c2d", "deploy-bot", "u-20931")
_JWT_ROLES = ("admin", "reader", "service", "editor")


def gen_jwt(rng: Rng) -> str:
    alg = _pick(rng, ("HS256", "HS256", "RS256", "ES256"))
    header = {"alg": alg, "typ": "JWT"}
    if alg != "HS256":
        header["kid"] = _rand(rng, ALNUM, 16)
    iat = 1767225600 + int(rng.integers(0, 30_000_000))
    payload = {"sub": _pick(rng, _JWT_SUBS), "role": _pick(rng, _JWT_ROLES), "iat": iat,
               "exp": iat + int(_pick(rng, (900, 3600, 86400))),
               "jti": _rand(rng, HEX, 12)}
    sig_len = {"HS256": 32, "RS256": 256, "ES256": 64}[alg]
    seg = [_b64url(json.dumps(header, separators=(",", ":")).encode()),
           _b64url(json.dumps(payload, separators=(",", ":")).encode()),
           _b64url(_rand_bytes(rng, sig_len))]
    return ".".join(seg)


def gen_pem_private_key(rng: Rng) -> str:
    label, width = _pick(rng, (("RSA PRIVATE KEY", 64), ("PRIVATE KEY", 64),
                               ("EC PRIVATE KEY", 64), ("OPENSSH PRIVATE KEY", 70)))
    if label == "OPENSSH PRIVATE KEY":
        der = b"openssh-key-v1\x00" + _rand_bytes(rng, int(rng.integers(230, 400)))
    elif label == "EC PRIVATE KEY":
        der = b"\x30\x77\x02\x01\x01\x04\x20" + _rand_bytes(rng, 114)
    else:
        n = int(rng.integers(300, 700))
        der = b"\x30\x82" + n.to_bytes(2, "big") + b"\x02\x01\x00" + _rand_bytes(rng, n)
    body = base64.b64encode(der).decode()
    lines = [body[i:i + width] for i in range(0, len(body), width)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def gen_huggingface(rng: Rng) -> str:
    return "hf_" + _draw(rng, lambda: _rand(rng, UPPER + LOWER, 34))


def gen_npm(rng: Rng) -> str:
    return "npm_" + _draw(rng, lambda: _rand(rng, LOWER + DIGITS, 36))


def gen_sendgrid(rng: Rng) -> str:
    return ("SG." + _draw(rng, lambda: _rand(rng, ALNUM, 1) + _rand(rng, WORD_DASH, 20)
                          + _rand(rng, ALNUM, 1))
            + "." + _draw(rng, lambda: _rand(rng, ALNUM, 1) + _rand(rng, WORD_DASH, 41)
                          + _rand(rng, ALNUM, 1)))


_URL_USERS = ("app", "billing_svc", "deploy", "admin", "etl_reader", "grafana", "ci-runner",
              "replicator", "analytics")
_URL_HOSTS = ("db-prod-3.internal.acme.io", "10.4.2.17", "pg.staging.acme.dev",
              "billing-db.cluster-c8x2.eu-west-1.rds.amazonaws.com", "cache-01.acme.internal",
              "mq.acme.internal", "mongo-a.acme.net", "warehouse.corp.example.net")
_URL_SCHEMES = (("postgres", 5432, "/billing"), ("postgresql", 5432, "/app_production"),
                ("postgres", 6432, "/ledger"), ("mysql", 3306, "/orders"),
                ("redis", 6379, "/0"), ("amqp", 5672, "/prod"),
                ("mongodb", 27017, "/events?authSource=admin"), ("https", None, "/api/v2/"))
_URL_SUBDELIMS = "!$&'()*+,;="


def _url_password(rng: Rng) -> str:
    """12-24 chars: letters, digits, RFC 3986 sub-delims and sometimes a %XX escape."""
    def make():
        n = int(rng.integers(12, 25))
        chars = [_pick(rng, ALNUM) if rng.random() < 0.8 else _pick(rng, _URL_SUBDELIMS)
                 for _ in range(n)]
        chars[0] = _pick(rng, ALNUM)
        chars[-1] = _pick(rng, ALNUM)
        pw = "".join(chars)
        if rng.random() < 0.4:
            k = int(rng.integers(1, n - 1))
            pw = pw[:k] + _pick(rng, ("%40", "%2F", "%3A", "%23", "%25")) + pw[k:]
        return pw

    def ok(pw):
        return (_plausibly_random(pw) and any(c.isdigit() for c in pw)
                and any(c.isupper() for c in pw) and any(c.islower() for c in pw)
                and any(c in _URL_SUBDELIMS or c == "%" for c in pw))

    return _draw(rng, make, ok)


def gen_url_credentials(rng: Rng) -> str:
    scheme, port, path = _pick(rng, _URL_SCHEMES)
    host = _pick(rng, _URL_HOSTS)
    hostport = f"{host}:{port}" if port else host
    return f"{scheme}://{_pick(rng, _URL_USERS)}:{_url_password(rng)}@{hostport}{path}"


_PW_WORDS = ("Velvet", "Harbor", "Copper", "Falcon", "Meadow", "Granite", "Orbit", "Saffron",
             "Tundra", "Lantern", "Quartz", "Willow", "Ember", "Nimbus", "Cobalt", "Juniper")
_PW_SYMBOLS = "!#*+-_~@^"


def gen_password_in_prose(rng: Rng) -> str:
    """A human-ish password: words+digits+symbol, or a random 12-18 char mix."""
    def make():
        if rng.random() < 0.5:
            sep = _pick(rng, ("-", "_", "", "."))
            pw = (_pick(rng, _PW_WORDS) + sep + _pick(rng, _PW_WORDS).lower()
                  + _pick(rng, _PW_SYMBOLS) + _rand(rng, DIGITS, int(rng.integers(2, 5))))
        else:
            n = int(rng.integers(12, 19))
            pw = "".join(_pick(rng, ALNUM) if rng.random() < 0.8 else _pick(rng, _PW_SYMBOLS)
                         for _ in range(n))
            pw = _pick(rng, ALNUM) + pw[1:-1] + _pick(rng, ALNUM)
        return pw

    def ok(pw):
        return (_plausibly_random(pw) and _classes(pw) >= 3 and pw[-1].isalnum()
                and any(c.isdigit() for c in pw) and len(pw) >= 10)

    return _draw(rng, make, ok)


#: The formats of secret-formats.md with a fixed shape (and the URL/prose passwords).
TOKEN_FORMATS: dict[str, Callable[[Rng], str]] = {
    "aws_access_key_id": gen_aws_access_key_id,
    "aws_secret_key": gen_aws_secret_key,
    "github_classic": gen_github_classic,
    "github_fine_grained": gen_github_fine_grained,
    "gitlab_pat": gen_gitlab_pat,
    "openai_project": gen_openai_project,
    "openai_legacy": gen_openai_legacy,
    "anthropic_api": gen_anthropic_api,
    "slack_token": gen_slack_token,
    "stripe_key": gen_stripe_key,
    "google_api_key": gen_google_api_key,
    "jwt": gen_jwt,
    "pem_private_key": gen_pem_private_key,
    "huggingface": gen_huggingface,
    "npm": gen_npm,
    "sendgrid": gen_sendgrid,
    "url_credentials": gen_url_credentials,
    "password_in_prose": gen_password_in_prose,
}
#: The shape of each format, as in secret-formats.md (used by tests and documentation).
TOKEN_REGEX: dict[str, str] = {
    "aws_access_key_id": r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}",
    "aws_secret_key": r"[A-Za-z0-9/+]{40}",
    "github_classic": r"gh[pousr]_[0-9a-zA-Z]{36}",
    "github_fine_grained": r"github_pat_[0-9a-zA-Z]{22}_[0-9a-zA-Z]{59}",
    "gitlab_pat": r"glpat-[\w-]{20}",
    "openai_project": r"sk-(?:proj|svcacct|admin)-[\w-]+T3BlbkFJ[\w-]+",
    "openai_legacy": r"sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}",
    "anthropic_api": r"sk-ant-(?:api03|admin01)-[\w-]{93}AA",
    "slack_token": r"xox[bp]-\d+-\d+(?:-\d+)?-[a-zA-Z0-9]+",
    "stripe_key": r"(?:sk_live|sk_test|rk_live)_(?:[a-zA-Z0-9]{24}|[a-zA-Z0-9]{99})",
    "google_api_key": r"AIza[\w-]{35}",
    "jwt": r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+",
    "pem_private_key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----\n(?:[A-Za-z0-9+/=]+\n)+-----END [A-Z ]*PRIVATE KEY-----",
    "huggingface": r"hf_[a-zA-Z]{34}",
    "npm": r"npm_[a-z0-9]{36}",
    "sendgrid": r"SG\.[\w-]{22}\.[\w-]{43}",
    "url_credentials": r"[a-z]+://[\w-]+:[^\s/@]+@[\w.-]+(?::\d+)?/\S*",
    "password_in_prose": r"\S{10,}",
}
