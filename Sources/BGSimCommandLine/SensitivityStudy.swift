import ArgumentParser
import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling

/// `bgsim sensitivity SCENARIO`: the study again at the points of a Morris design over its
/// policies' assumptions, written as a sweep file and run as any sweep is.
struct SensitivityStudy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "study",
        abstract: "Rerun a study over its policies' assumptions and say which paired differences keep their sign.",
        discussion: """
            Writes OUT/sensitivity.yaml, a sweep of the scenario whose axes are its policies' \\
            assumptions (each over its plausible range, 'bgsim policies') in a Morris design \\
            (--trajectories trajectories of one point more than the assumptions), and runs it \\
            as 'bgsim sweep' would: the same files, shards (--shard, then 'bgsim merge'), \\
            Slurm scripts (--emit-slurm) and report. A policy whose parameters no axis sets is \\
            simulated once, not at every point. Besides the sweep's files it writes \\
            sensitivity.csv: for each paired difference of comparisons.csv, whether its sign \\
            holds over the points (every point's 95% interval on one side of zero), flips \\
            (intervals on both sides) or is unsure, and per assumption the steps that flipped \\
            it and its Morris effects. Prints the verdicts of the main metrics.
            """
    )

    @OptionGroup var options: ScenarioOptions

    @Option(help: "Morris trajectories (2 to 10000), each of one point more than the assumptions.")
    var trajectories = 4

    @Option(help: "Levels of Morris's grid (an even number from 2 to 20).")
    var levels = 4

    @Option(name: .customLong("design-seed"), help: "Seed of the Morris trajectories.")
    var designSeed: UInt64 = 1

    @Option(
        name: .customLong("policy"),
        help: ArgumentHelp("Vary only this policy's assumptions (a label; repeatable; default: every policy's).", valueName: "label"))
    var policies: [String] = []

    @OptionGroup var output: OutputOptions

    @OptionGroup var slurm: SlurmOptions

    func validate() throws {
        guard (2...10_000).contains(trajectories) else { throw ValidationError("--trajectories \(trajectories): expected 2 to 10000") }
        guard (2...20).contains(levels), levels % 2 == 0 else { throw ValidationError("--levels \(levels): expected an even number from 2 to 20") }
        try slurm.check(output: output, precision: try PrecisionOptions.parse([]))
    }

    func run() async throws {
        let file = try options.file()
        let scenario = try Scenario.load(file: file, overrides: options.all)
        let axes = try Self.axes(scenario, only: policies)
        let folder = output.folder(default: scenario.name + "-sensitivity")
        try OutputFiles.createFolder(folder, "output folder ")
        let sweepFile = folder.appendingPathComponent("sensitivity.yaml")
        let text = try Self.sweepText(
            scenario: file, from: folder, name: scenario.name + "-sensitivity", axes: axes, trajectories: trajectories, levels: levels,
            seed: designSeed)
        try OutputFiles.write([("sensitivity.yaml", .text(text))], to: folder, replacing: [])
        var out = output
        out.out = folder.relativePath
        guard
            let (plan, outcome) = try await SweepCommand.run(
                sweepFile.relativePath, overrides: options.overrides, seed: options.seed, replications: options.replications,
                output: out, precision: try PrecisionOptions.parse([]), slurm: slurm),
            let conclusions = outcome.conclusions
        else { return }
        print(Self.table(plan, conclusions))
    }

    /// One axis per assumption (a parameter with a plausible range) of each policy, or of
    /// those `only` names.
    static func axes(_ scenario: Scenario, only: [String]) throws -> [(path: String, range: String)] {
        for label in only where !scenario.policies.contains(where: { $0.label == label }) {
            throw ValidationError("--policy \(label): the scenario has no such policy; it has \(scenario.policies.map(\.label).joined(separator: ", "))")
        }
        var axes: [(String, String)] = []
        for (i, policy) in scenario.policies.enumerated() where only.isEmpty || only.contains(policy.label) {
            for info in policy.rule.type.parameterInfo {
                guard let r = info.plausible else { continue }
                let range: String
                switch info.kind {
                case .flag: range = "values: [false, true]"
                case .duration: range = "from: \(seconds(r.low)), to: \(seconds(r.high))"
                case .integer: range = "from: \(CSVWriter.number(r.low)), to: \(CSVWriter.number(r.high)), integer: true"
                default: range = "from: \(CSVWriter.number(r.low)), to: \(CSVWriter.number(r.high))"
                }
                axes.append(("policies[\(i)].\(info.name)", range))
            }
        }
        guard !axes.isEmpty else {
            throw ValidationError(
                "no assumption to vary: none of \(scenario.policies.map(\.label).joined(separator: ", ")) declares a plausible range ('\(ProgramName.current) policies' lists them)"
            )
        }
        return axes
    }

    /// A duration in seconds as a sweep's range takes it, to the millisecond.
    static func seconds(_ x: Double) -> String {
        x == x.rounded() ? "\(Int64(x))s" : "\(Int64((x * 1000).rounded()))ms"
    }

    /// The sweep file: the scenario by its path from the sweep's folder, one axis per assumption.
    static func sweepText(
        scenario: String, from folder: URL, name: String, axes: [(path: String, range: String)], trajectories: Int, levels: Int, seed: UInt64
    ) throws -> String {
        let path = relativePath(of: URL(fileURLWithPath: scenario).standardizedFileURL, from: folder.standardizedFileURL)
        try Quoting.refuseControlCharacters(path, what: "the scenario's path")
        let program = ProgramName.current
        var s = "# Written by \(program) sensitivity: the scenario at the points of a Morris design over its policies'\n"
        s += "# assumptions, each over its plausible range ('\(program) policies'). Run it again with: \(program) sweep FILE\n"
        s += "name: \(JSON.string(name))\nscenario: \(JSON.string(path))\n"
        s += "design: morris\ntrajectories: \(trajectories)\nlevels: \(levels)\ndesign_seed: \(seed)\naxes:\n"
        for a in axes { s += "  - {path: \(JSON.string(a.path)), \(a.range)}\n" }
        return s
    }

    /// `target`'s path from `folder` (`../../models/scenarios/default.yaml`), or its absolute
    /// path when the two share nothing but the root.
    static func relativePath(of target: URL, from folder: URL) -> String {
        let a = target.pathComponents, b = folder.pathComponents
        var common = 0
        while common < min(a.count, b.count), a[common] == b[common] { common += 1 }
        if common <= 1 { return target.path }
        return (Array(repeating: "..", count: b.count - common) + a[common...]).joined(separator: "/")
    }

    /// The verdicts of the run table's metrics, one line per policy and metric.
    static func table(_ plan: StudyPlan, _ conclusions: [Conclusion]) -> String {
        let metrics = ["completed_pct", "latency_p50_s", "background_energy_j", "staleness_mean_s", "fresh_launches_pct"]
        var rows: [[String]] = [["difference", "metric", "verdict", "points +/-/0", "range", "flipped by (steps)"]]
        for c in conclusions where metrics.contains(c.metric) {
            let flipped = c.flippedBy.prefix(3).map { "\(plan.axisName($0.axis)) (\($0.flips)/\($0.steps))" }.joined(separator: ", ")
            rows.append([
                "\(c.policy) - \(c.baseline)", c.metric, c.verdict.rawValue, "\(c.above)/\(c.below)/\(c.neither)",
                c.points > 0 ? "\(number(c.low)) to \(number(c.high))" : "-", flipped.isEmpty ? "-" : flipped,
            ])
        }
        let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max()! }
        let body = rows.map { row in zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ") }
        return "\(plan.name): paired differences over \(plan.points.count) points of the assumptions' ranges "
            + "(holds: every point's 95% interval on one side of zero)\n" + body.joined(separator: "\n")
    }

    static func number(_ x: Double) -> String {
        abs(x) >= 100 ? String(format: "%.0f", x) : abs(x) >= 1 ? String(format: "%.1f", x) : String(format: "%.3g", x)
    }
}
