#!/usr/bin/env bash
# Instructions, not seconds (`make instructions`): callgrind's count of the instructions one
# 30-day run of models/scenarios/reference.yaml executes under each policy (`run
# --replications 1 --no-tasks --jobs 1`), and of the same run cut to one minute (process start,
# reading the scenario, writing the files: what is not the simulation). The difference is what
# the 30 simulated days cost.
#
# Counts repeat from run to run within about 0.1% (paths and names enter the run; the two
# binaries' copies get names of one length), where this 2-core virtual machine's wall clock
# drifts by half from hour to hour, so they are what a before/after claim of a few per cent can
# rest on:
# BASE=path/to/an/older/bgsim counts that binary too and adds the change. They are not a speed:
# time also depends on stalls (a sort's mispredicted branches, cache misses), which counts do not
# see; `make reference` measures time.
#
# Valgrind cannot read the static binary's debug information, so each binary is copied and
# stripped first. Under valgrind SHA-256 runs the Swift rounds (valgrind hides the SHA
# instructions) and GSL's 80-bit sums run at 64 bits, so compare outputs from native runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bgsim=.build/release/bgsim
base=${BASE:-}
scenario=models/scenarios/reference.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind not found (make instructions installs it)" >&2; exit 1; }
prepare() {  # a stripped, executable copy of binary $1 named $2
  cp "$1" "$work/$2"
  strip -g "$work/$2"
  chmod +x "$work/$2"
}
count() {  # instructions of binary $1 running policy $2 with the remaining arguments
  local bin=$1 policy=$2; shift 2
  local log
  log=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/$bin" run "$scenario" --replications 1 \
        --no-tasks --quiet --jobs 1 --out "$work/out" --set "policies=[$policy]" "$@" 2>&1) || {
    echo "instructions.sh: $bin failed on policy $policy" >&2
    exit 1
  }
  sed -n 's/.*Collected : //p' <<< "$log"
}
prepare "$bgsim" new
[ -n "$base" ] && prepare "$base" old
millions() { awk "BEGIN {printf \"%.1f M\", $1 / 1e6}"; }
pct() { awk "BEGIN {printf \"%+.1f%%\", 100 * ($2 - $1) / $1}"; }
echo "instructions of one run of $scenario (callgrind): the whole 30-day run, process start included,"
echo "and the simulation alone (the 30-day run less the same run cut to one minute)"
if [ -n "$base" ]; then
  echo "compared with $base"
  printf "%-12s %12s %12s %8s %14s %14s %8s
" policy "base run" "run" change "base simulation" simulation change
else
  printf "%-12s %12s %12s %12s
" policy run "1-min run" simulation
fi
for p in eager charge-only coalesce ios android oracle; do
  month=$(count new "$p")
  minute=$(count new "$p" --set duration=1m)
  if [ -n "$base" ]; then
    bmonth=$(count old "$p")
    bminute=$(count old "$p" --set duration=1m)
    printf "%-12s %12s %12s %8s %14s %14s %8s\n" "$p" "$(millions "$bmonth")" "$(millions "$month")" "$(pct "$bmonth" "$month")" \
      "$(millions $((bmonth - bminute)))" "$(millions $((month - minute)))" "$(pct $((bmonth - bminute)) $((month - minute)))"
  else
    printf "%-12s %12s %12s %12s\n" "$p" "$(millions "$month")" "$(millions "$minute")" "$(millions $((month - minute)))"
  fi
done
