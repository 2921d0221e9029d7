#!/usr/bin/env bash
# The template package of a user's own policies (Examples/PolicyPackage), built and run as
# docs/policies.md tells a newcomer to: copied out of the repository, pointed at this clone
# with BGSIM_PATH, built, then its comparison, a report, its two sweeps (the policy's own
# parameter and a built-in policy's) each also split into two shards and merged, and a bad
# parameter value. Run by `make test-builds`.
#
#   Tests/PolicyPackage/policy-package-test.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
swift=${SWIFT:-swift}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "policy package test FAILED: $*" >&2; exit 1; }

# A build left in the template (someone ran `swift build` there) is not copied.
mkdir -p "$repo/Examples/PolicyPackage/.build/leftover"
make -s -C "$repo" policy-package DEST="$tmp/my-policies" >/dev/null
rmdir "$repo/Examples/PolicyPackage/.build/leftover" 2>/dev/null && rmdir "$repo/Examples/PolicyPackage/.build" 2>/dev/null || true
[ ! -e "$tmp/my-policies/.build" ] || fail "make policy-package copied the template's .build"
[ -f "$tmp/my-policies/Package.swift" ] || fail "make policy-package did not copy Package.swift"
cd "$tmp/my-policies"
export BGSIM_PATH="$repo"
"$swift" build > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; fail "the template did not build"; }
b=.build/debug/my-bgsim

# The executable lists the template's policy with its declared parameters.
listing=$("$b" policies)
grep -qx '  start: a duration from 0s to 1d, default 22h; when quiet hours start, as a time of day (22h)' <<<"$listing" ||
    fail "my-bgsim policies does not list quiet-hours' start: $listing"
grep -qx '  end: a duration from 0s to 1d, default 7h; when quiet hours end, as a time of day (7h)' <<<"$listing" ||
    fail "my-bgsim policies does not list quiet-hours' end: $listing"

# The comparison, short: eager, ios, quiet-hours and its labelled variant, paired.
"$b" run scenarios/compare.yaml --replications 3 --set duration=2d --out out/compare --quiet ||
    fail "the comparison did not run"
"$b" report out/compare --quiet || fail "the report was not written"
python3 - out/compare <<'EOF' || fail "the comparison's files"
import csv, re, sys
folder = sys.argv[1]
summary = {r["policy"] for r in csv.DictReader(open(f"{folder}/summary.csv"))}
assert summary == {"eager", "ios", "quiet-hours", "quiet-late"}, summary
pairs = {(r["policy"], r["baseline"]) for r in csv.DictReader(open(f"{folder}/comparisons.csv"))}
assert pairs == {("ios", "eager"), ("quiet-hours", "eager"), ("quiet-late", "eager")}, pairs
html = open(f"{folder}/report.html").read()
charts = re.findall(r"<svg.*?</svg>", html, re.S)
comparative = [c for c in charts if "Timeline under" not in c]
assert comparative and all("quiet-hours" in c for c in comparative), "a chart without quiet-hours"
assert any("Timeline under quiet-hours" in c for c in charts), "no timeline of quiet-hours"
import json
manifest = json.load(open(f"{folder}/manifest.json"))
program = manifest["program"]
assert program["name"] == "my-bgsim" and program["version"] == "0.1.0", program
assert manifest["command_line"][0] == "my-bgsim", manifest["command_line"]
origins = {p["policy"]: (p["rule"], p["package"], p["version"]) for p in program["policies"]}
assert origins["quiet-hours"] == ("quiet-hours", "QuietHoursPolicy", "0.1.0"), origins
assert origins["quiet-late"] == ("quiet-hours", "QuietHoursPolicy", "0.1.0"), origins
assert origins["eager"][1] == "bgsim" and origins["ios"][1] == "bgsim", origins
assert "made by my-bgsim 0.1.0 (bgsim " in html and "quiet-hours from QuietHoursPolicy 0.1.0" in html, "the report does not name the program"
assert "reproduce: <code>my-bgsim run" in html, "the reproduce line does not call the program"
EOF

# Each sweep, whole and as two shards merged: the same bytes.
for sweep in quiet-start ios-threshold; do
    args=(sweep "sweeps/$sweep.yaml" --set duration=1d --replications 2 --quiet)
    "$b" "${args[@]}" --out "out/$sweep" || fail "sweep $sweep"
    "$b" "${args[@]}" --shard 1/2 --out "out/$sweep-1" || fail "sweep $sweep shard 1/2"
    "$b" "${args[@]}" --shard 2/2 --out "out/$sweep-2" || fail "sweep $sweep shard 2/2"
    "$b" merge "out/$sweep-1" "out/$sweep-2" --out "out/$sweep-merged" --quiet || fail "merge of $sweep"
    for f in runs.csv summary.csv comparisons.csv tasks.csv manifest.json; do
        cmp -s "out/$sweep/$f" "out/$sweep-merged/$f" || fail "$sweep: merged $f differs from the unsharded sweep's"
    done
done
python3 - <<'EOF' || fail "the swept parameters"
import csv
rows = list(csv.DictReader(open("out/quiet-start/runs.csv")))
assert {r["policies.quiet-hours.start"] for r in rows} == {"20h", "22h", "23h30m"}, "quiet-start's axis"
means = {}
for r in rows:
    if r["policy"] == "quiet-hours":
        means.setdefault(r["policies.quiet-hours.start"], []).append(float(r["latency_mean_s"]))
assert len({round(sum(v) / len(v), 6) for v in means.values()}) == 3, f"the start time changes nothing: {means}"
rows = list(csv.DictReader(open("out/ios-threshold/runs.csv")))
assert len({r["policies.ios.threshold"] for r in rows}) == 4, "ios-threshold's 4 points"
EOF

# A bad value: one line naming the file, key path and range; exit code 2; nothing written.
set +e
err=$("$b" run scenarios/compare.yaml --set 'policies[2].start=30h' --out out/bad 2>&1 >/dev/null)
status=$?
set -e
[ "$status" = 2 ] || fail "a bad parameter exited $status, not 2"
[ "$err" = "error: scenarios/compare.yaml: --set policies[2].start=30h: policies[2].start: expected a duration from 0s to 1d, got '30h'" ] ||
    fail "a bad parameter said: $err"
[ ! -e out/bad ] || fail "a bad parameter wrote out/bad"

# A policy from docs/policies.md alone: its five files copied out of the page into a folder of
# their own, built, and its parameter swept beside ios and android.
page="$tmp/from-the-page"
python3 - "$repo/docs/policies.md" "$page" <<'EOF' || fail "docs/policies.md's first policy could not be copied out"
import os, re, sys
text = open(sys.argv[1]).read()
section = text.split("### A first policy, from this page alone\n", 1)[1].split("\n### ", 1)[0]
files = re.findall(r"^`([\w./-]+\.(?:swift|yaml))`.*?\n\n```\w+\n(.*?)^```", section, re.S | re.M)
names = [name for name, _ in files]
assert names == ["./Package.swift", "./Sources/WifiFirst/WifiFirstPolicy.swift", "./Sources/my-bgsim/main.swift", "./compare.yaml", "./min-charge.yaml"], names
for name, body in files:
    path = os.path.join(sys.argv[2], name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(body)
EOF
cd "$page"
"$swift" build > "$tmp/page-build.log" 2>&1 || { cat "$tmp/page-build.log" >&2; fail "the page's policy did not build"; }
version=$(.build/debug/my-bgsim --version)
[[ "$version" == "my-bgsim 0.1.0 (bgsim "* ]] || fail "my-bgsim --version says: $version"
# Stock bgsim given the page's scenario names the policy it lacks and where policies of one's own live.
set +e
err=$("$repo/.build/debug/bgsim" validate compare.yaml 2>&1 >/dev/null)
set -e
[[ "$err" == *"unknown policy 'wifi-first'; known policies: eager, "*"known only to the program built with it"* ]] ||
    fail "stock bgsim on the page's scenario said: $err"
.build/debug/my-bgsim sweep min-charge.yaml --set duration=2d --replications 3 --quiet || fail "the page's sweep did not run"
.build/debug/my-bgsim report results/min-charge --format md --quiet || fail "the page's report"
python3 - results/min-charge <<'EOF' || fail "the page's sweep results"
import csv, sys
folder = sys.argv[1]
rows = list(csv.DictReader(open(f"{folder}/comparisons.csv")))
points = {(r["point"], r["policies.wifi-first.min_charge"]) for r in rows}
assert points == {("0", "0.6"), ("1", "0.8"), ("2", "0.95")}, points
assert {(r["policy"], r["baseline"]) for r in rows} == {("android", "ios"), ("wifi-first", "ios")}, "pairs"
energy = {r["policies.wifi-first.min_charge"]: float(r["difference_mean"]) for r in rows if r["policy"] == "wifi-first" and r["metric"] == "background_energy_j"}
assert len(set(energy.values())) == 3, f"min_charge changes nothing: {energy}"
md = open(f"{folder}/report.md").read()
assert "Background energy (J): difference from ios against `wifi-first.min_charge`" in md, "no paired table along the axis"
html = open(f"{folder}/report.html").read()
assert 'id="sweep-paired-0-0"' in html and "Background energy (J): difference from ios</text>" in html, "no paired chart along the axis"
assert ">wifi-first.min_charge</text>" in html, "the paired chart's axis is not named by the policy's label"
EOF

echo "policy package test passed: the page's own policy, copied out of docs/policies.md, built and its min_charge swept beside ios and android; the template built outside the repository; quiet-hours ran by name beside eager and ios (summary, comparisons, every report chart); its own and ios's parameter swept, each sweep's two shards merged byte-identical; a bad value exited 2 with one line"
