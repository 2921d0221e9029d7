"""The Python reader against studies bgsim writes here, outside the repository.

`make test` runs these with BGSIM_BINARY set to the binary it built; each study is made once,
in a temporary folder, by that binary.
"""

import math
import os
import shutil
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import bgsim  # noqa: E402
import pytest  # noqa: E402
from bgsim import colors, stats  # noqa: E402

BINARY = os.environ.get("BGSIM_BINARY") or str(Path(__file__).resolve().parents[2] / ".build" / "debug" / "bgsim")


def bgsim_run(args, cwd):
    if not Path(BINARY).is_file():
        pytest.fail(f"no bgsim binary at {BINARY}: build it (swift build) or set BGSIM_BINARY")
    r = subprocess.run([BINARY] + args, cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, f"bgsim {' '.join(args)}: {r.stderr}"
    return r


@pytest.fixture(scope="session")
def studies(tmp_path_factory):
    """A run, a fleet and a sweep of the bundled examples, taken by name."""
    root = tmp_path_factory.mktemp("studies")
    bgsim_run(["run", "default", "--set", "duration=2d", "--replications", "4", "--out", "run", "--quiet"], root)
    bgsim_run(["run", "fleet", "--set", "duration=1d", "--replications", "30", "--out", "fleet", "--quiet"], root)
    bgsim_run(["sweep", "refresh-setting", "--set", "duration=6h", "--replications", "3", "--out", "sweep", "--quiet"], root)
    bgsim_run(
        ["sensitivity", "default", "--set", "duration=1d", "--set", "metrics.baseline=ios", "--replications", "3"]
        + ["--trajectories", "3", "--no-tasks", "--out", "sensitivity", "--quiet"],
        root,
    )
    return root


def close(a, b, rel=1e-9):
    if (a != a) and (b != b):
        return True
    return abs(a - b) <= rel * max(1.0, abs(b))


def test_the_t_quantile_is_the_textbook_one():
    # Student's t, two-sided 95%: tables give these to 9 digits.
    for df, t in [(1, 12.706204736), (2, 4.302652730), (9, 2.262157163), (29, 2.045229642), (999, 1.962341461)]:
        assert abs(stats.t_quantile(0.975, df) - t) < 1e-8, df
    assert math.isnan(stats.interval([3.0])[3])


def test_paired_differences_are_comparisons_csv(studies):
    study = bgsim.load(studies / "run")
    c = study.comparisons
    checked = 0
    for metric in ["background_energy_j", "staleness_mean_s", "latency_mean_s", "completed_pct", "tasks_completed"]:
        table = study.paired(metric)
        for _, row in c[c["metric"] == metric].iterrows():
            mine = table.loc[row["policy"]]
            for column in ["n", "baseline_mean", "difference_mean", "difference_sd", "ci95_low", "ci95_high", "relative_difference_pct"]:
                assert close(float(mine[column]), float(row[column])), (metric, row["policy"], column, mine[column], row[column])
            checked += 1
    assert checked == 5 * (len(study.policies) - 1)


def test_intervals_are_summary_csv(studies):
    study = bgsim.load(studies / "run")
    s = study.summary
    for metric in ["background_energy_j", "latency_p90_s", "fresh_launches_pct"]:
        table = study.interval(metric)
        for _, row in s[(s["metric"] == metric) & s["app"].isna()].iterrows():
            assert close(table.loc[row["policy"], "mean"], row["mean"]), (metric, row["policy"])
            assert close(table.loc[row["policy"], "ci95_low"], row["ci95_low"]), (metric, row["policy"])


def test_per_app_is_summary_csvs_app_rows(studies):
    study = bgsim.load(studies / "run")
    s = study.summary
    rows = s[s["metric"] == "app_runs_per_day"]
    table = study.per_app("runs_per_day")
    assert len(rows) == len(table)
    for _, row in rows.iterrows():
        mine = table.loc[(row["policy"], row["app"], row["identifier"])]
        for column in ["median", "p10", "p90", "zero_pct"]:
            assert close(float(mine[column]), float(row[column])), (row["app"], row["identifier"], column)


def test_colours_are_the_reports(studies):
    study = bgsim.load(studies / "run")
    assert study.colors == colors.policy_colors(study.policies) == study.manifest["policy_colors"]
    assert study.colors["ios"] == "#0072B2"
    # The same hash as Swift's Palette (ReportChartTests checks this constant there).
    assert colors.fnv1a("quiet-hours") == 0xEB657A49FF8561AD
    assert colors.policy_colors(["quiet-hours", "ios"])["quiet-hours"] == colors.FREE[0xEB657A49FF8561AD % len(colors.FREE)]
    html = (studies / "run" / "report.html") if (studies / "run" / "report.html").exists() else None
    if html is None:
        bgsim_run(["report", str(studies / "run"), "--quiet"], studies)
    text = (studies / "run" / "report.html").read_text()
    for policy, color in study.colors.items():
        assert f'background:{color}"></span>{policy}' in text, policy


def test_units_come_from_column_names():
    assert bgsim.unit("latency_p50_s") == "s"
    assert bgsim.unit("background_energy_j") == "J"
    assert bgsim.unit("energy_per_day_j") == "J/day"
    assert bgsim.unit("battery_pct_per_day") == "%/day"
    assert bgsim.unit("runs_per_day") == "1/day"
    assert bgsim.unit("completed_pct") == "%"
    assert bgsim.unit("bytes") == "bytes"
    assert bgsim.unit("tasks_submitted") == ""


def test_tidy_has_one_row_per_value_with_its_unit(studies):
    study = bgsim.load(studies / "run")
    long = study.tidy("runs.csv")
    assert len(long) == len(study.runs) * len(study.metrics)
    energy = long[long["metric"] == "background_energy_j"]
    assert set(energy["unit"]) == {"J"} and len(energy) == len(study.runs)


def test_a_changed_file_is_refused_unless_asked(studies, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(studies / "run", copy)
    runs = copy / "runs.csv"
    data = bytearray(runs.read_bytes())
    data[-3] = ord("9") if data[-3] != ord("9") else ord("8")
    runs.write_bytes(bytes(data))
    with pytest.raises(bgsim.ResultsError, match="SHA-256"):
        bgsim.load(copy)
    assert bgsim.load(copy, verify=False).runs is not None
    with pytest.raises(bgsim.ResultsError, match="manifest.json"):
        bgsim.load(tmp_path)


def test_a_fleet_per_person_with_its_traits(studies):
    study = bgsim.load(studies / "fleet")
    people = study.per_person("staleness_mean_s")
    assert len(people) == 30 and list(people.columns[: len(study.policies)]) == study.policies
    assert set(study.traits) <= set(people.columns)
    refresh = set(people["settings.background_app_refresh"])
    assert refresh <= {"wifi-and-cellular", "wifi", "off"}, refresh  # "off", not '"off"' nor False


def test_a_sweeps_paired_differences_average_its_points(studies):
    study = bgsim.load(studies / "sweep")
    assert study.kind == "sweep" and study.parameters == ["settings.background_app_refresh", "charging"]
    table = study.paired("background_energy_j")
    runs = study.runs
    for policy, row in table.iterrows():
        per_rep = []
        for r in range(3):
            a = runs[(runs["policy"] == policy) & (runs["replication"] == r)]["background_energy_j"].mean()
            b = runs[(runs["policy"] == study.baseline) & (runs["replication"] == r)]["background_energy_j"].mean()
            per_rep.append(a - b)
        assert close(row["difference_mean"], sum(per_rep) / 3), policy
        assert row["n"] == 3


def test_a_sweep_read_point_by_point_is_comparisons_csv(studies):
    study = bgsim.load(studies / "sweep")
    table = study.paired("background_energy_j", by="point")
    comparisons = study.comparisons[study.comparisons["metric"] == "background_energy_j"]
    assert len(table) == len(comparisons) == 9 * (len(study.policies) - 1)
    for _, c in comparisons.iterrows():
        row = table.loc[(c["policy"], c["point"])]
        assert row["settings.background_app_refresh"] == c["settings.background_app_refresh"] and row["charging"] == c["charging"]
        for column in ["difference_mean", "ci95_low", "ci95_high"]:
            assert close(row[column], c[column], 1e-9) or (row[column] != row[column] and c[column] != c[column]), (c["policy"], c["point"], column)


def test_a_sweep_along_an_axis_averages_the_other_axes_points(studies):
    study = bgsim.load(studies / "sweep")
    assert study.values("charging") == ["nightly", "top-up", "erratic"]
    table = study.paired("staleness_mean_s", by="charging")
    runs = study.runs
    for (policy, value), row in table.iterrows():
        at = runs[runs["charging"] == value]
        per_rep = []
        for r in range(3):
            a = at[(at["policy"] == policy) & (at["replication"] == r)]["staleness_mean_s"].mean()
            b = at[(at["policy"] == study.baseline) & (at["replication"] == r)]["staleness_mean_s"].mean()
            per_rep.append(a - b)
        assert close(row["difference_mean"], sum(per_rep) / 3), (policy, value)
        assert row["resolved"] == bool(row["ci95_low"] > 0 or row["ci95_high"] < 0)
    with pytest.raises(ValueError, match="not a swept parameter"):
        study.paired(by="network")


def test_a_sweeps_paired_differences_are_drawn_along_an_axis(studies, tmp_path):
    study = bgsim.load(studies / "sweep")
    fig = bgsim.plot.paired_along(study, "charging", metrics=["background_energy_j", "staleness_mean_s"])
    assert len(fig.axes) == 2
    lines = [l for l in fig.axes[0].get_lines() if l.get_marker() == "o"]
    assert {matplotlib.colors.to_hex(l.get_color()).upper() for l in lines} == {study.colors[p].upper() for p in study.policies if p != study.baseline}
    assert all(len(l.get_xdata()) == 3 for l in lines)
    fig.savefig(tmp_path / "along.png")


def test_figures_are_drawn_in_the_studys_colours(studies, tmp_path):
    study = bgsim.load(studies / "run")
    fig = bgsim.plot.paired(study)
    drawn = set()
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_marker() == "o":
                drawn.add(matplotlib.colors.to_hex(line.get_color()).upper())
    assert drawn == {study.colors[p].upper() for p in study.policies if p != study.baseline}
    fig.savefig(tmp_path / "paired.png")
    assert (tmp_path / "paired.png").stat().st_size > 10_000
    for figure in [bgsim.plot.means(study), bgsim.plot.per_app(study), bgsim.plot.people(bgsim.load(studies / "fleet"))]:
        figure.savefig(tmp_path / "f.png")


def test_sensitivity_is_comparisons_csv_over_the_design(studies):
    """sensitivity.csv recomputed from comparisons.csv: each difference's points above, below
    and across zero, its range and verdict, and per axis the trajectory steps that moved it
    and those that changed its sign (consecutive points of a trajectory differ in one axis)."""
    study = bgsim.load(studies / "sensitivity")
    c, s, axes = study.comparisons, study.sensitivity, study.parameters
    k = len(axes)
    assert k == 19 and study.manifest["points"] == 3 * (k + 1)
    checked = 0
    for (policy, metric), group in s.groupby(["policy", "metric"], sort=False, observed=True):
        rows = c[(c["policy"] == policy) & (c["metric"] == metric)].sort_values("point")
        mean, low, high = list(rows["difference_mean"]), list(rows["ci95_low"]), list(rows["ci95_high"])
        finite = [i for i, m in enumerate(mean) if m == m]
        above = sum(1 for i in finite if low[i] > 0)
        below = sum(1 for i in finite if high[i] < 0)
        first = group.iloc[0]
        assert (first["points"], first["above"], first["below"], first["neither"]) == (len(finite), above, below, len(finite) - above - below)
        if finite:
            assert close(first["difference_min"], min(mean[i] for i in finite))
            assert close(first["difference_max"], max(mean[i] for i in finite))
        verdict = (
            "holds" if finite and (above == len(finite) or below == len(finite))
            else "flips" if above and below
            else "none" if finite and min(mean[i] for i in finite) == 0 == max(mean[i] for i in finite)
            else "unsure"
        )
        assert first["verdict"] == verdict, (policy, metric)
        values = rows[axes].astype(str).values
        steps, flips = [0] * k, [0] * k
        for i in range(1, len(rows)):
            if i % (k + 1) == 0:
                continue
            changed = [a for a in range(k) if values[i][a] != values[i - 1][a]]
            assert len(changed) == 1, (i, changed)
            if mean[i] == mean[i] and mean[i - 1] == mean[i - 1]:
                steps[changed[0]] += 1
                flips[changed[0]] += mean[i] * mean[i - 1] < 0
        assert list(group["assumption"]) == axes
        assert list(group["steps"]) == steps and list(group["flips"]) == flips, (policy, metric)
        shares = group["share"].dropna()
        if len(shares):
            assert close(shares.sum(), 1.0, rel=1e-9)
        checked += 1
    assert checked == len(study.policies[1:]) * len(study.metrics)
    table = study.conclusions("background_energy_j")
    assert set(table["verdict"]) <= {"holds", "flips", "unsure", "none"}
    assert all(name.startswith("ios.") for names in table["flipped_by"] for name in names)
