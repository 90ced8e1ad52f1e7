"""Provider tokens beyond the core formats: the rows of ``docs/redaction-coverage.md``
covered by a token shape of their own (Databricks ``dapi``, DigitalOcean ``do?_v1_``,
Shopify ``shp??_``, Vault ``hvs.``, Slack and Teams webhooks, Azure account keys, ...).

Each rule is ``(kind, trigger, regex)``; group ``v`` (or the whole match) is the secret. A
rule whose match starts with its trigger is tried only where a token run starts (one
``startswith`` over all such prefixes per run, the runs the driver already found); the
few whose trigger sits inside the token (``-us``, ``Q~``, ``:AA``, webhook hosts) run
over a view that holds their trigger. Tokens must not be glued to letters or digits on either side (a JSON ``\\n``
escape before one is fine),
and their variable bodies must look random: a placeholder (``xxxx``, ``0000``, ``YOUR_``,
``<token>``), an English-looking body or a documentation example is no finding, so the hard
negatives of :mod:`workbench.synth.secrets.vendors` never match. The patterns are our own,
written from the providers' published token formats.

>>> from workbench.redaction.rules import scan
>>> scan("DATABRICKS_TOKEN=dapi" + "3f9a0c7e2b" * 3 + "d1 ok")
[(17, 53, 'databricks_token')]
>>> scan("DATABRICKS_TOKEN=dapi" + "x" * 32)
[]
"""

from __future__ import annotations

import re

from workbench.redaction.rules.shape import (
    _PLACEHOLDER_WORDS,
    Finding,
    _classes,
    _in_doc_example,
    after_fixed_head,
    is_placeholder,
    is_wordy,
    is_wordy_strict,
    placeholder_after_head,
    reads_as_words,
)

_R = r"(?![A-Za-z0-9])"         # not glued to a letter or digit on the right
_RW = r"(?![A-Za-z0-9_-])"      # ... nor to a word character or dash
_WD = r"[A-Za-z0-9_-]"
_B64 = r"[A-Za-z0-9+/]"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


#: (kind, trigger literal, regex). Group ``v`` is the secret when the regex has one.
VENDOR_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("onepassword_secret_key", "A3-", _r(r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{6}-[A-Z0-9]{5}|[A-Z0-9]{11})"
                                         r"(?:-[A-Z0-9]{5}){3}" + _R)),
    ("onepassword_service_token", "ops_eyJ", _r(r"ops_eyJ[A-Za-z0-9_-]{100,}={0,2}" + _RW)),
    ("adafruit_io_key", "aio_", _r(r"aio_[A-Za-z0-9]{28}" + _R)),
    ("age_secret_key", "AGE-SECRET-KEY-1", _r(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _R)),
    ("airtable_pat", "pat", _r(r"pat[A-Za-z0-9]{14}\.[0-9a-f]{64}" + _R)),
    ("alibaba_access_key_id", "LTAI", _r(r"LTAI[A-Za-z0-9]{12,20}" + _R)),
    ("artifactory_token", "AKCp", _r(r"AKCp[A-Za-z0-9]{65,75}" + _R)),
    ("artifactory_token", "cmVmdGtu", _r(r"cmVmdGtuOjAxOj[A-Za-z0-9]{40,60}" + _R)),
    ("atlassian_api_token", "ATATT3", _r(r"ATATT3[A-Za-z0-9_=-]{150,260}" + _RW)),
    ("authress_key", ".acc", _r(r"(?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}"
                                r"\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}" + _RW)),
    ("aws_bedrock_api_key", "ABSK", _r(r"ABSK[A-Za-z0-9+/]{100,280}={0,2}" + _R)),
    ("aws_bedrock_api_key", "bedrock-api-key-",
     _r(r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/]{40,}={0,2}")),
    ("azure_ad_client_secret", "Q~", _r(r"[A-Za-z0-9_.~-]{3}[0-9]Q~[A-Za-z0-9_.~-]{31,34}"
                                        + r"(?![A-Za-z0-9_~-])")),  # (a full stop may follow)
    ("azure_storage_key", "AccountKey=", _r(r"AccountKey=(?P<v>[A-Za-z0-9+/]{86}==)")),
    ("clickhouse_secret", "4b1d", _r(r"4b1d[A-Za-z0-9]{38}" + _R)),
    ("clojars_token", "CLOJARS_", _r(r"CLOJARS_[a-z0-9]{60}" + _R)),
    ("cloudflare_origin_ca_key", "v1.0-", _r(r"v1\.0-[0-9a-f]{24}-[0-9a-f]{146}" + _R)),
    ("databricks_token", "dapi", _r(r"dapi[0-9a-f]{32}(?:-[0-9])?" + _R)),
    ("defined_networking_key", "dnkey-", _r(r"dnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}" + _RW)),
    ("digitalocean_token", "do", _r(r"do[opr]_v1_[0-9a-f]{64}" + _R)),
    ("doppler_token", "dp.", _r(r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}" + _R)),
    ("duffel_token", "duffel_", _r(r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}" + _RW)),
    ("dynatrace_token", "dt0c01.", _r(r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}" + _R)),
    ("easypost_key", "EZ", _r(r"EZ[AT]K[A-Za-z0-9]{54}" + _R)),
    ("facebook_access_token", "EAA", _r(r"EAA[BCDGIJ-Z][A-Za-z0-9]{90,250}" + _R)),
    ("flutterwave_secret", "FLWSECK", _r(r"FLWSECK(?:_TEST)?-?[0-9a-h]{12,32}(?:-X)?" + _R)),
    ("flyio_token", "fo1_", _r(r"fo1_[A-Za-z0-9_-]{43}" + _RW)),
    ("flyio_token", "fm", _r(r"fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,}={0,3}" + _R)),
    ("frameio_token", "fio-u-", _r(r"fio-u-[A-Za-z0-9_=-]{64}" + _RW)),
    ("gitlab_token", "gl", _r(r"gl(?:cbt-[A-Za-z0-9]{1,5}_|dt-|ffct-|ft-|imt-|agent-|oas-|ptt-|"
                              r"rt-(?:t[0-9]_)?|soat-)[A-Za-z0-9_-]{20,300}"
                              r"(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?" + _RW)),
    # a personal access token is the core rule's (gitlab_pat); only its routable form is new
    ("gitlab_token", "glpat-", _r(r"glpat-[A-Za-z0-9_-]{20,300}\.[0-9a-z]{2}\.[0-9a-z]{9}" + _RW)),
    ("gitlab_token", "GR1348941", _r(r"GR1348941[A-Za-z0-9_-]{20}" + _RW)),
    ("gitlab_token", "_gitlab_session=", _r(r"_gitlab_session=(?P<v>[0-9a-z]{32})" + _R)),
    ("grafana_token", "glc_", _r(r"glc_[A-Za-z0-9+/_-]{32,400}={0,3}" + _RW)),
    ("grafana_token", "glsa_", _r(r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + _R)),
    ("grafana_token", "eyJrIjoi", _r(r"eyJrIjoi[A-Za-z0-9_-]{50,400}={0,2}" + _RW)),
    ("harness_token", "at.", _r(r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}" + _R)),
    ("terraform_cloud_token", ".atlasv1.", _r(r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}" + _RW)),
    ("heroku_key", "HRKU-", _r(r"HRKU-AA[A-Za-z0-9_-]{58}" + _RW)),
    ("huggingface_org_token", "api_org_", _r(r"api_org_[A-Za-z]{34}" + _R)),
    ("infracost_key", "ico-", _r(r"ico-[A-Za-z0-9]{32}" + _R)),
    ("intra42_secret", "s-s4t2", _r(r"s-s4t2(?:ud|af)-[0-9a-f]{64}" + _R)),
    ("linear_key", "lin_api_", _r(r"lin_api_[A-Za-z0-9]{40}" + _R)),
    ("mailchimp_key", "-us", _r(r"[0-9a-f]{32}-us[0-9]{1,2}" + _R)),
    ("mailgun_key", "key-", _r(r"key-[0-9a-f]{32}" + _R)),
    ("mapbox_secret_token", "sk.eyJ", _r(r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}" + _RW)),
    ("maxmind_key", "_mmk", _r(r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + _R)),
    ("teams_webhook", "webhook.office.com", _r(
        r"https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/" + _UUID + "@" + _UUID
        + r"/IncomingWebhook/[0-9a-f]{32}/" + _UUID)),
    ("newrelic_key", "NR", _r(r"NR(?:AK-[A-Z0-9]{27}|II-[A-Za-z0-9_-]{32}|JS-[0-9a-f]{19})" + _RW)),
    ("notion_token", "ntn_", _r(r"ntn_[0-9]{11}[A-Za-z0-9]{35}" + _R)),
    ("nuget_password", "ClearTextPassword", _r(
        r"""key=\\?["']ClearTextPassword\\?["'][ \t]+value=\\?["'](?P<v>[^"'\\\s]{4,200})""")),
    ("octopus_key", "API-", _r(r"API-[A-Z0-9]{26}" + _R)),
    ("openshift_token", "sha256~", _r(r"sha256~[A-Za-z0-9_-]{43}" + _RW)),
    ("perplexity_key", "pplx-", _r(r"pplx-[A-Za-z0-9]{48}" + _R)),
    ("plaid_access_token", "access-", _r(r"access-(?:sandbox|development|production)-" + _UUID + _R)),
    ("planetscale_token", "pscale_", _r(r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}" + _RW)),
    ("postman_key", "PMAK-", _r(r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}" + _R)),
    ("prefect_key", "pnu_", _r(r"pnu_[A-Za-z0-9]{36}" + _R)),
    ("pulumi_token", "pul-", _r(r"pul-[0-9a-f]{40}" + _R)),
    ("pypi_token", "pypi-AgE", _r(r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}" + _RW)),
    ("readme_key", "rdme_", _r(r"rdme_[a-z0-9]{70}" + _R)),
    ("rubygems_key", "rubygems_", _r(r"rubygems_[0-9a-f]{48}" + _R)),
    ("scalingo_token", "tk-us-", _r(r"tk-us-[A-Za-z0-9_-]{48}" + _RW)),
    ("sendinblue_key", "xkeysib-", _r(r"xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}" + _R)),
    ("sentry_token", "sntry", _r(r"sntry(?:u_[0-9a-f]{64}|s_eyJ[A-Za-z0-9+/=_-]{60,}_[A-Za-z0-9+/_=-]{40,})"
                                 + _RW)),
    ("settlemint_token", "sm_", _r(r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}" + _R)),
    ("shippo_token", "shippo_", _r(r"shippo_(?:live|test)_[0-9a-f]{40}" + _R)),
    ("shopify_token", "shp", _r(r"shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}" + _R)),
    ("sidekiq_secret", "CONTRIBSYS__COM", _r(
        r"BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\\?[\"']?[ \t]*[=:][ \t]*\\?[\"']?"
        r"(?P<v>[0-9a-f]{8}:[0-9a-f]{8})" + _R)),
    ("slack_token", "xapp-", _r(r"xapp-[0-9]-[A-Z0-9]{6,20}-[0-9]{6,20}-[0-9a-f]{40,80}" + _R)),
    ("slack_token", "xoxa-", _r(r"xoxa-[0-9]-[A-Za-z0-9]{20,48}" + _R)),
    ("slack_token", "xoxe", _r(r"xoxe(?:\.xox[bp])?-[0-9]-[A-Z0-9]{140,170}" + _R)),
    ("slack_webhook", "hooks.slack.com/", _r(
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"T[A-Z0-9]{6,12}/[AB][A-Z0-9]{6,12}/[A-Za-z0-9]{20,40}" + _R)),
    ("sonar_token", "sq", _r(r"sq[uap]_[0-9a-f]{40}" + _R)),
    ("sourcegraph_token", "sgp_", _r(r"sgp_(?:[0-9a-f]{16}_|local_)?[0-9a-f]{40}" + _R)),
    ("square_token", "sq0", _r(r"sq0(?:atp-[A-Za-z0-9_-]{22}|csp-[A-Za-z0-9_-]{43})" + _RW)),
    ("square_token", "EAAA", _r(r"EAAA[A-Za-z0-9_-]{60}" + _RW)),
    ("telegram_bot_token", ":AA", _r(r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}" + _RW)),
    ("twilio_api_key", "SK", _r(r"SK[0-9a-fA-F]{32}" + _R)),
    ("twitter_bearer_token", "AAAAAAAAAAAAAAAAAAAA", _r(
        r"A{20,22}[A-Za-z0-9%]{40,120}" + _R)),
    ("typeform_token", "tfp_", _r(r"tfp_[A-Za-z0-9_.=-]{55,65}" + _RW)),
    ("vault_token", "hv", _r(r"hv[sb]\.[A-Za-z0-9_-]{90,300}" + _RW)),
    ("yandex_token", "t1.", _r(r"t1\.[A-Za-z0-9_-]{20,}={0,2}\.[A-Za-z0-9_-]{86}={0,2}" + _RW)),
    ("yandex_token", "AQVN", _r(r"AQVN[A-Za-z0-9_-]{35,38}" + _RW)),
    ("discord_bot_token", ".", _r(r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"
                                  + _RW)),
)
VENDOR_KINDS = frozenset(k for k, _, _ in VENDOR_RULES)
#: The literal prefixes of the rules, for the cheap junction trigger of the driver: a token
#: split across lines that holds one of them is joined and rescanned.
VENDOR_TRIGGERS: tuple[str, ...] = tuple(sorted({t for _, t, _ in VENDOR_RULES if len(t) >= 2}))
_R_BODY_PIECES = re.compile(r"[A-Za-z0-9]{8,}")
_R_GROUPS = re.compile(r"[A-Za-z0-9]{4,}")
_R_MODE_WORD = re.compile(r"(?<![A-Za-z])(?:TEST|LIVE|test|live)")


#: Total lengths of the fixed-length vendor tokens: a token found only by joining two lines
#: must have one of them (see ``CANONICAL_LENGTHS`` in :mod:`.driver`).
VENDOR_LENGTHS: dict[str, frozenset[int]] = {
    "octopus_key": frozenset({30}), "twilio_api_key": frozenset({34}),
    "alibaba_access_key_id": frozenset(range(16, 25)), "mailgun_key": frozenset({36}),
    "pulumi_token": frozenset({44}), "prefect_key": frozenset({40}),
    "linear_key": frozenset({48}), "perplexity_key": frozenset({53}),
    "sonar_token": frozenset({44}), "infracost_key": frozenset({36}),
    "adafruit_io_key": frozenset({32}), "databricks_token": frozenset({36, 38}),
    "onepassword_secret_key": frozenset({39, 40}), "defined_networking_key": frozenset({85}),
}


def vendor_trigger(token: str) -> bool:
    """Does ``token`` hold the literal of some vendor rule (or a Discord token's dots)?"""
    # (``in`` per literal: an SRE alternation of them costs ~20x more on these short tokens)
    return any(t in token for t in VENDOR_TRIGGERS) or (
        token.count(".") >= 2 and _DISCORD.search(token) is not None)


_HEX = frozenset("0123456789abcdefABCDEF")
_FILLER_WORDS = ("xxxx", "example", "your", "redacted", "placeholder", "dummy", "sample",
                 "0000000", "1234567", "deadbeef", "cafebabe")


def _piece_random(piece: str, hexes: str) -> bool:
    """One alphanumeric group of a token body looks issued (``hexes``: every all-hex group
    of the token joined, judged together: a UUID's groups are short)."""
    if is_placeholder(piece):
        return False
    if _HEX.issuperset(piece):  # (hex reads as words by chance)
        return len(set(hexes.lower())) >= min(7, len(hexes) // 2)
    if piece.isalpha():
        return _classes(piece) >= 2 and not is_wordy_strict(piece) and not reads_as_words(piece)
    if piece.isupper() or piece.islower():
        # single-case letters and digits (``NRAK-``, ``dnkey-``, ``CLOJARS_``): the word test
        # is meant for mixed case; ask for digits among the letters and a spread of both
        digits = sum(c.isdigit() for c in piece)
        return (digits >= 2 and len(piece) - digits >= 2
                and len(set(piece)) >= min(10, len(piece) // 2))
    return _classes(piece) >= 2 and not is_wordy(piece) and not reads_as_words(piece)


#: Every filler word of a placeholder (ours and the shared ones of :mod:`.shape`), to cut a
#: long body at them.
_R_FILLER = re.compile("|".join(re.escape(w) for w in sorted(
    set(_FILLER_WORDS) | set(_PLACEHOLDER_WORDS), key=len, reverse=True)), re.IGNORECASE)
#: A body this long is issued, not typed: a filler word inside it is chance when a random
#: stretch of at least half this length stands beside it (the base64 JSON claims of a
#: 1Password service token, ~575 characters, hold ``YOUR`` or ``Sample`` now and then; a
#: placeholder is filler throughout, see the vendor hard negatives).
LONG_BODY = 64


def _random_enough(value: str, *, long_body: bool = True) -> bool:
    """The variable part of a token looks issued, not written: no placeholder, no words
    (in a body of :data:`LONG_BODY` characters or more: a random stretch beside any filler
    word)."""
    low = value.lower()
    if any(w in low for w in _FILLER_WORDS) or placeholder_after_head(value):
        return long_body and len(value) >= LONG_BODY and any(
            len(piece) >= LONG_BODY // 2 and _random_enough(piece, long_body=False)
            for piece in _R_FILLER.split(value))
    value = after_fixed_head(value)  # (alone, or followed by filler, a provider's fixed head)
    # (a mode word glued to the body, ``FLWSECK_TEST1428eb...``, is part of the prefix)
    body = _R_MODE_WORD.sub("", value)
    pieces = _R_BODY_PIECES.findall(body)
    # (a body written in short groups, ``A3-ABC123-...``, is judged as one piece)
    if not pieces:
        pieces = ["".join(c for c in body if c.isalnum())]
    hexes = "".join(p for p in _R_GROUPS.findall(body) if _HEX.issuperset(p))
    return any(_piece_random(p, hexes) for p in pieces if len(p) >= 4)


def _leading_literal(pattern: str) -> str:
    m = re.match(r"(?:[A-Za-z0-9_~=:-]|\\.)+", pattern)
    return re.sub(r"\\(.)", r"\1", m.group()) if m else ""


#: Rules whose match starts with their trigger, by trigger: tried only where a token starts
#: (one ``startswith`` over all their prefixes per token run, instead of a scan per rule).
_AT_START: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
#: Rules whose trigger sits inside the token (``-us``, ``Q~``, ``:AA``, webhook hosts).
_INSIDE: list[tuple[str, str, re.Pattern[str]]] = []
for _kind, _trigger, _rx in VENDOR_RULES:
    if _trigger == ".":
        continue  # (Discord: tried at runs that start with M/N/O and end on a dot)
    if _leading_literal(_rx.pattern).startswith(_trigger):
        _AT_START.setdefault(_trigger, []).append((_kind, _rx))
    else:
        _INSIDE.append((_kind, _trigger, _rx))
#: Characters summaries rarely hold, rarest first (the summaries of a 1M-event run: ``~`` is
#: in 1% of them, ``Y`` in 35%): a trigger that holds one is ruled out by a one-character
#: scan for it, ~20x faster than the scan for the trigger ("" when it holds none).
_RARE = "^~|@%\\$'ZXYG&<>;"
_INSIDE_GATED = [(k, t, rx, next((c for c in _RARE if c in t), "")) for k, t, rx in _INSIDE]
_PREFIXES = tuple(sorted(_AT_START, key=len, reverse=True))
VENDOR_PREFIXES = _PREFIXES  # (the driver's test of a run no vendor rule starts at)
HEADS2 = frozenset(p[:2] for p in _PREFIXES)  # (a set lookup per run before any startswith)
_DISCORD = next(rx for k, _, rx in VENDOR_RULES if k == "discord_bot_token")
#: Characters a token may hold before the run the driver found (``dp.pt.``, ``sha256~``).
_HEAD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~=-")


def _accept(view: str, m: re.Match[str], kind: str, out: list[Finding]) -> None:
    s, e = m.span("v") if "v" in m.re.groupindex else m.span()
    # (checked here, not in the pattern: a leading look-behind would cost SRE its
    # literal-prefix scan)
    if m.start() and view[m.start() - 1].isascii() and view[m.start() - 1].isalnum() \
            and not (m.start() >= 2 and view[m.start() - 2] == "\\"):
        return
    if _random_enough(view[s:e]) and not _in_doc_example(view, s, e):
        out.append((s, e, kind))


def _at(view: str, pos: int, out: list[Finding]) -> None:
    for p in _PREFIXES:
        if view.startswith(p, pos):
            for kind, rx in _AT_START[p]:
                m = rx.match(view, pos)
                if m:
                    _accept(view, m, kind, out)


def vendor_run(view: str, rs: int, re_: int, out: list[Finding]) -> None:
    """The vendor rules that start at (or just before) the token run ``view[rs:re_]`` (a
    ``[A-Za-z0-9+/_-]{12,}`` run found by the driver: every vendor token holds one). The
    driver calls it only for a run with a known two-character head, a head glued by a dot,
    tilde or ``=``, or a Discord-shaped first part (see :data:`HEADS2`)."""
    starts = view.startswith
    if view[rs:rs + 2] in HEADS2 and starts(_PREFIXES, rs):
        _at(view, rs, out)
    if rs and view[rs - 1] in ".~=":  # a head with a dot or a tilde (``dp.pt.``, ``sha256~``)
        ts = rs - 1
        while True:
            if (ts == 0 or not view[ts - 1].isalnum()) and view[ts:ts + 2] in HEADS2 \
                    and starts(_PREFIXES, ts):
                _at(view, ts, out)
            if ts == 0 or rs - ts >= 24 or view[ts - 1] not in _HEAD_CHARS:
                break
            ts -= 1
    if view[rs] in "MNO" and starts(".", re_):
        m = _DISCORD.match(view, rs)
        if m:
            _accept(view, m, "discord_bot_token", out)


def vendor_inside(view: str, out: list[Finding]) -> None:
    """The vendor rules whose trigger sits inside the token (for a view with token runs)."""
    for kind, trigger, rx, rare in _INSIDE_GATED:
        if rare in view and trigger in view:  # (a one-character scan first: see _RARE)
            for m in rx.finditer(view):
                _accept(view, m, kind, out)
