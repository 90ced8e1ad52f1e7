"""Resolve a policy's provider/model against a continuity: window, cache rules, prices."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.engine import enums as E
from workbench.engine.policy import CACHE_MODES, Policy
from workbench.engine.policy_schema import check_window
from workbench.engine.pricing import (
    DEFAULT_MODEL,
    PriceTable,
    UnknownModelError,
    infer_provider,
    price_table,
    price_table_for,
)

DEFAULT_WINDOW = 200_000
# provider -> (cache mode, TTL seconds, granularity): Anthropic 5-min TTL refreshed on hit;
# OpenAI automatic prefix caching in 128-token steps, kept in memory 5-10 minutes.
CACHE_RULES = {
    "anthropic": (E.CacheMode.EXPLICIT, 300.0, 1),
    "openai": (E.CacheMode.AUTOMATIC, 600.0, 128),
    "google": (E.CacheMode.AUTOMATIC, 300.0, 1),
}


@dataclass(frozen=True)
class ResolvedProvider:
    model: str
    provider: str
    window: int
    cache_mode: int
    ttl_ms: float
    granularity: int
    prices: PriceTable
    note: str = ""

    def as_dict(self) -> dict:
        return {"model": self.model, "provider": self.provider, "context_window": self.window,
                "cache_mode": E.names(E.CacheMode)[self.cache_mode],
                "ttl_s": self.ttl_ms / 1000.0, "granularity": self.granularity,
                "prices_model_id": self.prices.model, "note": self.note}


def context_window_of(policy: Policy, continuity_window: int) -> int:
    """The window ``policy`` is replayed on: its own, else the continuity's, else the default."""
    return int(policy.provider.context_window or (continuity_window if continuity_window > 0 else DEFAULT_WINDOW))


def resolve_provider(policy: Policy, *, continuity_model: str | None, continuity_window: int,
                     model_override: str | None = None, price_as: str | None = None) -> ResolvedProvider:
    """The model, window, cache rules and prices of ``policy`` on one continuity.

    A model genai-prices does not know is an error naming close ones, unless ``price_as``
    names the stand-in to price it as (``--model-price-as``); a continuity that recorded no
    model is priced as the default model. Either way ``note`` says what was done."""
    pv = policy.provider
    model = model_override or pv.model or continuity_model or DEFAULT_MODEL
    provider = pv.provider if (pv.provider and not model_override) else infer_provider(model)
    note = "" if (model_override or pv.model or continuity_model) else \
        f"no model recorded or given; priced as the default {DEFAULT_MODEL}"
    try:
        prices, renamed = price_table_for(model, pv.provider if (pv.provider and not model_override) else None)
        note = renamed or note
    except UnknownModelError:
        if price_as is None:
            raise
        prices = price_table(price_as, infer_provider(price_as))
        note = f"{model} is not in genai-prices; priced as {price_as} (--model-price-as)"
    window = context_window_of(policy, continuity_window)
    check_window(policy, window)
    mode, ttl_s, gran = CACHE_RULES.get(provider, (E.CacheMode.AUTOMATIC, 300.0, 1))
    if mode == E.CacheMode.AUTOMATIC and prices.bills_cache_writes:
        mode = E.CacheMode.AUTOMATIC_WRITES  # e.g. OpenAI from GPT-5.6: writes are billed
    if pv.cache is not None:
        mode = CACHE_MODES[pv.cache]
    return ResolvedProvider(
        model=model, provider=provider, window=int(window), cache_mode=int(mode),
        ttl_ms=float((pv.ttl_s if pv.ttl_s is not None else ttl_s) * 1000.0),
        granularity=int(pv.granularity or gran), prices=prices, note=note,
    )
