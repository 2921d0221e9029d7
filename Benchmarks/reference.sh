#!/usr/bin/env bash
# The reference benchmark from the command line (`make reference`): simulated phone-days per
# second per core for each policy on models/scenarios/reference.yaml (20 apps, 30 days), and
# the speed-up of --jobs 2 over --jobs 1 on the whole study. Each figure is the median of
# RUNS timed runs of the release binary (wall clock, summary files only).
set -euo pipefail
cd "$(dirname "$0")/.."
bgsim=.build/release/bgsim
scenario=models/scenarios/reference.yaml
reps=${REPS:-10}
RUNS=${RUNS:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
seconds() {  # median wall-clock seconds of RUNS runs of: bgsim run ... "$@"
  for _ in $(seq "$RUNS"); do
    s=$(date +%s.%N)
    "$bgsim" run "$scenario" --replications "$reps" --no-tasks --quiet --out "$out/r" "$@"
    e=$(date +%s.%N)
    awk "BEGIN {print $e - $s}"
  done | median
}
days=$(( 30 * reps ))
echo "reference scenario: 20 apps, 30 days, $reps replications per policy; median of $RUNS runs"
printf "%-12s %10s %18s\n" policy seconds "phone-days/s/core"
for p in eager charge-only coalesce ios android oracle; do
  t=$(seconds --set "policies=[$p]" --jobs 1)
  printf "%-12s %10.3f %18.0f\n" "$p" "$t" "$(awk "BEGIN {print $days / $t}")"
done
t1=$(seconds --jobs 1)
t2=$(seconds --jobs 2)
printf "all 6 policies: --jobs 1 %.3f s, --jobs 2 %.3f s: speed-up %.2f on %s cores\n" "$t1" "$t2" "$(awk "BEGIN {print $t1 / $t2}")" "$(nproc)"
