#!/usr/bin/env bash
# Adding a mechanism, done as docs/architecture.md says, in a copy of this working tree: a
# Mechanism file in Sources/Mechanisms, then its line in MechanismRegistry.builtIn.
# With the file alone, MechanismTests must fail and name it; with the line, bgsim must list
# it, read its section from a scenario, set a key by --set, and write its tasks into tasks.csv
# and runs.csv; the documentation tests must fail until its keys are in docs/scenarios.md and
# its columns in notebooks-data/README.md, and the dataset guard until `make datasets` (not run
# here: it would rebuild in release). Prints the files the change touched. Run by `make
# test-builds`; the copy and its build are kept in .build-tree-copy/, shared with the add-policy
# test, so each builds only what it changed.
#
#   Tests/AddMechanism/add-mechanism-test.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
swift=${SWIFT:-swift}
# This test's logs and results go in a folder of its own.
shared=$repo/.build-tree-copy
work=$shared/add-mechanism
fail() { echo "add-mechanism test FAILED: $*" >&2; exit 1; }

# shellcheck source=../Support/tree-copy.sh
. "$repo/Tests/Support/tree-copy.sh"
tree_copy "$shared"
mkdir -p "$work"
build=(--scratch-path "$shared/build")

# Step 1: the mechanism's file. A calendar app syncs a while after each open, in the
# background, as a toy door into background time.
cat > Sources/Mechanisms/CalendarSync.swift <<'SWIFT'
import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// After an open, with a chance, the app syncs `after` later for `cpu` of work.
package final class CalendarSync: Mechanism {
    package static let name = "calendar_sync"
    package static let summary = "syncs a while after each open"
    package static let parameters = keys.described(Keys())
    /// The section, with its defaults, and its keys by key path.
    struct Keys { var chance = 50.0 / 100, after = SimDuration.minutes(10), cpu = SimDuration.seconds(3) }
    static let keys: [Setting<Keys>] = [
        .number("per_open_pct", \.chance, in: 0...100, unit: .percent("a chance"), help: "chance of a sync after an open"),
        .duration("after", \.after, help: "time from the open to the sync"),
        .duration("cpu", \.cpu, in: .positive, help: "the sync's CPU time"),
    ]
    package static let streams = [sync.name]
    private static let sync = DeclaredStream<CalendarSync>("sync")
    package static let kinds = [TaskKind.Traits("calendar_sync", budget: { _ in .seconds(30) })]
    let chance: [Double?], after: [SimDuration], cpu: [SimDuration]
    let kind = MechanismRegistry.kind(CalendarSync.self)

    package init(apps: [MechanismValues?], system: MechanismValues) {
        let sections = apps.map { $0?.decode(Self.keys, over: Keys()) }
        chance = sections.map { $0?.chance }
        after = sections.map { $0?.after ?? .zero }
        cpu = sections.map { $0?.cpu ?? .zero }
    }

    package func appOpened<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        guard let p = chance[app], let stream = host.stream(app, Self.sync), stream.bernoulli(p) else { return }
        host.schedule(app, at: host.now + after[app])
    }

    package func event<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        guard host.phoneIsOn, !host.isDraining else { return }
        let task = host.submit(app: app, kind: kind, source: 0, work: cpu[app], upBytes: 0, downBytes: 20_000, powerW: host.cpuPowerW(app))
        host.run(task)
    }

    package func identifier(app: Int, source: Int) -> String { "calendar-sync" }
}
SWIFT
"$swift" build "${build[@]}" --build-tests > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "the copy with the mechanism's file did not build"; }
set +e
"$swift" test "${build[@]}" --skip-build --filter MechanismTests > "$work/forgotten.log" 2>&1
status=$?
set -e
[ "$status" != 0 ] || fail "MechanismTests passed with the registration line forgotten"
grep -q "CalendarSync" "$work/forgotten.log" || fail "MechanismTests failed without naming the mechanism: $(tail -5 "$work/forgotten.log")"

# Step 2: its line in the registry.
sed -i 's/^\( *\)ContinuedProcessing.self,$/&\n\1CalendarSync.self,/' Sources/Mechanisms/Mechanism.swift
grep -q 'CalendarSync.self' Sources/Mechanisms/Mechanism.swift || fail "no registry line to add the mechanism to"
"$swift" build "${build[@]}" --build-tests > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "the registered mechanism did not build"; }
"$swift" test "${build[@]}" --skip-build --filter 'MechanismTests|ContinuedProcessingTests|OutputInvariantTests|aColumnChangeNeedsANewSchemaVersion' \
    > "$work/registered.log" 2>&1 || { tail -20 "$work/registered.log" >&2; fail "the mechanism and output tests failed with the mechanism registered"; }
bgsim=$shared/build/debug/bgsim
"$bgsim" mechanisms | grep -q '^calendar_sync: syncs a while after each open' || fail "bgsim mechanisms does not list calendar_sync"
cat > "$work/calendar.yaml" <<YAML
name: calendar
models: $shared/repo/models
duration: 2d
replications: 2
phone: iphone-15
charging: nightly
network: commuter
people: median
apps: [news, {profile: mail, name: calendar, calendar_sync: {per_open_pct: 100}}]
policies: [eager, ios]
YAML
"$bgsim" run "$work/calendar.yaml" --quiet --out "$work/out" --set 'apps[1].calendar_sync.after=2m' ||
    fail "a scenario could not use calendar_sync"
python3 - "$work/out" <<'PY' || fail "calendar_sync's results"
import csv, sys
runs = list(csv.DictReader(open(f"{sys.argv[1]}/runs.csv")))
assert all(int(r["runs_calendar_sync"]) > 0 for r in runs), [r["runs_calendar_sync"] for r in runs]
assert all(float(r["background_energy_calendar_sync_j"]) > 0 for r in runs)
tasks = [t for t in csv.DictReader(open(f"{sys.argv[1]}/tasks.csv")) if t["kind"] == "calendar_sync"]
assert tasks and all(t["app"] == "calendar" and t["identifier"] == "calendar-sync" for t in tasks)
gaps = {round(float(t["started_s"]) - float(t["submitted_s"]), 6) for t in tasks}
assert gaps == {0.0}, gaps
PY
if "$bgsim" run "$work/calendar.yaml" --quiet --out "$work/bad" --set 'apps[1].calendar_sync.per_opn_pct=5' 2> "$work/bad.err"; then
    fail "an unknown key of the section was accepted"
fi
grep -q "calendar_sync.per_opn_pct: unknown key 'per_opn_pct'; did you mean 'per_open_pct'?" "$work/bad.err" ||
    fail "the unknown key's message: $(cat "$work/bad.err")"

code=$(git status --porcelain | awk '{print $2}' | paste -sd ' ')
[ "$(git status --porcelain | wc -l)" = 2 ] || fail "the mechanism's code touched more than its file and its line: $code"

# Step 3: its documentation, which the documentation tests ask for until it is written; the
# bundled datasets then lack its columns until make datasets.
docs='mechanismsListsEveryKeyAsTheDocsShow|everyFileAndTheManifestMatchTheirDocumentation'
if "$swift" test "${build[@]}" --skip-build --filter "$docs" > "$work/undocumented.log" 2>&1; then
    fail "the documentation tests passed with the mechanism undocumented"
fi
python3 - "$bgsim" <<'PY'
import subprocess, sys
listing = subprocess.run([sys.argv[1], "mechanisms"], check=True, capture_output=True, text=True).stdout
doc = open("docs/scenarios.md").read()
head, rest = doc.split("### Every key of the declared mechanisms", 1)
intro, block = rest.split("```text\n", 1)
open("docs/scenarios.md", "w").write(head + "### Every key of the declared mechanisms" + intro + "```text\n" + listing + "```" + block.split("```", 1)[1])
readme = open("notebooks-data/README.md").read()
for after, row in [
    ("| `runs_continued_processing` |", "| `runs_calendar_sync` | integer | calendar syncs that started |"),
    ("| `background_energy_continued_processing_j` |", "| `background_energy_calendar_sync_j` | real | by calendar syncs |"),
]:
    at = readme.index("\n", readme.index(after)) + 1
    readme = readme[:at] + row + "\n" + readme[at:]
open("notebooks-data/README.md", "w").write(readme)
PY
"$swift" test "${build[@]}" --skip-build --filter "$docs" > "$work/documented.log" 2>&1 ||
    { tail -20 "$work/documented.log" >&2; fail "the documentation tests failed with the mechanism documented"; }
set +e
"$swift" test "${build[@]}" --skip-build --filter aBundledDatasetIsWhatThisCodeWrites > "$work/datasets.log" 2>&1
status=$?
set -e
[ "$status" != 0 ] && grep -q "runs.csv has no column runs_calendar_sync" "$work/datasets.log" ||
    fail "the dataset guard did not ask for make datasets: $(tail -5 "$work/datasets.log")"

touched=$(git status --porcelain | awk '{print $2}' | paste -sd ' ')
[ "$(git status --porcelain | wc -l)" = 4 ] || fail "adding the mechanism touched: $touched"
echo "add-mechanism test passed: a mechanism's code is 2 files ($code), its documentation 2 more (docs/scenarios.md, notebooks-data/README.md); with its line or its documentation forgotten a test fails naming it, and the dataset guard asks for make datasets; registered, it is listed, read from a scenario, set by --set and written to tasks.csv and runs.csv"
