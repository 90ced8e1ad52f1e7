from workbench.engine.presets import get_policy
from workbench.evaluate.determinism import audit_determinism
from workbench.synth.generate import GeneratorConfig, generate_dataset


def test_determinism_audit_passes_and_measures_tokenizer_drift(tmp_path):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=1200, seed=2, facts=0, secrets=0,
                                          hard_negatives=0), tmp_path / "ds")
    pols = [get_policy("claude-code", {"provider.context_window": 30_000}),
            get_policy("rip-adr0011", {"trigger.every_messages": 60})]
    out = audit_determinism(ds, pols, engine="reference")
    checks = out["checks"]
    assert out["passed"], checks.filter(checks["status"] != "pass")
    assert set(checks["check"].to_list()) >= {"repeat", "process_restart_cold_cache", "worker_count",
                                              "shuffled_background_jobs"}
    drift = {r["policy"]: r for r in out["drift"].iter_rows(named=True)}
    assert drift["rip-adr0011"]["identical"] and drift["rip-adr0011"]["moved"] == 0
    assert drift["claude-code"]["cuts"] > 0
