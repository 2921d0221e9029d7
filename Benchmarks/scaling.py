#!/usr/bin/env python3
"""How a run's cost grows with the work (`make scaling`, issue 54): instructions, not seconds.

    python3 Benchmarks/scaling.py [BGSIM] [--quick] [--check]

Callgrind's count of one summary-only run of eager (`--replications 1 --no-tasks --jobs 1`),
less the same run cut to one minute (process start, reading the scenario, writing the files):

- per task, for 20, 100, 200 and 500 apps: models/scenarios/reference.yaml for 30 days with its
  apps replaced by N apps cycling through its five app models and its usage weights;
- per simulated day, for the reference scenario's 20 apps over 30 days, 1 year and 10 years;

with each run's peak resident memory (wait4's ru_maxrss, a native run of the same command),
and the two ratios the issue names: 500 against 20 apps per task, 10 years against 30 days per
day. `--quick` runs 20 and 100 apps over 7 days and 30 days against 1 year only (about a
minute); `--check` exits 1 when a ratio is above the issue's bound (1.3 per task, 1.1 per day),
which is how `make test` runs it.
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

args = [a for a in sys.argv[1:] if not a.startswith("--")]
quick = "--quick" in sys.argv
check = "--check" in sys.argv
bgsim = os.path.abspath(args[0] if args else ".build/release/bgsim")
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
reference = os.path.join(root, "models/scenarios/reference.yaml")
if not shutil.which("valgrind"):
    sys.exit("scaling: valgrind not found (make scaling installs it)")
work = tempfile.mkdtemp()
# Valgrind cannot read the static binary's debug information: a stripped copy.
binary = os.path.join(work, "bgsim")
shutil.copy(bgsim, binary)
subprocess.run(["strip", "-g", binary], check=True)

MODELS = ["news", "mail", "weather", "podcasts", "photos"]
WEIGHTS = [1, 2, 0.5, 0.5, 4, 1, 1, 0.5, 2, 1]


def scenario(apps):
    """The reference scenario with `apps` apps (its own 20 when apps is None)."""
    text = open(reference).read()
    if apps is not None:
        head = text[: text.index("\napps:\n")]
        lines = [f"  - {{profile: {MODELS[i % 5]}, name: app-{i}, usage_weight: {WEIGHTS[i % 10]}}}" for i in range(apps)]
        text = head + "\napps:\n" + "\n".join(lines) + "\n"
    path = os.path.join(work, f"scenario-{apps}.yaml")
    with open(path, "w") as f:
        # Written outside the tree: its profiles are found through `models:`.
        f.write(text if re.search(r"(?m)^models:", text) else f"models: {os.path.join(root, 'models')}\n" + text)
    return path


def command(path, duration, out):
    return [binary, "run", path, "--replications", "1", "--no-tasks", "--quiet", "--jobs", "1", "--out", out,
            "--set", "policies=[eager]", "--set", f"duration={duration}"]


def instructions(path, duration):
    out = tempfile.mkdtemp(dir=work)
    log = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + command(path, duration, out),
                         capture_output=True, text=True, cwd=root)
    found = re.search(r"Collected : (\d+)", log.stderr)
    if log.returncode != 0 or not found:
        sys.exit(f"scaling: the run of {path} for {duration} failed:\n{log.stderr[-2000:]}")
    return int(found.group(1)), out


def peak_mb(path, duration):
    out = tempfile.mkdtemp(dir=work)
    proc = subprocess.Popen(command(path, duration, out), cwd=root)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"scaling: the native run of {path} for {duration} failed")
    return usage.ru_maxrss / 1024


def tasks(out):
    with open(os.path.join(out, "runs.csv")) as f:
        return sum(int(r["tasks_submitted"]) for r in csv.DictReader(f))


days_of = {"7d": 7, "30d": 30, "365d": 365, "3650d": 3650}
app_counts = [20, 100] if quick else [20, 100, 200, 500]
app_days = "7d" if quick else "30d"
horizons = ["30d", "365d"] if quick else ["30d", "365d", "3650d"]

print(f"instructions of one summary-only eager run (callgrind), less the same run cut to one minute; {bgsim}")
print()
print(f"per task, {days_of[app_days]} days:")
print(f"{'apps':>6} {'tasks':>9} {'instructions':>14} {'per task':>9} {'peak MB':>8}")
per_task = {}
for n in app_counts:
    path = scenario(n)
    minute, _ = instructions(path, "1m")
    whole, out = instructions(path, app_days)
    count = tasks(out)
    per_task[n] = (whole - minute) / count
    print(f"{n:>6} {count:>9} {(whole - minute) / 1e6:>12.1f} M {per_task[n]:>9,.0f} {peak_mb(path, app_days):>8.1f}")
print()
print("per simulated day, the reference scenario's 20 apps:")
print(f"{'horizon':>8} {'instructions':>14} {'per day':>10} {'peak MB':>8}")
path = scenario(None)
minute, _ = instructions(path, "1m")
per_day = {}
for h in horizons:
    whole, _ = instructions(path, h)
    per_day[h] = (whole - minute) / days_of[h]
    print(f"{h:>8} {(whole - minute) / 1e6:>12.1f} M {per_day[h] / 1e6:>8.2f} M {peak_mb(path, h):>8.1f}")
print()
big, long = app_counts[-1], horizons[-1]
apps_ratio, days_ratio = per_task[big] / per_task[20], per_day[long] / per_day["30d"]
print(f"ratios: per task, {big} apps against 20: {apps_ratio:.2f}; per day, {days_of[long]} days against 30: {days_ratio:.2f}")
shutil.rmtree(work)
if check and (apps_ratio > 1.3 or days_ratio > 1.1):
    sys.exit(f"scaling: cost grows faster than the work (bounds: 1.3 per task, 1.1 per day)")
