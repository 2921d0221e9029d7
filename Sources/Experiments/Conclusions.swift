import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimRandom

/// Whether a paired difference of comparisons.csv (a policy minus the baseline, in one metric)
/// keeps its sign over a morris sweep's points, and which axes can flip it: the question
/// `bgsim sensitivity` asks of a study over the assumptions' plausible ranges.
package struct Conclusion: Sendable {
    /// What the sign did over the points.
    package enum Verdict: String, Sendable, CaseIterable {
        /// Every point's 95% interval lies on the same side of zero.
        case holds
        /// Some point's interval lies above zero and another's below.
        case flips
        /// Neither: some interval reaches zero, and none lies on the other side.
        case unsure
        /// The difference is zero at every point (a metric the policies do not change).
        case none
    }

    /// One axis's part: how often a step of it changed the difference's sign, and its Morris
    /// elementary effects on the difference (per unit of the axis's range).
    package struct Effect: Sendable {
        /// The axis's key path (`policies[3].refreshes_per_launch`).
        package var axis: String
        /// Steps of the axis with a finite difference at both ends, and those across which the
        /// mean difference changed sign.
        package var steps = 0, flips = 0
        /// μ*, μ and σ of its elementary effects.
        package var muStar = Double.nan, mu = Double.nan, sigma = Double.nan
        /// Its μ* over the sum of every axis's: the share of the movement it accounts for.
        package var share = Double.nan
    }

    /// The policy, the baseline, and the metric (a `RunMetrics` column name).
    package var policy, baseline, metric: String
    /// What the sign did over the points.
    package var verdict: Verdict
    /// Points with a finite difference, and those whose interval lies above zero, below it,
    /// or reaches it.
    package var points = 0, above = 0, below = 0, neither = 0
    /// The smallest and largest mean difference over the points.
    package var low = Double.nan, high = Double.nan
    /// Per axis, in the sweep's order.
    package var effects: [Effect]

    /// The axes whose steps flipped the sign, most flips first (then by μ*).
    package var flippedBy: [Effect] {
        effects.filter { $0.flips > 0 }.sorted { ($0.flips, $0.muStar) > ($1.flips, $1.muStar) }
    }
}

extension Conclusion {
    /// The conclusions of a morris sweep, one per policy other than the baseline and metric, in
    /// comparisons.csv's order; nil for another design. `comparisons` gives a point's paired
    /// comparisons. Points are taken one at a time, in trajectory order: each step of a
    /// trajectory changes one axis, by ± Δ of its range.
    static func analyse(_ plan: StudyPlan, comparisons: (Int) -> [PairedComparison]) -> [Conclusion]? {
        guard let design = plan.sweepDesign, design.kind == .morris else { return nil }
        let k = design.axes.count
        let grid = design.morrisGrid()
        var out: [Conclusion] = []
        var effects: [[[Double]]] = []  // per conclusion, per axis: elementary effects
        var previous: [Double] = []
        for p in plan.points.indices {
            let cs = comparisons(p)
            if out.isEmpty {
                out = cs.map {
                    Conclusion(
                        policy: $0.policy.name, baseline: $0.baseline.name, metric: RunMetrics.columns[$0.metric].name, verdict: .none,
                        effects: design.axes.map { Effect(axis: $0.path.description) })
                }
                effects = Array(repeating: Array(repeating: [], count: k), count: cs.count)
            }
            let step: (axis: Int, delta: Double)? =
                p % (k + 1) == 0 ? nil : (0..<k).first { grid[p][$0] != grid[p - 1][$0] }.map { ($0, grid[p][$0] - grid[p - 1][$0]) }
            for (c, comparison) in cs.enumerated() {
                let d = comparison.difference
                if d.mean.isFinite {
                    out[c].points += 1
                    if d.lower > 0 { out[c].above += 1 } else if d.upper < 0 { out[c].below += 1 } else { out[c].neither += 1 }
                    out[c].low = out[c].low.isNaN ? d.mean : min(out[c].low, d.mean)
                    out[c].high = out[c].high.isNaN ? d.mean : max(out[c].high, d.mean)
                }
                if let step, c < previous.count, previous[c].isFinite, d.mean.isFinite {
                    out[c].effects[step.axis].steps += 1
                    if previous[c] * d.mean < 0 { out[c].effects[step.axis].flips += 1 }
                    effects[c][step.axis].append((d.mean - previous[c]) / step.delta)
                }
            }
            previous = cs.map(\.difference.mean)
        }
        for c in out.indices {
            let v = out[c]
            out[c].verdict =
                v.points > 0 && (v.above == v.points || v.below == v.points)
                ? .holds
                : v.above > 0 && v.below > 0
                    ? .flips
                    : v.low == 0 && v.high == 0 ? .none : .unsure
            for a in 0..<k {
                let ee = effects[c][a]
                guard !ee.isEmpty else { continue }
                out[c].effects[a].muStar = Statistics.mean(ee.map(abs))
                out[c].effects[a].mu = Statistics.mean(ee)
                out[c].effects[a].sigma = ee.count > 1 ? Statistics.standardDeviation(ee) : 0
            }
            let total = out[c].effects.map(\.muStar).filter(\.isFinite).reduce(0, +)
            for a in 0..<k where total > 0 && out[c].effects[a].muStar.isFinite {
                out[c].effects[a].share = out[c].effects[a].muStar / total
            }
        }
        return out
    }

    /// sensitivity.csv's columns after `scenario`: the conclusion's, then the axis's.
    static let header = [
        "policy", "baseline", "metric", "verdict", "points", "above", "below", "neither", "difference_min", "difference_max",
        "assumption", "steps", "flips", "mu_star", "mu", "sigma", "share",
    ]

    /// `sensitivity.csv`: one row per conclusion and axis.
    static func csv(_ plan: StudyPlan, _ conclusions: [Conclusion]) -> String {
        let out = CSVBytes(capacity: 1 << 16)
        for name in ["scenario"] + header { out.field(name) }
        out.endRecord()
        for c in conclusions {
            for e in c.effects {
                for f in [plan.name, c.policy, c.baseline, c.metric, c.verdict.rawValue] { out.field(f) }
                for n in [c.points, c.above, c.below, c.neither] { out.integer(n) }
                out.number(c.low)
                out.number(c.high)
                out.field(e.axis)
                out.integer(e.steps)
                out.integer(e.flips)
                for x in [e.muStar, e.mu, e.sigma, e.share] { out.number(x) }
                out.endRecord()
            }
        }
        return out.text
    }
}
