"""A bgsim results folder read into pandas: `load(folder)`."""

import hashlib
import json
import math
import os
import stat
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

# The files a manifest may list, as bgsim names them: nothing else is opened.
MANIFEST_FILES = set(RESULT_FILES) | {"report.html", "report.md"}

# The most bytes a result file may hold to be read (`load(max_bytes=...)` changes it): the
# CLI's own input limit. pandas needs several times a file's size; a file larger than this is
# refused before it is opened.
MAX_BYTES = 256 << 20

# The most columns a result file's header may have (runs.csv has about 200, plus a sweep's
# axes and a fleet's traits), and the most bytes that header may take.
MAX_COLUMNS = 10_000
MAX_HEADER_BYTES = 1 << 20

# The most replications, points and policies a manifest may claim (bgsim's own limits).
MAX_COUNT = {"replications": 1_000_000, "points": 100_000, "policies": 1_000}

# runs.csv's columns that say which run a row is, not what it measured.
_RUN_KEYS = ["scenario", "point", "policy", "replication", "seed"]


_DURATION_UNITS = [("ms", 1e-3), ("us", 1e-6), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)]


def _number(text):
    """A swept value as a number: `0.3` as 0.3, a duration (`23h30m`, `900s`) in seconds; None otherwise."""
    try:
        return float(text)
    except ValueError:
        pass
    total, i = 0.0, 0
    while i < len(text):
        j = i
        while j < len(text) and (text[j].isdigit() or text[j] == "."):
            j += 1
        if j == i:
            return None
        unit_ = next(((u, f) for u, f in _DURATION_UNITS if text.startswith(u, j)), None)
        if unit_ is None:
            return None
        try:
            total += float(text[i:j]) * unit_[1]
        except ValueError:
            return None
        i = j + len(unit_[0])
    return total if text else None


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


class BadResults(ResultsError):
    """A folder whose files or manifest are damaged, or made to lead the reader astray: a file
    named outside the folder, a link, a special file, a size or a count out of its range."""


class Study:
    """One results folder of `bgsim run`, `bgsim sweep` or `bgsim merge`.

    Attributes: `folder`, `manifest` (the parsed manifest.json), `kind` ("run" or "sweep"),
    `policies` (in the study's order), `baseline`, `parameters` (a sweep's swept key paths),
    `traits` (a fleet's per-person columns), `colors` ({policy: "#RRGGBB"}, as the report draws
    them), and each result file as a DataFrame: `runs`, `summary`, `comparisons`, `apps`, and,
    when the study wrote them, `tasks`, `timeline`, `events`, `sensitivity` (read on first use;
    `None` when absent).
    """

    def __init__(self, folder, verify=True, max_bytes=MAX_BYTES):
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        manifest = self.folder / "manifest.json"
        if not manifest.is_file():
            raise ResultsError(f"{manifest}: missing: is {self.folder} a bgsim results folder? (a run writes manifest.json last)")
        self._regular(manifest)
        try:
            self.manifest = json.loads(manifest.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ResultsError(f"{manifest}: not JSON ({e})") from None
        if not isinstance(self.manifest, dict):
            raise BadResults(f"{manifest}: not a JSON object")
        self.kind = self.manifest.get("kind")
        if self.kind not in ("run", "sweep"):
            raise ResultsError(f"{manifest}: kind {self.kind!r}: expected a run's or a sweep's folder (a forecast's or a shard's is not read here)")
        self.policies = self._names("policies", required=True)
        self.baseline = self.manifest.get("baseline") or self.policies[0]
        if not isinstance(self.baseline, str):
            raise BadResults(f"{manifest}: 'baseline' is not a name")
        self.parameters = self._names("parameters")
        self.traits = self._names("fleet")
        for key in ["replications", "points"]:
            value = self.manifest.get(key, 1)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_COUNT[key]:
                raise BadResults(f"{manifest}: '{key}' is {value!r}; expected a whole number from 1 to {MAX_COUNT[key]}")
        self._listed = {}
        files = self.manifest.get("files", [])
        if not isinstance(files, list):
            raise BadResults(f"{manifest}: 'files' is not a list")
        for f in files:
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or f["name"] not in MANIFEST_FILES:
                name = f.get("name") if isinstance(f, dict) else f
                raise BadResults(f"{manifest}: lists {name!r}, not a file bgsim writes ({', '.join(sorted(MANIFEST_FILES))}, in the folder itself)")
            if not isinstance(f.get("bytes"), int) or not isinstance(f.get("sha256"), str):
                raise BadResults(f"{manifest}: the entry of {f['name']} needs 'bytes' and 'sha256'")
            self._listed[f["name"]] = f
        colors = self.manifest.get("policy_colors")
        self.colors = dict(colors) if isinstance(colors, dict) else policy_colors(self.policies)
        self.program = self.manifest.get("program", {})
        self._frames = {}
        if verify:
            self.verify()

    def _names(self, key, required=False):
        """A manifest's list of names (`policies`, `parameters`, `fleet`), checked."""
        value = self.manifest.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list) or not value and required or not all(isinstance(v, str) for v in value) or len(value) > MAX_COUNT["policies"]:
            raise BadResults(f"{self.folder / 'manifest.json'}: '{key}' is not a list of names")
        return list(value)

    def _regular(self, path):
        """`path` as the folder's own regular file: not a link, not a device, a pipe or a folder."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise BadResults(f"{path}: a symbolic link; the reader reads only the folder's own files")
        if not stat.S_ISREG(info.st_mode):
            raise BadResults(f"{path}: not a regular file")
        return info

    def _checked(self, name):
        """The path of result file `name`, after the checks every read makes: a name bgsim
        writes, listed in the manifest, the folder's own regular file, the size the manifest
        gives and within `max_bytes`. None when the study did not write it."""
        path = self.folder / name
        info = self._regular(path)
        if info is None:
            return None
        listed = self._listed.get(name)
        if listed is None:
            raise BadResults(f"{self.folder / 'manifest.json'}: lists no {name}, which the folder holds; the reader reads only what the manifest lists")
        if info.st_size != listed["bytes"]:
            raise BadResults(f"{path}: {info.st_size} bytes, the manifest says {listed['bytes']}: changed since bgsim wrote it")
        if self.max_bytes is not None and info.st_size > self.max_bytes:
            raise BadResults(f"{path}: {info.st_size} bytes, larger than the reader's limit of {self.max_bytes} (load(folder, max_bytes=...) raises it)")
        return path

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
        if "runs.csv" not in self._listed:
            raise BadResults(f"{self.folder / 'manifest.json'}: lists no runs.csv")
        for name, f in self._listed.items():
            path = self._checked(name)
            if path is None:
                if name == "runs.csv":
                    raise ResultsError(f"{self.folder / name}: listed in the manifest but missing")
                continue
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
        if name not in RESULT_FILES:
            raise ValueError(f"{name!r} is not a result file ({', '.join(RESULT_FILES)})")
        if name not in self._frames:
            path = self._checked(name)
            if path is None:
                if name == "runs.csv":
                    raise BadResults(f"{self.folder / name}: missing")
                self._frames[name] = None
            else:
                self._check_header(path)
                df = pd.read_csv(path, keep_default_na=False, na_values=[""], low_memory=False)
                if "policy" in df.columns:
                    df["policy"] = pd.Categorical(df["policy"], categories=self.policies, ordered=True)
                self._frames[name] = df
        return self._frames[name]

    @staticmethod
    def _check_header(path):
        """Refuses a header pandas would take minutes over: longer than MAX_HEADER_BYTES or of
        more than MAX_COLUMNS columns."""
        with open(path, "rb") as f:
            header = f.readline(MAX_HEADER_BYTES + 1)
        if len(header) > MAX_HEADER_BYTES:
            raise BadResults(f"{path}: a header longer than {MAX_HEADER_BYTES} bytes, which no file bgsim writes has")
        columns = header.count(b",") + 1
        if columns > MAX_COLUMNS:
            raise BadResults(f"{path}: {columns} columns in its header; bgsim's files have at most {MAX_COLUMNS}")

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

    def _replication_means(self, metric, policy, rows=None):
        """Per replication, the policy's mean of `metric` over the sweep's points (a run has
        one), or over the runs.csv rows `rows` selects."""
        runs = self.runs if rows is None else self.runs[rows]
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

    def axis(self, name):
        """A swept parameter's key path, given as the manifest writes it (`policies[2].start`)
        or as the report names it (`quiet-hours.start`)."""
        for path in self.parameters:
            if name in (path, self.axis_name(path)):
                return path
        shown = ", ".join(self.axis_name(p) for p in self.parameters) or "none: not a sweep"
        raise ValueError(f"{name!r} is not a swept parameter of this study (its axes: {shown})")

    def values(self, axis):
        """An axis's values as written, in order: by number where each is one (durations as
        seconds), else as they first appear in runs.csv."""
        column = self.runs[self.axis(axis)].astype(str)
        seen = list(dict.fromkeys(column))
        numbers = [_number(v) for v in seen]
        if all(n is not None for n in numbers):
            seen = [v for _, v in sorted(zip(numbers, seen), key=lambda pair: pair[0])]
        return seen

    def paired(self, metric="background_energy_j", baseline=None, by=None):
        """Each policy against the baseline, replication by replication (the same world under
        both: common random numbers): the mean difference and its 95% interval.

        `by=None` averages each replication over a sweep's points first, as the report's
        paired chart does; `by="point"` gives one row per policy and point (comparisons.csv's
        rows, with the point's axis values as columns); `by=AXIS` (a swept key path or its
        report name, `quiet-hours.start`) gives one row per policy and value of that axis, each
        replication averaged over the other axes' points at that value: the line and band the
        report draws against the parameter, with `resolved` where the interval excludes 0."""
        baseline = baseline or self.baseline
        if baseline not in self.policies:
            raise ValueError(f"baseline {baseline!r} is not one of the study's policies: {', '.join(self.policies)}")
        if by is None:
            return self._paired(metric, baseline, None).set_index("policy")
        if by == "point":
            if "point" not in self.runs.columns:
                raise ValueError("by='point' needs a sweep: a run has one point")
            out = []
            for point in sorted(self.runs["point"].unique()):
                rows = self.runs["point"] == point
                table = self._paired(metric, baseline, rows)
                table.insert(1, "point", int(point))
                first = self.runs[rows].iloc[0]
                for k, path in enumerate(self.parameters):
                    table.insert(2 + k, self.axis_name(path), first[path])
                out.append(table)
            return self._by_policy(pd.concat(out).set_index(["policy", "point"]))
        path = self.axis(by)
        column = self.runs[path].astype(str)
        out = []
        for value in self.values(path):
            table = self._paired(metric, baseline, column == value)
            table.insert(1, self.axis_name(path), value)
            out.append(table)
        return self._by_policy(pd.concat(out).set_index(["policy", self.axis_name(path)]))

    def _by_policy(self, table):
        """Rows policy by policy (in the study's order), each policy's points or values in order."""
        order = {p: k for k, p in enumerate(self.policies)}
        rank = [order.get(p, len(order)) for p in table.index.get_level_values(0)]
        return table.iloc[sorted(range(len(table)), key=lambda i: (rank[i], i))]

    def _paired(self, metric, baseline, rows):
        base = self._replication_means(metric, baseline, rows)
        out = []
        for p in self.policies:
            if p == baseline:
                continue
            diff = (self._replication_means(metric, p, rows) - base).dropna()
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
        return pd.DataFrame(out)

    def axis_name(self, path):
        """An axis as the report names it: `policies[3].threshold` (or `policies.ios.threshold`,
        a sweep's column) as `ios.threshold`."""
        for label in self.policies:
            if path.startswith(f"policies.{label}."):
                return path[len("policies.") :]
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
        # Replications (and points) as runs.csv holds them, not as the manifest claims.
        keys = ["replication"] + (["point"] if "point" in self.runs.columns else [])
        n = len(self.runs[keys].drop_duplicates())
        if n != self.manifest.get("replications", 1) * self.manifest.get("points", 1):
            raise BadResults(
                f"{self.folder / 'manifest.json'}: {self.manifest.get('replications')} replications of {self.manifest.get('points', 1)} point(s), "
                f"but runs.csv has {n}"
            )
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


def load(folder=None, verify=True, max_bytes=MAX_BYTES):
    """Reads a results folder: `bgsim.load("results/default")`.

    Without a folder, `$BGSIM_RESULTS`. Each file the manifest lists is checked against its
    SHA-256 first (verify=False skips it, for files edited on purpose). Only the folder's own
    regular files that the manifest lists are read, each of the size it gives and at most
    `max_bytes` (256 MiB; None for no limit); anything else raises `BadResults`.
    """
    folder = folder or os.environ.get("BGSIM_RESULTS")
    if not folder:
        raise ResultsError("no folder given and $BGSIM_RESULTS is not set")
    return Study(folder, verify=verify, max_bytes=max_bytes)
