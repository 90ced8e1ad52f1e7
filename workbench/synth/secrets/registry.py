"""The registry of secret formats: every generator by name, its shape and the slice of a
generated string that is the secret proper."""

from __future__ import annotations

from collections.abc import Callable

from workbench.synth.secrets.draw import Rng
from workbench.synth.secrets.formats import TOKEN_FORMATS, TOKEN_REGEX
from workbench.synth.secrets.slots import SLOT_GENERATORS, SLOT_REGEX, http_authorization_span
from workbench.synth.secrets.vendors import VENDOR_FORMATS, VENDOR_GENERATORS, vendor_span

FORMATS: dict[str, Callable[[Rng], str]] = {**TOKEN_FORMATS, **SLOT_GENERATORS}
SECRET_FORMATS: tuple[str, ...] = tuple(FORMATS)
#: The shape of each format (used by tests and documentation).
FORMAT_REGEX: dict[str, str] = {**TOKEN_REGEX, **SLOT_REGEX}
#: The core formats and the vendor families (:mod:`.vendors`). The vendor families are
#: planted only when asked for, so the core draws (and every dataset made of them) stay put.
ALL_FORMATS: dict[str, Callable[[Rng], str]] = {**FORMATS, **VENDOR_GENERATORS}
ALL_SECRET_FORMATS: tuple[str, ...] = SECRET_FORMATS + VENDOR_FORMATS


def secret_span(fmt: str, raw: str) -> tuple[int, int]:
    """The slice of a generated string that is the secret proper.

    For ``url_credentials`` that is the password (scheme, user and host are not secret),
    for ``http_authorization`` the credential after the scheme (the Digest ``response``,
    the AWS ``Signature``); for a vendor family the key inside its carrier (the account key
    of an Azure connection string: :func:`~.vendors.vendor_span`); for every other format
    the whole string.
    """
    if fmt in VENDOR_GENERATORS:
        return vendor_span(fmt, raw)
    if fmt == "http_authorization":
        return http_authorization_span(raw)
    if fmt == "url_credentials":
        start = raw.index(":", raw.index("://") + 3) + 1
        return start, raw.index("@", start)
    return 0, len(raw)
