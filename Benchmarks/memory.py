#!/usr/bin/env python3
"""Peak memory of a summary-only run against its horizon (`make memory`, issue 42).

    python3 Benchmarks/memory.py BGSIM [SCENARIO]

Runs SCENARIO (default: models/scenarios/default.yaml) for 30 days, 1 year and 10 years,
one replication of eager with --no-tasks and --jobs 1, and prints each run's peak resident
memory (wait4's ru_maxrss) and the growth per simulated year.
"""
import os
import subprocess
import sys
import tempfile

bgsim = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/bgsim")
scenario = sys.argv[2] if len(sys.argv) > 2 else "models/scenarios/default.yaml"
rows = []
for label, days in [("30 days", 30), ("1 year", 365), ("10 years", 3650)]:
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.Popen(
            [bgsim, "run", scenario, "--replications", "1", "--set", "policies=[eager]", "--set", f"duration={days}d",
             "--no-tasks", "--quiet", "--jobs", "1", "--out", os.path.join(out, "r")])
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            sys.exit(f"memory: the {label} run failed with {proc.returncode}")
        rows.append((label, days, usage.ru_maxrss / 1024))
print(f"peak resident memory of one summary-only run of {scenario} (eager, --jobs 1):")
for label, days, mb in rows:
    print(f"  {label:>9}: {mb:7.1f} MB")
growth = (rows[-1][2] - rows[0][2]) / ((rows[-1][1] - rows[0][1]) / 365)
print(f"  growth: {growth:.1f} MB per simulated year (30 days to 10 years)")
