"""Credentials in command lines and HTTP headers: the three *slot* formats, whose value is
recognisable only by the flag or header it is given to, and the lines that carry a secret.

* ``http_authorization``: an ``Authorization`` header value in one of the schemes agents
  meet (Basic, Bearer, Token, ApiKey, custom vendor schemes, Digest, AWS4-HMAC-SHA256);
  the secret proper is the credential (:func:`http_authorization_span`: the token after
  the scheme, the Digest ``response``, the AWS ``Signature``);
* ``api_key_header``: an opaque API key (hex, UUID, mixed-case, base64url), as sent in
  ``X-...-Key`` / ``X-...-Token`` headers;
* ``cli_password``: a password as typed on a command line (``curl -u``, ``mysql -p``,
  ``sshpass -p``, ``docker login -p``, ``PGPASSWORD=``, git credential URLs ...).

:func:`slot_line` writes a shell command or header line that carries a secret of any
format (``{S}`` marks it; other braces are doubled) and :func:`header_slot` the header name
and value template a secret of a given format is sent in: the contexts embed them.

>>> import numpy as np
>>> raw = gen_http_authorization(np.random.default_rng(3))
>>> s, e = http_authorization_span(raw)
>>> raw[:s].split()[0] in SCHEMES and e > s
True
"""

from __future__ import annotations

import base64

from workbench.synth.secrets.draw import (
    ALNUM,
    DIGITS,
    HEX,
    LOWER,
    UPPER,
    Rng,
    _b64url,
    _draw,
    _pick,
    _plausibly_random,
    _rand,
    _rand_bytes,
)
from workbench.synth.secrets.formats import gen_aws_access_key_id

SLOT_FORMATS: tuple[str, ...] = ("http_authorization", "api_key_header", "cli_password")
#: The contexts that put a secret of any format into a flag or a header (contexts.py).
SLOT_CONTEXTS: tuple[str, ...] = ("shell_command", "http_request", "json_headers",
                                  "python_headers")

# --------------------------------------------------------------------------- formats

_USERS = ("deploy", "ci-bot", "admin", "backup", "etl_reader", "svc-billing", "release",
          "grafana", "app")
#: Schemes of an Authorization header, with weights (custom vendor schemes included).
SCHEMES = ("Basic", "Bearer", "Token", "ApiKey", "Digest", "AWS4-HMAC-SHA256", "SSWS",
           "DeepL-Auth-Key", "Klaviyo-API-Key", "GenieKey", "Zoho-oauthtoken", "token")
_SCHEME_WEIGHTS = (4, 4, 2, 1, 2, 2, 1, 1, 1, 1, 1, 1)
_TOKEN_CHARS = ALNUM + "-._~"
_PW_SYMBOLS = "&*+-._~!="  # shell-friendly and valid in URL userinfo
_LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5"}
_PW_WORDS = ("troubador", "harbour", "lantern", "granite", "meadow", "saffron", "quartz",
             "juniper", "falcon", "cobalt", "tundra", "willow")


def gen_cli_password(rng: Rng) -> str:
    """A password as people type it on a command line: a word with digits swapped in plus
    a symbol and more characters, or a random 12-20 character mix; always with a digit,
    both cases and an alphanumeric first and last character."""
    def make():
        if rng.random() < 0.5:
            w = _pick(rng, _PW_WORDS)
            w = "".join(_LEET.get(c, c) if rng.random() < 0.4 else c for c in w)
            w = w[0].upper() + w[1:]
            return (w + _pick(rng, _PW_SYMBOLS) + _rand(rng, UPPER + LOWER, int(rng.integers(2, 5)))
                    + _rand(rng, DIGITS, int(rng.integers(1, 4))))
        n = int(rng.integers(12, 21))
        body = "".join(_pick(rng, ALNUM) if rng.random() < 0.8 else _pick(rng, _PW_SYMBOLS)
                       for _ in range(n - 2))
        return _pick(rng, ALNUM) + body + _pick(rng, ALNUM)

    def ok(pw):
        return (_plausibly_random(pw) and any(c.isdigit() for c in pw)
                and any(c.isupper() for c in pw) and any(c.islower() for c in pw)
                and pw[0].isalnum() and pw[-1].isalnum() and len(pw) >= 10)

    return _draw(rng, make, ok)


def gen_api_key_header(rng: Rng) -> str:
    """An opaque API key: 32/40 hex, a UUID, 32-40 mixed alphanumerics or base64url."""
    shape = int(rng.integers(5))
    if shape == 0:
        return _draw(rng, lambda: _rand(rng, HEX, 32))
    if shape == 1:
        return _draw(rng, lambda: _rand(rng, HEX, 40))
    if shape == 2:
        h = _draw(rng, lambda: _rand(rng, HEX, 32))
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_pick(rng, '89ab')}{h[17:20]}-{h[20:]}"
    if shape == 3:
        n = int(rng.integers(32, 41))
        return _draw(rng, lambda: _rand(rng, ALNUM, n))
    return _draw(rng, lambda: _b64url(_rand_bytes(rng, 32)))


def _opaque_token(rng: Rng) -> str:
    n = int(rng.integers(32, 65))
    return _draw(rng, lambda: _pick(rng, ALNUM) + _rand(rng, _TOKEN_CHARS, n - 2)
                 + _pick(rng, ALNUM))


def gen_http_authorization(rng: Rng) -> str:
    """``<scheme> <credentials>``: the value of an Authorization header."""
    p = [w / sum(_SCHEME_WEIGHTS) for w in _SCHEME_WEIGHTS]
    scheme = SCHEMES[int(rng.choice(len(SCHEMES), p=p))]
    if scheme == "Basic":
        pair = f"{_pick(rng, _USERS)}:{gen_cli_password(rng)}"
        return "Basic " + base64.b64encode(pair.encode()).decode()
    if scheme == "Digest":
        algo, n = _pick(rng, (("MD5", 32), ("SHA-256", 64)))
        return (f'Digest username="{_pick(rng, _USERS)}", realm="api@acme.dev", '
                f'nonce="{_rand(rng, HEX, 32)}", uri="/v1/reports/{int(rng.integers(1, 999))}", '
                f'algorithm={algo}, qop=auth, nc=00000001, cnonce="{_rand(rng, HEX, 16)}", '
                f'response="{_draw(rng, lambda: _rand(rng, HEX, n))}", '
                f'opaque="{_rand(rng, HEX, 32)}"')
    if scheme == "AWS4-HMAC-SHA256":
        date = f"2026{int(rng.integers(1, 13)):02d}{int(rng.integers(1, 29)):02d}"
        region = _pick(rng, ("us-east-1", "eu-west-1", "ap-southeast-2"))
        service = _pick(rng, ("s3", "execute-api", "sqs", "dynamodb"))
        return (f"AWS4-HMAC-SHA256 Credential={gen_aws_access_key_id(rng)}/{date}/{region}/"
                f"{service}/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                f"Signature={_draw(rng, lambda: _rand(rng, HEX, 64))}")
    if scheme in ("Token", "token"):
        cred = (_draw(rng, lambda: _rand(rng, HEX, 40)) if rng.random() < 0.5
                else _opaque_token(rng))
    elif scheme == "Bearer":
        cred = (_opaque_token(rng) if rng.random() < 0.6
                else _draw(rng, lambda: _b64url(_rand_bytes(rng, int(rng.integers(24, 49))))))
    else:
        cred = gen_api_key_header(rng) if rng.random() < 0.5 else _opaque_token(rng)
    return f"{scheme} {cred}"


def http_authorization_span(raw: str) -> tuple[int, int]:
    """The credential of an Authorization value: the Digest ``response``, the AWS4
    ``Signature``, else everything after the scheme."""
    if raw.startswith("Digest "):
        s = raw.index('response="') + 10
        return s, raw.index('"', s)
    if raw.startswith("AWS4-HMAC-SHA256 "):
        s = raw.index("Signature=") + 10
        return s, len(raw)
    return raw.index(" ") + 1, len(raw)


SLOT_GENERATORS = {
    "http_authorization": gen_http_authorization,
    "api_key_header": gen_api_key_header,
    "cli_password": gen_cli_password,
}
SLOT_REGEX: dict[str, str] = {
    "http_authorization": (
        r"(?:Basic [A-Za-z0-9+/]+={0,2}"
        r"|(?:Bearer|Token|token|ApiKey|SSWS|DeepL-Auth-Key|Klaviyo-API-Key|GenieKey"
        r"|Zoho-oauthtoken) [\w.~-]+"
        r'|Digest username="[\w-]+", .*response="(?:[0-9a-f]{32}|[0-9a-f]{64})", opaque="[0-9a-f]{32}"'
        r"|AWS4-HMAC-SHA256 Credential=[A-Z0-9]{20}/\d{8}/[\w-]+/[\w-]+/aws4_request, "
        r"SignedHeaders=[\w;-]+, Signature=[0-9a-f]{64})"),
    "api_key_header": (r"[0-9a-f]{32}|[0-9a-f]{40}"
                       r"|[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
                       r"|[A-Za-z0-9]{32,40}|[\w-]{43}"),
    "cli_password": r"[A-Za-z0-9][A-Za-z0-9&*+._~!=-]{8,20}[A-Za-z0-9]",
}

# --------------------------------------------------------------------------- slot lines

_API_HOSTS = ("api.acme.dev", "hooks.acme.io", "reports.acme.internal", "api.partner.example.net")
_DB_HOSTS = ("db-prod-3.internal.acme.io", "10.4.2.17", "pg.staging.acme.dev", "mysql-01.acme.internal")
_DBS = ("orders", "billing", "app_production", "ledger")
_KEY_HEADERS = ("X-Api-Key", "X-API-KEY", "x-api-key", "X-Acme-Key", "X-Auth-Token",
                "X-Vault-Token", "X-Access-Token", "X-Shopify-Access-Token", "X-Goog-Api-Key",
                "Private-Token", "Api-Key", "Ocp-Apim-Subscription-Key", "X-Partner-Secret")


def _quote(secret: str) -> str:
    """The quote a shell argument holding ``secret`` takes (Digest values hold ``"``)."""
    return "'" if '"' in secret else '"'


def header_slot(rng: Rng, kind: str | None) -> tuple[str, str]:
    """``(header name, value template)`` a secret of format ``kind`` is sent in."""
    if kind == "http_authorization":
        return _pick(rng, ("Authorization", "Authorization", "authorization",
                           "Proxy-Authorization")), "{S}"
    if kind == "api_key_header":
        return _pick(rng, _KEY_HEADERS), "{S}"
    return _pick(rng, (("Authorization", "Bearer {S}"), ("Authorization", "token {S}"),
                       ("X-Api-Key", "{S}"), ("X-Auth-Token", "{S}")))


def _cli_password_line(rng: Rng, user: str) -> str:
    db, dbhost, api = _pick(rng, _DBS), _pick(rng, _DB_HOSTS), _pick(rng, _API_HOSTS)
    return _pick(rng, (
        f"curl -u {user}:{{S}} https://{api}/v1/status",
        f"curl -sS --user '{user}:{{S}}' -X POST https://{api}/hooks/deploy",
        f"mysql -h {dbhost} -u {user} -p{{S}} {db}",
        f"mysqldump -u root -p'{{S}}' --single-transaction {db} > {db}.sql",
        f"mariadb -u {user} -p\"{{S}}\" -e 'SHOW TABLES' {db}",
        f"sshpass -p '{{S}}' ssh {user}@10.4.2.17 'sudo systemctl restart app'",
        f"sshpass -p {{S}} scp build.tar.gz {user}@10.4.2.18:/srv/releases/",
        f"PGPASSWORD={{S}} psql -h {dbhost} -U {user} -d {db} -c 'select 1'",
        f"export PGPASSWORD='{{S}}' && pg_dump -h {dbhost} -U {user} {db} > {db}.sql",
        f"MYSQL_PWD={{S}} mysql -u {user} {db} < migrate.sql",
        f"docker login -u {user} -p {{S}} registry.acme.dev",
        f"docker login registry.acme.dev --username {user} --password {{S}}",
        f"podman login -u {user} -p '{{S}}' quay.io",
        f"git clone https://{user}:{{S}}@git.acme.dev/platform/api.git",
        f"git push https://{user}:{{S}}@gitlab.acme.dev/acme/infra.git HEAD:main",
        "redis-cli -h cache-01.acme.internal -a {S} ping",
        f"wget --user={user} --password={{S}} https://{api}/artifacts/app.tar.gz",
        f"http -a {user}:{{S}} GET https://{api}/v1/me",
        f"SSHPASS='{{S}}' sshpass -e ssh {user}@10.4.2.17 uptime",
    ))


def slot_line(rng: Rng, kind: str | None, secret: str) -> str:
    """A shell command or header line carrying a secret of format ``kind`` (``{S}``)."""
    user = _pick(rng, _USERS)
    api = _pick(rng, _API_HOSTS)
    if kind == "cli_password":
        return _cli_password_line(rng, user)
    if kind == "password_in_prose":  # its symbols (# ^ @) ask for quotes
        return _pick(rng, (
            f"mysql -u {user} -p'{{S}}' {_pick(rng, _DBS)}",
            f"sshpass -p '{{S}}' ssh {user}@10.4.2.17",
            f"./bin/admin create-user --name {user} --password '{{S}}'",
        ))
    if kind in ("http_authorization", "api_key_header"):
        name, value = header_slot(rng, kind)
        q = _quote(secret)
        return _pick(rng, (
            f"curl -sS -H {q}{name}: {value}{q} https://{api}/v1/accounts",
            f"curl --header {q}{name}: {value}{q} https://{api}/v2/events?limit=50",
            f"wget --header={q}{name}: {value}{q} https://{api}/exports/latest.csv",
            f"http GET https://{api}/v1/me {q}{name}:{value}{q}",
        ))
    if kind == "url_credentials":
        return _pick(rng, (
            "./scripts/migrate.sh --database-url '{S}' --yes",
            "DATABASE_URL='{S}' python manage.py migrate",
            "celery -A worker worker --broker='{S}' --loglevel=info",
        ))
    forms = [f"docker login ghcr.io -u {user} -p {{S}}",
             f"curl -u {user}:{{S}} https://{api}/v1/me",
             f"helm registry login registry.acme.dev -u {user} --password {{S}}",
             f"curl -H 'X-Api-Key: {{S}}' https://{api}/v1/reports"]
    if "/" not in secret:  # (a URL password cannot hold a slash)
        forms.append("git clone https://oauth2:{S}@gitlab.acme.dev/platform/api.git")
    return _pick(rng, tuple(forms))
