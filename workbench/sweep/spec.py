"""Sweep specs (``simulations/*.yaml``) and their expansion into runs with stable ids.

The shape is mesa's ``batch_run``: under ``parameters`` a scalar is fixed and a list is
swept; ``seeds`` is its own axis; ``mode`` combines the swept lists as a Cartesian
``product`` or element-wise ``zip``. Keys are the dotted policy keys that
``Policy.with_overrides`` takes (``trigger.fraction``, ``flush.soft_threshold_tokens``,
``provider.model`` ...).

.. code-block:: yaml

    name: openclaw-flush
    dataset: {path: datasets/sweep-coding, generate: {profile: coding, events: 50000, seed: 1}}
    base: openclaw-flush                 # a preset, a .yaml/.toml policy file, or a mapping
    parameters:
      flush.soft_threshold_tokens: [2000, 4000, 8000]
      trigger.reserve_tokens,flush.reserve_tokens: [13000, 20000, 33000]   # tied: same values (the flush's must be the trigger's)
      provider.model: claude-sonnet-4-5  # fixed
    mode: product
    seeds: [0, 1]
    evaluate: false                      # true: leakage + retention per run (slower)
    engine: kernel                       # kernel | reference | batch (structural, prange)
    tokenizer: cl100k

A run is one configuration x one seed over every continuity of the dataset. Its id hashes
the resolved policy digest, the dataset's file hashes, the seed, the engine and the
tokenizer, so the same run has the same id wherever and whenever it is expanded; a
configuration the policy rejects (``PolicyError``) still gets a stable id and is recorded
as a failed run. Relative dataset paths are taken from the current directory, like every
other path the CLI takes; a relative ``base`` policy file from the spec's directory.

>>> spec = SweepSpec.from_dict({"dataset": "d", "base": "codex-local", "mode": "zip",
...     "parameters": {"trigger.fraction": [0.7, 0.8], "trigger.keep_last_events": [10, 20],
...                    "compaction.cap": 6000}})
>>> [sorted(c.items()) for c in spec.configurations()][0]
[('compaction.cap', 6000), ('trigger.fraction', 0.7), ('trigger.keep_last_events', 10)]
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.engine.policy_schema import check_relations
from workbench.errors import PolicyError, WorkbenchError

MODES = ("product", "zip")
ENGINES = ("kernel", "reference", "batch")  # batch: structural metrics, many configurations per call
SPEC_KEYS = {"name", "description", "dataset", "base", "parameters", "mode", "seeds", "evaluate",
             "engine", "tokenizer"}
GENERATE_KEYS = {"profile", "events", "seed", "text", "tokenizers", "facts", "secrets",
                 "hard_negatives", "continuity_id", "secret_families", "task_state"}


class SpecError(WorkbenchError):
    """A sweep spec is malformed (unknown key, unknown parameter, unequal zip lengths...)."""


def _sha(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\x1f")
    return h.hexdigest()


def _canonical(value: Any) -> str:
    import orjson

    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


# ---- parameters ---------------------------------------------------------------------------
def _section_types() -> dict[str, dict[str, str]]:
    """``{"trigger": {"fraction": "float", ...}, ...}``: each overridable key's annotation."""
    from workbench.engine.policy import SECTIONS

    out = {name: {f.name: str(f.type) for f in dataclasses.fields(cls)} for name, cls in SECTIONS.items()}
    out[""] = {"description": "str", "emergency": "str"}
    return out


def parameter_type(key: str) -> str:
    """The annotation of a dotted policy key; :class:`SpecError` when there is no such key."""
    types = _section_types()
    section, dot, name = key.partition(".")
    if not dot:
        section, name = "", key
    if section not in types or name not in types[section]:
        known = sorted(f"{s}.{k}" if s else k for s, ks in types.items() for k in ks)
        raise SpecError(f"unknown policy parameter {key!r}; known: {', '.join(known)}")
    return types[section][name]


def coerce(key: str, value: Any) -> Any:
    """Normalise a YAML value to the field's type (``20000.0`` -> ``20000`` for an int field,
    ``1`` -> ``1.0`` for a float field, list -> tuple) so equal settings hash equally."""
    from workbench.engine.policy_schema import check_field

    t = parameter_type(key)
    try:
        check_field(key, value)
    except PolicyError as exc:
        raise SpecError(f"parameters.{exc}") from None
    if value is None:
        return None
    if t.startswith("tuple"):
        if not isinstance(value, list | tuple):
            raise SpecError(f"{key} takes a list, got {value!r}")
        return tuple(value)
    if t.startswith("int") and isinstance(value, float) and value.is_integer():
        return int(value)
    if t.startswith("float") and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _is_swept(key: str, value: Any) -> bool:
    if not isinstance(value, list):
        return False
    if parameter_type(key).startswith("tuple"):  # a list is the value; a list of lists is swept
        return bool(value) and all(isinstance(v, list | tuple) for v in value)
    return True


_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")


def check_name(name: str) -> str:
    """A sweep's name names a directory under ``runs/sweeps``: a name, never a path."""
    if not _NAME.match(name) or len(name) > 128:
        raise SpecError(f"name {name!r} is not a plain name: use letters, digits, '.', '_' and '-' "
                        "(not starting with '.', at most 128 characters); it becomes runs/sweeps/NAME")
    return name


# ---- dataset --------------------------------------------------------------------------------
@dataclass(frozen=True)
class DatasetSpec:
    """Where the dataset lives and, optionally, how to generate it when it is missing."""

    path: str
    generate: dict[str, Any] | None = None

    @classmethod
    def from_value(cls, value: Any) -> DatasetSpec:
        if isinstance(value, str | Path):
            return cls(path=str(value))
        if not isinstance(value, dict) or "path" not in value:
            raise SpecError("dataset must be a path or a mapping with 'path' (and optional 'generate')")
        extra = set(value) - {"path", "generate"}
        if extra:
            raise SpecError(f"unknown dataset key(s) {sorted(extra)}; use path, generate")
        gen = value.get("generate")
        if gen is not None:
            if not isinstance(gen, dict):
                raise SpecError("dataset.generate must be a mapping (profile, events, seed, ...)")
            unknown = set(gen) - GENERATE_KEYS
            if unknown:
                raise SpecError(f"unknown dataset.generate key(s) {sorted(unknown)}; known: {sorted(GENERATE_KEYS)}")
        return cls(path=str(value["path"]), generate=dict(gen) if gen else None)

    def resolve(self, root: str | Path | None = None) -> Path:
        """The dataset's path: relative paths are taken from ``root`` (default: the current
        directory, the project). A dataset the spec may generate must lie inside ``root``
        (symbolic links followed): a spec is untrusted input and writes nowhere else."""
        root_dir = Path(root) if root is not None else Path.cwd()
        path = Path(self.path)
        path = path if path.is_absolute() else root_dir / path
        if self.generate is not None:
            real, real_root = path.resolve(), root_dir.resolve()
            if not real.is_relative_to(real_root):
                raise SpecError(f"dataset.path {self.path!r} with dataset.generate would write "
                                f"outside the project ({real_root}); a spec may only generate a "
                                "dataset inside it (or pass --root)")
        return path

    def ensure(self, tokenizer: str, *, progress: bool = False, root: str | Path | None = None):
        """The dataset, generated first when missing and ``generate`` is given."""
        from workbench.continuity.dataset import MANIFEST_FILE, load_dataset

        path = self.resolve(root)
        if not (path / MANIFEST_FILE).is_file():
            if self.generate is None:
                return load_dataset(path)  # raises the usual "not a dataset" error
            from workbench.synth.generate import GeneratorConfig, generate_dataset

            gen = dict(self.generate)
            toks = list(gen.pop("tokenizers", None) or ())
            if toks and tokenizer not in toks:
                toks.append(tokenizer)
            cfg = GeneratorConfig(**gen, tokenizers=tuple(toks) if toks else None)
            ds = generate_dataset(cfg, path, progress=progress)
        else:
            ds = load_dataset(path)
            if self.generate is not None:
                self._check_generated(ds)
        if tokenizer not in ds.tokenizers:
            raise SpecError(f"dataset {path} has no {tokenizer!r} token counts (has {ds.tokenizers}); "
                            f"add them with `workbench tokens {path} --tokenizer {tokenizer}`")
        return ds

    def _check_generated(self, ds) -> None:
        recorded = ds.manifest.get("source", {}).get("generator")
        if recorded is None:
            raise SpecError(f"{ds.path} exists but was not generated; remove dataset.generate "
                            "from the spec or point dataset.path elsewhere")
        for key, want in self.generate.items():
            if key == "tokenizers":
                continue
            have = recorded.get(key)
            if have != want:
                raise SpecError(f"{ds.path} was generated with {key}={have!r}, the spec asks for "
                                f"{want!r}; delete the dataset or change dataset.path")


@dataclass(frozen=True)
class EvaluateSpec:
    """Text-level evaluation per run (leakage + retention through ``evaluate_run``)."""

    summarizer: str = "modelled"
    baseline: bool = False  # also run detect-secrets over derived text (slow; not in the headline)
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_value(cls, value: Any) -> EvaluateSpec | None:
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, dict):
            extra = set(value) - {"summarizer", "baseline", "options"}
            if extra:
                raise SpecError(f"unknown evaluate key(s) {sorted(extra)}; use summarizer, baseline, options")
            out = cls(summarizer=str(value.get("summarizer", "modelled")),
                      baseline=bool(value.get("baseline", False)), options=dict(value.get("options") or {}))
            from workbench.summarize import get_summarizer
            from workbench.summarize.base import SummarizerConfigError
            from workbench.summarize.settings import DRAWN_SUMMARIZERS, split_draws

            try:  # (checked before any run: every run would fail the same way)
                _, backend_options = split_draws(out.summarizer, out.options)
                if out.summarizer in DRAWN_SUMMARIZERS:  # (a seeded one is built from its options: no endpoint)
                    get_summarizer(out.summarizer, **backend_options)
            except SummarizerConfigError as exc:
                raise SpecError(f"evaluate.options: {exc}") from None
            return out
        raise SpecError("evaluate must be true, false or a mapping (summarizer, baseline, options)")


# ---- runs -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunSpec:
    """One configuration x one seed."""

    run_id: str
    config_id: str
    run_index: int
    config_index: int
    seed: int
    overrides: dict[str, Any]
    policy_name: str
    policy_digest: str
    error: str | None = None  # the PolicyError text when the configuration is invalid

    def task_run(self) -> TaskRun:
        return TaskRun(self.run_id, self.config_id, self.seed, _jsonable(self.overrides))

    def task(self, spec: SweepSpec, dataset_path: str, *, evaluate: dict[str, Any] | None = None,
             root: str | None = None) -> Task:
        """This run as a worker's task (``evaluate``: the settings it is evaluated with,
        default the spec's)."""
        if evaluate is None and spec.evaluate:
            evaluate = dataclasses.asdict(spec.evaluate)
        return Task(dataset_path, spec.base, spec.engine, spec.tokenizer, (self.task_run(),), evaluate, root)


@dataclass(frozen=True)
class TaskRun:
    """One run of a task: a configuration (its overrides of the base policy) x one seed."""

    run_id: str
    config_id: str
    seed: int
    overrides: dict[str, Any]


@dataclass(frozen=True)
class Task:
    """What a sweep worker receives (small, picklable), in the shape of mesa's ``batch_run``:
    what every run shares once (dataset, base policy, engine, tokenizer, evaluation), then
    the runs. The batch engine puts many configurations in one task (one compiled call);
    every other engine one run per task. ``runner.execute_task`` runs it."""

    dataset: str  # the dataset's resolved path
    base: dict[str, Any]  # the base policy (Policy.to_dict)
    engine: str
    tokenizer: str
    runs: tuple[TaskRun, ...]
    evaluate: dict[str, Any] | None = None  # the evaluation settings (None: not evaluated)
    root: str | None = None  # where ``summarizer.prompt`` files are read from

    @property
    def name(self) -> str:
        first = self.runs[0].run_id if self.runs else "empty"
        return first if len(self.runs) == 1 else f"batch-{first}-{len(self.runs)}"


def _plain(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    return v


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(v) for k, v in d.items()}


@dataclass(frozen=True)
class SweepSpec:
    name: str
    dataset: DatasetSpec
    base: dict[str, Any]  # the base policy, resolved (Policy.to_dict)
    parameters: dict[str, Any] = field(default_factory=dict)  # coerced; lists are swept
    mode: str = "product"
    seeds: tuple[int, ...] = (0,)
    evaluate: EvaluateSpec | None = None
    engine: str = "kernel"
    tokenizer: str = "cl100k"
    description: str = ""

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> SweepSpec:
        import yaml

        path = Path(path)
        if not path.is_file():
            raise SpecError(f"{path}: sweep spec not found")
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise SpecError(f"{path}: cannot parse YAML: {exc}") from None
        if not isinstance(data, dict):
            raise SpecError(f"{path}: a sweep spec must be a mapping")
        data.setdefault("name", path.stem)
        try:
            return cls.from_dict(data, base_dir=path.parent)
        except SpecError as exc:
            raise SpecError(f"{path}: {exc}") from None

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, base_dir: str | Path | None = None) -> SweepSpec:
        unknown = set(data) - SPEC_KEYS
        if unknown:
            raise SpecError(f"unknown spec key(s) {sorted(unknown)}; known: {sorted(SPEC_KEYS)}")
        for required in ("dataset", "base"):
            if required not in data:
                raise SpecError(f"a sweep spec needs {required!r}")
        name = check_name(str(data.get("name") or "sweep"))
        base = _resolve_base(data["base"], name, base_dir)
        params_in = data.get("parameters") or {}
        if not isinstance(params_in, dict):
            raise SpecError("parameters must be a mapping of dotted policy keys to a value or a list")
        params: dict[str, Any] = {}
        seen: set[str] = set()
        for key, value in params_in.items():
            key = ",".join(k.strip() for k in str(key).split(","))
            group = key.split(",")
            for k in group:
                if k in seen:
                    raise SpecError(f"parameter {k} is set twice")
                seen.add(k)
            first = group[0]
            if _is_swept(first, value):
                if not value:
                    raise SpecError(f"parameter {key} sweeps an empty list")
                params[key] = [coerce(first, v) for v in value]
            else:
                params[key] = coerce(first, value)
            for k in group[1:]:  # tied keys take the same values: check they accept them
                for v in (params[key] if isinstance(params[key], list) else [params[key]]):
                    coerce(k, v)
        mode = str(data.get("mode", "product"))
        if mode not in MODES:
            raise SpecError(f"mode must be one of {MODES}, got {mode!r}")
        seeds_in = data.get("seeds", [0])
        seeds_list = seeds_in if isinstance(seeds_in, list) else [seeds_in]
        if not seeds_list or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds_list):
            raise SpecError(f"seeds must be an integer or a non-empty list of integers, got {seeds_in!r}")
        if len(set(seeds_list)) != len(seeds_list):
            raise SpecError(f"seeds repeat: {seeds_list}")
        engine = str(data.get("engine", "kernel"))
        if engine not in ENGINES:
            raise SpecError(f"engine must be one of {ENGINES}, got {engine!r}")
        if engine == "batch" and EvaluateSpec.from_value(data.get("evaluate")) is not None:
            raise SpecError("engine batch computes structural metrics only; use engine kernel with evaluate")
        spec = cls(name=name, dataset=DatasetSpec.from_value(data["dataset"]), base=base,
                   parameters=params, mode=mode, seeds=tuple(int(s) for s in seeds_list),
                   evaluate=EvaluateSpec.from_value(data.get("evaluate")), engine=engine,
                   tokenizer=str(data.get("tokenizer", "cl100k")),
                   description=str(data.get("description", "")))
        spec.configurations()  # zip lengths are checked here
        return spec

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "dataset": {"path": self.dataset.path, "generate": self.dataset.generate},
                "base": self.base,
                "parameters": {k: _plain(v) for k, v in self.parameters.items()},
                "mode": self.mode, "seeds": list(self.seeds),
                "evaluate": dataclasses.asdict(self.evaluate) if self.evaluate else False,
                "engine": self.engine, "tokenizer": self.tokenizer}

    # ---- expansion ----------------------------------------------------------------------
    def base_policy(self):
        from workbench.engine.policy import Policy

        return Policy.from_dict(self.base)

    def fixed(self) -> dict[str, Any]:
        return {k: v for k, v in self.parameters.items() if not isinstance(v, list)}

    def swept(self) -> dict[str, list]:
        return {k: v for k, v in self.parameters.items() if isinstance(v, list)}

    def parameter_keys(self) -> list[str]:
        """Every policy key the spec sets (tied keys ``"a,b"`` expanded), in spec order."""
        return [k for key in self.parameters for k in key.split(",")]

    def configurations(self) -> list[dict[str, Any]]:
        """The override mapping of every configuration, in a stable order (first key slowest).
        A key ``"a,b"`` ties two policy keys to the same values."""
        fixed, swept = self.fixed(), self.swept()
        keys = list(swept)
        if not keys:
            combos: list[tuple] = [()]
        elif self.mode == "zip":
            lengths = {k: len(v) for k, v in swept.items()}
            if len(set(lengths.values())) > 1:
                raise SpecError(f"mode zip needs swept lists of equal length, got {lengths}")
            combos = list(zip(*(swept[k] for k in keys), strict=True))
        else:
            combos = list(itertools.product(*(swept[k] for k in keys)))
        out = []
        for combo in combos:
            values = {**fixed, **dict(zip(keys, combo, strict=True))}
            out.append({k: coerce(k, values[key]) for key in self.parameters for k in key.split(",")})
        return out

    def points(self) -> list[tuple[dict[str, Any], int]]:
        """(configuration, seed) pairs: configurations outer, seeds inner."""
        return [(c, s) for c in self.configurations() for s in self.seeds]

    def runs(self, dataset_files: dict[str, str]) -> list[RunSpec]:
        """Expand against the dataset's ``{file: sha256}``; ids are stable across expansions."""
        base = self.base_policy()
        files = ",".join(f"{k}:{v}" for k, v in sorted(dataset_files.items()))
        out: list[RunSpec] = []
        for ci, overrides in enumerate(self.configurations()):
            error = None
            try:
                pol = check_relations(base.with_overrides(overrides))
                digest = pol.digest()
            except PolicyError as exc:
                error = str(exc)
                digest = "invalid_" + _sha(base.digest(), _canonical(_jsonable(overrides)))[:12]
            config_id = "cfg_" + _sha(digest, files, f"engine={self.engine}",
                                      f"tokenizer={self.tokenizer}")[:12]
            for seed in self.seeds:
                run_id = "run_" + _sha(digest, files, f"seed={seed}", f"engine={self.engine}",
                                       f"tokenizer={self.tokenizer}")[:16]
                out.append(RunSpec(run_id=run_id, config_id=config_id, run_index=len(out),
                                   config_index=ci, seed=seed, overrides=overrides,
                                   policy_name=base.name, policy_digest=digest, error=error))
        ids = [r.run_id for r in out]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise SpecError(f"two configurations resolve to the same policy (run ids {dupes[:3]}...); "
                            "remove the duplicate values")
        return out


def _resolve_base(value: Any, name: str, base_dir: str | Path | None) -> dict[str, Any]:
    from workbench.engine.presets import PRESETS, get_policy, policy_from_spec

    try:
        if isinstance(value, str):
            if value in PRESETS:
                return get_policy(value).to_dict()
            p = Path(value)
            if not p.is_absolute() and base_dir is not None and not p.exists():
                p = Path(base_dir) / p
            return get_policy(str(p)).to_dict()
        if isinstance(value, dict):
            v = dict(value)
            if "preset" not in v:
                v.setdefault("name", name)
            return policy_from_spec(v).to_dict()
    except PolicyError as exc:
        raise SpecError(f"base: {exc}") from None
    raise SpecError("base must be a preset name, a policy file, or a policy mapping")


def dataset_files(ds) -> dict[str, str]:
    """``{file: sha256}`` of a dataset's manifest (what run ids hash)."""
    return {k: v["sha256"] for k, v in sorted(ds.manifest.get("files", {}).items())}


def runs_frame(spec: SweepSpec, runs: list[RunSpec], dataset_path: str):
    """The run table: ``run_id`` and every parameter, one row per run (polars)."""
    import polars as pl

    keys = spec.parameter_keys()
    cols: dict[str, list] = {
        "run_id": [r.run_id for r in runs], "config_id": [r.config_id for r in runs],
        "run_index": [r.run_index for r in runs], "config_index": [r.config_index for r in runs],
        "seed": [r.seed for r in runs], "policy": [r.policy_name for r in runs],
        "policy_digest": [r.policy_digest for r in runs],
    }
    for k in keys:
        cols[k] = [_cell(r.overrides.get(k)) for r in runs]
    cols["invalid"] = [r.error for r in runs]
    cols["engine"] = [spec.engine] * len(runs)
    cols["tokenizer"] = [spec.tokenizer] * len(runs)
    cols["dataset"] = [dataset_path] * len(runs)
    schema: dict[str, Any] = {"run_index": pl.Int64, "config_index": pl.Int64, "seed": pl.Int64,
                              "invalid": pl.String}
    for k in keys:
        schema[k] = _dtype(cols[k])
    return pl.DataFrame(cols, schema_overrides=schema, strict=False)


def _cell(v: Any) -> Any:
    if isinstance(v, tuple | list | dict):
        return _canonical(list(v) if isinstance(v, tuple) else v)
    return v


def _dtype(values: list):
    import polars as pl

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pl.Boolean
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pl.Int64
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pl.Float64
    return pl.String
