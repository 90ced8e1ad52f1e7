"""Planting: which (format, context, transform) combinations make sense, and
:func:`plant_secret`, which combines the three into a :class:`PlantedSecret`."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.synth.secrets.contexts import CONTEXT_FUNCS, CONTEXTS, _json_escape
from workbench.synth.secrets.draw import Rng
from workbench.synth.secrets.registry import ALL_FORMATS, SECRET_FORMATS, secret_span
from workbench.synth.secrets.slots import SLOT_CONTEXTS, SLOT_FORMATS
from workbench.synth.secrets.transforms import TRANSFORMS, _transform
from workbench.synth.secrets.vendors import KEY_NAMED_FORMATS, URL_SLOT_FORMATS, VENDOR_FORMATS

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
# command-line and header slots (workbench.synth.secrets.slots)
_HEADER_CONTEXTS = ("http_request", "json_headers", "python_headers")
for _c in SLOT_CONTEXTS:
    INCOMPATIBLE_FORMAT_CONTEXT[("pem_private_key", _c)] = "a multi-line key does not fit a one-line slot"
for _c in _HEADER_CONTEXTS:
    INCOMPATIBLE_FORMAT_CONTEXT[("url_credentials", _c)] = "a URL is not a header value"
    for _f in ("password_in_prose", "cli_password"):
        INCOMPATIBLE_FORMAT_CONTEXT[(_f, _c)] = (
            "a password travels in a header only base64-encoded (the http_authorization format)")
for _c in ("curl_bearer", "psql_url", "url_userinfo", "url_query"):
    INCOMPATIBLE_FORMAT_CONTEXT[("http_authorization", _c)] = (
        "an Authorization value is a whole header value, not a bearer token or part of a URL")
INCOMPATIBLE_FORMAT_CONTEXT[("cli_password", "curl_bearer")] = "a password is not a bearer token"
INCOMPATIBLE_FORMAT_CONTEXT[("cli_password", "url_query")] = (
    "a password is not a query token ('&' and '=' would split it)")

#: (vendor family, context) pairs that make no sense (workbench.synth.secrets.vendors; kept
#: apart from the core table, whose formats are the core registry's).
INCOMPATIBLE_VENDOR_CONTEXT: dict[tuple[str, str], str] = {}
for _f in KEY_NAMED_FORMATS:
    for _c in ("prose", "code_span"):
        INCOMPATIBLE_VENDOR_CONTEXT[(_f, _c)] = (
            "a bare hex, UUID or alphanumeric value is a vendor secret only where a key names "
            "it; in prose it is indistinguishable from a digest or an id (hard negatives)")
for _f in VENDOR_FORMATS:
    if _f not in URL_SLOT_FORMATS:
        for _c in _URLISH:
            INCOMPATIBLE_VENDOR_CONTEXT[(_f, _c)] = (
                "its characters ('+', '/', '=', ':', ';', '@') or its structure (a URL, a "
                "connection string, markup) do not fit a URL slot unescaped")

#: (format, transform) pairs that make no sense. Every other pair is planted.
INCOMPATIBLE_FORMAT_TRANSFORM: dict[tuple[str, str], str] = {}
for _f in SLOT_FORMATS:
    INCOMPATIBLE_FORMAT_TRANSFORM[(_f, "wrap_punct")] = (
        "a flag or header value has no punctuation around it (the templates quote it)")
INCOMPATIBLE_FORMAT_TRANSFORM[("cli_password", "unicode_escape")] = (
    "a password typed on a command line is not escaped")

#: (context, transform) pairs that make no sense.
INCOMPATIBLE_CONTEXT_TRANSFORM: dict[tuple[str, str], str] = {}
for _c in _URLISH:
    INCOMPATIBLE_CONTEXT_TRANSFORM[(_c, "wrap_punct")] = "punctuation inside a URL is part of the URL"
    INCOMPATIBLE_CONTEXT_TRANSFORM[(_c, "base64")] = "'/', '+', '=' are URL delimiters"
    INCOMPATIBLE_CONTEXT_TRANSFORM[(_c, "unicode_escape")] = "escape sequences are not URL text"
INCOMPATIBLE_CONTEXT_TRANSFORM[("curl_bearer", "unicode_escape")] = "escape sequences are not header text"
for _c in SLOT_CONTEXTS:
    INCOMPATIBLE_CONTEXT_TRANSFORM[(_c, "wrap_punct")] = (
        "punctuation around a header value or a command argument is part of it")
for _c in ("shell_command", "http_request"):
    INCOMPATIBLE_CONTEXT_TRANSFORM[(_c, "unicode_escape")] = "escape sequences are not shell or header text"


def compatible(fmt: str, context: str, transform: str) -> bool:
    """Whether planting ``fmt`` into ``context`` under ``transform`` yields realistic text."""
    if fmt not in ALL_FORMATS or context not in CONTEXT_FUNCS or transform not in TRANSFORMS:
        return False
    return ((fmt, context) not in INCOMPATIBLE_FORMAT_CONTEXT
            and (fmt, context) not in INCOMPATIBLE_VENDOR_CONTEXT
            and (fmt, transform) not in INCOMPATIBLE_FORMAT_TRANSFORM
            and (context, transform) not in INCOMPATIBLE_CONTEXT_TRANSFORM)


def compatible_combinations(formats: tuple[str, ...] = SECRET_FORMATS
                            ) -> list[tuple[str, str, str]]:
    """Every compatible (format, context, transform) of ``formats`` (the core formats by
    default; ``ALL_SECRET_FORMATS`` adds the vendor families)."""
    return [(f, c, t) for f in formats for c in CONTEXTS for t in TRANSFORMS
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
        raw = ALL_FORMATS[fmt](rng)
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
