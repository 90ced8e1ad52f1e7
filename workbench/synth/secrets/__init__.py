"""Fake secrets planted into realistic transcript text, with adversarial transforms.

Three registries, all keyed by name, all pure functions of a ``numpy.random.Generator``:

* ``FORMATS`` (:mod:`.registry`): one generator per row of ``secret-formats.md`` (exact
  prefixes, lengths and charsets; never a real key: :mod:`.formats`) and the command-line
  and header formats of issue 15 (:mod:`.slots`: ``http_authorization``,
  ``api_key_header``, ``cli_password``). ``secret_span(fmt, raw)`` says which slice of a
  generated string is the secret proper (the password of a URL, the credential of an
  Authorization value, the whole string otherwise).
* ``CONTEXT_FUNCS`` (:mod:`.contexts`): ``ctx(secret, rng, kind=None) -> (text, start,
  end)`` writes a transcript snippet (prose, markdown, JSON tool call/result, shell, .env,
  YAML, INI, stack trace, URL, and the command-line and header contexts: a shell command,
  a raw HTTP request, a JSON header map, Python ``headers={...}``) with ``text[start:end]``
  the embedded string, JSON-escaped where the context is a JSON string or a quoted scalar.
* ``TRANSFORMS`` (:mod:`.transforms`): how the secret is disguised before it is embedded.

``plant_secret(rng, fmt, context, transform)`` (:mod:`.plant`) combines the three and
returns a :class:`PlantedSecret` whose ``parts`` locate every piece of the (transformed)
secret; ``plant_negative(rng, kind)`` (:mod:`.negatives`) returns a hard negative
(``negative=True``): a string that looks secret-ish but must never be redacted.
``compatible(fmt, context, transform)`` is the explicit compatibility table (see
``INCOMPATIBLE_*``).

>>> import numpy as np
>>> s = plant_secret(np.random.default_rng(7), "github_classic", "shell_export", "none")
>>> text, start, end = s.parts[0]
>>> text[start:end] == s.value and s.value.startswith("gh")
True
>>> plant_secret(np.random.default_rng(7), "github_classic", "shell_export", "none") == s
True
"""

from workbench.synth.secrets.contexts import CONTEXT_FUNCS, CONTEXTS, json_unescape
from workbench.synth.secrets.formats import gen_jwt, gen_pem_private_key
from workbench.synth.secrets.negatives import (
    DOC_EXAMPLES,
    NEGATIVE_KINDS,
    SLOT_NEGATIVE_KINDS,
    plant_negative,
)
from workbench.synth.secrets.plant import (
    INCOMPATIBLE_CONTEXT_TRANSFORM,
    INCOMPATIBLE_FORMAT_CONTEXT,
    INCOMPATIBLE_FORMAT_TRANSFORM,
    PlantedSecret,
    compatible,
    compatible_combinations,
    plant_secret,
)
from workbench.synth.secrets.registry import FORMAT_REGEX, FORMATS, SECRET_FORMATS, secret_span
from workbench.synth.secrets.slots import SLOT_CONTEXTS, SLOT_FORMATS
from workbench.synth.secrets.transforms import (
    ENCODING_TRANSFORMS,
    HOMOGLYPHS,
    TRANSFORMS,
    ZERO_WIDTH,
    percent_encode,
    to_fullwidth,
    unicode_escape,
)

__all__ = [
    "CONTEXTS", "CONTEXT_FUNCS", "DOC_EXAMPLES", "ENCODING_TRANSFORMS", "FORMATS", "FORMAT_REGEX",
    "HOMOGLYPHS", "INCOMPATIBLE_CONTEXT_TRANSFORM", "INCOMPATIBLE_FORMAT_CONTEXT",
    "INCOMPATIBLE_FORMAT_TRANSFORM", "NEGATIVE_KINDS", "SECRET_FORMATS", "SLOT_CONTEXTS",
    "SLOT_FORMATS", "SLOT_NEGATIVE_KINDS", "TRANSFORMS",
    "ZERO_WIDTH", "PlantedSecret", "compatible", "compatible_combinations", "gen_jwt",
    "gen_pem_private_key", "json_unescape", "percent_encode", "plant_negative", "plant_secret",
    "secret_span", "to_fullwidth", "unicode_escape",
]
