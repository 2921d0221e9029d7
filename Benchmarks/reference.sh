#!/usr/bin/env bash
# The reference benchmark from the command line (`make reference`): simulated phone-days per
# second per core for each policy on models/scenarios/reference.yaml (20 apps, 30 days), and
# the speed-up of --jobs 2 over --jobs 1 on the whole study. Each figure is the median of
# RUNS timed runs of the release binary (wall clock, summary files only).
#
# BASE=path/to/an/older/bgsim compares that binary with this one: each run of one is followed
# by a run of the other (which goes first alternates), so both see the same machine (its speed
# drifts from hour to hour, by a quarter or more here), and the table gains the older binary's
# seconds and the speed-up: the median, over the pairs, of base seconds / these seconds
# (within a pair the drift mostly cancels).
set -euo pipefail
cd "$(dirname "$0")/.."
bgsim=.build/release/bgsim
base=${BASE:-}
scenario=models/scenarios/reference.yaml
reps=${REPS:-10}
RUNS=${RUNS:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
once() {  # wall-clock seconds of one run of binary $1 with the rest of the arguments
  local bin=$1; shift
  local s e
  s=$(date +%s.%N)
  "$bin" run "$scenario" --replications "$reps" --no-tasks --quiet --out "$out/r" "$@"
  e=$(date +%s.%N)
  awk "BEGIN {print $e - $s}"
}
seconds() {  # median seconds of RUNS runs of this binary; with BASE, "new base speed-up"
  : > "$out/new"; : > "$out/base"; : > "$out/ratio"
  for i in $(seq "$RUNS"); do
    if [ -z "$base" ]; then once "$bgsim" "$@" >> "$out/new"; continue; fi
    if [ $((i % 2)) = 1 ]; then b=$(once "$base" "$@"); n=$(once "$bgsim" "$@")
    else n=$(once "$bgsim" "$@"); b=$(once "$base" "$@"); fi
    echo "$n" >> "$out/new"; echo "$b" >> "$out/base"; awk "BEGIN {print $b / $n}" >> "$out/ratio"
  done
  if [ -n "$base" ]; then echo "$(median < "$out/new") $(median < "$out/base") $(median < "$out/ratio")"; else median < "$out/new"; fi
}
days=$(( 30 * reps ))
echo "reference scenario: 20 apps, 30 days, $reps replications per policy; median of $RUNS runs"
if [ -n "$base" ]; then
  echo "compared with $base, runs interleaved"
  printf "%-12s %10s %10s %18s %9s\n" policy base-s seconds "phone-days/s/core" speed-up
else
  printf "%-12s %10s %18s\n" policy seconds "phone-days/s/core"
fi
for p in eager charge-only coalesce ios android oracle; do
  read -r t b r <<< "$(seconds --set "policies=[$p]" --jobs 1)"
  if [ -n "$base" ]; then
    printf "%-12s %10.3f %10.3f %18.0f %9.2f\n" "$p" "$b" "$t" "$(awk "BEGIN {print $days / $t}")" "$r"
  else
    printf "%-12s %10.3f %18.0f\n" "$p" "$t" "$(awk "BEGIN {print $days / $t}")"
  fi
done
base='' # the speed-up of --jobs 2 is this binary's own
t1=$(seconds --jobs 1)
t2=$(seconds --jobs 2)
printf "all 6 policies: --jobs 1 %.3f s, --jobs 2 %.3f s: speed-up %.2f on %s cores\n" "$t1" "$t2" "$(awk "BEGIN {print $t1 / $t2}")" "$(nproc)"
