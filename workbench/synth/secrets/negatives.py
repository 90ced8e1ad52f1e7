"""Hard negatives: strings that look secret-ish (digests, ids, base64 of text,
documentation examples, placeholders, templates, prose about keys, identifiers, URLs
without credentials, redaction markers, public keys) and must never be redacted."""

from __future__ import annotations

import base64

from workbench.synth.secrets.contexts import _fill
from workbench.synth.secrets.draw import HEX, Rng, _pick, _rand, _rand_bytes
from workbench.synth.secrets.plant import PlantedSecret, _new_id
from workbench.synth.secrets.vendors import VENDOR_NEGATIVE_KINDS, vendor_negative

#: The hard negatives of the command-line and header family (workbench.synth.secrets.slots).
SLOT_NEGATIVE_KINDS: tuple[str, ...] = ("prompting_command", "credential_placeholder",
                                        "auth_doc_example", "non_secret_header")
NEGATIVE_KINDS: tuple[str, ...] = (
    "git_sha", "sha256", "sha512", "npm_integrity", "uuid", "base64_text", "doc_example",
    "placeholder", "template", "prose_about_keys", "camel_identifier", "url_no_credentials",
    "redaction_marker", "public_key_block",
) + SLOT_NEGATIVE_KINDS
#: The core kinds and those of the vendor families (drawn only when asked for).
ALL_NEGATIVE_KINDS: tuple[str, ...] = NEGATIVE_KINDS + VENDOR_NEGATIVE_KINDS

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
    if kind in SLOT_NEGATIVE_KINDS:
        return _slot_negative(rng, kind)
    if kind in VENDOR_NEGATIVE_KINDS:
        return vendor_negative(rng, kind)
    raise ValueError(f"unknown negative kind {kind!r}")


#: Commands that only prompt for the password or read it from elsewhere, and flags that
#: look like password flags but are not (ports, uid:gid, a database after ``-p``).
_PROMPTING = (
    "mysql -u root -p",
    "mysql -h db-prod-3.internal.acme.io -u app -p orders",
    "mysqldump -u app -p --single-transaction orders > orders.sql",
    "mariadb -u admin -p",
    "curl -u deploy https://api.acme.dev/v1/status",
    "curl --user ci-bot -X POST https://hooks.acme.io/hooks/deploy",
    "sshpass -f ~/.ssh/deploy.pass ssh deploy@10.4.2.17 uptime",
    "sshpass -e ssh deploy@10.4.2.17 'sudo systemctl restart app'",
    'echo "$REGISTRY_TOKEN" | docker login -u deploy --password-stdin registry.acme.dev',
    "cat ~/.ghcr_token | docker login ghcr.io -u ci-bot --password-stdin",
    "docker login -u deploy registry.acme.dev",
    "psql -h pg.staging.acme.dev -U app -W ledger",
    "git clone https://deploy@git.acme.dev/platform/api.git",
    "docker run -d -p 8080:80 -u 1000:1000 acme/web:1.4.2",
    "docker exec -u www-data:www-data web php artisan migrate",
    "ssh -p 2222 deploy@10.4.2.17",
    "mkdir -p /srv/app/releases && tar -xzf build.tar.gz -C /srv/app/releases",
    "redis-cli -h cache-01.acme.internal ping",
    "date -u +%Y-%m-%dT%H:%M:%SZ",
    "sort -u hosts.txt | xargs -n1 ping -c1",
)
#: Placeholders, templates and environment references in flag and header slots.
_SLOT_PLACEHOLDERS = (
    'curl -u "$DEPLOY_USER:$DEPLOY_PASSWORD" https://api.acme.dev/v1/status',
    'curl -H "Authorization: Bearer ${API_TOKEN}" https://api.acme.dev/v1/me',
    "curl -H 'Authorization: Bearer <token>' https://api.acme.dev/v1/me",
    "curl -H 'X-Api-Key: <your-api-key>' https://api.acme.dev/v1/reports",
    'curl -H "X-Api-Key: $ACME_API_KEY" https://api.acme.dev/v1/reports',
    'mysql -u root -p"$MYSQL_ROOT_PASSWORD" orders',
    "mysql -u root -p'****' orders",
    'sshpass -p "$SSHPASS" ssh deploy@10.4.2.17',
    "docker login -u deploy -p ${REGISTRY_PASSWORD} registry.acme.dev",
    "docker login -u deploy -p xxxxxxxx registry.acme.dev",
    "PGPASSWORD=xxx psql -h db -U app",
    "Authorization: Basic <base64(user:password)>",
    "Authorization: Bearer YOUR_ACCESS_TOKEN",
    'headers = {"X-Api-Key": os.environ["ACME_API_KEY"]}',
    'headers = {"Authorization": f"Bearer {token}"}',
    "git clone https://deploy:${GIT_TOKEN}@git.acme.dev/platform/api.git",
    "curl -u %API_USER%:%API_PASSWORD% https://api.acme.dev/v1/status",
    "X-Auth-Token: {{ vault_token }}",
    "redis-cli -a '<password>' ping",
    "curl -u user:password https://httpbin.org/basic-auth/user/password",
)
#: Documentation examples (RFC 7617, 6750, 2617, AWS SigV4, Stripe, jwt.io, GitHub).
_SLOT_DOC_EXAMPLES = (
    "curl https://api.stripe.com/v1/charges -u sk_test_4eC39HqLyjWDarjtT1zdp7dc:",
    "Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "Authorization: Bearer mF_9.B5f-4.1JqM",
    'Authorization: Digest username="Mufasa", realm="testrealm@host.com", '
    'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", qop=auth, '
    'nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1", '
    'opaque="5ccc069c403ebaf9f0171e9517f40e41"',
    "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
    "aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
    "Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
    "curl -H 'Authorization: Bearer " + DOC_EXAMPLES[4] + "' https://api.acme.dev/v1/me",
    "curl -u AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY https://s3.amazonaws.com/",
    "docker login ghcr.io -u octocat -p ghp_16C7e42F292c6912E7710c838347Ae178B4a",
)


def _uuid(rng: Rng) -> str:
    h = _rand(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_pick(rng, '89ab')}{h[17:20]}-{h[20:]}"


def _non_secret_header(rng: Rng) -> str:
    """A header that names an id, a digest, a cache key or a setting: no credential."""
    return _pick(rng, (
        f"X-Request-Id: {_uuid(rng)}", f"X-Idempotency-Key: {_uuid(rng)}",
        f"Idempotency-Key: {_uuid(rng)}", f"X-Amz-Content-Sha256: {_rand(rng, HEX, 64)}",
        f'ETag: "{_rand(rng, HEX, 32)}"', f"X-Correlation-Id: {_uuid(rng)}",
        f"X-Trace-Id: {_rand(rng, HEX, 32)}", f"x-amzn-RequestId: {_uuid(rng)}",
        "X-GitHub-Request-Id: C0A8:1F2B:3C4D5E:6F7A8B:65F1A2B3",
        "X-Cache-Key: /v1/accounts?limit=50", "X-RateLimit-Remaining: 4999",
        "X-Amz-Date: 20260314T091244Z", "X-Api-Version: 2024-06-01",
        "Authorization: required", "X-Content-Type-Options: nosniff",
    ))


def _slot_negative(rng: Rng, kind: str) -> tuple[str, str]:
    if kind == "non_secret_header":
        return _non_secret_header(rng), _pick(rng, ("< HTTP/2 200\n< {S}\n", "{S}\n",
                                                    "The response carried `{S}`."))
    lines = {"prompting_command": _PROMPTING, "credential_placeholder": _SLOT_PLACEHOLDERS,
             "auth_doc_example": _SLOT_DOC_EXAMPLES}[kind]
    return _pick(rng, lines), _pick(rng, ("$ {S}\n", "Run `{S}` first.", "{S}\n"))


def plant_negative(rng: Rng, kind: str, *, secret_id: str | None = None) -> PlantedSecret:
    """A hard negative: a secret-looking string that a redactor must leave alone."""
    sid = secret_id or _new_id(rng, "neg")
    token, template = _negative_token(rng, kind)
    text, start, end = _fill(template, token)
    return PlantedSecret(secret_id=sid, kind=kind, context="negative", transform="none",
                         value=token, parts=((text, start, end),), negative=True, carrier=token)
