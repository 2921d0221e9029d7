#!/usr/bin/env bash
# Old against new (`BASE=path/to/old/bgsim make equivalence`): a change that should not alter
# what the model means (a faster shape of the books, a different order of random draws) is
# checked by running the default scenario with both binaries, replication by replication from
# the same seed, and pairing them. For every policy and every metric of the terminal table the
# paired difference's mean and its 95% interval (Student t over replications) are printed as a
# Markdown table; an interval that excludes 0 is marked and makes the script exit 1.
#
# Replications with the same seed see the same person, charger and network, so the pairing
# removes most of the variance between people; what is left is what the change did.
#   BASE=path/to/old/bgsim REPLICATIONS=30 Benchmarks/equivalence.sh
set -euo pipefail
cd "$(dirname "$0")/.."
base=${BASE:?BASE=path/to/the/old/bgsim is required}
new=${NEW:-.build/release/bgsim}
replications=${REPLICATIONS:-30}
scenario=${SCENARIO:-models/scenarios/default.yaml}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in base new; do
  bin=$base; [ "$side" = new ] && bin=$new
  "$bin" run "$scenario" --replications "$replications" --no-tasks --quiet --jobs 2 --out "$work/$side" > /dev/null
done
python3 - "$work/base/runs.csv" "$work/new/runs.csv" "$scenario" <<'PY'
import csv, math, sys

# The terminal table's columns (Sources/Experiments/ComparisonTable.swift).
metrics = ["completed_pct", "latency_p50_s", "latency_p90_s", "background_energy_j", "staleness_mean_s", "fresh_launches_pct"]

def rows(path):
    return {(r["policy"], int(r["replication"])): r for r in csv.DictReader(open(path))}

def t975(df):
    """The 0.975 quantile of Student's t: bisection on its CDF, integrated by Simpson's rule."""
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    pdf = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)
    def cdf(t, n=2000):
        h = t / n
        s = pdf(0) + pdf(t) + sum((4 if i % 2 else 2) * pdf(i * h) for i in range(1, n))
        return 0.5 + s * h / 3
    lo, hi = 0.0, 50.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < 0.975 else (lo, mid)
    return (lo + hi) / 2

old, new = rows(sys.argv[1]), rows(sys.argv[2])
if old.keys() != new.keys():
    sys.exit(f"equivalence: the two runs have different policies or replications: {sorted(old.keys() ^ new.keys())[:5]}")
policies = list(dict.fromkeys(p for p, _ in old))
print(f"{sys.argv[3]}, {len(old) // len(policies)} replications, new − old: mean [95% interval]\n")
print("| policy | " + " | ".join(metrics) + " |")
print("|---" * (len(metrics) + 1) + "|")
outside = 0
for p in policies:
    cells = []
    for m in metrics:
        pairs = [(float(old[k][m]), float(new[k][m])) for k in old if k[0] == p and old[k][m] and new[k][m]]
        d = [b - a for a, b in pairs]
        n = len(d)
        mean = sum(d) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n > 1 else 0.0
        half = t975(n - 1) * sd / math.sqrt(n) if n > 1 else 0.0
        excludes = mean - half > 0 or mean + half < 0
        outside += excludes
        cells.append(f"{mean:+.4g} [{mean - half:+.4g}, {mean + half:+.4g}]" + (" **≠ 0**" if excludes else ""))
    print(f"| {p} | " + " | ".join(cells) + " |")
print(f"\n{outside} of {len(policies) * len(metrics)} intervals exclude 0")
sys.exit(1 if outside else 0)
PY
