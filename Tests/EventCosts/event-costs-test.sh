#!/usr/bin/env bash
# The event-costs build's test, run by `make test-builds`: the binary that times each kind of event
# (`-DBGSIM_EVENT_COSTS`, README "Measuring") must still compile, print its table, and simulate
# exactly what the normal build does: its result files are compared byte for byte with those of
# the normal binary given as the argument. Without this, the build nothing else compiles breaks
# unseen when an event is added, or its timing code changes a result and the table it prints
# measures another simulation.
#   Tests/EventCosts/event-costs-test.sh .build/debug/bgsim
set -euo pipefail
bgsim=$(realpath "${1:-.build/debug/bgsim}")
cd "$(dirname "$0")/../.."
swift=${SWIFT:-swift}
scratch=.build-costs-debug
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$swift" build -Xswiftc -DBGSIM_EVENT_COSTS --scratch-path "$scratch" --product bgsim > "$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; echo "event-costs-test: the event-costs build failed" >&2; exit 1; }
costs=$scratch/debug/bgsim
args=(run models/scenarios/default.yaml --set duration=2d --replications 2 --jobs 1 --quiet)
"$bgsim" "${args[@]}" --out "$tmp/normal" 2> "$tmp/normal.err"
"$costs" "${args[@]}" --out "$tmp/costs" 2> "$tmp/costs.err"
fail() { echo "event-costs-test: $*" >&2; exit 1; }
for f in runs.csv summary.csv comparisons.csv tasks.csv; do
  [ -s "$tmp/normal/$f" ] || fail "the normal build wrote no $f"
  cmp -s "$tmp/normal/$f" "$tmp/costs/$f" || fail "$f differs between the normal and the event-costs build"
done
grep -q '^event costs over [1-9][0-9]* runs' "$tmp/costs.err" || fail "the event-costs build printed no table: $(head -c 300 "$tmp/costs.err")"
grep -q '^loop: [0-9]* µs per run, [1-9][0-9]* events' "$tmp/costs.err" || fail "the table has no loop line"
! grep -q 'event costs' "$tmp/normal.err" || fail "the normal build printed an event-costs table"
echo "event-costs test passed: the event-costs build's files equal the normal build's; its table:"
sed -n '2,4p' "$tmp/costs.err"
