#!/usr/bin/env bash
# `make fuzz`: a random sweep of Tests/Fuzz/ under a debug build, whose assertions and
# preconditions stop at the first inconsistency. SWEEP= names it (wide, the default: the world
# and settings; apps: what the apps do; battery: the battery, charger and loads at their
# edges), SEED= picks the design seed (default 1), POINTS= the number of points (default 300),
# JOBS= the threads (default: all cores).
# On a failure it runs the sweep again one unit at a time (finished units are skipped), so the
# unit that fails is the first one missing, and names its point and that point's values.
set -euo pipefail
cd "$(dirname "$0")/../.."
name=${SWEEP:-wide}
[ -f "Tests/Fuzz/$name.yaml" ] || { echo "fuzz: no sweep Tests/Fuzz/$name.yaml" >&2; exit 2; }
seed=${SEED:-1}
points=${POINTS:-300}
bgsim=.build/debug/bgsim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The sweep with its seed and size, next to the original so its scenario path still holds.
sweep=Tests/Fuzz/.$name-$seed-$$.yaml
trap 'rm -rf "$work" "$sweep"' EXIT
sed -e "s/^design_seed: .*/design_seed: $seed/" -e "s/^points: .*/points: $points/" "Tests/Fuzz/$name.yaml" > "$sweep"
echo "fuzz: $points points of Tests/Fuzz/$name.yaml from design seed $seed, debug build"
if "$bgsim" sweep "$sweep" --out "$work/out" --no-tasks --quiet ${JOBS:+--jobs "$JOBS"} 2> "$work/log"; then
  echo "fuzz: every unit ran"
  exit 0
fi
grep -m1 -E "Assertion failed|Precondition failed|Fatal error|error:" "$work/log" || tail -5 "$work/log"
echo "fuzz: finding the unit (one at a time) ..."
"$bgsim" sweep "$sweep" --out "$work/out" --no-tasks --quiet --jobs 1 2> /dev/null && { echo "fuzz: not reproduced one unit at a time"; exit 1; }
"$bgsim" validate "$sweep" --points > "$work/points.csv"
total=$(( $(wc -l < "$work/points.csv") - 1 ))
policies=$(sed -n 's/^policies: \[\(.*\)\]/\1/p' "$sweep" | tr -d ' ' | tr ',' '\n' | wc -l)
replications=$(sed -n 's/^replications: //p' "$sweep")
for ((i = 0; i < total * policies * replications; i++)); do
  p=$(( i / (policies * replications) )); k=$(( i / replications % policies )); r=$(( i % replications ))
  name=$(printf "p%06d-%d-r%06d" "$p" "$k" "$r")
  if [ ! -f "$work/out/units/$name.unit.txt" ]; then
    echo "fuzz: unit $name fails: point $p, policy $(( k + 1 )) of [$(sed -n 's/^policies: \[\(.*\)\]/\1/p' "$sweep")], replication $r"
    echo "fuzz: the point's values (bgsim validate --points):"
    head -1 "$work/points.csv"
    sed -n "$(( p + 2 ))p" "$work/points.csv"
    exit 1
  fi
done
echo "fuzz: every unit finished the second time"
exit 1
