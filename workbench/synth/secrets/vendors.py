"""Vendor token families: fakes for the provider formats that gitleaks' default rules and
detect-secrets' plugins know and the core formats (:mod:`.formats`) do not (the coverage
table ``docs/redaction-coverage.md`` names them), and hard negatives of the same shapes.

The shapes are written here from the providers' published token formats (a prefix, a
body of a given alphabet and length, sometimes a structure), never from a scanner's rules,
so the redactor is graded on what the providers issue, not on what it was told to look for.
Each family is a list of *variants*; a variant is ``(before, parts, after)``: ``parts``
make the secret, ``before``/``after`` the non-secret text around it (the connection
string around an Azure account key), so :func:`vendor_span` knows which slice is secret.

These families are drawn only when asked for (:data:`VENDOR_FORMATS`, the benchmark, the
``vendor`` generator option): the core families' draws, and every dataset generated from
them, do not change.

>>> import numpy as np
>>> tok = VENDOR_GENERATORS["databricks_token"](np.random.default_rng(3))
>>> tok.startswith("dapi") and len(tok) in (36, 38)
True
>>> vendor_span("azure_storage_key", VENDOR_GENERATORS["azure_storage_key"](np.random.default_rng(3)))[1] > 0
True
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from workbench.synth.secrets.draw import (
    ALNUM,
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

UPPER_DIGITS = UPPER + DIGITS
LOWER_DIGITS = LOWER + DIGITS
LETTERS = UPPER + LOWER
BECH32_UPPER = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"

# A part is a literal string, ``(alphabet, n)``, ``(alphabet, lo, hi)`` (length drawn in
# [lo, hi]) or a function of the generator.
Part = str | tuple | Callable[[Rng], str]
Variant = tuple[str, tuple[Part, ...], str]


def _uuid(rng: Rng) -> str:
    h = _rand(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_pick(rng, '89ab')}{h[17:20]}-{h[20:]}"


def _random_body(rng: Rng, alphabet: str, n: int) -> str:
    """A body with the character mix real tokens have (never a placeholder-looking draw)."""
    def ok(s: str) -> bool:
        if n < 6:  # (a check digit, a short group: any draw is fine)
            return True
        # (the core check asks for len/5 distinct characters: capped here by the alphabet,
        # which a 146-digit hex body could never meet)
        if not _plausibly_random(s[:5 * min(len(set(alphabet)) // 2, len(s) // 5) or 1]):
            return False
        if alphabet in (ALNUM, WORD_DASH, B64, LETTERS) and n >= 12:
            return _classes(s) >= (2 if alphabet == LETTERS else 3)
        if alphabet in (HEX, LOWER_DIGITS, UPPER_DIGITS) and n >= 12:
            return sum(c.isdigit() for c in s) >= 2 and sum(c.isalpha() for c in s) >= 2
        return True

    def make() -> str:
        s = _rand(rng, alphabet, n)
        if alphabet == WORD_DASH and n > 2:  # (real bodies do not start or end on - or _)
            s = _rand(rng, ALNUM, 1) + s[1:-1] + _rand(rng, ALNUM, 1)
        return s

    return _draw(rng, make, ok)


def _render(rng: Rng, part: Part) -> str:
    if isinstance(part, str):
        return part
    if callable(part):
        return part(rng)
    alphabet, *n = part
    size = n[0] if len(n) == 1 else int(rng.integers(n[0], n[1] + 1))
    return _random_body(rng, alphabet, size)


def _pick_of(*options: str) -> Callable[[Rng], str]:
    return lambda rng: _pick(rng, options)


def _b64json(make: Callable[[Rng], dict]) -> Callable[[Rng], str]:
    return lambda rng: _b64url(json.dumps(make(rng), separators=(",", ":")).encode())


def _discord_id(rng: Rng) -> str:
    snowflake = _pick(rng, "123") + _rand(rng, DIGITS, 17)
    return _b64url(snowflake.encode())


def _ops_claims(rng: Rng) -> dict:
    return {"signInAddress": _pick(rng, ("my.1password.com", "acme.1password.eu")),
            "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256",
                         "iterations": 650000, "salt": _rand(rng, WORD_DASH, 22)},
            "email": _rand(rng, LOWER_DIGITS, 13) + "@1passwordserviceaccounts.com",
            "srpX": _rand(rng, HEX, 64), "muk": {"alg": "A256GCM", "ext": True,
                                                 "k": _rand(rng, WORD_DASH, 43)},
            "secretKey": "A3-" + _rand(rng, UPPER_DIGITS, 6) + "-" + _rand(rng, UPPER_DIGITS, 6),
            "deviceUuid": _rand(rng, LOWER_DIGITS, 26)}


def _grafana_cloud_claims(rng: Rng) -> dict:
    return {"o": str(int(rng.integers(100000, 999999))),
            "n": _pick(rng, ("stack-ci-read", "prom-push", "deploy-annotations")),
            "k": _rand(rng, ALNUM, 24), "m": {"r": _pick(rng, ("us", "eu", "prod-eu-west-0"))}}


def _grafana_key_claims(rng: Rng) -> dict:
    return {"k": _rand(rng, ALNUM, 32), "n": _pick(rng, ("ci", "dashboards-sync", "alerts")),
            "id": int(rng.integers(1, 40))}


def _sentry_claims(rng: Rng) -> dict:
    return {"iat": 1767225600.0 + int(rng.integers(0, 9_000_000)),
            "url": "https://sentry.io", "region_url": "https://us.sentry.io",
            "org": _pick(rng, ("acme", "acme-labs", "billing-team"))}


def _mapbox_claims(rng: Rng) -> dict:
    return {"u": _pick(rng, ("acme-maps", "fleetview", "geo-team")), "a": _rand(rng, LOWER_DIGITS, 25)}


def _bedrock_body(rng: Rng) -> str:
    query = ("bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Algorithm=AWS4-HMAC-SHA256"
             f"&X-Amz-Credential=ASIA{_rand(rng, UPPER_DIGITS, 16)}%2F20260314%2Fus-east-1"
             f"%2Fbedrock%2Faws4_request&X-Amz-Date=20260314T091244Z&X-Amz-Expires=43200"
             f"&X-Amz-Signature={_rand(rng, HEX, 64)}&Version=1")
    return base64.b64encode(query.encode()).decode()


def _azure_key(rng: Rng) -> str:
    return base64.b64encode(_rand_bytes(rng, 64)).decode()


def _twitter_bearer(rng: Rng) -> str:
    return ("A" * 21 + _random_body(rng, ALNUM, 14) + "%3D" + _random_body(rng, ALNUM, 50))


_ACCOUNTS = ("acmelogs", "billingprod", "stacmeartifacts", "fleetdata01")


#: family -> variants ``(before, parts, after)``
VENDOR_SHAPES: dict[str, tuple[Variant, ...]] = {
    "onepassword_secret_key": (("", ("A3-", (UPPER_DIGITS, 6), "-", (UPPER_DIGITS, 6), "-",
                                     (UPPER_DIGITS, 5), "-", (UPPER_DIGITS, 5), "-",
                                     (UPPER_DIGITS, 5), "-", (UPPER_DIGITS, 5)), ""),),
    "onepassword_service_token": (("", ("ops_", _b64json(_ops_claims)), ""),),
    "adafruit_io_key": (("", ("aio_", (ALNUM, 28)), ""),),
    "age_secret_key": (("", ("AGE-SECRET-KEY-1", (BECH32_UPPER, 58)), ""),),
    "airtable_pat": (("", ("pat", (ALNUM, 14), ".", (HEX, 64)), ""),),
    "alibaba_access_key_id": (("", ("LTAI", (ALNUM, 20)), ""), ("", ("LTAI", (ALNUM, 12)), "")),
    "artifactory_token": (("", ("AKCp", (ALNUM, 69)), ""),
                          ("", ("cmVmdGtuOjAxOj", (ALNUM, 50)), "")),
    "atlassian_api_token": (("", ("ATATT3xFfGF0", (WORD_DASH, 170), "=", (UPPER_DIGITS, 8)), ""),),
    "authress_key": (("", (_pick_of("sc_", "ext_", "authress_"), (LOWER_DIGITS, 12), ".",
                           (LOWER_DIGITS, 5), ".acc_", (LOWER_DIGITS, 16), ".",
                           (WORD_DASH, 64)), ""),),
    "aws_bedrock_api_key": (("", ("ABSK", (B64, 120)), ""),
                            ("", ("bedrock-api-key-", _bedrock_body), "")),
    "azure_ad_client_secret": (("", ((ALNUM, 3), (DIGITS, 1), "Q~", (ALNUM + "_.-", 34)), ""),),
    "azure_storage_key": (
        (lambda rng: f"DefaultEndpointsProtocol=https;AccountName={_pick(rng, _ACCOUNTS)};AccountKey=",
         (_azure_key,), ";EndpointSuffix=core.windows.net"),),
    "clickhouse_secret": (("", ("4b1d", (ALNUM, 38)), ""),),
    "clojars_token": (("", ("CLOJARS_", (LOWER_DIGITS, 60)), ""),),
    "cloudflare_origin_ca_key": (("", ("v1.0-", (HEX, 24), "-", (HEX, 146)), ""),),
    "databricks_token": (("", ("dapi", (HEX, 32)), ""), ("", ("dapi", (HEX, 32), "-2"), "")),
    "defined_networking_key": (("", ("dnkey-", (LOWER_DIGITS, 26), "-", (LOWER_DIGITS, 52)), ""),),
    "digitalocean_token": (("", (_pick_of("dop_v1_", "doo_v1_", "dor_v1_"), (HEX, 64)), ""),),
    "discord_bot_token": (("", (_discord_id, ".", (WORD_DASH, 6), ".", (WORD_DASH, 38)), ""),),
    "doppler_token": (("", (_pick_of("dp.pt.", "dp.st.", "dp.ct.", "dp.sa."), (ALNUM, 43)), ""),),
    "duffel_token": (("", (_pick_of("duffel_test_", "duffel_live_"), (WORD_DASH, 43)), ""),),
    "dynatrace_token": (("", ("dt0c01.", (UPPER_DIGITS, 24), ".", (UPPER_DIGITS, 64)), ""),),
    "easypost_key": (("", (_pick_of("EZAK", "EZTK"), (ALNUM, 54)), ""),),
    "facebook_access_token": (("", ("EAA", _pick_of("B", "C", "G", "I", "J"), (ALNUM, 150, 190)), ""),),
    "flutterwave_secret": (("", ("FLWSECK_TEST-", (HEX, 32), "-X"), ""),
                           ("", ("FLWSECK_TEST", (HEX, 12)), "")),
    "flyio_token": (("", ("fo1_", (WORD_DASH, 43)), ""),
                    ("", (_pick_of("fm1a_", "fm1r_", "fm2_"), (B64, 120, 180)), "")),
    "frameio_token": (("", ("fio-u-", (WORD_DASH, 64)), ""),),
    "gitlab_token": (
        ("", (_pick_of("gldt-", "glffct-", "glft-", "glrt-", "glsoat-"), (WORD_DASH, 20)), ""),
        ("", ("glcbt-", (ALNUM, 2), "_", (WORD_DASH, 20)), ""),
        ("", ("glimt-", (WORD_DASH, 25)), ""), ("", ("glagent-", (WORD_DASH, 50)), ""),
        ("", ("gloas-", (WORD_DASH, 64)), ""), ("", ("glptt-", (HEX, 40)), ""),
        ("", ("GR1348941", (WORD_DASH, 20)), ""),
        ("", ("glpat-", (WORD_DASH, 27), ".01.", (LOWER_DIGITS, 9)), ""),
        ("", ("glrt-t1_", (WORD_DASH, 27), ".01.", (LOWER_DIGITS, 9)), ""),
        ("_gitlab_session=", ((LOWER_DIGITS, 32),), "")),
    "grafana_token": (("", ("glc_", _b64json(_grafana_cloud_claims)), ""),
                      ("", ("glsa_", (ALNUM, 32), "_", (HEX, 8)), ""),
                      ("", (_b64json(_grafana_key_claims),), "")),
    "harness_token": (("", (_pick_of("pat.", "sat."), (WORD_DASH, 22), ".", (HEX, 24), ".",
                            (ALNUM, 20)), ""),),
    "terraform_cloud_token": (("", ((LOWER_DIGITS, 14), ".atlasv1.", (WORD_DASH, 67)), ""),),
    "heroku_key": (("", ("HRKU-AA", (WORD_DASH, 58)), ""),),
    "huggingface_org_token": (("", ("api_org_", (LETTERS, 34)), ""),),
    "infracost_key": (("", ("ico-", (ALNUM, 32)), ""),),
    "intra42_secret": (("", (_pick_of("s-s4t2ud-", "s-s4t2af-"), (HEX, 64)), ""),),
    "linear_key": (("", ("lin_api_", (ALNUM, 40)), ""),),
    "mailchimp_key": (("", ((HEX, 32), "-us", _pick_of("6", "14", "21")), ""),),
    "mailgun_key": (("", ("key-", (HEX, 32)), ""),),
    "mapbox_secret_token": (("", ("sk.", _b64json(_mapbox_claims), ".", (WORD_DASH, 22)), ""),),
    "maxmind_key": (("", ((ALNUM, 6), "_", (ALNUM, 29), "_mmk"), ""),),
    "teams_webhook": ((_pick_of("https://acme.webhook.office.com/webhookb2/",
                                "https://acmecorp.webhook.office.com/webhookb2/"),
                       (_uuid, "@", _uuid, "/IncomingWebhook/", (HEX, 32), "/", _uuid), ""),),
    "newrelic_key": (("", ("NRAK-", (UPPER_DIGITS, 27)), ""), ("", ("NRII-", (WORD_DASH, 32)), ""),
                     ("", ("NRJS-", (HEX, 19)), "")),
    "notion_token": (("", ("ntn_", (DIGITS, 11), (ALNUM, 35)), ""),),
    "nuget_password": (('<add key="ClearTextPassword" value="', ((ALNUM, 16, 24),), '" />'),),
    "octopus_key": (("", ("API-", (UPPER_DIGITS, 26)), ""),),
    "openshift_token": (("", ("sha256~", (WORD_DASH, 43)), ""),),
    "perplexity_key": (("", ("pplx-", (ALNUM, 48)), ""),),
    "plaid_access_token": (("", (_pick_of("access-sandbox-", "access-development-",
                                          "access-production-"), _uuid), ""),),
    "planetscale_token": (("", (_pick_of("pscale_tkn_", "pscale_oauth_", "pscale_pw_"),
                                (WORD_DASH, 43)), ""),),
    "postman_key": (("", ("PMAK-", (HEX, 24), "-", (HEX, 34)), ""),),
    "prefect_key": (("", ("pnu_", (ALNUM, 36)), ""),),
    "pulumi_token": (("", ("pul-", (HEX, 40)), ""),),
    "pypi_token": (("", ("pypi-AgEIcHlwaS5vcmc", (WORD_DASH, 140, 180)), ""),),
    "readme_key": (("", ("rdme_", (LOWER_DIGITS, 70)), ""),),
    "rubygems_key": (("", ("rubygems_", (HEX, 48)), ""),),
    "scalingo_token": (("", ("tk-us-", (WORD_DASH, 48)), ""),),
    "sendinblue_key": (("", ("xkeysib-", (HEX, 64), "-", (ALNUM, 16)), ""),),
    "sentry_token": (("", ("sntryu_", (HEX, 64)), ""),
                     ("", ("sntrys_", _b64json(_sentry_claims), "_", (WORD_DASH, 43)), "")),
    "settlemint_token": (("", (_pick_of("sm_aat_", "sm_pat_", "sm_sat_"), (ALNUM, 16)), ""),),
    "shippo_token": (("", (_pick_of("shippo_live_", "shippo_test_"), (HEX, 40)), ""),),
    "shopify_token": (("", (_pick_of("shpat_", "shpca_", "shppa_", "shpss_"), (HEX, 32)), ""),),
    "sidekiq_secret": (("BUNDLE_ENTERPRISE__CONTRIBSYS__COM=", ((HEX, 8), ":", (HEX, 8)), ""),),
    "slack_app_token": (("", ("xapp-1-A", (UPPER_DIGITS, 10), "-", (DIGITS, 13), "-", (HEX, 64)), ""),
                        ("", ("xoxe.xoxp-1-", (UPPER_DIGITS, 164)), ""),
                        ("", ("xoxe-1-", (UPPER_DIGITS, 146)), ""),
                        ("", ("xoxa-2-", (ALNUM, 36)), "")),
    "slack_webhook": (("https://hooks.slack.com/services/", ("T", (UPPER_DIGITS, 10), "/B",
                                                             (UPPER_DIGITS, 10), "/", (ALNUM, 24)),
                       ""),),
    "sonar_token": (("", (_pick_of("squ_", "sqp_", "sqa_"), (HEX, 40)), ""),),
    "sourcegraph_token": (("", ("sgp_", (HEX, 16), "_", (HEX, 40)), ""),
                          ("", ("sgp_local_", (HEX, 40)), "")),
    "square_token": (("", ("sq0atp-", (WORD_DASH, 22)), ""), ("", ("sq0csp-", (WORD_DASH, 43)), ""),
                     ("", ("EAAA", (WORD_DASH, 60)), "")),
    "telegram_bot_token": (("", ((DIGITS, 9, 10), ":AA", (WORD_DASH, 33)), ""),),
    "twilio_api_key": (("", ("SK", (HEX, 32)), ""),),
    "twitter_bearer_token": (("", (_twitter_bearer,), ""),),
    "typeform_token": (("", ("tfp_", (WORD_DASH, 44), "_", (ALNUM, 14)), ""),),
    "vault_token": (("", ("hvs.", (WORD_DASH, 90)), ""), ("", ("hvb.", (WORD_DASH, 138)), "")),
    "yandex_token": (("", ("t1.", (WORD_DASH, 40), ".", (WORD_DASH, 86)), ""),
                     ("", ("AQVN", (WORD_DASH, 36)), "")),
    # the services gitleaks knows by a keyword only: a bare value of the service's shape
    # (32/40/64 hex, UUID, alphanumeric), recognisable only by the key that names it
    "keyed_vendor_secret": (("", ((HEX, 32),), ""), ("", ((HEX, 40),), ""), ("", ((HEX, 64),), ""),
                            ("", (_uuid,), ""), ("", ((ALNUM, 30, 48),), ""),
                            ("", ("00", (WORD_DASH, 40)), ""), ("", ("live_", (WORD_DASH, 40)), "")),
}

VENDOR_FORMATS: tuple[str, ...] = tuple(VENDOR_SHAPES)
#: Families a reader recognises only by the key that names them (a bare hex, UUID or
#: alphanumeric value, the services gitleaks knows by a keyword): every template they are
#: planted in names the credential, also when a transform breaks the value over lines (the
#: multi-line templates of a private key name none: ``tls: key:``, ``key data: b'...'``).
KEY_NAMED_FORMATS = frozenset({"keyed_vendor_secret"})


def _variant(rng: Rng, fmt: str) -> Variant:
    variants = VENDOR_SHAPES[fmt]
    return variants[int(rng.integers(len(variants)))]


def _text(rng: Rng, x) -> str:
    return x(rng) if callable(x) else x


def _generator(fmt: str) -> Callable[[Rng], str]:
    def gen(rng: Rng) -> str:
        before, parts, after = _variant(rng, fmt)
        return _text(rng, before) + "".join(_render(rng, p) for p in parts) + after
    gen.__name__ = f"gen_{fmt}"
    return gen


VENDOR_GENERATORS: dict[str, Callable[[Rng], str]] = {f: _generator(f) for f in VENDOR_FORMATS}

_BEFORE_ENDS = ("AccountKey=", "_gitlab_session=", 'value="', "CONTRIBSYS__COM=",
                "/services/", "/webhookb2/")
_AFTERS = (";EndpointSuffix=core.windows.net", '" />')


def vendor_span(fmt: str, raw: str) -> tuple[int, int]:
    """The secret slice of a generated vendor string: the key of a connection string, the
    path of a webhook URL (its host and scheme are no secret), the whole token otherwise."""
    start, end = 0, len(raw)
    for b in _BEFORE_ENDS:
        i = raw.find(b)
        if i != -1:
            start = i + len(b)
            break
    for a in _AFTERS:
        if raw.endswith(a):
            end = len(raw) - len(a)
    return start, end


#: The families whose every string may sit in a URL's userinfo or query unescaped (letters,
#: digits, ``-._~``): the others hold ``+/=:;@%`` or are URLs or markup themselves.
URL_SLOT_FORMATS: tuple[str, ...] = tuple(f for f in VENDOR_FORMATS if f not in {
    "aws_bedrock_api_key", "azure_storage_key", "flyio_token", "nuget_password",
    "sidekiq_secret", "slack_webhook", "teams_webhook", "telegram_bot_token",
    "twitter_bearer_token", "atlassian_api_token"})


# --------------------------------------------------------------------------- hard negatives

#: Hard negatives of the vendor shapes: a vendor prefix with a placeholder or a
#: documentation body, digests and ids of the same length where no key names a secret,
#: and prose that names the prefixes. Drawn only when asked for, like the families.
VENDOR_NEGATIVE_KINDS: tuple[str, ...] = ("vendor_placeholder", "vendor_doc_example",
                                          "vendor_digest", "vendor_prose")


def vendor_prefixes() -> tuple[str, ...]:
    """The literal heads of the families' variants (``dapi``, ``hvs.``, ``shpat_`` ...)."""
    heads = []
    for fmt, variants in VENDOR_SHAPES.items():
        if fmt == "keyed_vendor_secret":
            continue
        for before, parts, _ in variants:
            if before == "" and isinstance(parts[0], str) and len(parts[0]) >= 3:
                heads.append(parts[0])
    return tuple(dict.fromkeys(heads))


_FILLERS = (
    lambda n: "x" * n, lambda n: "X" * n, lambda n: "0" * n, lambda n: "*" * n,
    lambda n: ("your_token_here_" * 8)[:n], lambda n: ("YOUR-API-KEY-" * 10)[:n],
    lambda n: ("0123456789abcdef" * 12)[:n], lambda n: ("abcdefghijklmnopqrstuvwxyz" * 6)[:n],
    lambda n: ("EXAMPLEKEY" * 20)[:n], lambda n: ("1234567890" * 20)[:n],
)
_DOC_BODIES = ("EXAMPLE", "YourTokenGoesHere", "REPLACE_ME", "thisIsNotARealToken",
               "exampleexampleexample", "DoNotUseThisInProduction", "sampleTokenForTheDocs")
_NEG_KEYS = ("API_TOKEN", "DATABRICKS_TOKEN", "VAULT_TOKEN", "SHOPIFY_ACCESS_TOKEN",
             "DIGITALOCEAN_TOKEN", "LINEAR_API_KEY", "SENTRY_AUTH_TOKEN", "NEW_RELIC_API_KEY")
_DIGEST_LINES = (
    "commit {h40}\nAuthor: Dana Ortiz <dana@acme.dev>\n", "ETag: \"{h32}\"",
    "Digest: sha256:{h64}", "md5sum: {h32}  dist/databricks-cli-0.18.tar.gz",
    "X-Request-Id: {uuid}", "cluster_id: 0314-091244-{h8}", "\"droplet_image\": \"sha256:{h64}\"",
    "build {h40} passed on CircleCI", "\"checksum\": \"{h64}\"", "trace_id={h32} span_id={h16}",
    "sentry event id {h32} (issue ACME-4K1)", "Notion page id {h32}",
)
_PROSE_LINES = (
    "GitLab deploy tokens start with `{p}`; runner tokens use a different prefix.",
    "If a string begins with {p} it is probably a credential: rotate it.",
    "The secret scanner flags anything that starts with `{p}` in pull requests.",
    "Docs: tokens are issued with the {p} prefix followed by a random body.",
    "grep -rn '{p}' . found nothing, so the repository is clean.",
)


def vendor_negative(rng: Rng, kind: str) -> tuple[str, str]:
    """``(token, template with {S})`` for one vendor hard negative."""
    if kind == "vendor_placeholder":
        p = _pick(rng, vendor_prefixes())
        n = int(rng.integers(20, 45))
        tok = p + _pick(rng, _FILLERS)(n)
        if rng.random() < 0.25:
            tok = _pick(rng, ("<", "${", "{{ ")) + tok.upper().replace(".", "_").replace("-", "_") \
                + _pick(rng, (">", "}", " }}"))
        return tok, _pick(rng, ("export " + _pick(rng, _NEG_KEYS) + "={S}\n",
                                "Replace {S} with your own key.", "token: \"{S}\"\n",
                                "curl -H 'Authorization: Bearer {S}' https://api.acme.dev/v1/me"))
    if kind == "vendor_doc_example":
        p = _pick(rng, vendor_prefixes())
        tok = p + _pick(rng, _DOC_BODIES)
        return tok, _pick(rng, ("From the docs: `{S}` is the example value.",
                                "For example, " + _pick(rng, _NEG_KEYS) + "={S}\n",
                                "The README shows {S} as a sample."))
    if kind == "vendor_digest":
        line = _pick(rng, _DIGEST_LINES)
        tok = line.format(h8=_rand(rng, HEX, 8), h16=_rand(rng, HEX, 16), h32=_rand(rng, HEX, 32),
                          h40=_rand(rng, HEX, 40), h64=_rand(rng, HEX, 64), uuid=_uuid(rng))
        return tok, "{S}"
    if kind == "vendor_prose":
        p = _pick(rng, vendor_prefixes())
        return _pick(rng, _PROSE_LINES).format(p=p), "{S}"
    raise ValueError(f"unknown vendor negative kind {kind!r}")
