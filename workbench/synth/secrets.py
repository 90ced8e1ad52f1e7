"""Fake secrets planted into realistic transcript text, with adversarial transforms.

Three registries, all keyed by name, all pure functions of a ``numpy.random.Generator``:

* ``FORMATS``: one generator per row of ``secret-formats.md`` (exact prefixes, lengths and
  charsets; never a real key). ``secret_span(fmt, raw)`` says which slice of a generated
  string is the secret proper (the password of a URL, the whole string otherwise).
* ``CONTEXT_FUNCS``: ``ctx(secret, rng, kind=None) -> (text, start, end)`` writes a
  transcript snippet (prose, markdown, JSON tool call/result, shell, .env, YAML, INI, stack
  trace, URL) with ``text[start:end]`` the embedded string, JSON-escaped where the context
  is a JSON string or a quoted scalar.
* ``TRANSFORMS``: how the secret is disguised before it is embedded.

``plant_secret(rng, fmt, context, transform)`` combines the three and returns a
:class:`PlantedSecret` whose ``parts`` locate every piece of the (transformed) secret;
``plant_negative(rng, kind)`` returns a hard negative (``negative=True``): a string that
looks secret-ish but must never be redacted. ``compatible(fmt, context, transform)`` is
the explicit compatibility table (see ``INCOMPATIBLE_*``).

>>> import numpy as np
>>> s = plant_secret(np.random.default_rng(7), "github_classic", "shell_export", "none")
>>> text, start, end = s.parts[0]
>>> text[start:end] == s.value and s.value.startswith("gh")
True
>>> plant_secret(np.random.default_rng(7), "github_classic", "shell_export", "none") == s
True
"""

from __future__ import annotations

import base64
import json
import math
import string
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# --------------------------------------------------------------------------- helpers

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
WORD = ALNUM + "_"            # \w (ASCII)
WORD_DASH = WORD + "-"        # [\w-]
B32 = UPPER + "234567"        # [A-Z2-7]
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"

Rng = np.random.Generator


def _pick(rng: Rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _rand(rng: Rng, alphabet: str, n: int) -> str:
    idx = rng.integers(0, len(alphabet), size=n)
    return "".join([alphabet[i] for i in idx.tolist()])


def _classes(s: str) -> int:
    return (any(c.isupper() for c in s) + any(c.islower() for c in s)
            + any(c.isdigit() for c in s) + any(not c.isalnum() for c in s))


def _plausibly_random(body: str) -> bool:
    """Rejects the rare draw a redactor would rightly call a placeholder.

    A random draw can (very rarely) contain ``EXAMPLE``/``xxxx``, or repeat one character;
    generators redraw then, so every planted secret is a fair test of recall.
    """
    low = body.lower()
    if any(w in low for w in ("example", "xxxx", "your", "dummy", "sample", "redact", "test")):
        return False
    return len(set(body)) > max(3, len(body) // 5)


def _draw(rng: Rng, make: Callable[[], str], ok: Callable[[str], bool] = _plausibly_random) -> str:
    for _ in range(64):
        s = make()
        if ok(s):
            return s
    raise RuntimeError("could not draw a plausible secret")  # pragma: no cover


def _b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def _rand_bytes(rng: Rng, n: int) -> bytes:
    return rng.integers(0, 256, size=n, dtype=np.uint8).tobytes()


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


FORMATS: dict[str, Callable[[Rng], str]] = {
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
SECRET_FORMATS: tuple[str, ...] = tuple(FORMATS)

#: The shape of each format, as in secret-formats.md (used by tests and documentation).
FORMAT_REGEX: dict[str, str] = {
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


def secret_span(fmt: str, raw: str) -> tuple[int, int]:
    """The slice of a generated string that is the secret proper.

    For ``url_credentials`` that is the password (scheme, user and host are not secret);
    for every other format the whole string.
    """
    if fmt == "url_credentials":
        start = raw.index(":", raw.index("://") + 3) + 1
        return start, raw.index("@", start)
    return 0, len(raw)


# --------------------------------------------------------------------------- contexts

# kind -> (environment variable names, what a human calls it)
_LABELS: dict[str, tuple[tuple[str, ...], str]] = {
    "aws_access_key_id": (("AWS_ACCESS_KEY_ID",), "AWS access key"),
    "aws_secret_key": (("AWS_SECRET_ACCESS_KEY",), "AWS secret key"),
    "github_classic": (("GITHUB_TOKEN", "GH_TOKEN"), "GitHub token"),
    "github_fine_grained": (("GITHUB_TOKEN", "GH_PAT"), "fine-grained GitHub PAT"),
    "gitlab_pat": (("GITLAB_TOKEN", "GL_TOKEN"), "GitLab token"),
    "openai_project": (("OPENAI_API_KEY",), "OpenAI key"),
    "openai_legacy": (("OPENAI_API_KEY",), "OpenAI key"),
    "anthropic_api": (("ANTHROPIC_API_KEY",), "Anthropic API key"),
    "slack_token": (("SLACK_BOT_TOKEN", "SLACK_TOKEN"), "Slack token"),
    "stripe_key": (("STRIPE_SECRET_KEY", "STRIPE_API_KEY"), "Stripe key"),
    "google_api_key": (("GOOGLE_API_KEY", "MAPS_API_KEY"), "Google API key"),
    "jwt": (("AUTH_TOKEN", "SESSION_JWT"), "session token"),
    "pem_private_key": (("SSH_PRIVATE_KEY", "TLS_KEY", "DEPLOY_KEY"), "private key"),
    "huggingface": (("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"), "Hugging Face token"),
    "npm": (("NPM_TOKEN",), "npm token"),
    "sendgrid": (("SENDGRID_API_KEY",), "SendGrid key"),
    "url_credentials": (("DATABASE_URL", "REDIS_URL", "BROKER_URL"), "connection string"),
    "password_in_prose": (("DB_PASSWORD", "PGPASSWORD", "REDIS_PASSWORD", "ADMIN_PASSWORD"),
                          "password"),
}
_DEFAULT_LABEL = (("API_TOKEN",), "API token")


def _label(kind: str | None, rng: Rng) -> tuple[str, str]:
    envs, human = _LABELS.get(kind or "", _DEFAULT_LABEL)
    return _pick(rng, envs), human


def _json_escape(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)[1:-1]


def json_unescape(s: str) -> str:
    """Inverse of the escaping JSON-string contexts apply to the embedded secret."""
    return json.loads('"' + s + '"')


_SENTINEL = "\u00a7\u00a7SECRET\u00a7\u00a7"


def _fill(template: str, secret: str, *, escape: bool = False, **kw) -> tuple[str, int, int]:
    """Format ``template`` (``{S}`` marks the secret) and locate the secret in the result."""
    text = template.format(S=_SENTINEL, **kw)
    emb = _json_escape(secret) if escape else secret
    start = text.index(_SENTINEL)
    return text[:start] + emb + text[start + len(_SENTINEL):], start, start + len(emb)


def _fill_json(obj, secret: str) -> tuple[str, int, int]:
    """Serialise ``obj`` (containing the sentinel once) as JSON and embed the secret."""
    text = json.dumps(obj, ensure_ascii=False)
    return _fill(text.replace("{", "{{").replace("}", "}}").replace(_SENTINEL, "{S}"), secret,
                 escape=True)


def _block(kind: str | None) -> bool:
    """PEM keys get block-shaped templates (their own lines, fences, quoted escapes)."""
    return kind == "pem_private_key"


def _multiline(secret: str) -> bool:
    return "\n" in secret


_SERVICES = ("billing-service", "checkout-api", "ingest-worker", "search-indexer", "auth-gateway",
             "notifications", "ledger-sync")
_TOOLU = "toolu_01" + "Xq7Rk2Vb9NwLp3Tz"


def ctx_prose(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, human = _label(kind, rng)
    svc = _pick(rng, _SERVICES)
    if kind == "password_in_prose":
        t = _pick(rng, (
            "Quick update: the {svc} database password is {S}. I'll rotate it after the demo.",
            "FYI the admin password for {svc} was set to {S} during the incident, please change it.",
            "Logged in as deploy; the password is {S}, then ran the migration again.",
            "For the staging box the root password: {S} (don't paste this in Slack).",
        ))
        return _fill(t, secret, svc=svc)
    if _block(kind):
        t = _pick(rng, (
            "Here is the {human} the old {svc} deploy used, found in the wiki:\n{S}\n"
            "We should revoke it before cutting the release.",
            "I recovered the {human} from the backup volume:\n\n{S}\n\nIt still works against prod.",
        ))
        return _fill(t, secret, human=human, svc=svc)
    t = _pick(rng, (
        "I found the {human} in the old deploy notes: {S}. Rotating it now.",
        "The CI job for {svc} failed because {env} was set to {S}, which expired yesterday.",
        "Use {S} as the {human} for the staging run, then revoke it.",
        "Looks like someone committed the {human} ({S}) to the {svc} repo last week.",
        "Confirmed: requests with {S} still authenticate, so the {human} was never revoked.",
    ))
    return _fill(t, secret, human=human, svc=svc, env=env)


def ctx_code_span(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, human = _label(kind, rng)
    if kind == "password_in_prose":
        t = _pick(rng, ("The password is `{S}` for the `reporting` role.",
                        "Set `password: {S}` in `config/database.yml` and restart."))
        return _fill(t, secret)
    t = _pick(rng, (
        "Set `{env}` to `{S}` and rerun `make test`.",
        "The log line shows the header value `{S}` being sent to the proxy.",
        "Replace the hard-coded `{S}` in `src/settings.py` with `os.environ[\"{env}\"]`.",
    ))
    return _fill(t, secret, env=env, human=human)


def ctx_fence(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, human = _label(kind, rng)
    if _block(kind):
        t = _pick(rng, ("Save this as `~/.ssh/deploy_key` and `chmod 600` it:\n\n```\n{S}\n```\n",
                        "The key file contains:\n```text\n{S}\n```\nThat is the production key."))
        return _fill(t, secret)
    t = _pick(rng, (
        "Add this to your shell profile:\n\n```bash\nexport {env}={S}\nexport AWS_REGION=eu-west-1\n```\n"
        "then restart the dev server.",
        "Current config:\n```ini\n[service]\nname = {svc}\n{envl} = {S}\ntimeout = 30\n```",
        "```python\nclient = Client(\n    base_url=\"https://api.internal\",\n    {envl}=\"{S}\",\n)\n```",
    ))
    return _fill(t, secret, env=env, envl=env.lower(), svc=_pick(rng, _SERVICES))


def ctx_json_tool_call(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, _ = _label(kind, rng)
    form = int(rng.integers(3))
    if form == 0 or _block(kind):
        content = ("NODE_ENV=production\nPORT=8080\n" + f"{env}=" + _SENTINEL
                   + "\nLOG_LEVEL=info\n")
        obj = {"type": "tool_use", "id": _TOOLU, "name": "Write",
               "input": {"file_path": "/srv/app/.env", "content": content}}
    elif form == 1:
        obj = {"type": "tool_use", "id": _TOOLU, "name": "Bash",
               "input": {"command": f"{env}={_SENTINEL} ./scripts/deploy.sh --env staging\n",
                         "description": "Deploy staging with the new credentials"}}
    else:
        obj = {"type": "tool_use", "id": _TOOLU, "name": "Edit",
               "input": {"file_path": "config/settings.yaml",
                         "old_string": f"  {env.lower()}: ''\n",
                         "new_string": f"  {env.lower()}: '{_SENTINEL}'\n"}}
    return _fill_json(obj, secret)


def ctx_json_tool_result(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, _ = _label(kind, rng)
    form = int(rng.integers(3))
    if form == 0 or _block(kind):
        out = ("$ cat .env.production\nAPP_ENV=production\nSENTRY_DSN=https://o1.ingest.sentry.io/42\n"
               f"{env}={_SENTINEL}\nFEATURE_FLAGS=checkout_v2,new_search\n")
    elif form == 1:
        out = ("$ env | grep -i -E 'key|token|pass|url'\n"
               f"{env}={_SENTINEL}\nHISTFILE=/home/dev/.bash_history\n")
    else:
        out = (f"{{\n  \"service\": \"{_pick(rng, _SERVICES)}\",\n  \"region\": \"eu-west-1\",\n"
               f"  \"{env.lower()}\": \"{_SENTINEL}\",\n  \"retries\": 3\n}}\n")
    obj = {"type": "tool_result", "tool_use_id": _TOOLU, "content": out, "is_error": False}
    return _fill_json(obj, secret)


def ctx_shell_export(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, _ = _label(kind, rng)
    if _block(kind) or _multiline(secret):
        return _fill("$ export {env}=\"{S}\"\n$ ./scripts/bootstrap.sh\n", secret, env=env)
    t = _pick(rng, ("$ export {env}={S}\n$ npm run deploy:staging\n",
                    "$ export {env}=\"{S}\"\n$ make release\n",
                    "$ {env}='{S}' python manage.py sync_accounts --dry-run\nSynced 0 accounts.\n"))
    return _fill(t, secret, env=env)


def ctx_curl_bearer(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    t = _pick(rng, (
        "$ curl -sS -H 'Authorization: Bearer {S}' https://api.acme.dev/v1/accounts | jq .\n",
        "$ curl -X POST https://hooks.acme.io/deploy -H \"Authorization: Bearer {S}\" "
        "-d '{{\"ref\":\"main\"}}'\n{{\"status\":\"queued\"}}\n",
        "Running `curl -H 'Authorization: Bearer {S}' https://api.acme.dev/v1/me` returns 200.",
    ))
    return _fill(t, secret)


def ctx_psql_url(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    if kind == "url_credentials":
        t = _pick(rng, ("$ psql \"{S}\" -c '\\dt'\n                List of relations\n",
                        "$ pg_dump \"{S}\" --schema-only > schema.sql\n"))
        return _fill(t, secret)
    user = _pick(rng, _URL_USERS)
    host = _pick(rng, _URL_HOSTS)
    t = _pick(rng, ("$ psql \"postgresql://{user}:{S}@{host}:5432/app\" -c 'select count(*) from users'\n",
                    "$ psql postgres://{user}:{S}@{host}/ledger\npsql (16.2)\nledger=> "))
    return _fill(t, secret, user=user, host=host)


def ctx_env_dump(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, _ = _label(kind, rng)
    lines = ["# .env.local (do not commit)", "APP_NAME=" + _pick(rng, _SERVICES),
             "LOG_LEVEL=debug", "PORT=" + str(int(rng.integers(3000, 9000)))]
    pos = int(rng.integers(1, len(lines) + 1))
    if _multiline(secret):
        lines.insert(pos, f'{env}="{{S}}"')
        return _fill("\n".join(lines) + "\n", secret, escape=True)
    lines.insert(pos, f"{env}={{S}}")
    return _fill("\n".join(lines) + "\n", secret)


def ctx_yaml(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, _ = _label(kind, rng)
    svc = _pick(rng, _SERVICES)
    if kind == "password_in_prose":
        t = ("database:\n  host: db.internal\n  port: 5432\n  user: {svc}\n"
             "  password: {S}\n  pool: 10\n")
        return _fill(t, secret, svc=svc)
    if _block(kind) or _multiline(secret):
        return _fill("tls:\n  enabled: true\n  key: \"{S}\"\n", secret, escape=True)
    t = _pick(rng, ("services:\n  {svc}:\n    image: acme/{svc}:1.4.2\n    environment:\n"
                    "      {env}: {S}\n      REGION: eu-west-1\n",
                    "{envl}: \"{S}\"\nretries: 3\n"))
    return _fill(t, secret, svc=svc, env=env, envl=env.lower())


def ctx_ini(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, _ = _label(kind, rng)
    if kind == "password_in_prose":
        return _fill("[client]\nuser = reporting\npassword = {S}\nhost = db.internal\n", secret)
    if kind in ("aws_access_key_id", "aws_secret_key"):
        key = "aws_access_key_id" if kind == "aws_access_key_id" else "aws_secret_access_key"
        return _fill("[default]\n{key} = {S}\nregion = us-east-1\n\n[profile ci]\nregion = eu-west-1\n",
                     secret, key=key)
    return _fill("[{svc}]\nendpoint = https://api.acme.dev\n{envl} = {S}\ntimeout = 30\n", secret,
                 svc=_pick(rng, _SERVICES), envl=env.lower())


def ctx_stack_trace(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    env, _ = _label(kind, rng)
    head = ("Traceback (most recent call last):\n"
            "  File \"/srv/app/{svc}/client.py\", line {ln}, in connect\n"
            "    return self._session.request(method, url, **kwargs)\n"
            "  File \"/usr/lib/python3.11/site-packages/requests/sessions.py\", line 589, in request\n"
            "    resp = self.send(prep, **send_kwargs)\n")
    svc = _pick(rng, _SERVICES).replace("-", "_")
    ln = int(rng.integers(20, 400))
    if kind == "url_credentials":
        tail = ("sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) could not connect "
                "to server: Connection refused (url='{S}')\n")
    elif kind == "password_in_prose":
        tail = ("psycopg2.OperationalError: FATAL: password authentication failed for user "
                "\"app\"\n  locals: host='db.internal', user='app', password='{S}'\n")
    elif _block(kind) or _multiline(secret):
        return _fill(head + "ValueError: Could not deserialize key data: b'{S}'\n", secret,
                     escape=True, svc=svc, ln=ln)
    else:
        tail = _pick(rng, (
            "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: "
            "https://api.acme.dev/v1/charges (token={S})\n",
            "KeyError: 'account'\n  locals: {envl}='{S}', retries=3\n",
        ))
    return _fill(head + tail, secret, svc=svc, ln=ln, envl=env.lower())


def ctx_url_userinfo(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    if kind == "url_credentials":
        t = _pick(rng, ("Connecting to {S} ... done (12 ms)\n",
                        "The worker logs `broker={S}` on startup, so the credentials end up in Loki."))
        return _fill(t, secret)
    t = _pick(rng, ("$ git clone https://x-access-token:{S}@github.com/acme/infra.git\n"
                    "Cloning into 'infra'...\n",
                    "$ git remote set-url origin https://oauth2:{S}@gitlab.acme.dev/platform/api.git\n"))
    return _fill(t, secret)


def ctx_url_query(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    t = _pick(rng, (
        "GET https://api.acme.dev/v2/export?format=csv&api_key={S}&limit=500 -> 200 OK (1.2s)\n",
        "The webhook is configured as https://hooks.acme.io/notify?token={S}, see the admin page.",
        "127.0.0.1 - - [14/Mar/2026:09:12:44 +0000] \"GET /callback?code=ok&access_token={S} HTTP/1.1\" 302 0\n",
    ))
    return _fill(t, secret)


CONTEXT_FUNCS: dict[str, Callable[..., tuple[str, int, int]]] = {
    "prose": ctx_prose,
    "code_span": ctx_code_span,
    "fence": ctx_fence,
    "json_tool_call": ctx_json_tool_call,
    "json_tool_result": ctx_json_tool_result,
    "shell_export": ctx_shell_export,
    "curl_bearer": ctx_curl_bearer,
    "psql_url": ctx_psql_url,
    "env_dump": ctx_env_dump,
    "yaml": ctx_yaml,
    "ini": ctx_ini,
    "stack_trace": ctx_stack_trace,
    "url_userinfo": ctx_url_userinfo,
    "url_query": ctx_url_query,
}
CONTEXTS: tuple[str, ...] = tuple(CONTEXT_FUNCS)

# --------------------------------------------------------------------------- transforms

TRANSFORMS: tuple[str, ...] = (
    "none", "split_messages", "split_lines", "base64", "hex", "percent", "unicode_escape",
    "zero_width", "homoglyph", "fullwidth", "wrap_punct", "placeholder_marker",
)
ENCODING_TRANSFORMS = frozenset({"base64", "hex", "percent", "unicode_escape"})

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")

# Latin letter -> Cyrillic/Greek lookalikes, by Unicode name (checked at import). Kept apart
# from the redactor's wider table (redaction/normalize.py) on purpose: the generator must not
# plant only what the redactor already lists, or the leakage test would grade itself.
_HOMOGLYPH_NAMES: dict[str, tuple[str, ...]] = {
    "A": ("CYRILLIC CAPITAL LETTER A", "GREEK CAPITAL LETTER ALPHA"),
    "B": ("CYRILLIC CAPITAL LETTER VE", "GREEK CAPITAL LETTER BETA"),
    "C": ("CYRILLIC CAPITAL LETTER ES", "GREEK CAPITAL LUNATE SIGMA SYMBOL"),
    "E": ("CYRILLIC CAPITAL LETTER IE", "GREEK CAPITAL LETTER EPSILON"),
    "H": ("CYRILLIC CAPITAL LETTER EN", "GREEK CAPITAL LETTER ETA"),
    "I": ("CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "GREEK CAPITAL LETTER IOTA"),
    "J": ("CYRILLIC CAPITAL LETTER JE",),
    "K": ("CYRILLIC CAPITAL LETTER KA", "GREEK CAPITAL LETTER KAPPA"),
    "M": ("CYRILLIC CAPITAL LETTER EM", "GREEK CAPITAL LETTER MU"),
    "N": ("GREEK CAPITAL LETTER NU",),
    "O": ("CYRILLIC CAPITAL LETTER O", "GREEK CAPITAL LETTER OMICRON"),
    "P": ("CYRILLIC CAPITAL LETTER ER", "GREEK CAPITAL LETTER RHO"),
    "S": ("CYRILLIC CAPITAL LETTER DZE",),
    "T": ("CYRILLIC CAPITAL LETTER TE", "GREEK CAPITAL LETTER TAU"),
    "X": ("CYRILLIC CAPITAL LETTER HA", "GREEK CAPITAL LETTER CHI"),
    "Y": ("CYRILLIC CAPITAL LETTER STRAIGHT U", "GREEK CAPITAL LETTER UPSILON"),
    "Z": ("GREEK CAPITAL LETTER ZETA",),
    "a": ("CYRILLIC SMALL LETTER A",),
    "c": ("CYRILLIC SMALL LETTER ES", "GREEK LUNATE SIGMA SYMBOL"),
    "d": ("CYRILLIC SMALL LETTER KOMI DE",),
    "e": ("CYRILLIC SMALL LETTER IE",),
    "h": ("CYRILLIC SMALL LETTER SHHA",),
    "i": ("CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I",),
    "j": ("CYRILLIC SMALL LETTER JE", "GREEK LETTER YOT"),
    "o": ("CYRILLIC SMALL LETTER O", "GREEK SMALL LETTER OMICRON"),
    "p": ("CYRILLIC SMALL LETTER ER", "GREEK SMALL LETTER RHO"),
    "q": ("CYRILLIC SMALL LETTER QA",),
    "s": ("CYRILLIC SMALL LETTER DZE",),
    "v": ("GREEK SMALL LETTER NU",),
    "w": ("CYRILLIC SMALL LETTER WE",),
    "x": ("CYRILLIC SMALL LETTER HA",),
    "y": ("CYRILLIC SMALL LETTER U",),
}
HOMOGLYPHS: dict[str, tuple[str, ...]] = {
    latin: tuple(unicodedata.lookup(n) for n in names) for latin, names in _HOMOGLYPH_NAMES.items()
}

_WRAPPERS = (("(", ")"), ("[", "]"), ("<", ">"), ('"', '"'), ("'", "'"), ("`", "`"))


def _inner_positions(n: int) -> range:
    return range(1, n) if n > 1 else range(0)


def to_fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in s)


def percent_encode(rng: Rng, s: str) -> str:
    """Percent-encode every byte, except that ~25% of unreserved characters stay literal."""
    out = []
    for ch in s:
        if (ch.isascii() and (ch.isalnum() or ch in "-._~")) and rng.random() < 0.25:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode())
    return "".join(out)


def unicode_escape(s: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in s)


@dataclass(frozen=True)
class _Shaped:
    embedded: str          # what replaces the raw secret string in the context
    region: tuple[int, int]  # the (transformed) secret inside ``embedded``
    cut: int = -1          # split_messages: split offset inside ``embedded``
    variant: str = ""


def _transform(rng: Rng, fmt: str, raw: str, core: tuple[int, int], transform: str) -> _Shaped:
    cs, ce = core
    value = raw[cs:ce]
    n = len(value)
    if transform == "none":
        return _Shaped(raw, core)
    if transform == "split_messages":
        k = int(rng.integers(max(1, math.ceil(0.3 * n)), max(2, math.floor(0.7 * n)) + 1))
        return _Shaped(raw, core, cut=cs + k)
    if transform == "split_lines":
        k = int(rng.integers(max(1, math.ceil(0.3 * n)), max(2, math.floor(0.7 * n)) + 1))
        return _Shaped(raw[:cs + k] + "\n" + raw[cs + k:], (cs, ce + 1))
    if transform in ENCODING_TRANSFORMS:
        if transform == "base64":
            enc = base64.b64encode(raw.encode()).decode()
        elif transform == "hex":
            enc = raw.encode().hex()
        elif transform == "percent":
            enc = percent_encode(rng, raw)
        else:
            enc = unicode_escape(raw)
        return _Shaped(enc, (0, len(enc)))
    if transform == "zero_width":
        pos = sorted(set(rng.choice(list(_inner_positions(n)),
                                    size=min(n - 1, int(rng.integers(1, 5))),
                                    replace=False).tolist()))
        chars = list(value)
        for p in reversed(pos):
            chars.insert(p, _pick(rng, ZERO_WIDTH))
        new = "".join(chars)
        return _Shaped(raw[:cs] + new + raw[ce:], (cs, cs + len(new)))
    if transform == "homoglyph":
        eligible = [i for i, c in enumerate(value) if c in HOMOGLYPHS]
        if not eligible:
            raise ValueError(f"no homoglyph-able letter in this {fmt}")
        k = min(len(eligible), int(rng.integers(1, 5)))
        chars = list(value)
        for i in rng.choice(eligible, size=k, replace=False).tolist():
            chars[i] = _pick(rng, HOMOGLYPHS[chars[i]])
        return _Shaped(raw[:cs] + "".join(chars) + raw[ce:], core)
    if transform == "fullwidth":
        new = to_fullwidth(value)
        return _Shaped(raw[:cs] + new + raw[ce:], core)
    if transform == "wrap_punct":
        o, c = _pick(rng, _WRAPPERS)
        trail = _pick(rng, (".", ","))
        return _Shaped(o + raw + c + trail, (cs + len(o), ce + len(o)))
    if transform == "placeholder_marker":
        if rng.random() < 0.5:
            return _Shaped("[BYOK:" + raw + "]", (cs + 6, ce + 6), variant="byok")
        t = int(rng.integers(math.ceil(0.4 * n), math.floor(0.6 * n) + 1))
        marker = f"<REDACTED:{fmt}>"
        emb = raw[:cs] + marker + value[n - t:] + raw[ce:]
        start = cs + len(marker)
        return _Shaped(emb, (start, start + t), variant="redacted_tail")
    raise ValueError(f"unknown transform {transform!r}")


# --------------------------------------------------------------------------- compatibility

_URLISH = frozenset({"psql_url", "url_userinfo", "url_query"})

#: (format, context) pairs that make no sense, with the reason.
INCOMPATIBLE_FORMAT_CONTEXT: dict[tuple[str, str], str] = {}
for _c in ("code_span", "curl_bearer", "psql_url", "url_userinfo", "url_query", "ini"):
    INCOMPATIBLE_FORMAT_CONTEXT[("pem_private_key", _c)] = "a multi-line key does not fit a one-line slot"
for _c in ("curl_bearer", "url_query"):
    INCOMPATIBLE_FORMAT_CONTEXT[("url_credentials", _c)] = "a URL is not a bearer token or a query value"
for _c in ("curl_bearer", "psql_url", "url_userinfo", "url_query"):
    INCOMPATIBLE_FORMAT_CONTEXT[("password_in_prose", _c)] = (
        "a prose password is found by its keyword; these slots have none (and its symbols break URLs)")
for _c in ("psql_url", "url_userinfo", "url_query"):
    INCOMPATIBLE_FORMAT_CONTEXT[("aws_secret_key", _c)] = "'/' and '+' would have to be percent-encoded"

#: (format, transform) pairs that make no sense. Every other pair is planted.
INCOMPATIBLE_FORMAT_TRANSFORM: dict[tuple[str, str], str] = {}

#: (context, transform) pairs that make no sense.
INCOMPATIBLE_CONTEXT_TRANSFORM: dict[tuple[str, str], str] = {}
for _c in _URLISH:
    INCOMPATIBLE_CONTEXT_TRANSFORM[(_c, "wrap_punct")] = "punctuation inside a URL is part of the URL"
    INCOMPATIBLE_CONTEXT_TRANSFORM[(_c, "base64")] = "'/', '+', '=' are URL delimiters"
    INCOMPATIBLE_CONTEXT_TRANSFORM[(_c, "unicode_escape")] = "escape sequences are not URL text"
INCOMPATIBLE_CONTEXT_TRANSFORM[("curl_bearer", "unicode_escape")] = "escape sequences are not header text"


def compatible(fmt: str, context: str, transform: str) -> bool:
    """Whether planting ``fmt`` into ``context`` under ``transform`` yields realistic text."""
    if fmt not in FORMATS or context not in CONTEXT_FUNCS or transform not in TRANSFORMS:
        return False
    return ((fmt, context) not in INCOMPATIBLE_FORMAT_CONTEXT
            and (fmt, transform) not in INCOMPATIBLE_FORMAT_TRANSFORM
            and (context, transform) not in INCOMPATIBLE_CONTEXT_TRANSFORM)


def compatible_combinations() -> list[tuple[str, str, str]]:
    return [(f, c, t) for f in SECRET_FORMATS for c in CONTEXTS for t in TRANSFORMS
            if compatible(f, c, t)]


# --------------------------------------------------------------------------- planting


@dataclass(frozen=True)
class PlantedSecret:
    """One planted secret (or hard negative) and where it sits.

    ``parts`` holds ``(text, start, end)`` per event: one part usually, two for
    ``split_messages`` (the two texts go into two consecutive events). ``text[start:end]``
    is the transformed secret as embedded (JSON-escaped in JSON-string contexts: see
    ``escaped``); for ``placeholder_marker``/``redacted_tail`` it is the leaked tail only.
    ``value`` is the plaintext secret: what must not survive. ``carrier`` is the whole
    generated string (equal to ``value`` except for ``url_credentials``, whose carrier is the
    URL and whose value is its password).
    """

    secret_id: str
    kind: str
    context: str
    transform: str
    value: str
    parts: tuple[tuple[str, int, int], ...]
    negative: bool = False
    carrier: str = ""
    variant: str = ""
    escaped: bool = False

    @property
    def texts(self) -> list[str]:
        return [p[0] for p in self.parts]


def _new_id(rng: Rng, prefix: str) -> str:
    return f"{prefix}-{int(rng.integers(0, 2**48)):012x}"


def plant_secret(rng: Rng, fmt: str, context: str, transform: str = "none", *,
                 secret_id: str | None = None) -> PlantedSecret:
    """Generate a fake ``fmt`` secret, disguise it with ``transform``, embed it in ``context``."""
    if not compatible(fmt, context, transform):
        raise ValueError(f"incompatible combination: {fmt} x {context} x {transform}")
    sid = secret_id or _new_id(rng, "sec")
    for _ in range(16):
        raw = FORMATS[fmt](rng)
        core = secret_span(fmt, raw)
        try:
            shaped = _transform(rng, fmt, raw, core, transform)
            break
        except ValueError:
            continue
    else:  # pragma: no cover
        raise RuntimeError(f"cannot apply {transform} to {fmt}")
    text, start, end = CONTEXT_FUNCS[context](shaped.embedded, rng, kind=fmt)
    escaped = text[start:end] != shaped.embedded
    esc = _json_escape if escaped else (lambda s: s)

    def pos(i: int) -> int:  # offset in ``text`` of offset ``i`` of ``embedded``
        return start + len(esc(shaped.embedded[:i]))

    rs, re_ = pos(shaped.region[0]), pos(shaped.region[1])
    if shaped.cut >= 0:
        cut = pos(shaped.cut)
        parts = ((text[:cut], rs, cut), (text[cut:], 0, re_ - cut))
    else:
        parts = ((text, rs, re_),)
    cs, ce = core
    return PlantedSecret(secret_id=sid, kind=fmt, context=context, transform=transform,
                         value=raw[cs:ce], parts=parts, carrier=raw, variant=shaped.variant,
                         escaped=escaped)


# --------------------------------------------------------------------------- hard negatives

NEGATIVE_KINDS: tuple[str, ...] = (
    "git_sha", "sha256", "sha512", "npm_integrity", "uuid", "base64_text", "doc_example",
    "placeholder", "template", "prose_about_keys", "camel_identifier", "url_no_credentials",
    "redaction_marker", "public_key_block",
)

_HARMLESS = (
    "The quick brown fox jumps over the lazy dog while the build runs.",
    "Release notes: fixed pagination in the search view and updated the logo.",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frontend-settings\n",
    "Hello from the staging cluster, everything is green today.",
    "server {\n  listen 80;\n  server_name docs.acme.dev;\n}\n",
    "Remember to update the changelog before tagging the next minor release.",
)
DOC_EXAMPLES = (
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AKIAI44QH8DHBEXAMPLE",
    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwia"
    "WF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "xoxb-not-a-real-token-this-will-not-work",
)
_PLACEHOLDERS = (
    "ghp_" + "x" * 36, "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "sk-...YOUR_KEY...",
    "sk-proj-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "AKIAXXXXXXXXXXXXXXXX",
    "sk-ant-api03-" + "x" * 93 + "AA", "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "<your-api-key>",
    "npm_" + "0" * 36, "your_token_here", "glpat-xxxxxxxxxxxxxxxxxxxx", "AIza" + "X" * 35,
    "sk_live_" + "0" * 24, "sk-" + "*" * 48, "xoxb-0000000000-0000000000-" + "x" * 24,
)
_TEMPLATES = (
    "${GITHUB_TOKEN}", "${{ secrets.OPENAI_API_KEY }}", "{{ vault_db_password }}",
    "${DB_PASSWORD:-changeme}", "$AWS_SECRET_ACCESS_KEY", "{{ .Values.stripe.secretKey }}",
    "%(password)s", "<%= ENV['SENDGRID_API_KEY'] %>",
)
_PROSE = (
    "Remember to rotate your API key monthly and never paste it into chat.",
    "The password is stored in Vault under secret/data/billing, not in the repo.",
    "Set the password to something long; the policy requires at least 14 characters.",
    "We revoked the old GitHub token after the audit; the new one lives in 1Password.",
    "Never commit your AWS secret access key; use an instance profile instead.",
    "The JWT is signed with RS256 and the public key is published at /.well-known/jwks.json.",
    "If the token expires, the CLI asks for a new password: just press enter to retry.",
    "password: required (string, min length 12)",
)
_CAMEL_PARTS = ("Abstract", "Singleton", "Proxy", "Factory", "Bean", "Configuration", "Manager",
                "Request", "Handler", "Token", "Validator", "Secret", "Provider", "Session",
                "Context", "Resolver", "Adapter", "Registry", "Builder", "Strategy")
_URLS = (
    "https://github.com/acme/infra/blob/main/terraform/modules/vpc/main.tf",
    "https://docs.python.org/3/library/unicodedata.html#unicodedata.normalize",
    "https://api.acme.dev/v2/export?format=csv&limit=500&cursor=eyJwYWdlIjozfQ",
    "postgres://localhost:5432/app_test",
    "git@github.com:acme/billing-service.git",
    "https://user@bitbucket.org/acme/tools.git",
    "postgres://user:password@localhost/db",
    "postgres://postgres:postgres@localhost:5432/test",
    "redis://:${REDIS_PASSWORD}@cache:6379/0",
    "https://registry.npmjs.org/@types%2Fnode/-/node-20.11.5.tgz",
)
_MARKER_KINDS = ("aws_access_key_id", "github_classic", "password_in_prose", "jwt",
                 "url_credentials", "pem_private_key", "marker_leak")


def _negative_token(rng: Rng, kind: str) -> tuple[str, str]:
    """(token, template with {S}) for one hard negative."""
    if kind == "git_sha":
        sha = _rand(rng, HEX, 40)
        return sha, _pick(rng, ("commit {S}\nAuthor: Dana Ortiz <dana@acme.dev>\n",
                                "Merged via {S} (squash).", "\"sha\": \"{S}\","))
    if kind == "sha256":
        d = _rand(rng, HEX, 64)
        return d, _pick(rng, ("{S}  dist/app-1.4.2.tar.gz\n", "sha256:{S}",
                              "Digest: sha256:{S}\nStatus: Downloaded newer image"))
    if kind == "sha512":
        d = _rand(rng, HEX, 128)
        return d, "SHA512 ({S}) verified for release.zip"
    if kind == "npm_integrity":
        d = "sha512-" + base64.b64encode(_rand_bytes(rng, 64)).decode()
        return d, _pick(rng, ("      \"integrity\": \"{S}\",\n", "  integrity {S}\n"))
    if kind == "uuid":
        h = _rand(rng, HEX, 32)
        u = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_pick(rng, '89ab')}{h[17:20]}-{h[20:]}"
        return u, _pick(rng, ("\"sessionId\": \"{S}\"", "request_id={S} status=200",
                              "tool_use_id: {S}"))
    if kind == "base64_text":
        b = base64.b64encode(_pick(rng, _HARMLESS).encode()).decode()
        return b, _pick(rng, ("data:\n  message: {S}\n", "echo {S} | base64 -d",
                              "\"payload\": \"{S}\""))
    if kind == "doc_example":
        ex = _pick(rng, DOC_EXAMPLES)
        return ex, _pick(rng, ("From the docs: `{S}` is the example value.",
                               "For example, aws_access_key_id = {S}\n",
                               "The README shows {S} as a sample."))
    if kind == "placeholder":
        p = _pick(rng, _PLACEHOLDERS)
        return p, _pick(rng, ("export API_TOKEN={S}\n", "Replace {S} with your own key.",
                              "token: \"{S}\"\n", "OPENAI_API_KEY={S}\n"))
    if kind == "template":
        t = _pick(rng, _TEMPLATES)
        return t, _pick(rng, ("password: {S}\n", "export GITHUB_TOKEN={S}\n",
                              "DATABASE_URL=postgres://app:{S}@db:5432/app\n", "api_key = \"{S}\"\n"))
    if kind == "prose_about_keys":
        p = _pick(rng, _PROSE)
        return p, "{S}"
    if kind == "camel_identifier":
        k = int(rng.integers(4, 8))
        ident = "".join(_pick(rng, _CAMEL_PARTS) for _ in range(k))
        if rng.random() < 0.5:
            ident = ident[0].lower() + ident[1:]
        return ident, _pick(rng, ("class {S}(Base):\n    pass\n", "const {S} = require('./x');",
                                  "at com.acme.{S}.invoke(Native Method)"))
    if kind == "url_no_credentials":
        u = _pick(rng, _URLS)
        return u, _pick(rng, ("See {S} for details.", "Fetching {S} ...\n", "url: {S}\n"))
    if kind == "redaction_marker":
        m = f"<REDACTED:{_pick(rng, _MARKER_KINDS)}>"
        return m, _pick(rng, ("export GITHUB_TOKEN={S}\n", "The key {S} was removed.",
                              "password: {S}\n", "\"token\": \"{S}\","))
    if kind == "public_key_block":
        body = base64.b64encode(b"\x30\x82\x01\x22"
                                + _rand_bytes(rng, int(rng.integers(150, 270)))).decode()
        label = _pick(rng, ("PUBLIC KEY", "CERTIFICATE"))
        blk = (f"-----BEGIN {label}-----\n"
               + "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
               + f"\n-----END {label}-----")
        return blk, "Public part, safe to share:\n{S}\n"
    raise ValueError(f"unknown negative kind {kind!r}")


def plant_negative(rng: Rng, kind: str, *, secret_id: str | None = None) -> PlantedSecret:
    """A hard negative: a secret-looking string that a redactor must leave alone."""
    sid = secret_id or _new_id(rng, "neg")
    token, template = _negative_token(rng, kind)
    text, start, end = _fill(template, token)
    return PlantedSecret(secret_id=sid, kind=kind, context="negative", transform="none",
                         value=token, parts=((text, start, end),), negative=True, carrier=token)
