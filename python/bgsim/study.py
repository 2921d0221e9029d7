"""A bgsim results folder read into pandas: `load(folder)`."""

import hashlib
import json
import math
import os
from pathlib import Path

import pandas as pd

from . import stats
from .colors import policy_colors

# Columns' units, from their names' suffixes (notebooks-data/README.md: "its unit as a suffix").
SUFFIX_UNITS = [
    ("_per_day_j", "J/day"),
    ("_pct_per_day", "%/day"),
    ("_per_day", "1/day"),
    ("_pct", "%"),
    ("_j", "J"),
    ("_s", "s"),
    ("_wh", "Wh"),
    ("_w", "W"),
    ("_bytes", "bytes"),
    ("_mbps", "Mbit/s"),
]

# The result files a study may hold, in the order `Study.files` lists them.
RESULT_FILES = ["runs.csv", "summary.csv", "comparisons.csv", "sensitivity.csv", "apps.csv", "tasks.csv", "timeline.csv", "events.csv"]

# runs.csv's columns that say which run a row is, not what it measured.
_RUN_KEYS = ["scenario", "point", "policy", "replication", "seed"]


def unit(column: str) -> str:
    """The unit of a result column from its name: `latency_p50_s` is in seconds; "" for counts."""
    if column == "bytes" or column.endswith("_bytes"):
        return "bytes"
    for suffix, u in SUFFIX_UNITS:
        if column.endswith(suffix):
            return u
    return ""


class ResultsError(Exception):
    """A folder that is not a complete bgsim results folder, or a file that differs from its manifest."""


class Study:
    """One results folder of `bgsim run`, `bgsim sweep` or `bgsim merge`.

    Attributes: `folder`, `manifest` (the parsed manifest.json), `kind` ("run" or "sweep"),
    `policies` (in the study's order), `baseline`, `parameters` (a sweep's swept key paths),
    `traits` (a fleet's per-person columns), `colors` ({policy: "#RRGGBB"}, as the report draws
    them), and each result file as a DataFrame: `runs`, `summary`, `comparisons`, `apps`, and,
    when the study wrote them, `tasks`, `timeline`, `events`, `sensitivity` (read on first use;
    `None` when absent).
    """

    def __init__(self, folder, verify=True):
        self.folder = Path(folder)
        manifest = self.folder / "manifest.json"
        if not manifest.is_file():
            raise ResultsError(f"{manifest}: missing: is {self.folder} a bgsim results folder? (a run writes manifest.json last)")
        try:
            self.manifest = json.loads(manifest.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ResultsError(f"{manifest}: not JSON ({e})") from None
        self.kind = self.manifest.get("kind")
        if self.kind not in ("run", "sweep"):
            raise ResultsError(f"{manifest}: kind {self.kind!r}: expected a run's or a sweep's folder (a forecast's or a shard's is not read here)")
        self.policies = list(self.manifest["policies"])
        self.baseline = self.manifest.get("baseline") or self.policies[0]
        self.parameters = list(self.manifest.get("parameters", []))
        self.traits = list(self.manifest.get("fleet", []))
        self.colors = dict(self.manifest.get("policy_colors") or policy_colors(self.policies))
        self.program = self.manifest.get("program", {})
        self._frames = {}
        if verify:
            self.verify()

    def __repr__(self):
        what = f"sweep over {', '.join(self.parameters)}" if self.kind == "sweep" else "run"
        people = f", a fleet over {', '.join(self.traits)}" if self.traits else ""
        return (
            f"<bgsim study {self.manifest.get('scenario')!r}: {what}{people}, "
            f"{self.manifest.get('replications')} replications, policies {', '.join(self.policies)}>"
        )

    # Files

    def verify(self):
        """Checks each file the manifest lists that is present against its size and SHA-256, as
        `bgsim report` does; runs.csv must be there (a bundled dataset leaves out its largest
        files, which are then simply absent)."""
        for f in self.manifest.get("files", []):
            path = self.folder / f["name"]
            if not path.is_file():
                if f["name"] == "runs.csv":
                    raise ResultsError(f"{path}: listed in the manifest but missing")
                continue
            if path.stat().st_size != f["bytes"]:
                raise ResultsError(f"{path}: {path.stat().st_size} bytes, the manifest says {f['bytes']}: changed since bgsim wrote it")
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            if digest.hexdigest() != f["sha256"]:
                raise ResultsError(f"{path}: its SHA-256 differs from the manifest's: changed since bgsim wrote it")

    @property
    def files(self):
        """The result files present, by name."""
        return [name for name in RESULT_FILES if (self.folder / name).is_file()]

    def frame(self, name):
        """The result file `name` (such as "apps.csv") as a DataFrame, `None` if the study did not write it.

        Policies are an ordered categorical in the study's order; text columns stay text
        (a fleet's drawn value `off` is the string "off", not a boolean).
        """
        if name not in self._frames:
            path = self.folder / name
            if not path.is_file():
                self._frames[name] = None
            else:
                df = pd.read_csv(path, keep_default_na=False, na_values=[""], low_memory=False)
                if "policy" in df.columns:
                    df["policy"] = pd.Categorical(df["policy"], categories=self.policies, ordered=True)
                self._frames[name] = df
        return self._frames[name]

    runs = property(lambda self: self.frame("runs.csv"), doc="runs.csv: one row per policy, replication (and point).")
    summary = property(lambda self: self.frame("summary.csv"), doc="summary.csv: each metric's interval per policy (and point).")
    comparisons = property(lambda self: self.frame("comparisons.csv"), doc="comparisons.csv: paired differences from the baseline.")
    apps = property(lambda self: self.frame("apps.csv"), doc="apps.csv: one row per policy, replication, app and task identifier.")
    tasks = property(lambda self: self.frame("tasks.csv"), doc="tasks.csv: one row per task, when written.")
    timeline = property(lambda self: self.frame("timeline.csv"), doc="timeline.csv, when written (--timeline).")
    events = property(lambda self: self.frame("events.csv"), doc="events.csv, when written (--events).")
    sensitivity = property(
        lambda self: self.frame("sensitivity.csv"),
        doc="sensitivity.csv, from `bgsim sensitivity` (a morris sweep): each paired difference's verdict and each assumption's part.",
    )

    @property
    def metrics(self):
        """runs.csv's metric columns, in order."""
        start = list(self.runs.columns).index("tasks_submitted")
        return list(self.runs.columns[start:])

    @staticmethod
    def unit(column):
        """The unit of a column (`Study.unit("latency_p50_s") == "s"`)."""
        return unit(column)

    def tidy(self, name="runs.csv"):
        """A result file in long form: its key columns, then `metric`, `value` and `unit`, one row per value."""
        df = self.frame(name)
        if df is None:
            return None
        if name == "runs.csv":
            keys = [c for c in df.columns if c in _RUN_KEYS or c in self.parameters or c in self.traits]
            values = self.metrics
        elif name == "apps.csv":
            keys = ["policy", "replication", "app", "identifier", "kind"] + (["point"] if "point" in df.columns else [])
            values = [c for c in df.columns if c not in keys and pd.api.types.is_numeric_dtype(df[c])]
        else:
            return df
        long = df.melt(id_vars=keys, value_vars=values, var_name="metric", value_name="value")
        long["unit"] = long["metric"].map(unit)
        return long

    # Views

    def _replication_means(self, metric, policy):
        """Per replication, the policy's mean of `metric` over the sweep's points (a run has one)."""
        runs = self.runs
        rows = runs[runs["policy"] == policy]
        return rows.groupby("replication")[metric].mean()

    def interval(self, metric):
        """Each policy's mean of `metric` with its 95% interval over replications (a sweep's
        replication averaged over its points first), as the report's table shows it."""
        out = []
        for p in self.policies:
            n, mean, sd, low, high = stats.interval(self._replication_means(metric, p).dropna())
            out.append({"policy": p, "n": n, "mean": mean, "ci95_low": low, "ci95_high": high, "unit": unit(metric)})
        return pd.DataFrame(out).set_index("policy")

    def paired(self, metric="background_energy_j", baseline=None):
        """Each policy against the baseline, replication by replication (the same world under
        both: common random numbers): the mean difference and its 95% interval, as
        comparisons.csv holds them for a run and the report's paired chart draws them."""
        baseline = baseline or self.baseline
        if baseline not in self.policies:
            raise ValueError(f"baseline {baseline!r} is not one of the study's policies: {', '.join(self.policies)}")
        base = self._replication_means(metric, baseline)
        out = []
        for p in self.policies:
            if p == baseline:
                continue
            diff = (self._replication_means(metric, p) - base).dropna()
            n, mean, sd, low, high = stats.interval(diff)
            out.append(
                {
                    "policy": p,
                    "baseline": baseline,
                    "metric": metric,
                    "n": n,
                    "baseline_mean": base.mean(),
                    "difference_mean": mean,
                    "difference_sd": sd,
                    "ci95_low": low,
                    "ci95_high": high,
                    "relative_difference_pct": 100 * mean / base.mean() if base.mean() else math.nan,
                    "resolved": bool(low > 0 or high < 0) if n > 1 else False,
                    "unit": unit(metric),
                }
            )
        return pd.DataFrame(out).set_index("policy")

    def axis_name(self, path):
        """An axis as the report names it: `policies[3].threshold` as `ios.threshold`."""
        if path.startswith("policies[") and "]" in path:
            index = path[len("policies[") : path.index("]")]
            if index.isdigit() and int(index) < len(self.policies):
                return self.policies[int(index)] + path[path.index("]") + 1 :]
        return path

    def conclusions(self, metric=None):
        """Of a `bgsim sensitivity` study: one row per paired difference (policy, metric), with
        its verdict over the assumptions' ranges (holds, flips, unsure or none), its points
        above, below and across zero, the range of its mean, the assumptions whose steps
        flipped its sign (`flipped_by`, most flips first) and the two it moves most with
        (`moves_most_with`, by share of Morris's mu*), as the report's section shows them."""
        s = self.sensitivity
        if s is None:
            raise ResultsError(f"{self.folder}: no sensitivity.csv (written by `bgsim sensitivity` and morris sweeps)")
        if metric is not None:
            s = s[s["metric"] == metric]
        rows = []
        for (policy, metric_name), group in s.groupby(["policy", "metric"], sort=False, observed=True):
            first = group.iloc[0]
            flipped = group[group["flips"] > 0].sort_values("flips", ascending=False, kind="stable")
            moves = group[group["share"] > 0].sort_values("share", ascending=False, kind="stable").head(2)
            rows.append(
                {
                    "policy": policy,
                    "baseline": first["baseline"],
                    "metric": metric_name,
                    "verdict": first["verdict"],
                    "points": int(first["points"]),
                    "above": int(first["above"]),
                    "below": int(first["below"]),
                    "neither": int(first["neither"]),
                    "difference_min": first["difference_min"],
                    "difference_max": first["difference_max"],
                    "flipped_by": [self.axis_name(a) for a in flipped["assumption"]],
                    "moves_most_with": [self.axis_name(a) for a in moves["assumption"]],
                    "unit": unit(metric_name),
                }
            )
        return pd.DataFrame(rows).set_index(["policy", "metric"])

    def per_app(self, column="runs_per_day"):
        """Each policy's and app's scheduled tasks (refresh, processing, legacy fetch) across
        replications (people, in a fleet): median, 10th and 90th percentiles, mean, and the
        share of replications where the value is 0 or undefined; counts a day count a
        replication without the task as 0, as summary.csv's per-app rows do."""
        apps = self.apps
        if apps is None:
            raise ResultsError(f"{self.folder}: no apps.csv (written by bgsim 0.3 and later)")
        apps = apps[apps["kind"].isin(["refresh", "processing", "fetch"])]
        n = self.manifest["replications"] * max(1, int(self.manifest.get("points", 1)))
        zero_when_absent = column.endswith("_per_day") or column.endswith("per_day_j") or column in ("completed", "expired", "rejected", "started")
        rows = []
        for (policy, app, identifier), group in apps.groupby(["policy", "app", "identifier"], sort=False, observed=True):
            values = list(group[column].dropna().astype(float))
            if zero_when_absent:
                values += [0.0] * (n - len(group))
            s = pd.Series(values, dtype=float)
            rows.append(
                {
                    "policy": policy,
                    "app": app,
                    "identifier": identifier,
                    "kind": group["kind"].iloc[0],
                    "median": s.quantile(0.5) if len(s) else math.nan,
                    "p10": s.quantile(0.1) if len(s) else math.nan,
                    "p90": s.quantile(0.9) if len(s) else math.nan,
                    "mean": s.mean(),
                    "zero_pct": 100 * (n - int((s != 0).sum())) / n,
                    "unit": unit(column),
                }
            )
        return pd.DataFrame(rows).set_index(["policy", "app", "identifier"])

    def per_person(self, metric="staleness_mean_s"):
        """One row per person (replication) and one column per policy, then the person's drawn
        traits: a fleet's spread across people (for a sweep, each person's mean over points)."""
        runs = self.runs
        wide = runs.groupby(["replication", "policy"], observed=True)[metric].mean().unstack("policy")
        wide = wide[[p for p in self.policies if p in wide.columns]]
        wide.columns = list(wide.columns)
        if self.traits:
            first = runs[runs["policy"] == self.policies[0]].groupby("replication")[self.traits].first()
            wide = wide.join(first)
        return wide


def load(folder=None, verify=True):
    """Reads a results folder: `bgsim.load("results/default")`.

    Without a folder, `$BGSIM_RESULTS`. Each file the manifest lists is checked against its
    SHA-256 first (verify=False skips it, for files edited on purpose).
    """
    folder = folder or os.environ.get("BGSIM_RESULTS")
    if not folder:
        raise ResultsError("no folder given and $BGSIM_RESULTS is not set")
    return Study(folder, verify=verify)
