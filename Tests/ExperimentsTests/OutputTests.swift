import Foundation
@testable import Experiments
import Scheduling
import SimRandom
import Testing

@Suite("Runs, statistics and CSV")
struct OutputTests {
    func scenario(seed: UInt64 = 42, replications: Int = 4) throws -> Scenario {
        try Scenario.load(file: defaultScenario, overrides: [
            Override(parsing: "seed=\(seed)")!, Override(parsing: "replications=\(replications)")!,
            Override(parsing: "duration=3d")!,
        ])
    }

    @Test func sameSeedGivesByteIdenticalFilesWhateverTheThreadCount() async throws {
        let s = try scenario()
        let one = try await Experiment.runAll(s, jobs: 1)
        let three = try await Experiment.runAll(s, jobs: 3)
        #expect(Experiment.runsCSV(s, one) == Experiment.runsCSV(s, three))
        let summaries = PolicySummary.summarise(one, policies: s.policies)
        #expect(Experiment.summaryCSV(s, summaries) == Experiment.summaryCSV(s, PolicySummary.summarise(three, policies: s.policies)))
    }

    @Test func anotherSeedGivesOtherNumbers() async throws {
        let a = try await Experiment.runAll(try scenario(seed: 1), jobs: 2)
        let b = try await Experiment.runAll(try scenario(seed: 2), jobs: 2)
        #expect(a.map(\.metrics.columnValues) != b.map(\.metrics.columnValues))
    }

    @Test func aReplicationIsTheSameAloneOrAmongOthers() async throws {
        // Seeds depend on the replication number, not on how many run or in what order.
        let many = try await Experiment.runAll(try scenario(replications: 5), jobs: 2)
        let alone = try Experiment.run(try scenario(replications: 5), policy: PolicySpec(.eager), replication: 3)
        #expect(many.first { $0.policy == PolicySpec(.eager) && $0.replication == 3 }!.metrics.columnValues == alone.columnValues)
    }

    @Test func runsCSVHasOneRowPerPolicyAndReplicationInAStableOrder() async throws {
        let s = try scenario(replications: 3)
        let csv = Experiment.runsCSV(s, try await Experiment.runAll(s, jobs: 2))
        let lines = csv.split(separator: "\n")
        #expect(lines.count == 1 + s.policies.count * 3)
        #expect(lines[0].hasPrefix("scenario,policy,replication,seed,tasks_submitted,tasks_completed,"))
        #expect(lines[0].split(separator: ",").count == 4 + RunMetrics.columns.count)
        #expect(lines[1...].map { $0.split(separator: ",")[1...2].joined(separator: ",") }
                == s.policies.flatMap { p in (0..<3).map { "\(p.name),\($0)" } })
    }

    @Test func summaryIsTheMeanAndStudentTIntervalOfTheRuns() async throws {
        let s = try scenario(replications: 6)
        let runs = try await Experiment.runAll(s, jobs: 2)
        let summaries = PolicySummary.summarise(runs, policies: s.policies)
        let c = RunMetrics.columns.firstIndex { $0.name == "battery_energy_j" }!
        let values = runs.filter { $0.policy == PolicySpec(.eager) }.map { $0.metrics.columnValues[c] }
        let mean = values.reduce(0, +) / 6
        let sd = (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / 5).squareRoot()
        let half = 2.5706 * sd / 6.0.squareRoot()  // t(0.975, 5) = 2.5706
        let ci = summaries[0].intervals[c]
        #expect(abs(ci.mean - mean) < 1e-9 * mean)
        #expect(abs(ci.halfWidth - half) < 1e-4 * half)
        #expect(summaries[0].replications == 6)
    }

    @Test(arguments: [("plain", "plain"), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("two\nlines", "\"two\nlines\"")])
    func csvQuotesPerRFC4180(field: String, written: String) {
        #expect(CSVWriter.escape(field) == written)
    }

    @Test func numbersAreLocaleFreeAndMissingValuesEmpty() {
        #expect(CSVWriter.number(0.1) == "0.1")
        #expect(CSVWriter.number(1234.5) == "1234.5")
        #expect(CSVWriter.number(3, count: true) == "3")
        #expect(CSVWriter.number(.nan) == "")
    }
}

@Suite("Atomic output files")
struct OutputFilesTests {
    func tempFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-test-\(UUID().uuidString)")
    }

    @Test func writesAllFilesAndLeavesNoTemporaries() throws {
        let dir = tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try OutputFiles.write([("a.csv", "x\n1\n"), ("b.csv", "y\n2\n")], to: dir)
        #expect(try String(contentsOf: dir.appendingPathComponent("a.csv"), encoding: .utf8) == "x\n1\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["a.csv", "b.csv"])
    }

    @Test func replacesOldFilesWhole() throws {
        let dir = tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try OutputFiles.write([("a.csv", String(repeating: "old\n", count: 1000))], to: dir)
        try OutputFiles.write([("a.csv", "new\n")], to: dir)
        #expect(try String(contentsOf: dir.appendingPathComponent("a.csv"), encoding: .utf8) == "new\n")
    }

    @Test func aFolderThatCannotBeMadeIsARuntimeFailure() throws {
        let file = tempFolder()
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: RuntimeFailure.self) {
            try OutputFiles.write([("a.csv", "x")], to: file.appendingPathComponent("sub"))
        }
    }
}
