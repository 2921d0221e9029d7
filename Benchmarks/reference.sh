#!/usr/bin/env bash
# The reference benchmark from the command line (`make reference`): simulated phone-days per
# second per core for each policy on models/scenarios/reference.yaml (20 apps, 30 days), and
# the speed-up of --jobs 2 over --jobs 1 on the whole study; and how the speed of eager
# depends on the number of apps (the first 5, 10 and all 20). Each figure is the median of
# RUNS timed runs of the release binary (wall clock, summary files only).
#
# The --jobs 2 speed-up is always the median of RUNS pair ratios (one run with each thread
# count, back to back, which goes first alternating), printed with the machine's own ceiling:
# the same study as two --jobs 1 processes side by side.
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
# What each timed run writes beside the summaries: nothing (tasks.csv left out), except in
# the section on writing results.
record=--no-tasks
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
once() {  # wall-clock seconds of one run of binary $1 with the rest of the arguments
  local bin=$1; shift
  local s e
  s=$(date +%s.%N)
  # A run that fails must stop the benchmark, not be timed as if it had run.
  # shellcheck disable=SC2086  # $record is zero or more options
  if ! "$bin" run "$scenario" --replications "$reps" $record --quiet --out "$out/r" "$@"; then
    echo "reference.sh: $bin failed on: run $scenario $*" >&2
    kill -TERM $$
  fi
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
  printf "%-14s %10s %10s %18s %9s\n" policy base-s seconds "phone-days/s/core" speed-up
else
  printf "%-14s %10s %18s\n" policy seconds "phone-days/s/core"
fi
for p in eager charge-only coalesce ios android oracle; do
  read -r t b r <<< "$(seconds --set "policies=[$p]" --jobs 1)"
  if [ -n "$base" ]; then
    printf "%-14s %10.3f %10.3f %18.0f %9.2f\n" "$p" "$b" "$t" "$(awk "BEGIN {print $days / $t}")" "$r"
  else
    printf "%-14s %10.3f %18.0f\n" "$p" "$t" "$(awk "BEGIN {print $days / $t}")"
  fi
done
# How speed depends on the size of the phone: eager on the scenario's first 5 and 10 apps
# (an override of the whole list, `--set 'apps=[...]'`) and on all 20. This binary only:
# builds before 91705ef cannot read that override.
apps=$(sed -n 's/^  - //p' "$scenario")
compared=$base; base=
for n in 5 10 20; do
  list=$(head -n "$n" <<< "$apps" | paste -sd'|' - | sed 's/|/, /g')
  t=$(seconds --set "policies=[eager]" --set "apps=[$list]" --jobs 1)
  if [ -n "$compared" ]; then
    printf "%-14s %10s %10.3f %18.0f\n" "eager $n apps" "" "$t" "$(awk "BEGIN {print $days / $t}")"
  else
    printf "%-14s %10.3f %18.0f\n" "eager $n apps" "$t" "$(awk "BEGIN {print $days / $t}")"
  fi
done
base=$compared
# What writing results costs (with BASE, against that binary too): eager on all 20 apps
# writing the summaries only, then also tasks.csv (a run's default), events.csv, and
# timeline.csv sampled every minute.
if [ -n "$base" ]; then printf "%-32s %10s %10s %9s\n" "writing results" base-s seconds speed-up
else printf "%-32s %10s\n" "writing results" seconds; fi
for record in --no-tasks "" "--no-tasks --events" "--no-tasks --timeline 1m"; do
  label=${record:-"(tasks.csv)"}
  read -r t b r <<< "$(seconds --set "policies=[eager]" --jobs 1)"
  if [ -n "$base" ]; then
    printf "%-32s %10.3f %10.3f %9.2f\n" "eager $label" "$b" "$t" "$r"
  else
    printf "%-32s %10.3f\n" "eager $label" "$t"
  fi
done
record=--no-tasks
# The speed-up of --jobs 2 is this binary's own, measured the same way: a --jobs 1 run and a
# --jobs 2 run back to back (which goes first alternating), the median of the pairs' ratios.
#
# What the machine allows: the same --jobs 1 study run twice at once, as two processes that
# share nothing. Two cores that slow each other (shared caches, memory bandwidth, SMT
# siblings, a host's other guests) cap any parallel speed-up at 2 x alone / side by side;
# --jobs 2 is compared with that ceiling measured in the same rounds.
side_by_side() {
  local s e
  s=$(date +%s.%N)
  "$bgsim" run "$scenario" --replications "$reps" --no-tasks --quiet --jobs 1 --out "$out/a" & local a=$!
  "$bgsim" run "$scenario" --replications "$reps" --no-tasks --quiet --jobs 1 --out "$out/b" & local b=$!
  if ! wait "$a" || ! wait "$b"; then echo "reference.sh: two side-by-side runs failed" >&2; kill -TERM $$; fi
  e=$(date +%s.%N)
  awk "BEGIN {print $e - $s}"
}
: > "$out/j1"; : > "$out/j2"; : > "$out/jr"; : > "$out/cr"; : > "$out/er"
for i in $(seq "$RUNS"); do
  if [ $((i % 2)) = 1 ]; then a=$(once "$bgsim" --jobs 1); b=$(once "$bgsim" --jobs 2); c=$(side_by_side)
  else c=$(side_by_side); b=$(once "$bgsim" --jobs 2); a=$(once "$bgsim" --jobs 1); fi
  echo "$a" >> "$out/j1"; echo "$b" >> "$out/j2"; awk "BEGIN {print $a / $b}" >> "$out/jr"
  awk "BEGIN {print 2 * $a / $c}" >> "$out/cr"; awk "BEGIN {print $c / (2 * $b)}" >> "$out/er"
done
printf "all 6 policies: --jobs 1 %.3f s, --jobs 2 %.3f s (medians): speed-up %.2f (median of %s pairs) on %s cores\n" \
  "$(median < "$out/j1")" "$(median < "$out/j2")" "$(median < "$out/jr")" "$RUNS" "$(nproc)"
printf "the machine's ceiling: two --jobs 1 runs side by side, 2 x alone / together = %.2f (median); --jobs 2 reaches %.2f of it (median)\n" \
  "$(median < "$out/cr")" "$(median < "$out/er")"
