"""Contexts: ``ctx(secret, rng, kind=None) -> (text, start, end)`` writes a transcript
snippet (prose, markdown, JSON tool call/result, shell, .env, YAML, INI, stack trace, URL;
a shell command, a raw HTTP request, a JSON header map, Python ``headers={...}``) with
``text[start:end]`` the embedded string, JSON-escaped where the context is a JSON string or
a quoted scalar. ``kind`` (the format) picks the labels and the templates that suit it (a
password gets its keyword, a PEM block its own lines, a command-line or header format the
flag or header it is given to: :func:`~workbench.synth.secrets.slots.slot_line`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from workbench.synth.secrets.draw import Rng, _pick
from workbench.synth.secrets.formats import _URL_HOSTS, _URL_USERS
from workbench.synth.secrets.slots import SLOT_FORMATS, _quote, header_slot, slot_line
from workbench.synth.secrets.vendors import KEY_NAMED_FORMATS

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
    "http_authorization": (("HTTP_AUTHORIZATION",), "Authorization header"),
    "api_key_header": (("ACME_API_KEY", "DD_API_KEY", "PARTNER_API_KEY"), "API key"),
    "cli_password": (("PGPASSWORD", "MYSQL_PWD", "SSHPASS"), "database password"),
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
    if kind in SLOT_FORMATS:
        line = slot_line(rng, kind, secret)
        t = _pick(rng, ("I ran `" + line + "` and it still returns 401 on {svc}.",
                        "The deploy notes say to run `" + line + "` before the release.",
                        "Looks like someone pasted `" + line + "` into the {svc} runbook."))
        return _fill(t, secret, svc=svc)
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
    if kind in SLOT_FORMATS:
        line = slot_line(rng, kind, secret)
        return _fill(_pick(rng, ("Run `" + line + "` to check access.",
                                 "Then `" + line + "` worked.")), secret)
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
    elif form == 1 and kind in SLOT_FORMATS:
        obj = {"type": "tool_use", "id": _TOOLU, "name": "Bash",
               "input": {"command": slot_line(rng, kind, secret).format(S=_SENTINEL),
                         "description": "Check the credentials"}}
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
    if (kind in SLOT_FORMATS or kind in KEY_NAMED_FORMATS) and _multiline(secret):
        return _fill("{env}: \"{S}\"\nretries: 3\n", secret, escape=True, env=env)
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
    elif kind in SLOT_FORMATS:
        tail = "RuntimeError: command failed (exit 1): " + slot_line(rng, kind, secret) + "\n"
    elif kind in KEY_NAMED_FORMATS and _multiline(secret):
        return _fill(head + "KeyError: 'account'\n  locals: {envl}='{S}', retries=3\n", secret,
                     escape=True, svc=svc, ln=ln, envl=env.lower())
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


def ctx_shell_command(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    """A terminal line: a command that gives the secret to a flag, a header or a URL."""
    line = slot_line(rng, kind, secret)
    t = _pick(rng, ("$ " + line + "\n",
                    "$ " + line + "\nLogin Succeeded\n",
                    "$ cd /srv/app && " + line + "\n$ echo $?\n0\n"))
    return _fill(t, secret)


_HTTP_PATHS = ("/v1/accounts?limit=50", "/v2/reports/export", "/api/v3/users/me", "/internal/jobs")


def ctx_http_request(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    """A raw HTTP request (a proxy log, ``curl -v`` output) with the secret in a header."""
    name, value = header_slot(rng, kind)
    method, path = _pick(rng, ("GET", "POST", "DELETE")), _pick(rng, _HTTP_PATHS)
    if rng.random() < 0.5:
        t = (f"{method} {path} HTTP/1.1\nHost: api.acme.dev\nUser-Agent: python-requests/2.31.0\n"
             f"{name}: {value}\nAccept: application/json\nConnection: keep-alive\n\n")
    else:
        t = (f"> {method} {path} HTTP/2\n> Host: api.acme.dev\n> user-agent: curl/8.5.0\n"
             f"> {name}: {value}\n> accept: */*\n>\n< HTTP/2 401\n< content-type: application/json\n")
    return _fill(t, secret)


def ctx_json_headers(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    """A JSON header map: a web-request tool call, or the request echoed in its result."""
    name, value = header_slot(rng, kind)
    headers = {"Accept": "application/json", name: value.replace("{S}", _SENTINEL)}
    url = "https://api.acme.dev" + _pick(rng, _HTTP_PATHS)
    if rng.random() < 0.5:
        obj = {"type": "tool_use", "id": _TOOLU, "name": "http_request",
               "input": {"method": "GET", "url": url, "headers": headers}}
    else:
        obj = {"type": "tool_result", "tool_use_id": _TOOLU, "is_error": True,
               "content": {"error": "401 Unauthorized",
                           "request": {"method": "GET", "url": url, "headers": headers}}}
    return _fill_json(obj, secret)


def ctx_python_headers(secret: str, rng: Rng, kind: str | None = None) -> tuple[str, int, int]:
    """Python code sending the secret in a header (``requests``, ``httpx``, a session)."""
    name, value = header_slot(rng, kind)
    q = _quote(secret)
    lit = f"{{{{{q}{name}{q}: {q}{value}{q}}}}}"
    t = _pick(rng, (
        "resp = requests.get(\"https://api.acme.dev/v1/reports\", headers=" + lit + ", timeout=10)\n"
        "resp.raise_for_status()\n",
        "client = httpx.Client(base_url=\"https://api.acme.dev\", headers=" + lit + ")\n",
        "session = requests.Session()\nsession.headers.update(" + lit + ")\n",
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
    "shell_command": ctx_shell_command,
    "http_request": ctx_http_request,
    "json_headers": ctx_json_headers,
    "python_headers": ctx_python_headers,
}
CONTEXTS: tuple[str, ...] = tuple(CONTEXT_FUNCS)
