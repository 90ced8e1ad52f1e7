"""Span-based secret redaction for transcripts, and a detect-secrets baseline.

``from workbench.redaction import redact, redact_messages, scan`` is the API; see
:mod:`workbench.redaction.harness`. Nothing heavy is imported here (detect-secrets only
by :mod:`workbench.redaction.baseline`, on use).
"""

from workbench.redaction.harness import (
    RedactionResult,
    leaked,
    marker,
    redact,
    redact_messages,
    scan,
    surviving_fragment,
)

__all__ = ["RedactionResult", "leaked", "marker", "redact", "redact_messages", "scan",
           "surviving_fragment"]
