import Foundation
import Scheduling
import SimRandom

/// `--precision`: replications are added until every named metric's 95% interval, for every
/// policy, is within a relative half-width of its mean.
public struct PrecisionGoal: Sendable {
    /// The relative precision gamma asked for (0.05: within 5% of the mean).
    public var target: Double
    public var metrics: [String]
    public var maxReplications: Int

    /// The metrics checked unless others are named: the comparison's headline means.
    public static let defaultMetrics = ["completed_pct", "background_energy_j", "staleness_mean_s"]

    public init(target: Double, metrics: [String] = PrecisionGoal.defaultMetrics, maxReplications: Int = 1000) {
        self.target = target
        self.metrics = metrics
        self.maxReplications = maxReplications
    }

    /// The relative half-width an interval must reach: gamma / (1 + gamma), so that the
    /// actual relative error |mean - mu| / |mu| is at most gamma with about 95% confidence
    /// (Law & Kelton, "Simulation Modeling and Analysis", §9.4.1).
    var bound: Double { target / (1 + target) }

    /// An interval's relative half-width: 0 when every replication agrees, infinite when
    /// the values vary around a mean of zero, `nil` when there are too few values to tell.
    static func relativeHalfWidth(_ ci: ConfidenceInterval) -> Double? {
        guard ci.count > 1 else { return nil }
        if ci.standardDeviation == 0 { return 0 }
        return ci.mean == 0 ? .infinity : ci.halfWidth / abs(ci.mean)
    }
}

/// What `--precision` achieved.
public struct PrecisionOutcome: Sendable {
    public var target: Double
    public var metrics: [String]
    public var maxReplications: Int
    public var reached: Bool
    /// The largest relative half-width over policies and metrics at the end.
    public var worst: Double
}

extension Experiment {
    /// Runs the scenario's replications and, with a precision goal, more in rounds until the
    /// goal is met or `maxReplications` is reached. Each round's size is estimated from the
    /// current intervals (half-widths shrink as 1/sqrt(n)); every policy gets the same
    /// replications, so pairs stay paired. The replications run depend only on the results,
    /// never on the thread count.
    public static func study(_ scenario: Scenario, jobs: Int, record: RecordOptions = RecordOptions(),
                             precision: PrecisionGoal? = nil) async throws -> (runs: [RunResult], replications: Int, precision: PrecisionOutcome?) {
        var n = scenario.replications
        if let goal = precision { n = min(max(n, 2), goal.maxReplications) }
        var runs = try await runAll(scenario, replications: 0..<n, jobs: jobs, record: record)
        guard let goal = precision else { return (runs, n, nil) }
        let columns = goal.metrics.map { name in RunMetrics.columns.firstIndex { $0.name == name }! }
        while true {
            let summaries = PolicySummary.summarise(runs, policies: scenario.policies)
            var worst = 0.0
            for s in summaries {
                for c in columns { worst = max(worst, PrecisionGoal.relativeHalfWidth(s.intervals[c]) ?? .infinity) }
            }
            if worst <= goal.bound || n >= goal.maxReplications {
                return (runs, n, PrecisionOutcome(target: goal.target, metrics: goal.metrics, maxReplications: goal.maxReplications,
                                                  reached: worst <= goal.bound, worst: worst))
            }
            let ratio = worst / goal.bound
            let estimate = ratio.isFinite ? Double(n) * ratio * ratio : Double(goal.maxReplications)
            let next = min(goal.maxReplications, max(n + 1, Int(estimate.rounded(.up))))
            let more = try await runAll(scenario, replications: n..<next, jobs: jobs, record: record)
            runs = order(runs + more, policies: scenario.policies)
            n = next
        }
    }

    /// Runs in (policy, replication) order.
    static func order(_ runs: [RunResult], policies: [PolicySpec]) -> [RunResult] {
        runs.sorted { a, b in
            let pa = policies.firstIndex(of: a.policy)!, pb = policies.firstIndex(of: b.policy)!
            return pa != pb ? pa < pb : a.replication < b.replication
        }
    }
}

extension Experiment {
    /// Writes a study's files to `folder` (each atomically, `manifest.json` last) and returns
    /// their names in the order written. Task and timeline rows come from the runs' part
    /// files, which are removed once joined.
    @discardableResult
    public static func write(_ study: (runs: [RunResult], replications: Int, precision: PrecisionOutcome?), of scenario: Scenario,
                             record: RecordOptions, to folder: URL, commandLine: [String]) throws(RuntimeFailure) -> [String] {
        let results = study.runs
        let summaries = PolicySummary.summarise(results, policies: scenario.policies)
        let baseline = scenario.policies.first { $0.label == scenario.metrics.baseline }!
        let comparisons = PairedComparison.compare(results, policies: scenario.policies, baseline: baseline)
        var files: [(name: String, content: OutputContent)] = [
            ("runs.csv", .text(runsCSV(scenario, results))),
            ("summary.csv", .text(summaryCSV(scenario, summaries))),
            ("comparisons.csv", .text(comparisonsCSV(scenario, comparisons))),
        ]
        if record.tasks {
            files.append(("tasks.csv", .parts(header: CSVWriter.line(TaskRows.header), results.compactMap(\.tasksPart))))
        }
        if record.timelineEvery != nil {
            files.append(("timeline.csv", .parts(header: CSVWriter.line(TimelineRows.header), results.compactMap(\.timelinePart))))
        }
        if record.events { files.append(("events.csv", .text(eventsCSV(scenario, results)))) }
        let manifest = Manifest(scenario: scenario, commandLine: commandLine, replications: study.replications,
                                precision: study.precision)
        try OutputFiles.write(files, to: folder) { written in ("manifest.json", manifest.json(files: written)) }
        return files.map(\.name) + ["manifest.json"]
    }
}
