"""Old and odd Claude Code usage records (issue 28, deliverable 5), on hand-built records:
streaming placeholder counts before 2.1.97, one response's usage repeated on every line of
its API request."""

from __future__ import annotations

import pytest

from tests.sources.conftest import parse_file, write_jsonl

SID = "99999999-8888-7777-6666-555555555555"
TEXT = "x" * 400  # 400 characters: ~100 tokens of output, far more than a placeholder count


def _user(i, version):
    return {"type": "user", "sessionId": SID, "uuid": f"u{i}", "version": version,
            "timestamp": f"2026-03-01T10:00:{i:02d}.000Z", "message": {"role": "user", "content": "go"}}


def _assistant(i, version, mid, output, *, stop=None, rid=None, block=None):
    rec = {"type": "assistant", "sessionId": SID, "uuid": f"a{i}", "version": version,
           "timestamp": f"2026-03-01T10:00:{i:02d}.500Z",
           "message": {"id": mid, "model": "claude-sonnet-4-5", "role": "assistant", "stop_reason": stop,
                       "content": [block or {"type": "text", "text": TEXT}],
                       "usage": {"input_tokens": 3, "cache_read_input_tokens": 20_000,
                                 "cache_creation_input_tokens": 500, "output_tokens": output}}}
    if rid is not None:
        rec["requestId"] = rid
    return rec


@pytest.mark.parametrize("version, stop, output, flagged", [
    ("2.1.39", None, 1, True),  # the message_start placeholder of an old release
    ("2.1.39", None, 8, True),
    ("2.0.76", None, 3, True),
    ("2.1.39", "end_turn", 1, False),  # a final record: its count is the real one
    ("2.1.97", None, 1, False),  # the release that writes final counts
    ("2.1.39", None, 120, False),  # a count that can be the real one
])
def test_streaming_placeholders_are_detected_per_release(tmp_path, version, stop, output, flagged):
    log = write_jsonl(tmp_path / "s.jsonl", [_user(0, version), _assistant(1, version, "m1", output, stop=stop)])
    (c,), _ = parse_file(log, "claude_code")
    got = c.meta.get("usage_placeholders")
    assert (got["requests"] if got else []) == ([0] if flagged else [])
    # the recorded values are kept as written
    assert c.rows.cols["usage_output"][c.rows.cols["usage_input"].index(3)] == output


def test_one_requests_usage_repeated_under_several_message_ids_is_one_request(tmp_path):
    """Each content block of one API request written with its own message id and the whole
    response's usage: one request, its usage once (not twice)."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    log = write_jsonl(tmp_path / "s.jsonl", [
        _user(0, "2.1.39"),
        _assistant(1, "2.1.39", "msg_a", 120, rid="req_1"),
        _assistant(2, "2.1.39", "msg_b", 120, rid="req_1", block=call),
        _user(3, "2.1.39"),
        _assistant(4, "2.1.39", "msg_c", 50, rid="req_2", stop="end_turn"),
    ])
    (c,), _ = parse_file(log, "claude_code")
    cols = c.rows.cols
    assert c.meta["requests"] == 2
    usage = [(cols["request"][i], cols["usage_output"][i]) for i, u in enumerate(cols["usage_input"]) if u >= 0]
    assert usage == [(0, 120), (1, 50)]
    outputs = {cols["message_id"][i]: cols["request"][i] for i in range(len(c.rows)) if cols["role"][i] == 3}
    assert outputs == {"msg_a": 0, "msg_b": 0, "msg_c": 1}


def test_the_fidelity_audit_does_not_bill_a_placeholder_output(tmp_path):
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import prepare_dataset
    from workbench.evaluate.fidelity import fidelity_table
    from workbench.evaluate.fidelity_predictive import totals_table
    from workbench.sources.importer import import_paths

    (tmp_path / "logs").mkdir()
    log = write_jsonl(tmp_path / "logs" / f"{SID}.jsonl", [
        _user(0, "2.1.39"), _assistant(1, "2.1.39", "m1", 3),
        _user(2, "2.1.39"), _assistant(3, "2.1.39", "m2", 90, stop="end_turn"),
    ])
    ds = load_dataset(import_paths([log], tmp_path / "ds").path)
    req = fidelity_table(ds)["requests"].sort("request")
    # 3 tokens recorded (more than the 1-token snapshot rule), flagged by its release's rule
    assert req["recorded_output_placeholder"].to_list() == [True, False]
    totals = totals_table(prepare_dataset(ds, "cl100k"), {"logs": {}}, manifest=ds.manifest)
    (row,) = totals.iter_rows(named=True)
    assert row["output_unknown_requests"] == 1
    assert row["recorded_output_tokens"] == 90 and row["simulated_output_tokens"] == 90


def test_one_hour_cache_writes_are_priced_at_their_tier():
    """genai-prices bills cache writes at the 1-hour tier (``cache_write_1h_tokens``, part of
    the cache writes) at 2x the input price instead of 1.25x: the extra is the difference."""
    from genai_prices import Usage, calc_price

    from workbench.engine.pricing import price_table

    prices = price_table("claude-sonnet-4-5")
    base = dict(input_tokens=100_000, cache_write_tokens=50_000)
    with_1h = calc_price(Usage(**base, cache_write_1h_tokens=20_000), model_ref="claude-sonnet-4-5",
                         provider_id="anthropic").total_price
    without = calc_price(Usage(**base), model_ref="claude-sonnet-4-5", provider_id="anthropic").total_price
    assert float(prices.write_1h_extra([20_000])[0]) == pytest.approx(float(with_1h - without))
    assert float(prices.write_1h_extra([1_000_000])[0]) == pytest.approx(6.0 - 3.75)  # $/M: 2x and 1.25x of 3


def test_the_bill_prices_recorded_one_hour_writes(tmp_path):
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.pricing import price_table
    from workbench.engine.run import prepare_dataset
    from workbench.evaluate.fidelity_predictive import totals_table
    from workbench.sources.importer import import_paths

    first = _assistant(1, "2.1.120", "m1", 40, stop="tool_use")
    first["message"]["usage"].update(cache_creation_input_tokens=30_000, cache_read_input_tokens=0,
                                     cache_creation={"ephemeral_5m_input_tokens": 0,
                                                     "ephemeral_1h_input_tokens": 30_000})
    second = _assistant(3, "2.1.120", "m2", 90, stop="end_turn")
    second["message"]["usage"]["cache_read_input_tokens"] = 30_000  # reads back what request 0 wrote
    (tmp_path / "logs").mkdir()
    log = write_jsonl(tmp_path / "logs" / f"{SID}.jsonl", [_user(0, "2.1.120"), first, _user(2, "2.1.120"), second])
    (c,), _ = parse_file(log, "claude_code")
    assert c.meta["cache_write_1h"] == {"0": 30_000}
    ds = load_dataset(import_paths([log], tmp_path / "ds").path)
    (row,) = totals_table(prepare_dataset(ds, "cl100k"), {"logs": {}}, manifest=ds.manifest).iter_rows(named=True)
    p = price_table("claude-sonnet-4-5")
    # request 0: 3 input + 30,000 written at 1h + 40 output; request 1: 3 + 30,000 read + 500 written + 90
    bill = (3 * p.input.base + 30_000 * p.cache_write_1h.base + 40 * p.output.base
            + 3 * p.input.base + 30_000 * p.cache_read.base + 500 * p.cache_write.base + 90 * p.output.base)
    assert row["recorded_cost_usd"] == pytest.approx(bill)
    assert row["cost_error_pct"] == pytest.approx(0.0, abs=1e-9)  # anchored: it wrote what the log did
