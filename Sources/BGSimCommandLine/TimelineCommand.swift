import ArgumentParser
import Foundation
import Reports
import ResultFiles
import ScenarioFiles

/// `bgsim timeline RESULTS`: one phone's run as a trace the Perfetto UI and chrome://tracing open.
struct TimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Write one phone's run as a trace that the Perfetto UI and chrome://tracing open.",
        discussion: """
            Re-simulates one replication of one policy from the results folder's manifest (so no \
            --events is needed; it is the very run whose rows tasks.csv and events.csv hold) and \
            writes it in Chrome's JSON trace event format: a Phone process with tracks for the \
            phone's power, the charger, the network, the app in front and each radio's states, \
            and the battery's charge as a counter; one process per app with its life-cycle \
            states and, per task identifier, each request's wait (a slice per hold, named by \
            what held it) and its run. Open it at ui.perfetto.dev (Open trace file) or in \
            chrome://tracing. docs/reports.md describes what it shows.
            """
    )

    @Argument(help: "A results folder written by 'bgsim run', 'bgsim sweep' or 'bgsim merge'.")
    var results: String

    @Option(help: "The policy, by its label (default: the study's baseline).")
    var policy: String?

    @Option(help: "The replication (from 0).")
    var replication = 0

    @Option(help: "For a sweep, the point (from 0; runs.csv's 'point').")
    var point = 0

    @Option(help: "The trace file to write (default: RESULTS/trace-<policy>-<replication>.json).")
    var out: String?

    @Flag(
        name: .customLong("no-verify"),
        help: "Skip the check of each file against its SHA-256 in the manifest.")
    var noVerify = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if replication < 0 { throw ValidationError("--replication must be at least 0, got \(replication)") }
        if point < 0 { throw ValidationError("--point must be at least 0, got \(point)") }
    }

    func run() async throws {
        let set = try ResultSet.load(results, verify: !noVerify)
        guard replication < set.replications else {
            throw ReportError("--replication \(replication): the study in \(results) has replications 0 to \(set.replications - 1)")
        }
        let scenario = try set.scenario(atPoint: point)
        let label = policy ?? set.baseline ?? set.policies[0]
        guard let spec = scenario.policies.first(where: { $0.label == label }) else {
            throw ReportError("--policy \(label): the study's policies are \(scenario.policies.map(\.label).joined(separator: ", "))")
        }
        let safe = String(label.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" ? Character($0) : "-" })
        let file = URL(literalPath: out ?? (results as NSString).appendingPathComponent("trace-\(safe)-\(replication).json"))
        let json = try PerfettoTrace.json(scenario, policy: spec, replication: replication, point: set.kind == "sweep" ? point : nil)
        try OutputFiles.write([(file.lastPathComponent, .text(json))], to: file.deletingLastPathComponent())
        if !quiet { print("Wrote \(file.relativePath): open it at ui.perfetto.dev or in chrome://tracing") }
    }
}
