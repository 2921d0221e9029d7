import Foundation
@testable import Experiments
import Scheduling
import Testing

/// `notebooks-data/README.md` documents every column of every file and every key of the
/// manifest; it must agree with what is written, column for column, in order.
@Suite("Schema document")
struct SchemaDocumentTests {
    /// The backticked first cells of the table under `## <file>`.
    static func documented(_ file: String) throws -> [String] {
        let doc = try String(contentsOf: repoRoot.appendingPathComponent("notebooks-data/README.md"), encoding: .utf8)
        guard let start = doc.range(of: "## \(file)\n") else { return [] }
        let section = doc[start.upperBound...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        return section[..<end].split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| `") else { return nil }
            return line.dropFirst(3).prefix { $0 != "`" }.description
        }
    }

    static func header(_ url: URL) throws -> [String] {
        let text = try String(contentsOf: url, encoding: .utf8)
        return String(text.prefix { $0 != "\n" }).split(separator: ",").map(String.init)
    }

    /// A full set of files, every opt-in included, from a short study with a precision goal.
    static func writeEverything() async throws -> URL {
        let s = try Scenario.load(file: defaultScenario, overrides: [Override(parsing: "replications=2")!, Override(parsing: "duration=1d")!])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let record = RecordOptions(events: true, tasks: true, timelineEvery: .minutes(30), spool: Spool(folder: folder))
        let study = try await Experiment.study(s, jobs: 2, record: record, precision: PrecisionGoal(target: 0.5, maxReplications: 3))
        try Experiment.write(study, of: s, record: record, to: folder, commandLine: ["bgsim", "test"])
        return folder
    }

    @Test func everyFileAndTheManifestMatchTheirDocumentation() async throws {
        let folder = try await Self.writeEverything()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(written == ["comparisons.csv", "events.csv", "manifest.json", "runs.csv", "summary.csv", "tasks.csv", "timeline.csv"],
                "no part or temporary file is left")
        for file in ["runs.csv", "summary.csv", "comparisons.csv", "tasks.csv", "timeline.csv", "events.csv"] {
            let documented = try Self.documented(file)
            #expect(!documented.isEmpty, "\(file) has no table in the schema document")
            #expect(documented == (try Self.header(folder.appendingPathComponent(file))), "\(file)")
        }
        // summary.csv and comparisons.csv name runs.csv's metrics, in their documented order.
        let metrics = Array(try Self.documented("runs.csv").dropFirst(4))
        let summary = try String(contentsOf: folder.appendingPathComponent("summary.csv"), encoding: .utf8)
        let named = summary.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[2] }
        #expect(Array(named.prefix(metrics.count)).map(String.init) == metrics)
        // The manifest's keys, in order.
        let data = try Data(contentsOf: folder.appendingPathComponent("manifest.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let text = String(decoding: data, as: UTF8.self)
        let keys = text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  \""), !line.hasPrefix("   ") else { return nil }
            return String(line.dropFirst(3).prefix { $0 != "\"" })
        }
        #expect(keys == (try Self.documented("manifest.json")))
        #expect(Set(json.keys) == Set(keys))
    }

    @Test func eventsCSVLogsEveryTaskEndOnceInTimeOrder() async throws {
        let s = try Scenario.load(file: defaultScenario, overrides: [Override(parsing: "replications=1")!, Override(parsing: "duration=1d")!])
        let runs = try await Experiment.runAll(s, jobs: 2, record: RecordOptions(events: true))
        for run in runs {
            let events = try #require(run.events)
            #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time }, "in time order")
            let ends = events.filter { $0.subject == .task && TaskOutcome(rawValue: $0.event) != nil }
            #expect(ends.count == run.metrics.submitted)
            #expect(Set(ends.map(\.task)).count == ends.count, "each task ends once")
            #expect(events.contains { $0.subject == .app && $0.event == "not_running->background" })
        }
        #expect(try await Experiment.runAll(s, jobs: 1).allSatisfy { $0.events == nil && $0.tasksPart == nil }, "opt-in")
    }
}
