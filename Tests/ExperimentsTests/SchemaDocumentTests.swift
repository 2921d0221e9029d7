import Foundation
import Scheduling
import Testing

@testable import Experiments
@testable import ResultFiles
@testable import ScenarioFiles

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
        let record = RecordOptions(events: true, tasks: true, timelineEvery: .minutes(30))
        _ = try await Experiment.perform(
            StudyPlan(scenario: s),
            options: StudyOptions(
                jobs: 2, record: record,
                precision: PrecisionGoal(target: 0.5, maxReplications: 3)), to: folder)
        return folder
    }

    /// The manifest's top-level keys, in order.
    static func manifestKeys(_ folder: URL) throws -> (keys: [String], json: [String: Any]) {
        let data = try Data(contentsOf: folder.appendingPathComponent("manifest.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let keys = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  \""), !line.hasPrefix("   ") else { return nil }
            return String(line.dropFirst(3).prefix { $0 != "\"" })
        }
        return (keys, json)
    }

    /// A sweep writes the same files, with `point` and one column per axis after `scenario`
    /// (runs, summary, comparisons) or first (tasks, timeline, events), as documented.
    @Test func aSweepsFilesAreTheRunsWithPointColumns() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-schema-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sweep = try SweepTests.write(
            """
            scenario: \(defaultScenario)
            set: {duration: 1d}
            replications: 2
            policies: [eager, ios]
            design: zip
            axes:
              - {path: people.sessions_per_day, values: [20, 80]}
              - {path: settings.background_app_refresh, values: [wifi, wifi-and-cellular]}
            """)
        let plan = try StudyPlan(sweep: Sweep.load(file: sweep))
        let record = RecordOptions(events: true, tasks: true, timelineEvery: .hours(1))
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record), to: folder)
        let axes = ["point", "people.sessions_per_day", "settings.background_app_refresh"]
        for file in ["runs.csv", "summary.csv", "comparisons.csv"] {
            var expected = try Self.documented(file)
            expected.insert(contentsOf: axes, at: 1)
            #expect(try Self.header(folder.appendingPathComponent(file)) == expected, "\(file)")
        }
        for file in ["apps.csv", "tasks.csv", "timeline.csv", "events.csv"] {
            #expect(try Self.header(folder.appendingPathComponent(file)) == ["point"] + (try Self.documented(file)), "\(file)")
        }
        let (keys, json) = try Self.manifestKeys(folder)
        let documented = try Self.documented("manifest.json")
        #expect(keys == documented.filter { $0 != "precision" && $0 != "fleet" })
        #expect(json["kind"] as? String == "sweep" && json["points"] as? Int == 2)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("units").path) == false, "the unit store is removed")
    }

    @Test func everyFileAndTheManifestMatchTheirDocumentation() async throws {
        let folder = try await Self.writeEverything()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(
            written == ["apps.csv", "comparisons.csv", "events.csv", "manifest.json", "runs.csv", "summary.csv", "tasks.csv", "timeline.csv"],
            "no part or temporary file is left")
        for file in ["runs.csv", "summary.csv", "comparisons.csv", "apps.csv", "tasks.csv", "timeline.csv", "events.csv"] {
            let documented = try Self.documented(file)
            #expect(!documented.isEmpty, "\(file) has no table in the schema document")
            #expect(documented == (try Self.header(folder.appendingPathComponent(file))), "\(file)")
        }
        // summary.csv and comparisons.csv name runs.csv's metrics, in their documented order.
        let metrics = Array(try Self.documented("runs.csv").dropFirst(4))
        let summary = try String(contentsOf: folder.appendingPathComponent("summary.csv"), encoding: .utf8)
        let named = summary.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[2] }
        #expect(Array(named.prefix(metrics.count)).map(String.init) == metrics)
        // The manifest's keys, in order; a run's has no sweep keys.
        let (keys, json) = try Self.manifestKeys(folder)
        let sweepOnly: Set = ["sweep_file", "design", "resolved_sweep", "fleet"]
        #expect(keys == (try Self.documented("manifest.json")).filter { !sweepOnly.contains($0) })
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
        #expect(try await Experiment.runAll(s, jobs: 1).allSatisfy { $0.events == nil }, "opt-in")
    }
}
