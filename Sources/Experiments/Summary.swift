import ResultFiles
import ScenarioFiles
import Scheduling
import SimRandom

/// One run's column values, with the policy and replication they belong to: what
/// statistics need of a run, whether it was just simulated or read back from a unit store.
package protocol RunValuesProtocol: Sendable {
    var policy: PolicySpec { get }
    var replication: Int { get }
    /// The values of `RunMetrics.columns`, in order.
    var values: [Double] { get }
}

/// One run's values, read back from a unit store.
package struct RunValues: RunValuesProtocol, Sendable {
    /// The policy.
    package var policy: PolicySpec
    /// The replication.
    package var replication: Int
    /// The values of `RunMetrics.columns`, in order (`nan` where undefined).
    package var values: [Double]
}

extension RunResult: RunValuesProtocol {}

/// Per-policy statistics over replications.
package struct PolicySummary: Sendable {
    /// The policy.
    package var policy: PolicySpec
    /// Replications summarised.
    package var replications: Int
    /// One interval per metric of `RunMetrics.columns`, over the replications where the
    /// metric is defined.
    package var intervals: [ConfidenceInterval]
    /// Per metric, its spread over the replications where it is defined.
    package var spreads: [Spread] = []

    /// Summarises the runs of each policy, in the scenario's policy order.
    package static func summarise<R: RunValuesProtocol>(_ runs: [R], policies: [PolicySpec]) -> [PolicySummary] {
        policies.map { policy in
            let values = runs.filter { $0.policy == policy }.map(\.values)
            var intervals: [ConfidenceInterval] = [], spreads: [Spread] = []
            for c in RunMetrics.columns.indices {
                let column = values.map { $0[c] }.filter(\.isFinite)
                intervals.append(ConfidenceInterval(column))
                spreads.append(Spread(column, of: values.count))
            }
            var s = PolicySummary(policy: policy, replications: values.count, intervals: intervals)
            s.spreads = spreads
            return s
        }
    }
}

/// The median, 10th and 90th percentiles of values over replications (people, for a fleet),
/// and the share of all replications where the value is zero or undefined.
package struct Spread: Sendable, Equatable {
    /// The median.
    package var median: Double
    /// The 10th percentile.
    package var p10: Double
    /// The 90th percentile.
    package var p90: Double
    /// The share of all replications where the value is zero or undefined, in percent.
    package var zeroPct: Double

    /// The spread of `values` (the defined ones) among `count` replications.
    package init(_ values: [Double], of count: Int) {
        let sorted = values.sorted()
        median = sorted.isEmpty ? .nan : Statistics.quantile(sorted: sorted, 0.5)
        p10 = sorted.isEmpty ? .nan : Statistics.quantile(sorted: sorted, 0.1)
        p90 = sorted.isEmpty ? .nan : Statistics.quantile(sorted: sorted, 0.9)
        zeroPct = count == 0 ? .nan : 100 * Double(count - values.count { $0 != 0 }) / Double(count)
    }
}

/// One policy against the baseline on one metric, replication by replication.
///
/// Replication r of every policy sees the same world (common random numbers), so the
/// differences d_r = x_policy,r - x_baseline,r are the observations: their mean, standard
/// deviation, and the paired-t interval mean(d) +- t(0.975, n - 1) sd(d) / sqrt(n) (Law &
/// Kelton, "Simulation Modeling and Analysis", §10.2.1), over the replications where both
/// values are defined. The two-sided p-value is that of the paired t test of mean(d) = 0.
///
/// Two values that agree to nine significant digits differ by 0 (``difference(_:_:)``): a
/// quantity no policy changes, summed in another order, differs in its last digits, and a t test
/// of that noise called the baseline's standby energy different at p = 3e-8.
package struct PairedComparison: Sendable {
    /// The policy compared.
    package var policy: PolicySpec
    /// The policy it is compared with.
    package var baseline: PolicySpec
    /// The metric, as an index into `RunMetrics.columns`.
    package var metric: Int
    /// The paired differences' mean and interval.
    package var difference: ConfidenceInterval
    /// Mean of the baseline over the same replications, for the relative difference.
    package var baselineMean: Double
    /// The two-sided p-value of the paired t test that the mean difference is zero.
    package var pValue: Double

    /// The mean difference relative to the baseline's mean; `nan` when that mean is zero.
    package var relativeDifference: Double {
        baselineMean != 0 ? difference.mean / abs(baselineMean) : .nan
    }

    /// Every policy but the baseline, every metric, in policy then column order.
    package static func compare<R: RunValuesProtocol>(_ runs: [R], policies: [PolicySpec], baseline: PolicySpec) -> [PairedComparison] {
        let base = Dictionary(
            runs.filter { $0.policy == baseline }.map { ($0.replication, $0.values) },
            uniquingKeysWith: { a, _ in a })
        return policies.filter { $0 != baseline }.flatMap { policy in
            let mine = runs.filter { $0.policy == policy }.map { ($0.replication, $0.values) }
            return RunMetrics.columns.indices.map { c in
                var d: [Double] = [], b: [Double] = []
                for (rep, values) in mine {
                    guard let other = base[rep], values[c].isFinite, other[c].isFinite else { continue }
                    d.append(difference(values[c], other[c]))
                    b.append(other[c])
                }
                let ci = ConfidenceInterval(d)
                return PairedComparison(
                    policy: policy, baseline: baseline, metric: c, difference: ci,
                    baselineMean: Statistics.mean(b), pValue: pairedPValue(ci))
            }
        }
    }

    /// `x - y`, or 0 when the two agree within 1e-9 of the larger: far below anything a
    /// policy changes (a joule in a day's 170 kJ is 6e-6), far above the rounding of sums of a
    /// few thousand terms (about 1e-13).
    package static func difference(_ x: Double, _ y: Double) -> Double {
        abs(x - y) <= 1e-9 * max(abs(x), abs(y)) ? 0 : x - y
    }

    /// Two-sided p-value of t = mean / (sd / sqrt(n)) with n - 1 degrees of freedom; 1 when
    /// every difference is zero, `nan` with fewer than two pairs.
    static func pairedPValue(_ ci: ConfidenceInterval) -> Double {
        guard ci.count > 1 else { return .nan }
        guard ci.standardDeviation > 0 else { return ci.mean == 0 ? 1 : 0 }
        let t = ci.mean / (ci.standardDeviation / Double(ci.count).squareRoot())
        return Statistics.tTwoSidedP(t, degreesOfFreedom: Double(ci.count - 1))
    }
}
