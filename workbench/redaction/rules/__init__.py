"""Span detectors for every secret format, run over detection views.

:func:`scan` returns ``(start, end, kind)`` findings in the coordinates of the text it is
given. It works in passes designed for throughput on transcript text (most of which holds
no secret at all):

1. :func:`~workbench.redaction.normalize.normalize` (free for ASCII text);
2. one regex pass over *runs* of token characters ``[A-Za-z0-9+/_-]{12,}``: a literal-prefix
   search inside each run finds AWS/GitHub/GitLab/OpenAI/Anthropic/Slack/Stripe/Google/JWT/
   Hugging Face/npm candidates, whole or *cut short* (:mod:`.prefixed`); the same runs feed
   the prefix-less AWS secret key check, pieces of Slack tokens and the *random pieces*
   rule (:mod:`.pieces`, shape tests in :mod:`.shape`), the provider tokens of the coverage
   table (:mod:`.vendors`: Databricks, DigitalOcean, Shopify, Vault, webhooks, Azure keys ...;
   rows in :mod:`.coverage`, ``docs/redaction-coverage.md``), and the base64 / hex decoders
   (:mod:`.decode`: the decoded text is scanned recursively);
3. a few literal searches: ``PRIVATE KEY`` and armor lines (:mod:`.pem`); ``SG.``
   (SendGrid); ``://`` and ``@`` (:mod:`.urls`: only the password is a finding);
   ``pass``/``pwd`` keywords and credential keys (:mod:`.keyed`); ``Authorization`` and
   ``X-...-Key``/``-Token`` headers in every scheme and frame (:mod:`.headers`); password
   flags of command lines, ``curl -u``, ``mysql -p``, ``sshpass -p``, ``docker login -p``
   (:mod:`.command_line`); ``...`` (:mod:`.fragments`: secrets cut short by an ellipsis);
   ``<REDACTED:`` and ``[BYOK:`` (:mod:`.markers`);
4. clusters of every escape of :data:`workbench.redaction.normalize.ESCAPES` (``%XX``,
   ``\\uXXXX`` / ``\\xXX``, HTML character references), decoded with exact offset maps and
   rescanned (base32 runs are decoded with base64 and hex in pass 2);
5. line junctions: where a line break (real or JSON-escaped, after a shared diff mark:
   :func:`workbench.redaction.normalize.line_breaks`) separates two token runs, the
   tail of the line and the head of the next are joined and rescanned, so a secret split
   across lines is found (both halves) (:mod:`.driver`, which also drives the passes); the
   breaks with a token on both sides are found in one regex pass
   (:func:`workbench.redaction.normalize.joinable_breaks`), not line by line.

Boundaries are explicit: a prefix must not follow a letter or digit (a JSON ``\\n`` escape
is fine) and fixed-shape tokens must not run on into more token characters, but any
punctuation may follow (``. , ) ] > " ' `` `` ` ``). Documentation examples, placeholders
(``xxxx``, ``YOUR_KEY``, repeated or sequential filler), templates and English-looking
identifiers are rejected, so the hard negatives of ``workbench.synth.secrets`` never match.

>>> scan("export GITHUB_TOKEN=ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY1z2A" + ".")
[(20, 60, 'github_classic')]
>>> scan("see AKIAIOSFODNN7EXAMPLE and ghp_" + "x" * 36)
[]
>>> scan("- 1iigMUoIoLDPuBopdcpLeoxtOcLn (half a key), toolu_01VzQ2DNRY9oieQdcxz6kpn9")
[(2, 30, 'secret')]
"""

from workbench.redaction.rules.driver import (
    TOKEN_CHARS,
    find_text,
    join_at,
    keyword_possible,
    merge,
    scan,
)
from workbench.redaction.rules.keyed import password_value_ok
from workbench.redaction.rules.markers import KNOWN_KINDS, marker_tail_end
from workbench.redaction.rules.shape import (
    DOC_EXAMPLES,
    Finding,
    is_placeholder,
    is_wordy,
    random_shape,
    secretish,
    shannon,
)

__all__ = [
    "DOC_EXAMPLES", "KNOWN_KINDS", "TOKEN_CHARS", "Finding", "find_text", "is_placeholder",
    "is_wordy", "join_at", "keyword_possible", "marker_tail_end", "merge", "password_value_ok",
    "random_shape", "scan", "secretish", "shannon",
]
