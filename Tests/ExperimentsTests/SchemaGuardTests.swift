import Foundation
import PhoneWorld
import SimRandom
import Testing

@testable import Experiments
@testable import Reports
@testable import ScenarioFiles
@testable import Scheduling

/// What keeps the files users read from changing under them: the columns are versioned, the
/// bundled datasets are what this code writes, and the numbers that index columns are the
/// positions they claim.
@Suite("Schema guards")
struct SchemaGuardTests {
    /// The digest of every file's columns, per schema version. A changed column with the same
    /// `Manifest.schemaVersion` fails here: raise the version, say what changed in
    /// notebooks-data/README.md, run `make datasets`, and record the digest this test prints.
    static let recorded: [Int: UInt64] = [
        12: 0xbc66_8911_43dd_d4ca,
        13: 0xf94a_2fc0_b29f_eb27,
        14: 0x772f_a8f6_0e79_5b22,
        // Re-recorded when finite-length work became a declared mechanism: its two runs.csv
        // columns left the built-in part the digest covers, and every file stayed byte for byte
        // the same (each bundled dataset compared).
        15: 0xbe3c_c775_3203_7998,
        // 16 added the manifest's `quantiles`; no column changed.
        16: 0xbe3c_c775_3203_7998,
        // 17 added sensitivity.csv (a morris sweep's); no other file changed.
        17: 0x9ee2_9692_02f2_0902,
        // 18 added tasks.csv's charger_energy_j and apps.csv's charger_energy_per_day_j.
        18: 0x84c9_0481_6d58_96cb,
    ]

    static var columnsDigest: UInt64 {
        StreamID.fnv1a(Manifest.schemaColumns.map { "\($0.file):\($0.columns.joined(separator: ","))" }.joined(separator: "\n"))
    }

    @Test func aColumnChangeNeedsANewSchemaVersion() {
        let digest = Self.columnsDigest
        let hex = "0x" + String(digest, radix: 16)
        guard let recorded = Self.recorded[Manifest.schemaVersion] else {
            Issue.record(
                "schema version \(Manifest.schemaVersion) has no recorded digest: add `\(Manifest.schemaVersion): \(hex)` to SchemaGuardTests.recorded")
            return
        }
        #expect(
            recorded == digest,
            "the result files' columns changed (digest \(hex)) but the schema version is still \(Manifest.schemaVersion): raise Manifest.schemaVersion, note the change in notebooks-data/README.md, run make datasets, and record the new digest"
        )
    }

    /// Numbers written by hand to index arrays of counts are the cases' positions: a repeated
    /// index would add two kinds into one column.
    @Test func everyHandNumberedIndexIsItsPosition() {
        for (k, kind) in TaskKind.allCases.enumerated() { #expect(kind.index == k, "TaskKind.\(kind) has index \(kind.index), at position \(k)") }
        // Each built-in kind's constant names its own row of the kinds' table, with its traits.
        let builtIn: [(TaskKind, String)] = [
            (.refresh, "refresh"), (.processing, "processing"),
        ]
        #expect(builtIn.count == TaskKind.builtIn.count, "every built-in kind is listed here")
        for (kind, name) in builtIn {
            #expect(kind.rawValue == name, "TaskKind's constant for \(name) has index \(kind.index), the row of \(kind.rawValue)")
            #expect(kind.traits == TaskKind.table[kind.index].flags, "\(name)'s traits")
        }
        let errors: [(SubmitError, String)] = [
            (.unavailable, "unavailable"), (.tooManyPendingTaskRequests, "tooManyPendingTaskRequests"), (.notPermitted, "notPermitted"),
        ]
        for (e, name) in errors { #expect(e.rawValue == name, "SubmitError's constant for \(name) has index \(e.index), the row of \(e.rawValue)") }
        for (k, e) in SubmitError.allCases.enumerated() { #expect(e.index == k && e.isDeclared == (k >= errors.count)) }
        let reasons: [(ExpirationReason, String)] = [
            (.timeUp, "time_up"), (.deviceInUse, "device_in_use"), (.powerLost, "power_lost"), (.timeLimit, "time_limit"),
        ]
        for (e, name) in reasons { #expect(e.rawValue == name, "ExpirationReason's constant for \(name) has index \(e.index), the row of \(e.rawValue)") }
        for (k, e) in ExpirationReason.allCases.enumerated() { #expect(e.index == k && e.isDeclared == (k >= reasons.count)) }
        for (k, o) in TaskOutcome.allCases.enumerated() { #expect(o.index == k, "TaskOutcome.\(o) has index \(o.index), at position \(k)") }
        for (k, n) in NetworkKind.allCases.enumerated() { #expect(n.index == k, "NetworkKind.\(n) has index \(n.index), at position \(k)") }
        for (k, r) in HoldReason.allCases.enumerated() { #expect(r.rawValue == k, "HoldReason.\(r) is \(r.rawValue), at position \(k)") }
        let names = RunMetrics.columns.map(\.name)
        #expect(Set(names).count == names.count, "runs.csv has no column twice: \(names.filter { n in names.filter { $0 == n }.count > 1 })")
        for (file, columns) in Manifest.schemaColumns {
            #expect(Set(columns).count == columns.count, "\(file) has a column twice")
        }
    }

    /// The bundled datasets are what `make datasets` would write now, checked without
    /// rerunning them: the schema version; the plan's digest (every point's resolved scenario,
    /// so a changed profile or default shows); each file's header; and one unit rerun (point 0,
    /// the first policy, replication 0), whose runs.csv row must be the dataset's to the bit.
    @Test(arguments: ["default", "fleet", "refresh-setting", "charging-habit"])
    func aBundledDatasetIsWhatThisCodeWrites(_ name: String) async throws {
        let folder = repoRoot.appendingPathComponent("notebooks-data/\(name)")
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("manifest.json"))) as? [String: Any])
        let stale = "notebooks-data/\(name) is stale: run make datasets"
        #expect(manifest["schema_version"] as? Int == Manifest.schemaVersion, "\(stale) (schema version)")
        let command = try #require(manifest["command_line"] as? [String])
        let input = repoRoot.appendingPathComponent(command[2]).path
        let plan =
            command[1] == "sweep"
            ? try StudyPlan(sweep: Experiments.Sweep.load(file: input), jobs: 2) : StudyPlan(scenario: try Scenario.load(file: input))
        #expect(manifest["plan_sha256"] as? String == plan.fingerprint, "\(stale) (its scenario, profiles or defaults changed)")
        let headers: [(String, [String])] = [
            ("runs.csv", Experiment.runsRows(plan, [[RunResult]]()).header), ("summary.csv", Experiment.summaryRows(plan) { _ in [] }.header),
            ("comparisons.csv", Experiment.comparisonRows(plan) { _ in [] }.header),
        ]
        for (file, header) in headers {
            let table = try CSVTable.read(folder.appendingPathComponent(file))
            #expect(table.header == header, "\(stale) (\(file)'s columns)")
        }
        let runs = try CSVTable.read(folder.appendingPathComponent("runs.csv"))
        let row = try #require(runs.rows.first, "\(name)'s runs.csv has rows")
        let policy = plan.policies[0]
        #expect(row[runs.column("policy")!] == policy.name && row[runs.column("replication")!] == "0")
        let metrics = try Experiment.run(plan.points[0].scenario, policy: policy, replication: 0)
        for (metric, value) in zip(RunMetrics.columns, metrics.columnValues) {
            guard let c = runs.column(metric.name) else {
                Issue.record("\(stale) (runs.csv has no column \(metric.name))")
                continue
            }
            let text = row[c]
            let same = value.isNaN ? text.isEmpty || text == "nan" : Double(text) == value
            #expect(same, "\(stale) (runs.csv point 0, \(policy.name), replication 0: \(metric.name) is \(text), this code gives \(value))")
        }
    }
}
