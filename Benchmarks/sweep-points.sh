#!/usr/bin/env bash
# The many-points benchmark (`make sweep-bench`): a 2,000-point sweep of one-hour runs
# (Benchmarks/sweeps/points-2k.yaml, --no-tasks), timed with --jobs 1 and --jobs 2: medians of
# RUNS runs each, and the median of the pairs' ratios for the speed-up. Per point, such a sweep
# spends about as long reading the point's scenario as simulating it, so this measures the
# sweep machinery, not the simulation.
#
# Results go to tmpfs (/dev/shm) when there is one: on ext4, creating files right after
# thousands were deleted (each sweep removes its unit store) can cost a millisecond a file,
# which would measure the file system's recent history, not bgsim (2,000 creates took 2.0 s
# in a busy /tmp and 0.12 s in another folder of the same disk). OUT=dir to choose.
#
# BASE=path/to/an/older/bgsim times that binary too, each run followed by the other's (which
# goes first alternates), and adds its seconds and the speed-up (median of base / these).
set -euo pipefail
cd "$(dirname "$0")/.."
bgsim=.build/release/bgsim
base=${BASE:-}
sweep=Benchmarks/sweeps/points-2k.yaml
RUNS=${RUNS:-3}
parent=${OUT:-$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")}
out=$(mktemp -d "$parent/bgsim-sweep-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
once() {  # wall-clock seconds of one sweep by binary $1 with --jobs $2
  local s e
  rm -rf "$out/r"
  s=$(date +%s.%N)
  if ! "$1" sweep "$sweep" --no-tasks --quiet --jobs "$2" --out "$out/r"; then
    echo "sweep-points.sh: $1 failed" >&2
    kill -TERM $$
  fi
  e=$(date +%s.%N)
  awk "BEGIN {print $e - $s}"
}
echo "many-points sweep: 2,000 points x 1 policy x 1 replication of 1 hour; results in $parent; median of $RUNS runs"
for j in 1 2; do
  : > "$out/new"; : > "$out/base"; : > "$out/ratio"
  for i in $(seq "$RUNS"); do
    if [ -z "$base" ]; then once "$bgsim" "$j" >> "$out/new"; continue; fi
    if [ $((i % 2)) = 1 ]; then b=$(once "$base" "$j"); n=$(once "$bgsim" "$j"); else n=$(once "$bgsim" "$j"); b=$(once "$base" "$j"); fi
    echo "$n" >> "$out/new"; echo "$b" >> "$out/base"; awk "BEGIN {print $b / $n}" >> "$out/ratio"
  done
  t=$(median < "$out/new")
  cp "$out/new" "$out/jobs$j"
  if [ -n "$base" ]; then
    printf -- "--jobs %s: %.2f s (%.0f points/s), base %.2f s, speed-up %.2f\n" "$j" "$t" "$(awk "BEGIN {print 2000 / $t}")" \
      "$(median < "$out/base")" "$(median < "$out/ratio")"
  else
    printf -- "--jobs %s: %.2f s (%.0f points/s)\n" "$j" "$t" "$(awk "BEGIN {print 2000 / $t}")"
  fi
done
printf -- "--jobs 2 over --jobs 1: %.2f (medians)\n" "$(awk "BEGIN {print $(median < "$out/jobs1") / $(median < "$out/jobs2")}")"
