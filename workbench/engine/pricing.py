"""Prices from ``genai-prices`` (its bundled snapshot; nothing fetched), applied to whole
ledgers at once.

``genai-prices`` prices one usage at a time; a sweep prices millions of calls, so the
per-token prices of a model are read once (:func:`price_table`) into a small array and
applied by the compiled price rule of :mod:`workbench.engine.pricing_nb` (the same rule
the in-kernel totals use). Tiered prices follow genai-prices: the tier is chosen by the
call's total input tokens and applies to every token of that call.
``tests/engine/test_pricing.py`` checks the cost against ``genai_prices.calc_price`` call
by call.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from workbench.errors import WorkbenchError

DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_PROVIDER = "anthropic"


def infer_provider(model: str) -> str:
    m = model.lower()
    if m.startswith("claude") or "anthropic" in m:
        return "anthropic"
    if m.startswith(("gpt", "o1", "o3", "o4", "codex", "chatgpt")):
        return "openai"
    if m.startswith("gemini"):
        return "google"
    return "openai"


@dataclass(frozen=True)
class Component:
    """$ per token: ``base`` below the first tier, then (start, price) tiers."""

    base: float
    tiers: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class PriceTable:
    model: str  # genai-prices' model id
    provider: str
    input: Component
    cache_read: Component
    cache_write: Component
    output: Component
    bills_cache_writes: bool = False  # genai-prices lists a cache-write price for the model
    # the 1-hour cache-write tier (Anthropic: 2x the input price, against 1.25x for the 5-minute
    # one; genai-prices' cache_write_1h_mtok); None: priced as any cache write
    cache_write_1h: Component | None = None

    @functools.cached_property
    def array(self) -> np.ndarray:
        """The table the compiled price rule reads (``pricing_nb``: float64 [4, TABLE_WIDTH])."""
        from workbench.engine import pricing_nb as nb

        table = np.full((len(nb.PRICE), nb.TABLE_WIDTH), np.inf)  # unused tiers never start
        for row, comp in zip(nb.PRICE, (self.input, self.cache_read, self.cache_write, self.output),
                             strict=True):
            if len(comp.tiers) > nb.MAX_TIERS:
                raise WorkbenchError(f"{self.model}: {len(comp.tiers)} price tiers; at most "
                                     f"{nb.MAX_TIERS} are supported")
            table[row, nb.COLUMN.BASE] = comp.base
            for t, (start, price) in enumerate(sorted(comp.tiers)):
                table[row, nb.COLUMN.FIRST_TIER + 2 * t: nb.COLUMN.FIRST_TIER + 2 * t + 2] = start, price
        return table

    def write_1h_extra(self, tokens_1h) -> np.ndarray:
        """$ that cache writes at the 1-hour tier cost on top of the same tokens priced as
        (5-minute) cache writes, per call (the base prices: tiers are not applied)."""
        t = np.asarray(tokens_1h, dtype=np.float64)
        if self.cache_write_1h is None:
            return np.zeros_like(t)
        return t * (self.cache_write_1h.base - self.cache_write.base)

    def cost(self, prompt, cache_read, cache_write, uncached, output) -> np.ndarray:
        """$ of each call (arrays of token counts per call)."""
        from workbench.engine.pricing_nb import costs_nb

        def i64(a):  # ledger columns are strided views: read in place, not copied
            return np.asarray(a, dtype=np.int64)

        return costs_nb(self.array, i64(prompt), i64(cache_read), i64(cache_write), i64(uncached),
                        i64(output))


def _component(value, fallback: Component | None) -> Component:
    if value is None:
        if fallback is None:
            return Component(0.0)
        return fallback
    if hasattr(value, "base"):  # genai_prices TieredPrices
        return Component(float(value.base) / 1e6,
                         tuple((int(t.start), float(t.price) / 1e6) for t in value.tiers))
    return Component(float(value) / 1e6)


class UnknownModelError(WorkbenchError):
    """genai-prices has no price for a model."""


# names agent logs record for models genai-prices lists under another name (the same model;
# the note says so wherever it is used)
MODEL_ALIASES = {
    "gemini-3-pro": "gemini-3-pro-preview",  # Gemini CLI logs the short name
}


def known_models(provider: str | None = None) -> list[str]:
    """Model ids genai-prices prices (of one provider, or all)."""
    from genai_prices import data_snapshot

    snap = data_snapshot.get_snapshot()
    return sorted({m.id for p in snap.providers if provider in (None, p.id) for m in p.models})


def close_models(model: str, provider: str | None = None, n: int = 5) -> list[str]:
    import difflib

    pool = known_models(provider) or known_models()
    return difflib.get_close_matches(model, pool, n=n, cutoff=0.5) or \
        difflib.get_close_matches(model, known_models(), n=n, cutoff=0.4)


def price_table_for(model: str, provider: str | None = None) -> tuple[PriceTable, str]:
    """``(prices, note)``: the model's prices, found under the name genai-prices uses when the
    log recorded it otherwise (a routing prefix such as ``litellm_proxy/``, an alias of
    :data:`MODEL_ALIASES`); ``note`` says which name was used ("" when the model's own)."""
    try:
        return price_table(model, provider), ""
    except UnknownModelError as first:
        candidates = []
        if model in MODEL_ALIASES:
            candidates.append((MODEL_ALIASES[model], "the name genai-prices lists"))
        if "/" in model:
            bare = model.rsplit("/", 1)[1]
            candidates.append((bare, f"routing prefix {model.rsplit('/', 1)[0]}/ removed"))
            if bare in MODEL_ALIASES:
                candidates.append((MODEL_ALIASES[bare], "the name genai-prices lists"))
        for name, why in candidates:
            try:
                return price_table(name), f"{model} priced as {name} ({why})"
            except UnknownModelError:
                continue
        raise first


@functools.cache
def price_table(model: str, provider: str | None = None) -> PriceTable:
    from genai_prices import Usage, calc_price

    inferred = provider is None
    provider = provider or infer_provider(model)
    calc = None
    # a provider guessed from the name may be wrong (minimax-m2.7 is not OpenAI's):
    # then genai-prices' own matching across providers decides
    for provider_id in (provider, None) if inferred else (provider,):
        try:
            calc = calc_price(Usage(input_tokens=1, output_tokens=1), model_ref=model, provider_id=provider_id)
            break
        except Exception:  # genai-prices raises LookupError/ValueError variants
            continue
    if calc is None:
        close = close_models(model, provider)
        hint = f"close names: {', '.join(close)}" if close else "no close name"
        raise UnknownModelError(f"unknown model {model!r}: genai-prices has no price for it at "
                                f"provider {provider!r} ({hint}); give a known model, or price it as "
                                "a stand-in explicitly with --model-price-as NAME") from None
    mp = calc.model_price
    inp = _component(mp.input_mtok, None)
    return PriceTable(
        model=calc.model.id, provider=calc.provider.id, input=inp,
        cache_read=_component(mp.cache_read_mtok, inp),
        cache_write=_component(mp.cache_write_mtok, inp),
        output=_component(mp.output_mtok, None),
        bills_cache_writes=mp.cache_write_mtok is not None,
        cache_write_1h=(_component(mp.cache_write_1h_mtok, None)
                        if getattr(mp, "cache_write_1h_mtok", None) is not None else None),
    )
