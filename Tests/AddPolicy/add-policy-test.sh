#!/usr/bin/env bash
# Adding a built-in policy, done as docs/architecture.md says, in a copy of this working tree:
# a policy file in Sources/Policies, then its line in PolicyRegistry.builtIn. With
# the file alone, BuiltInPolicyTests must fail and name it, and the file may not read what only
# the phone may nor import the phone (the compiler refuses both); with the line, bgsim must list it,
# run it by name and set its parameter from --set, and the policy tests must pass; then the
# documentation tests must fail until its row and parameters are in docs/policies.md. Prints
# the files the change touched. Run by `make test-builds`; the copy and its build are kept in
# .build-tree-copy/, shared with the add-mechanism test, so each builds only what it changed.
#
#   Tests/AddPolicy/add-policy-test.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
swift=${SWIFT:-swift}
# This test's logs and results go in a folder of its own.
shared=$repo/.build-tree-copy
work=$shared/add-policy
fail() { echo "add-policy test FAILED: $*" >&2; exit 1; }

# shellcheck source=../Support/tree-copy.sh
. "$repo/Tests/Support/tree-copy.sh"
tree_copy "$shared"
mkdir -p "$work"
build=(--scratch-path "$shared/build")

# Step 1: the policy's file.
cat > Sources/Policies/WifiFirstPolicy.swift <<'SWIFT'
import PolicyAPI
import SimEngine

/// Holds requests off cellular until they have waited `max_wait`; on Wi-Fi starts them at once.
public struct WifiFirstPolicy: RegisteredPolicy {
    public var maxWait: SimDuration = .hours(1)
    public static let policyName = "wifi-first"
    public static let summary = "starts requests on Wi-Fi, or on cellular after max_wait"
    public static let holdReasons = ["waiting_for_wifi"]
    public static let parameters: [PolicyParameter<Self>] = [
        .duration("max_wait", \.maxWait, help: "how long a request may wait for Wi-Fi")
    ]
    public init() {}
    public func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        if state.network == .wifi { return .startAll }
        let due = eligible.filter { state.now >= $0.eligibleSince + maxWait }.map(\.id)
        let next = eligible.map { $0.eligibleSince + maxWait }.filter { $0 > state.now }.min()
        return PolicyDecision(start: .some(due), reconsiderAt: next, reason: "waiting_for_wifi")
    }
}
SWIFT
"$swift" build "${build[@]}" --build-tests > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "the copy with the policy's file did not build"; }
set +e
"$swift" test "${build[@]}" --skip-build --filter BuiltInPolicyTests > "$work/forgotten.log" 2>&1
status=$?
set -e
[ "$status" != 0 ] || fail "BuiltInPolicyTests passed with the registration line forgotten"
grep -q "WifiFirstPolicy" "$work/forgotten.log" || fail "BuiltInPolicyTests failed without naming the policy: $(tail -5 "$work/forgotten.log")"

# The walls: a built-in policy sees the policy API's public face only, as a package's policy
# does. One that reads what only the phone may (a request's hold, which the API keeps for the
# phone) does not compile, and one that imports the phone without the dependency fails the
# import check `make test` builds with.
cp Sources/Policies/WifiFirstPolicy.swift "$work/policy.swift"
sed -i 's/if state.network == .wifi { return .startAll }/if state.network == .wifi, eligible.first?.heldBy == nil { return .startAll }/' \
    Sources/Policies/WifiFirstPolicy.swift
grep -q 'heldBy' Sources/Policies/WifiFirstPolicy.swift || fail "no line to plant the read of a hold in"
if "$swift" build "${build[@]}" --target Policies > "$work/wall.log" 2>&1; then fail "a built-in policy read a request's hold"; fi
grep -q "'heldBy' is inaccessible" "$work/wall.log" || fail "the policy reading a hold failed otherwise: $(grep error: "$work/wall.log" | head -3)"
cp "$work/policy.swift" Sources/Policies/WifiFirstPolicy.swift
sed -i 's/^import PolicyAPI$/import PolicyAPI\nimport Scheduling/' Sources/Policies/WifiFirstPolicy.swift
if "$swift" build "${build[@]}" --target Policies --explicit-target-dependency-import-check error > "$work/wall.log" 2>&1; then
    fail "a built-in policy imported the phone"
fi
grep -q "Target Policies imports another target (Scheduling)" "$work/wall.log" || fail "the import of the phone failed otherwise: $(tail -3 "$work/wall.log")"
cp "$work/policy.swift" Sources/Policies/WifiFirstPolicy.swift

# Step 2: its line in the registry.
sed -i 's/^        OraclePolicy.self,$/&\n        WifiFirstPolicy.self,/' Sources/Policies/BuiltInPolicies.swift
grep -q 'WifiFirstPolicy.self' Sources/Policies/BuiltInPolicies.swift || fail "no line to add the registration after"
"$swift" build "${build[@]}" --build-tests > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "the registered policy did not build"; }
"$swift" test "${build[@]}" --skip-build --filter BuiltInPolicyTests > "$work/registered.log" 2>&1 ||
    { tail -20 "$work/registered.log" >&2; fail "BuiltInPolicyTests failed with the policy registered"; }
bgsim=$shared/build/debug/bgsim
"$bgsim" policies | grep -q '^wifi-first' || fail "bgsim policies does not list wifi-first"
"$bgsim" run models/scenarios/default.yaml --set duration=2d --replications 2 --quiet --out "$work/out" \
    --set 'policies=[eager, wifi-first, {name: wifi-first, label: wifi-first-10m, max_wait: 10m}]' ||
    fail "a scenario could not run wifi-first"
python3 - "$work/out" <<'PY' || fail "wifi-first's results"
import csv, sys
rows = list(csv.DictReader(open(f"{sys.argv[1]}/runs.csv")))
policies = {r["policy"] for r in rows}
assert policies == {"eager", "wifi-first", "wifi-first-10m"}, policies
held = [r for r in csv.DictReader(open(f"{sys.argv[1]}/tasks.csv")) if "waiting_for_wifi" in r["policy_reasons"]]
assert held, "no request was ever held for Wi-Fi"
PY

code=$(git status --porcelain | awk '{print $2}' | paste -sd ' ')
[ "$(git status --porcelain | wc -l)" = 2 ] || fail "the policy's code touched more than its file and its line: $code"

# Step 3: its documentation, which the documentation tests ask for until it is written.
docs='thePolicyTableListsEveryBuiltInPolicy|policiesListsEveryParameterAsTheDocsShow'
if "$swift" test "${build[@]}" --skip-build --filter "$docs" > "$work/undocumented.log" 2>&1; then
    fail "the documentation tests passed with the policy undocumented"
fi
python3 - "$bgsim" <<'PY'
import subprocess, sys
listing = subprocess.run([sys.argv[1], "policies"], check=True, capture_output=True, text=True).stdout
doc = open("docs/policies.md").read()
row = "| `wifi-first` | on Wi-Fi at once, on cellular after `max_wait` | `max_wait` (1h) |\n"
oracle = doc.index("| `oracle` |")
doc = doc[: doc.index("\n", oracle) + 1] + row + doc[doc.index("\n", oracle) + 1 :]
head, rest = doc.split("### Every parameter", 1)
intro, block = rest.split("```text\n", 1)
open("docs/policies.md", "w").write(head + "### Every parameter" + intro + "```text\n" + listing + "```" + block.split("```", 1)[1])
PY
"$swift" test "${build[@]}" --skip-build --filter "$docs" > "$work/documented.log" 2>&1 ||
    { tail -20 "$work/documented.log" >&2; fail "the documentation tests failed with the policy documented"; }

# The fingerprint world runs every built-in policy: until the new one is in it, FingerprintTests
# fails naming it; once it is, recording its run adds one line and moves no other policy's.
if "$swift" test "${build[@]}" --skip-build --filter FingerprintTests > "$work/unprinted.log" 2>&1; then
    fail "FingerprintTests passed with the policy outside the fingerprint world"
fi
grep -q "wifi-first is not in Tests/Fingerprint/world.yaml" "$work/unprinted.log" ||
    fail "FingerprintTests failed without naming the policy: $(grep -m3 'recorded an issue' "$work/unprinted.log")"
echo "  - wifi-first" >> Tests/Fingerprint/world.yaml
BGSIM_WRITE_FINGERPRINTS=1 "$swift" test "${build[@]}" --skip-build --filter FingerprintTests > "$work/printed.log" 2>&1 ||
    { tail -20 "$work/printed.log" >&2; fail "the fingerprint world did not run with the policy in it"; }
"$swift" test "${build[@]}" --skip-build --filter FingerprintTests > "$work/printed.log" 2>&1 ||
    { tail -20 "$work/printed.log" >&2; fail "FingerprintTests failed with the policy's run recorded"; }
[ "$(git diff --numstat Tests/Fingerprint/fingerprints.txt)" = "$(printf '1\t0\tTests/Fingerprint/fingerprints.txt')" ] ||
    fail "recording the new policy's run changed other lines: $(git diff Tests/Fingerprint/fingerprints.txt)"
grep -q "^wifi-first " Tests/Fingerprint/fingerprints.txt || fail "no fingerprint recorded for wifi-first"

touched=$(git status --porcelain | awk '{print $2}' | paste -sd ' ')
[ "$(git status --porcelain | wc -l)" = 5 ] || fail "adding the policy touched: $touched"
echo "add-policy test passed: a built-in policy's code is 2 files ($code), its documentation a third (docs/policies.md), its place in the fingerprint world two more (world.yaml, fingerprints.txt); with its line, its documentation or its place forgotten a test fails naming it; it cannot read a request's hold nor import the phone; registered, it is listed, run by name and configured by --set"
