"""The registry of secret formats: every generator by name, its shape and the slice of a
generated string that is the secret proper."""

from __future__ import annotations

from collections.abc import Callable

from workbench.synth.secrets.draw import Rng
from workbench.synth.secrets.formats import TOKEN_FORMATS, TOKEN_REGEX
from workbench.synth.secrets.slots import SLOT_GENERATORS, SLOT_REGEX, http_authorization_span

FORMATS: dict[str, Callable[[Rng], str]] = {**TOKEN_FORMATS, **SLOT_GENERATORS}
SECRET_FORMATS: tuple[str, ...] = tuple(FORMATS)
#: The shape of each format (used by tests and documentation).
FORMAT_REGEX: dict[str, str] = {**TOKEN_REGEX, **SLOT_REGEX}


def secret_span(fmt: str, raw: str) -> tuple[int, int]:
    """The slice of a generated string that is the secret proper.

    For ``url_credentials`` that is the password (scheme, user and host are not secret),
    for ``http_authorization`` the credential after the scheme (the Digest ``response``,
    the AWS ``Signature``); for every other format the whole string.
    """
    if fmt == "http_authorization":
        return http_authorization_span(raw)
    if fmt == "url_credentials":
        start = raw.index(":", raw.index("://") + 3) + 1
        return start, raw.index("@", start)
    return 0, len(raw)
