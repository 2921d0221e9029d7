import Foundation
@testable import Experiments
import Scheduling
import Testing

/// `notebooks-data/README.md` documents every column; it must agree with the files, column for
/// column, in order.
@Suite("Schema document")
struct SchemaDocumentTests {
    /// The backticked first cells of the table under `## <file>`.
    func documentedColumns(_ file: String) throws -> [String] {
        let doc = try String(contentsOf: repoRoot.appendingPathComponent("notebooks-data/README.md"), encoding: .utf8)
        guard let start = doc.range(of: "## \(file)\n") else { return [] }
        let section = doc[start.upperBound...].prefix { _ in true }
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        return section[..<end].split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| `") else { return nil }
            return line.dropFirst(3).prefix { $0 != "`" }.description
        }
    }

    func header(_ csv: String) -> [String] {
        String(csv.prefix { $0 != "\n" }).split(separator: ",").map(String.init)
    }

    @Test func runsCSVMatchesItsDocumentation() async throws {
        let s = try Scenario.load(file: defaultScenario, overrides: [Override(parsing: "replications=2")!, Override(parsing: "duration=1d")!])
        let csv = Experiment.runsCSV(s, try await Experiment.runAll(s, jobs: 2))
        #expect(try documentedColumns("runs.csv") == header(csv))
    }

    @Test func summaryCSVMatchesItsDocumentation() async throws {
        let s = try Scenario.load(file: defaultScenario, overrides: [Override(parsing: "replications=2")!, Override(parsing: "duration=1d")!])
        let runs = try await Experiment.runAll(s, jobs: 2)
        let csv = Experiment.summaryCSV(s, PolicySummary.summarise(runs, policies: s.policies))
        let documented = try documentedColumns("summary.csv")
        #expect(documented.prefix(3) == ["scenario", "policy", "replications"])
        #expect(documented.dropFirst(3) == ["<metric>_mean", "<metric>_ci95_low", "<metric>_ci95_high"])
        // The per-metric columns expand over runs.csv's metrics, in their documented order.
        let metrics = try documentedColumns("runs.csv").dropFirst(4)
        let expanded = metrics.flatMap { m in documented.dropFirst(3).map { $0.replacingOccurrences(of: "<metric>", with: m) } }
        #expect(header(csv) == Array(documented.prefix(3)) + expanded)
    }

    @Test func eventsCSVMatchesItsDocumentationAndLogsEveryTaskEndOnce() async throws {
        let s = try Scenario.load(file: defaultScenario, overrides: [Override(parsing: "replications=1")!, Override(parsing: "duration=1d")!])
        let runs = try await Experiment.runAll(s, jobs: 2, events: true)
        let csv = Experiment.eventsCSV(s, runs)
        #expect(try documentedColumns("events.csv") == header(csv))
        for run in runs {
            let events = try #require(run.events)
            #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time }, "in time order")
            let ends = events.filter { $0.subject == .task && TaskOutcome(rawValue: $0.event) != nil }
            #expect(ends.count == run.metrics.submitted)
            #expect(Set(ends.map(\.task)).count == ends.count, "each task ends once")
            #expect(events.contains { $0.subject == .app && $0.event == "not_running->background" })
        }
        #expect(try await Experiment.runAll(s, jobs: 1).allSatisfy { $0.events == nil }, "opt-in")
    }
}
