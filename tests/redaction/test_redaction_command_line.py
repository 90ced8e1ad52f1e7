"""Credentials on command lines and in HTTP headers (issue 15 item 3): every form of the
family redacted with exact output, through the normalisation, decoding and junction
passes like the other families; the forms that only prompt, placeholders and
documentation examples left alone."""

from __future__ import annotations

import base64
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.redaction import harness as H
from workbench.synth import secrets as S
from workbench.synth.secrets import negatives as NEG

PW = "Tr0ub4dor&ByGiR1"
HEX32 = "4f9a8c2e1b7d3f6a0e5c9b2d8f1a4e7c"
TOKEN = "7fK2mQ9xLp4Rt8Zv1Nc6Wb3Yh5Dj0Sa"
UUID = "3b1e0c9a-5d4f-4e2b-9a8c-7f6e5d4c3b2a"
SIG = "8d1c0a2e9f3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5"
R = "<REDACTED:{}>".format


def test_the_finding_of_issue_15_curl_user_password():
    """`curl -u deploy:Tr0ub4dor&ByGiR1 https://x` stayed in derived text."""
    text = "curl -u deploy:Tr0ub4dor&ByGiR1 https://x"
    assert H.redact(text).text == f"curl -u deploy:{R('cli_password')} https://x"


@pytest.mark.parametrize("text,expected", [
    # curl -u / --user, quoted, glued, after =, HTTPie -a
    (f"curl --user deploy:{PW} https://x", f"curl --user deploy:{R('cli_password')} https://x"),
    (f"curl -u 'deploy:{PW}' https://x", f"curl -u 'deploy:{R('cli_password')}' https://x"),
    (f'curl -u "deploy:{PW}" https://x', f'curl -u "deploy:{R("cli_password")}" https://x'),
    (f"curl --user=deploy:{PW} https://x", f"curl --user={'deploy:'}{R('cli_password')} https://x"),
    (f"curl -sS -udeploy:{PW} https://x", f"curl -sS -udeploy:{R('cli_password')} https://x"),
    (f"http -a deploy:{PW} GET https://x", f"http -a deploy:{R('cli_password')} GET https://x"),
    (f"curl -u {TOKEN}: https://api.x/v1", f"curl -u {R('cli_password')}: https://api.x/v1"),
    # --password= / --password VALUE (a password keyword)
    (f"mysql --password={PW} orders", f"mysql --password={R('password_in_prose')} orders"),
    (f"mysql --password {PW} orders", f"mysql --password {R('password_in_prose')} orders"),
    (f"./admin --password '{PW}' --yes", f"./admin --password '{R('password_in_prose')}' --yes"),
    # -p<pass> for mysql-like clients
    (f"mysql -u root -p{PW} orders", f"mysql -u root -p{R('cli_password')} orders"),
    (f"mysqldump -u root -p'{PW}' shop > s.sql", f"mysqldump -u root -p'{R('cli_password')}' shop > s.sql"),
    (f'mariadb -u app -p"{PW}" -e "show tables"', f'mariadb -u app -p"{R("cli_password")}" -e "show tables"'),
    (f"/usr/bin/mysqladmin -uroot -p{PW} status", f"/usr/bin/mysqladmin -uroot -p{R('cli_password')} status"),
    # sshpass -p, spaced, glued, quoted
    (f"sshpass -p {PW} ssh deploy@10.0.0.4", f"sshpass -p {R('cli_password')} ssh deploy@10.0.0.4"),
    (f"sshpass -p'{PW}' scp a.tgz h:/srv", f"sshpass -p'{R('cli_password')}' scp a.tgz h:/srv"),
    # env prefix and export
    (f"PGPASSWORD={PW} psql -h db -U app", f"PGPASSWORD={R('password_in_prose')} psql -h db -U app"),
    (f"MYSQL_PWD={PW} mysql -u app", f"MYSQL_PWD={R('password_in_prose')} mysql -u app"),
    (f"export PGPASSWORD='{PW}'", f"export PGPASSWORD='{R('password_in_prose')}'"),
    (f"SSHPASS={PW} sshpass -e ssh h", f"SSHPASS={R('password_in_prose')} sshpass -e ssh h"),
    # registry logins
    (f"docker login -u deploy -p {PW} reg.acme.dev", f"docker login -u deploy -p {R('cli_password')} reg.acme.dev"),
    (f"docker login --password={PW} reg.acme.dev", f"docker login --password={R('password_in_prose')} reg.acme.dev"),
    (f"podman login -u ci -p '{PW}' quay.io", f"podman login -u ci -p '{R('cli_password')}' quay.io"),
    (f"redis-cli -h cache -a {PW} ping", f"redis-cli -h cache -a {R('cli_password')} ping"),
    # git credential URLs, other schemes too
    (f"git clone https://deploy:{PW}@git.acme.dev/x.git", f"git clone https://deploy:{R('url_credentials')}@git.acme.dev/x.git"),
    (f"git push git+ssh://deploy:{PW}@git.acme.dev/x.git", f"git push git+ssh://deploy:{R('url_credentials')}@git.acme.dev/x.git"),
    (f"svn co svn+ssh://deploy:{PW}@svn.acme.dev/x", f"svn co svn+ssh://deploy:{R('url_credentials')}@svn.acme.dev/x"),
    (f"curl ftp://deploy:{PW}@ftp.acme.dev/a.tgz", f"curl ftp://deploy:{R('url_credentials')}@ftp.acme.dev/a.tgz"),
    (f"git clone https://{HEX32}9c1f4e2a@github.com/acme/x.git",
     f"git clone https://{R('url_credentials')}@github.com/acme/x.git"),
])
def test_command_line_forms(text, expected):
    assert H.redact(text).text == expected


_BASIC = base64.b64encode(f"deploy:{PW}".encode()).decode()
_DIGEST = ('Digest username="deploy", realm="api@acme.dev", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c0", '
           'uri="/v1", qop=auth, nc=00000001, cnonce="0a4f113b0a4f113b", response="{r}", '
           'opaque="5ccc069c403ebaf9f0171e9517f40e41"')
_AWS4 = ("AWS4-HMAC-SHA256 Credential=AKIAQ7WE9RT2YU4IO6PA/20260314/us-east-1/s3/aws4_request, "
         "SignedHeaders=host;x-amz-date, Signature={s}")


_SCHEMES = [
    (f"Basic {_BASIC}", f"Basic {R('http_authorization')}"),
    (f"Bearer {TOKEN}", f"Bearer {R('http_authorization')}"),
    (f"Bearer {HEX32}", f"Bearer {R('http_authorization')}"),
    (f"Token {HEX32}1a2b3c4d", f"Token {R('http_authorization')}"),
    (f"token {TOKEN}", f"token {R('http_authorization')}"),
    (f"ApiKey {UUID}", f"ApiKey {R('http_authorization')}"),
    (f"SSWS 00Qe{TOKEN}", f"SSWS {R('http_authorization')}"),
    (f"DeepL-Auth-Key {UUID}:fx", f"DeepL-Auth-Key {R('http_authorization')}"),
    (_DIGEST.format(r=HEX32), _DIGEST.format(r=R("http_authorization"))),
    (_AWS4.format(s=SIG), _AWS4.replace("AKIAQ7WE9RT2YU4IO6PA", R("aws_access_key_id"))
     .format(s=R("http_authorization"))),
    (TOKEN, R("http_authorization")),  # a value without a scheme
]
_FRAMES = [
    "curl -sS -H 'Authorization: {h}' https://api.acme.dev/v1",
    "GET /v1 HTTP/1.1\nHost: api.acme.dev\nAuthorization: {h}\nAccept: */*\n",
    "> Proxy-Authorization: {h}\n",
    '{{"headers": {{"Accept": "application/json", "Authorization": "{h}"}}}}',
]


def _frame(frame: str, header: str) -> str:
    """The frame around ``header``; a Digest value's quotes escaped inside a double-quoted
    shell argument or a JSON string."""
    if '"' in header and frame[0] in "c{":
        frame = frame.replace("'", '"')
        header = header.replace('"', '\\"')
    return frame.format(h=header)


@pytest.mark.parametrize("header,expected", _SCHEMES)
@pytest.mark.parametrize("frame", _FRAMES)
def test_authorization_in_every_scheme(header, expected, frame):
    assert H.redact(_frame(frame, header)).text == _frame(frame, expected)


@pytest.mark.parametrize("value", [HEX32, UUID, TOKEN, HEX32 + "0a1b2c3d"])
@pytest.mark.parametrize("frame", [
    "curl -H 'X-Api-Key: {v}' https://api.acme.dev/v1/reports",
    "curl -H \"X-Acme-Token: {v}\" https://api.acme.dev/v1/reports",
    "GET /v1 HTTP/1.1\nHost: x\nX-Vault-Token: {v}\n",
    "Private-Token: {v}\n",
    '{{"method": "GET", "headers": {{"x-api-key": "{v}"}}}}',
    '{{\\"headers\\": {{\\"X-Auth-Token\\": \\"{v}\\"}}}}',
    "resp = requests.get(url, headers={{'X-API-KEY': '{v}'}}, timeout=10)",
    "http GET https://api.acme.dev/v1/me X-Partner-Secret:{v}",
])
def test_key_headers_in_every_frame(value, frame):
    assert H.redact(frame.format(v=value)).text == frame.format(v=R("api_key_header"))


@pytest.mark.parametrize("text", [
    # forms that only prompt or read the password elsewhere
    "mysql -p", "mysql -u root -p", "mysql -u root -p dbname", "mysqldump -u app -p shop > s.sql",
    "curl -u deploy https://x", "curl --user ci-bot -X POST https://x", "sshpass -f ~/.pw ssh x",
    "sshpass -e ssh deploy@10.0.0.4", "echo $PW | docker login -u deploy --password-stdin registry",
    "docker login -u deploy registry.acme.dev", "psql -h db -U app -W ledger",
    "git clone https://deploy@git.acme.dev/x.git",
    # flags that are not password flags
    "docker run -u 1000:1000 -p 8080:80 img", "docker exec -u www-data:www-data web ls",
    "ssh -p 2222 deploy@10.0.0.4", "mkdir -p /srv/app", "date -u +%Y-%m-%dT%H:%M:%SZ",
    "git add -u", "sort -u hosts.txt", "docker exec -u deploy:staff web id", "ls -a ~/.ssh",
    # placeholders, templates, environment references
    "curl -u $USER:$PASSWORD https://x", 'curl -u "${USER}:${PASS}" https://x',
    "curl -u %API_USER%:%API_PASSWORD% https://x", "curl -H 'Authorization: Bearer ${TOKEN}' x",
    "curl -H 'Authorization: Bearer <token>' x", "-H 'X-Api-Key: ****'", "Authorization: Bearer xxx",
    "Authorization: Bearer YOUR_ACCESS_TOKEN", "Authorization: Basic <base64(user:password)>",
    'mysql -u root -p"$MYSQL_ROOT_PASSWORD" orders', "mysql -u root -p'****' orders",
    "sshpass -p \"$SSHPASS\" ssh h", "docker login -u x -p xxxxxxxx reg", "PGPASSWORD=xxx psql",
    'headers = {"X-Api-Key": os.environ["ACME_API_KEY"]}', 'headers = {"Authorization": f"Bearer {token}"}',
    "X-Auth-Token: {{ vault_token }}", "redis-cli -a '<password>' ping",
    "curl -u user:password https://httpbin.org/basic-auth/user/password",
    # documentation examples
    "curl https://api.stripe.com/v1/charges -u sk_test_4eC39HqLyjWDarjtT1zdp7dc:",
    "Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "Authorization: Bearer mF_9.B5f-4.1JqM",
    "curl -u AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY https://s3.amazonaws.com/",
    "docker login ghcr.io -u octocat -p ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    # headers without credentials
    f"X-Request-Id: {UUID}", f"X-Idempotency-Key: {UUID}", f"Idempotency-Key: {UUID}",
    f"X-Amz-Content-Sha256: {SIG}", "X-Cache-Key: /v1/accounts?limit=50", "Authorization: required",
    "the authorization header is missing", "authorization_url: https://auth.acme.dev/authorize",
    "git clone https://x-access-token@github.com/acme/infra.git",
])
def test_hard_negatives_are_untouched(text):
    assert H.scan(text) == [], H.scan(text)


@pytest.mark.parametrize("kind", ["prompting_command", "credential_placeholder", "auth_doc_example",
                                  "non_secret_header"])
def test_generated_hard_negatives_of_the_family(kind):
    rng = np.random.default_rng(15)
    for _ in range(200):
        text = S.plant_negative(rng, kind).parts[0][0]
        assert H.scan(text) == [], text
    assert kind in S.NEGATIVE_KINDS


def test_every_documented_example_of_the_family_is_untouched():
    for line in NEG._SLOT_DOC_EXAMPLES + NEG._SLOT_PLACEHOLDERS + NEG._PROMPTING:
        assert H.scan(line) == [], line


# --------------------------------------------------------------------------- disguises


def test_split_across_messages_and_lines():
    a, b = "curl -u deploy:Tr0ub4", "dor&ByGiR1 https://x"
    out = [r.text for r in H.redact_messages([a, b])]
    assert out == [f"curl -u deploy:{R('cli_password')}", f"{R('cli_password')} https://x"]
    # (within one text the finding spans the line break)
    assert H.redact(f"mysql -p{PW[:7]}\n{PW[7:]} orders").text == f"mysql -p{R('cli_password')} orders"
    a, b = f"X-Api-Key: {UUID[:13]}", f"{UUID[13:]}\nAccept: */*"
    out = [r.text for r in H.redact_messages([a, b])]
    assert out == [f"X-Api-Key: {R('api_key_header')}", f"{R('api_key_header')}\nAccept: */*"]


def test_zero_width_homoglyphs_and_fullwidth():
    zw = PW[:5] + "\u200b" + PW[5:10] + "\u2060" + PW[10:]
    assert H.redact(f"sshpass -p {zw} ssh h").text == f"sshpass -p {R('cli_password')} ssh h"
    glyph = HEX32.replace("a", "\u0430").replace("e", "\u0435")  # Cyrillic a, e
    assert H.redact(f"X-Api-Key: {glyph}").text == f"X-Api-Key: {R('api_key_header')}"
    full = "".join(chr(ord(c) + 0xFEE0) for c in TOKEN)
    assert H.redact(f"Authorization: Bearer {full}").text == f"Authorization: Bearer {R('http_authorization')}"


@pytest.mark.parametrize("encode", [
    lambda s: base64.b64encode(s.encode()).decode(),
    lambda s: s.encode().hex(),
    lambda s: "".join(f"%{ord(c):02X}" for c in s),
])
def test_encoded_values_in_their_slot(encode):
    """A value written encoded in its slot is redacted whole (the slot vouches for it)."""
    for frame, value, kind in (("curl -u deploy:{} https://x", PW, "cli_password"),
                               ("X-Api-Key: {}", HEX32, "api_key_header"),
                               ("Authorization: {}", "Bearer " + TOKEN, "http_authorization"),
                               ("export ACME_API_KEY={}", HEX32, "secret")):
        text = frame.format(encode(value))
        out = H.redact(text).text
        assert out == frame.format(R(kind)) or (kind != "secret" and R(kind) in out), out
        assert not H.leaked(value, out) and not H.leaked(encode(value), out), out


def test_api_keys_after_a_keyword_hex_and_uuid():
    assert H.redact(f"DD_API_KEY={HEX32}").text == f"DD_API_KEY={R('secret')}"
    assert H.redact(f"export HEROKU_API_KEY={UUID}").text == f"export HEROKU_API_KEY={R('secret')}"
    assert H.redact(f"GET /x?format=csv&api_key={HEX32}&limit=500").text == (
        f"GET /x?format=csv&api_key={R('secret')}&limit=500")
    for text in (f'"next_page_token": "{UUID}"', f"request_token={UUID}", f"session_token: {UUID}"):
        assert H.scan(text) == [], text  # ids and cursors


# --------------------------------------------------------------------------- generated

_PW_ALPHABET = string.ascii_letters + string.digits + "&*+-._~!="
#: Passwords as the generator draws them (workbench.synth.secrets.slots.gen_cli_password):
#: alphanumeric ends, a digit, both cases, and not filler (``00000000Aa``)
_passwords = st.text(alphabet=_PW_ALPHABET, min_size=10, max_size=22).filter(
    lambda p: p[0].isalnum() and p[-1].isalnum() and any(c.isdigit() for c in p)
    and any(c.isupper() for c in p) and any(c.islower() for c in p)
    and len(set(p)) > max(3, len(p) // 5))
_COMMANDS = (
    "curl -u {user}:{q}{pw}{q} https://api.acme.dev/v1", "curl --user '{user}:{pw}' https://x",
    "mysql -h db -u {user} -p{q}{pw}{q} orders", "mysqldump -u {user} -p{q}{pw}{q} shop",
    "sshpass -p {q}{pw}{q} ssh {user}@10.0.0.4", "docker login -u {user} -p {q}{pw}{q} reg.acme.dev",
    "PGPASSWORD={q}{pw}{q} psql -U {user}", "MYSQL_PWD={q}{pw}{q} mysql -u {user}",
    "git clone https://{user}:{pw}@git.acme.dev/x.git", "redis-cli -a {q}{pw}{q} ping",
    "wget --user={user} --password={q}{pw}{q} https://x", "http -a {user}:{pw} GET https://x",
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_COMMANDS), _passwords, st.sampled_from(["deploy", "ci-bot", "app_rw"]),
       st.sampled_from(["", "'", '"']), st.sampled_from(["{}", "$ {}\n", '"command": "{}"', "`{}`"]))
def test_generated_command_lines_lose_the_password_and_keep_the_rest(cmd, pw, user, q, frame):
    text = frame.format(cmd.format(user=user, pw=pw, q=q))
    out = H.redact(text).text
    assert not H.leaked(pw, out), out
    assert "<REDACTED:" in out and (user in out or "{user}" not in cmd)  # the rest stays readable
    assert H.redact(out).text == out


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(NEG._PROMPTING + NEG._SLOT_PLACEHOLDERS),
       st.sampled_from(["{}", "$ {}\n", '"command": "{}"', "`{}`", "- {}"]))
def test_generated_prompting_and_placeholder_lines_are_untouched(line, frame):
    assert H.scan(frame.format(line)) == []
