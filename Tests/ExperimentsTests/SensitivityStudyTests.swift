import Foundation
import Testing

@testable import Experiments
@testable import Reports
@testable import ResultFiles
@testable import ScenarioFiles

/// Morris sweeps (`bgsim sensitivity`'s study), the units a point does not change simulated
/// once, and each paired difference's verdict over the points.
@Suite("Sensitivity studies")
struct SensitivityStudyTests {
    /// ios against a second ios whose daily cap and burst score vary: the cap crosses the
    /// first's (8), so the difference in completed tasks changes sign with it.
    static let flipSweep = """
        scenario: \(defaultScenario)
        set: {duration: 2d}
        policies: [ios, {name: ios, label: ios-b}, eager]
        replications: 3
        design: morris
        trajectories: 3
        axes:
          - {path: "policies[1].max_refreshes_per_day", from: 2, to: 16}
          - {path: "policies[1].burst_score", from: 0.3, to: 0.8}
        """

    static func plan(_ yaml: String = flipSweep) throws -> StudyPlan {
        try StudyPlan(sweep: Sweep.load(file: try SweepTests.write(yaml)))
    }

    @Test func aMorrisDesignStepsOneAxisAtATimeOnItsGrid() throws {
        var design = SweepTests.design(
            .morris, [SweepTests.range("people.sessions_per_day", 10, 40), SweepTests.list("settings.low_power_mode", ["on", "off"])])
        design.trajectories = 5
        let points = design.pointValues()
        #expect(design.pointCount == 15 && points.count == 15)
        for (i, p) in points.enumerated() where i % 3 != 0 {
            #expect(zip(p, points[i - 1]).filter { $0 != $1 }.count == 1, "point \(i) changes one axis")
        }
        // Four levels, each one value however a trajectory reached it.
        #expect(Set(points.map { $0[0] }).isSubset(of: ["10.0", "20.0", "30.0", "40.0"]))
        #expect(design.pointValues() == points)
        design.seed = 8
        #expect(design.pointValues() != points)
    }

    @Test func aMorrisSweepFileNeedsItsTrajectoriesAndAnEvenGrid() throws {
        func error(_ lines: String) throws -> String {
            let yaml = "scenario: \(defaultScenario)\n\(lines)\naxes: [{path: people.sessions_per_day, from: 10, to: 40}]\n"
            do {
                _ = try Sweep.load(file: try SweepTests.write(yaml))
                return ""
            } catch { return String(describing: error) }
        }
        #expect(try error("design: morris").contains("trajectories: missing; a morris design needs its number of trajectories"))
        #expect(try error("design: morris\ntrajectories: 3\nlevels: 3").contains("expected an even number of levels"))
        #expect(try error("design: morris\npoints: 3").contains("a morris design's points are its trajectories"))
        #expect(try error("design: lhs\npoints: 3\ntrajectories: 3").contains("'trajectories' is for a morris design"))
        let sweep = try Sweep.load(
            file: try SweepTests.write(
                "scenario: \(defaultScenario)\ndesign: morris\ntrajectories: 3\nlevels: 6\naxes: [{path: people.sessions_per_day, from: 10, to: 40}]\n"))
        #expect(sweep.design.pointCount == 6 && sweep.design.levels == 6)
    }

    /// A unit whose inputs an earlier point's share is that unit's simulation: its values are
    /// what simulating its own point gives, and the study runs one simulation for each.
    @Test func unitsAPointDoesNotChangeAreSimulatedOnceWithTheSameResults() async throws {
        let plan = try Self.plan()
        let folder = SweepTests.temporary()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: RecordOptions(tasks: true)), to: folder)
        // ios and eager once per replication; ios-b once per distinct point and replication.
        let distinct = Set(plan.points.map(\.values)).count
        #expect(outcome.ran == plan.unitCount && outcome.simulated == 3 * (2 + distinct))
        #expect(plan.source(of: UnitKey(point: 4, policy: 0, replication: 1)) == UnitKey(point: 0, policy: 0, replication: 1))
        #expect(plan.source(of: UnitKey(point: 4, policy: 1, replication: 1)).point != 0)
        for p in [0, 3, 7] {
            for k in plan.policies.indices {
                let own = try Experiment.run(plan.points[p].scenario, policy: plan.points[p].scenario.policies[k], replication: 2)
                let values = outcome.runs[p].first { $0.policy == plan.policies[k] && $0.replication == 2 }!.values
                #expect(zip(values, own.columnValues).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }, "point \(p), \(plan.policies[k])")
            }
        }
        // A reused unit's task rows are its source's under its own point.
        let tasks = try CSVTable.read(folder.appendingPathComponent("tasks.csv"))
        let point = tasks.column("point")!, policy = tasks.column("policy")!
        let rows = { (p: String) in tasks.rows.filter { $0[point] == p && $0[policy] == "eager" }.map { Array($0.dropFirst(point + 1)) } }
        #expect(!rows("0").isEmpty && rows("5") == rows("0"))
    }

    /// Units are dealt to shards by their source, so a shard simulates each once; any split
    /// merges into the unsharded files, and a unit lost after its source finished runs again.
    @Test func shardsAndResumeKeepAReusedUnitWithItsSource() async throws {
        let plan = try Self.plan()
        let record = RecordOptions(events: true, tasks: true, timelineEvery: .hours(6))
        let whole = SweepTests.temporary()
        defer { try? FileManager.default.removeItem(at: whole) }
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record), to: whole)
        let expected = try SweepTests.files(whole)
        #expect(expected["sensitivity.csv"] != nil)
        for n in [2, 7] {
            let shards = (1...n).map { _ in SweepTests.temporary() }
            var simulated = 0
            for (k, f) in shards.enumerated() {
                let o = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record, shard: Shard(index: k + 1, count: n)), to: f)
                simulated += o.simulated
            }
            #expect(simulated == 3 * (2 + Set(plan.points.map(\.values)).count), "\(n) shards simulate each unit once")
            let merged = SweepTests.temporary()
            _ = try Experiment.merge(shards, to: merged)
            #expect(try SweepTests.files(merged) == expected, "\(n) shards")
            for f in shards + [merged] { try? FileManager.default.removeItem(at: f) }
        }
        let resumed = SweepTests.temporary()
        defer { try? FileManager.default.removeItem(at: resumed) }
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 1, record: record, shard: Shard(index: 1, count: 1)), to: resumed)
        let lost = UnitKey(point: 6, policy: 2, replication: 1)
        #expect(plan.source(of: lost) != lost)
        unlink(UnitStore(folder: resumed.appendingPathComponent("units")).path(lost, "unit.txt"))
        let rest = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record), to: resumed)
        #expect(rest.ran == 1 && rest.simulated == 1)
        #expect(try SweepTests.files(resumed) == expected)
    }

    /// The cap flips the difference in completed tasks; the burst score never does; eager's
    /// difference from ios no axis of ios-b can touch, and it holds.
    @Test func aDifferenceFlipsWithTheAxisThatCrossesTheBaseline() async throws {
        let plan = try Self.plan()
        let folder = SweepTests.temporary()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: RecordOptions()), to: folder)
        let conclusions = try #require(outcome.conclusions)
        let completed = try #require(conclusions.first { $0.policy == "ios-b" && $0.metric == "tasks_completed" })
        #expect(completed.verdict == .flips && completed.above > 0 && completed.below > 0)
        #expect(completed.flippedBy.map(\.axis) == ["policies[1].max_refreshes_per_day"])
        #expect(completed.effects[0].share > 0.8 && completed.effects[1].flips == 0)
        #expect(completed.effects.allSatisfy { $0.steps == 3 })
        let eager = try #require(conclusions.first { $0.policy == "eager" && $0.metric == "tasks_completed" })
        #expect(eager.verdict == .holds && eager.low == eager.high && eager.effects.allSatisfy { $0.muStar == 0 && $0.flips == 0 })
        #expect(conclusions.contains { $0.verdict == .none })
        // The file: the schema's columns, a row per difference and axis, read back.
        let t = try CSVTable.read(folder.appendingPathComponent("sensitivity.csv"))
        #expect(t.header == Manifest.schemaColumns.first { $0.file == "sensitivity.csv" }!.columns)
        #expect(t.rows.count == conclusions.count * 2)
        let row = t.rows.first { $0[t.column("policy")!] == "ios-b" && $0[t.column("metric")!] == "tasks_completed" }!
        #expect(row[t.column("verdict")!] == "flips" && row[t.column("flips")!] == "3" && row[t.column("above")!] == String(completed.above))
        // The report's section names the policy's parameter by the policy's label.
        let report = Report(try ResultSet.load(folder.path))
        #expect(report.markdown().contains("| ios-b − ios | Completed (% points) |"))
        #expect(report.markdown().contains("ios-b.max_refreshes_per_day"))
    }

    /// Shards of another bgsim are refused, naming the version: the plan's digest covers what
    /// was asked, not the code that answered it.
    @Test func mergeRefusesAShardOfAnotherVersion() async throws {
        let plan = try Self.plan()
        let shards = (1...2).map { _ in SweepTests.temporary() }
        defer { for f in shards { try? FileManager.default.removeItem(at: f) } }
        for (k, f) in shards.enumerated() {
            _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: RecordOptions(), shard: Shard(index: k + 1, count: 2)), to: f)
        }
        let manifest = shards[1].appendingPathComponent("manifest.json")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "\"tool_version\": \"\(Manifest.toolVersion)\"", with: "\"tool_version\": \"0.2.0\"")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let merged = SweepTests.temporary()
        defer { try? FileManager.default.removeItem(at: merged) }
        #expect {
            try Experiment.merge(shards, to: merged)
        } throws: { error in
            "\(error)".contains("\(shards[1].path) was written by bgsim 0.2.0 (schema \(Manifest.schemaVersion)); this is bgsim \(Manifest.toolVersion)")
        }
    }
}
