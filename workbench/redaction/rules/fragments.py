"""Secrets cut short by an ellipsis (``ghp_Q7wE9rT2yU4i...``, ``...=Zq8xR2mN4v...``), as
summaries quote them: a known prefix with enough body, or a random-looking piece."""

from __future__ import annotations

import re

from workbench.redaction.rules.keyed import random_token
from workbench.redaction.rules.pieces import _piece_context_ok
from workbench.redaction.rules.prefixed import _left_ok, _truncated
from workbench.redaction.rules.shape import (
    _R_ID_PREFIX,
    RANDOM_KIND,
    Finding,
    _classes,
    _in_doc_example,
    is_placeholder,
    is_wordy,
    random_shape,
)

_R_FRAGMENT_PREFIX = re.compile(
    r"(AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|glpat-|sk-ant-|sk-|[sr]k_(?:live|test)_|"
    r"xox[abposr]-|AIza|eyJ|hf_|npm_|SG\.)")
_FRAGMENT_KINDS = {
    "AKIA": "aws_access_key_id", "ASIA": "aws_access_key_id", "ABIA": "aws_access_key_id",
    "ACCA": "aws_access_key_id", "github_pat_": "github_fine_grained", "glpat-": "gitlab_pat",
    "sk-ant-": "anthropic_api", "sk-": "openai_project", "AIza": "google_api_key",
    "eyJ": "jwt", "hf_": "huggingface", "npm_": "npm", "SG.": "sendgrid",
}
_R_FRAGMENT_REV = re.compile(r"[A-Za-z0-9+/=_.-]{1,300}")


def _fragments(view: str, out: list[Finding]) -> None:
    """Secrets cut short by an ellipsis (``ghp_Q7wE9rT2yU4i...``, as summaries write them)."""
    pos = view.find("...")
    while pos != -1:
        end = pos
        while end > 0 and view[end - 1] == ".":
            end -= 1
        m = _R_FRAGMENT_REV.match(view[max(0, end - 300):end][::-1])
        if m:
            start = end - m.end()
            while start < end and view[start] in "._-=":
                start += 1
            tok = view[start:end]
            pm = _R_FRAGMENT_PREFIX.match(tok)
            if not pm:  # the value after the last assignment in the token
                cut = max(tok.rfind("="), tok.rfind(":")) + 1
                while cut < len(tok) and tok[cut] in "=:":
                    cut += 1
                tok, start = tok[cut:], start + cut
                pm = _R_FRAGMENT_PREFIX.match(tok)
            if pm:
                body = tok[pm.end():]
                p = pm.group(1)
                if _left_ok(view, start) and not _in_doc_example(view, start, end) and (
                        (len(body) >= 8 and not is_placeholder(body) and not is_wordy(body)
                         and _classes(body) >= 2
                         and (p != "eyJ" or _truncated(view, start) is not None))
                        or (p != "SG." and _truncated(view, start) is not None)):
                    kind = _FRAGMENT_KINDS.get(p) or (
                        "github_classic" if p.startswith("gh") else
                        "stripe_key" if p[1:3] == "k_" else "slack_token")
                    out.append((start, pos + 3, kind))
            elif (len(tok) >= 10 and _left_ok(view, start) and not _R_ID_PREFIX.match(tok)
                  and ((len(tok) >= 16 and random_token(tok))
                       or (any(c.isdigit() for c in tok) and random_shape(tok, loose=True)))
                  and _piece_context_ok(view, start, end)):
                out.append((start, pos + 3, RANDOM_KIND))
        nxt = pos + 3
        while view.startswith(".", nxt):
            nxt += 1
        pos = view.find("...", nxt)

