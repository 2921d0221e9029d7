import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimRandom

/// `manifest.json`: what produced a result folder, and the files that make it complete.
package struct Manifest: Sendable {
    /// The version of the result files' layout (columns, manifest keys); notebooks-data/README.md documents it.
    package static let schemaVersion = 18
    /// Every result file's columns that do not depend on the study (a sweep's axes and a
    /// fleet's traits come after `scenario`), by file: what `schemaVersion` versions. A test
    /// keeps their digest per version, so that a column changed without a new version fails.
    /// A declared mechanism's kinds (`Mechanism.kinds`) add their `runs_<kind>` and
    /// `background_energy_<kind>_j` to runs.csv, and its errors and expiration reasons their
    /// `rejected_<token>` and `expired_<reason>`, as data, as a sweep adds its axes: the
    /// version does not change with them.
    package static var schemaColumns: [(file: String, columns: [String])] {
        let kinds = TaskKind.allCases.filter(\.isDeclared).flatMap { ["runs_\($0.rawValue)", "background_energy_\($0.rawValue)_j"] }
        let rejections = SubmitError.allCases.filter(\.isDeclared).map { "rejected_\($0.token)" }
        let reasons = ExpirationReason.allCases.filter(\.isDeclared).map { "expired_\($0.rawValue)" }
        let declared = Set(kinds + rejections + reasons)
        return [
            ("runs.csv", ["policy", "replication", "seed"] + RunMetrics.columns.map(\.name).filter { !declared.contains($0) }),
            ("summary.csv", Experiment.summaryHeader),
            ("comparisons.csv", Experiment.comparisonsHeader),
            ("tasks.csv", TaskRows.header),
            ("apps.csv", AppRows.header.filter { !declared.contains($0) }),
            ("timeline.csv", TimelineRows.header),
            ("events.csv", EventRows.header),
            ("forecast.csv", Forecast.header),
            ("sensitivity.csv", ["scenario"] + Conclusion.header),
        ]
    }

    /// bgsim's version, written into every manifest.
    package static let toolVersion = "0.3.0"

    /// The study: its scenario or sweep, points, policies, seed and the plan's digest.
    package var plan: StudyPlan
    /// The command that reproduces the files, without the options that do not change them.
    package var commandLine: [String]
    /// The program that ran it.
    package var program = Program.current
    /// Replications per policy actually run (more than the scenario's with `--precision`).
    package var replications: Int
    /// The precision asked for and whether it was reached, if `--precision` was given.
    package var precision: PrecisionOutcome?

    /// The manifest of `plan`, run by `commandLine` with `replications` per policy.
    package init(plan: StudyPlan, commandLine: [String], replications: Int, precision: PrecisionOutcome?) {
        self.plan = plan
        self.commandLine = commandLine
        self.replications = replications
        self.precision = precision
    }

    /// The keys every manifest starts with: what was run.
    func head(kind: String) -> [(String, String)] {
        let scenario = plan.first
        let policyNames = plan.policies.map(\.name)
        var pairs: [(String, String)] = [
            ("schema_version", String(Self.schemaVersion)),
            ("tool", JSON.string("bgsim")),
            ("tool_version", JSON.string(Self.toolVersion)),
            ("kind", JSON.string(kind)),
            ("command_line", JSON.array(commandLine.map(JSON.string))),
            ("scenario", JSON.string(plan.name)),
            ("scenario_file", JSON.string(scenario.file)),
            ("scenario_sha256", JSON.string(plan.points[0].scenarioDigest)),
            ("plan_sha256", JSON.string(plan.fingerprint)),
            ("points", String(plan.points.count)),
            ("parameters", JSON.array(plan.parameters.map(JSON.string))),
            ("seed", String(scenario.seed)),
            ("generator", JSON.string(scenario.generator.name)),
            ("replications", String(replications)),
            ("replication_numbers", JSON.string("0-\(replications - 1)")),
            ("policies", JSON.array(plan.policies.map { JSON.string($0.name) })),
            ("baseline", JSON.string(scenario.metrics.baseline)),
            ("policy_colors", JSON.object(zip(policyNames, Palette.colors(policyNames)).map { ($0, JSON.string($1)) }, indent: 1)),
            ("program", program.json(plan.policies, indent: 1)),
            ("quantiles", Self.quantiles),
        ]
        if plan.isSweep {
            pairs.insert(contentsOf: [("sweep_file", JSON.string(plan.file)), ("design", JSON.string(plan.design ?? ""))], at: 5)
        }
        if !scenario.fleet.isEmpty {
            let at = pairs.firstIndex { $0.0 == "parameters" }! + 1
            pairs.insert(("fleet", JSON.array(scenario.fleet.map { JSON.string($0.path.description) })), at: at)
        }
        return pairs
    }

    /// How percentiles are computed (`QuantileSketch`): exact up to a count, within a relative
    /// error beyond it.
    static let quantiles = JSON.object(
        [
            ("exact_up_to", String(QuantileSketch.defaultExactLimit)),
            ("beyond", JSON.string("log-bucketed sketch (DDSketch)")),
            ("relative_error", CSVWriter.number(QuantileSketch.relativeError)),
        ], indent: 1)

    /// The resolved inputs every manifest ends with: the scenario (for a sweep, point 0's)
    /// and the sweep file.
    var tail: [(String, String)] {
        var pairs = [("resolved_scenario", plan.first.resolvedJSON)]
        if let sweep = plan.sweepJSON { pairs.append(("resolved_sweep", sweep)) }
        return pairs
    }

    /// The manifest's JSON text, listing `files` with their sizes and SHA-256.
    package func json(files: [(name: String, bytes: Int, sha256: String)]) -> String {
        var pairs = head(kind: plan.isSweep ? "sweep" : "run")
        if let p = precision {
            pairs.append(
                (
                    "precision",
                    JSON.object(
                        [
                            ("target_relative_half_width", CSVWriter.number(p.target)),
                            ("metrics", JSON.array(p.metrics.map(JSON.string))),
                            ("max_replications", String(p.maxReplications)),
                            ("reached", p.reached ? "true" : "false"),
                            ("worst_relative_half_width", CSVWriter.number(p.worst).isEmpty ? "null" : CSVWriter.number(p.worst)),
                        ], indent: 1)
                ))
        }
        pairs.append(("files", Self.fileList(files, indent: 1)))
        return JSON.object(pairs + tail) + "\n"
    }

    static func fileList(_ files: [(name: String, bytes: Int, sha256: String)], indent: Int) -> String {
        let pad = String(repeating: "  ", count: indent + 1)
        return "[\n"
            + files.map { f in
                pad + "{\"name\": \(JSON.string(f.name)), \"bytes\": \(f.bytes), \"sha256\": \(JSON.string(f.sha256))}"
            }.joined(separator: ",\n") + "\n" + String(repeating: "  ", count: indent) + "]"
    }
}
