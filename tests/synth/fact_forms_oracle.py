""":func:`workbench.synth.fact_forms.normal_form_positions` as it was before its non-ASCII
path became an array job (issue 30): the regex walk over the lower-cased text's runs. The
test oracle of the new one (they must agree on every text)."""

from __future__ import annotations

import re

_RUN = re.compile(r"[^\W_]+")


def normal_form_positions(text: str):
    import numpy as np

    low = text.lower()
    runs = list(_RUN.finditer(low))
    starts = np.fromiter((m.start() for m in runs), dtype=np.int64, count=len(runs))
    lengths = np.fromiter((m.end() - m.start() for m in runs), dtype=np.int64, count=len(runs))
    before = np.cumsum(lengths) - lengths
    positions = np.repeat(starts - before, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
    return "".join(m.group(0) for m in runs), positions
