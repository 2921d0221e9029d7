import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimRandom

/// `--precision`: replications are added until every named metric's 95% interval, for every
/// policy, is within a relative half-width of its mean.
public struct PrecisionGoal: Sendable {
    /// The relative precision gamma asked for (0.05: within 5% of the mean).
    package var target: Double
    /// The `runs.csv` columns whose intervals must meet the target.
    package var metrics: [String]
    /// The most replications per policy to run before giving up.
    package var maxReplications: Int

    /// The metrics checked unless others are named: the comparison's headline means.
    package static let defaultMetrics = ["completed_pct", "background_energy_j", "staleness_mean_s"]

    /// A goal of relative precision `target` on `metrics`, with at most `maxReplications`.
    package init(target: Double, metrics: [String] = PrecisionGoal.defaultMetrics, maxReplications: Int = 1000) {
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
package struct PrecisionOutcome: Sendable {
    /// The relative precision asked for.
    package var target: Double
    /// The columns it was asked of.
    package var metrics: [String]
    /// The most replications it could use.
    package var maxReplications: Int
    /// Whether every policy (at every point) met it.
    package var reached: Bool
    /// The largest relative half-width over policies and metrics at the end.
    package var worst: Double
}

extension PrecisionGoal {
    /// Whether `runs` (every point's) meet the goal; if not, how many replications to run in
    /// all next. Half-widths shrink as 1/sqrt(n), so the next total is n (worst/bound)^2,
    /// at least n + 1, at most `maxReplications`. Depends only on the results.
    func check<R: RunValuesProtocol>(_ runs: [[R]], policies: [PolicySpec], replications n: Int) -> (outcome: PrecisionOutcome, next: Int?) {
        let columns = metrics.map { name in RunMetrics.columns.firstIndex { $0.name == name }! }
        var worst = 0.0
        for group in runs {
            for s in PolicySummary.summarise(group, policies: policies) {
                for c in columns { worst = max(worst, Self.relativeHalfWidth(s.intervals[c]) ?? .infinity) }
            }
        }
        let outcome = PrecisionOutcome(
            target: target, metrics: metrics, maxReplications: maxReplications,
            reached: worst <= bound, worst: worst)
        if worst <= bound || n >= maxReplications { return (outcome, nil) }
        let ratio = worst / bound
        // Capped before it becomes an integer: a tiny target squares into infinity.
        let estimate = min(Double(n) * ratio * ratio, Double(maxReplications))
        return (outcome, min(maxReplications, max(n + 1, estimate.isFinite ? Int(estimate.rounded(.up)) : maxReplications)))
    }

    /// Replications to start with: the scenario's, at least 2, at most the maximum.
    func initial(_ replications: Int) -> Int { min(max(replications, 2), maxReplications) }
}

extension Experiment {
    /// Runs the scenario in memory and, with a precision goal, more replications in rounds
    /// until the goal is met (see `PrecisionGoal.check`). Every policy gets the same
    /// replications, so pairs stay paired.
    package static func study(_ scenario: Scenario, jobs: Int, precision: PrecisionGoal? = nil) async throws
        -> (runs: [RunResult], replications: Int, precision: PrecisionOutcome?)
    {
        var n = precision?.initial(scenario.replications) ?? scenario.replications
        var runs = try await runAll(scenario, replications: 0..<n, jobs: jobs)
        guard let goal = precision else { return (runs, n, nil) }
        while true {
            let (outcome, next) = goal.check([runs], policies: scenario.policies, replications: n)
            guard let next else { return (runs, n, outcome) }
            runs = order(runs + (try await runAll(scenario, replications: n..<next, jobs: jobs)), policies: scenario.policies)
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
