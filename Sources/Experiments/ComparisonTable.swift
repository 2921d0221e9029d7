import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

/// The short comparison printed after a run: one row per policy, a few key metrics, each as
/// mean ± the half-width of its 95% confidence interval, the best mean per column starred.
package enum ComparisonTable {
    struct Column: Sendable {
        var metric: String
        var title: String
        var format: @Sendable (Double) -> String
    }

    static let columns: [Column] = [
        Column(metric: "completed_pct", title: "completed %", format: { fixed($0, 1) }),
        Column(metric: "latency_p50_s", title: "latency p50", format: duration),
        Column(metric: "latency_p90_s", title: "latency p90", format: duration),
        Column(metric: "background_energy_j", title: "background J", format: { fixed($0, 0) }),
        Column(metric: "staleness_mean_s", title: "staleness", format: duration),
        Column(metric: "fresh_launches_pct", title: "fresh %", format: { fixed($0, 1) }),
    ]

    /// The policies (indices) with the best mean, among those `ranked` (deployable: a bound
    /// such as the oracle is shown but not ranked) whose mean is finite. Every policy that
    /// ties for the best is named, not only the first; none when fewer than two are ranked,
    /// when all of them are equal, or when the metric is neither better high nor low. The
    /// comparison table, the report's tables and its bar charts all mark the best this way.
    package static func bestIndices(means: [Double], ranked: [Bool], better: Metric.Better) -> Set<Int> {
        let candidates = means.indices.filter { ranked[$0] && means[$0].isFinite }
        guard candidates.count > 1, Set(candidates.map { means[$0] }).count > 1 else { return [] }
        let target: Double
        switch better {
        case .higher: target = candidates.map { means[$0] }.max()!
        case .lower: target = candidates.map { means[$0] }.min()!
        case .neither: return []
        }
        return Set(candidates.filter { means[$0] == target })
    }

    /// The best mean per column is starred among the deployable policies: a bound (the
    /// oracle) is shown but not starred. With a run's `outcome`, a third table gives each
    /// scheduled task's runs a day and gap between runs.
    package static func render(
        _ scenario: Scenario, _ summaries: [PolicySummary], replications: Int? = nil, outcome: StudyOutcome? = nil
    ) -> String {
        let metricIndex = Dictionary(uniqueKeysWithValues: RunMetrics.columns.enumerated().map { ($1.name, $0) })
        var rows: [[String]] = [["policy"] + columns.map(\.title)]
        let best = columns.map { column in
            bestIndices(
                means: summaries.map { $0.intervals[metricIndex[column.metric]!].mean },
                ranked: summaries.map { !$0.policy.isBound },
                better: RunMetrics.columns[metricIndex[column.metric]!].better)
        }
        for (s, summary) in summaries.enumerated() {
            var row = [summary.policy.name]
            for (c, column) in columns.enumerated() {
                let ci = summary.intervals[metricIndex[column.metric]!]
                var cell = ci.mean.isFinite ? column.format(ci.mean) : "-"
                if ci.halfWidth.isFinite { cell += " ± " + column.format(ci.halfWidth) }
                if best[c].contains(s) { cell += " *" }
                row.append(cell)
            }
            rows.append(row)
        }
        var out = "\(scenario.name): \(SimDurationText.describe(scenario.setup.duration)) simulated, "
        let n = replications ?? scenario.replications
        out += "\(n) replication\(n == 1 ? "" : "s"), seed \(scenario.seed); "
        out += "mean ± 95% CI half-width, * best"
        out += summaries.contains { $0.policy.isBound } ? " (bounds not starred)\n" : "\n"
        out += aligned(rows)
        out += mechanismShares(summaries, metricIndex)
        out += runsPerApp(outcome?.apps ?? [], policies: summaries.map(\.policy.name))
        return out
    }

    /// What a person could observe of each scheduled task (refresh, processing, legacy fetch):
    /// its runs a day and the median gap between its runs, means over replications. Latency
    /// counts only the requests that started, and many are replaced before they do.
    static func runsPerApp(_ apps: [AppSummary], policies: [String]) -> String {
        var tasks: [(app: String, identifier: String)] = []
        var cells: [String: (runs: Double, gap: Double)] = [:]
        for row in apps where row.metric == "app_runs_per_day" || row.metric == "app_gap_median_s" {
            if !tasks.contains(where: { $0 == (row.app, row.identifier) }) { tasks.append((row.app, row.identifier)) }
            let key = row.policy.name + "\u{1f}" + row.app + "\u{1f}" + row.identifier
            var cell = cells[key] ?? (.nan, .nan)
            if row.metric == "app_runs_per_day" { cell.runs = row.interval.mean } else { cell.gap = row.interval.mean }
            cells[key] = cell
        }
        guard !tasks.isEmpty else { return "" }
        let titles = tasks.map { t in
            tasks.filter { $0.app == t.app }.count > 1 ? t.app + " " + (t.identifier.split(separator: ".").last.map(String.init) ?? t.identifier) : t.app
        }
        var rows: [[String]] = [["policy"] + titles]
        for policy in policies {
            rows.append(
                [policy]
                    + tasks.map { t in
                        guard let c = cells[policy + "\u{1f}" + t.app + "\u{1f}" + t.identifier], c.runs.isFinite else { return "-" }
                        return fixed(c.runs, 1) + " " + (c.gap.isFinite ? duration(c.gap) : "-")
                    })
        }
        return "\nscheduled tasks: runs a day and median gap between runs (means over replications):\n" + aligned(rows)
    }

    static func aligned(_ rows: [[String]]) -> String {
        let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max()! }
        var out = ""
        for row in rows {
            out +=
                zip(row, widths).enumerated().map { c, pair in
                    c == 0
                        ? pair.0.padding(toLength: pair.1, withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: pair.1 - pair.0.count) + pair.0
                }.joined(separator: "  ") + "\n"
        }
        return out
    }

    /// The short names of the kinds in the shares table.
    package static func shortName(_ kind: TaskKind) -> String {
        switch kind.rawValue {
        case "finite_length": "finite"
        case "silent_push": "push"
        case "background_transfer": "transfer"
        default: kind.rawValue
        }
    }

    /// How much of the phone's background energy each way of running in the background
    /// accounts for: per policy, each kind's mean share of `background_energy_j` in percent
    /// (ratio of the means), for the kinds that used any.
    static func mechanismShares(_ summaries: [PolicySummary], _ metricIndex: [String: Int]) -> String {
        let kinds = TaskKind.allCases.filter { kind in
            summaries.contains { ($0.intervals[metricIndex["background_energy_\(kind.rawValue)_j"]!].mean) > 0 }
        }
        guard !kinds.isEmpty else { return "" }
        var rows: [[String]] = [["policy"] + kinds.map(shortName)]
        for summary in summaries {
            let total = summary.intervals[metricIndex["background_energy_j"]!].mean
            rows.append(
                [summary.policy.name]
                    + kinds.map { kind in
                        let part = summary.intervals[metricIndex["background_energy_\(kind.rawValue)_j"]!].mean
                        return percent(part, of: total) ?? "-"
                    })
        }
        return "\nbackground energy by mechanism, % of background J (means):\n" + aligned(rows)
    }

    static func fixed(_ x: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", x) }

    /// A part's share of a total in percent, to one decimal, as the mechanism tables (terminal
    /// and report) show it: "<0.1" for a share that is not nothing but would show as 0.0 (a
    /// policy's redone work, say), `nil` without a total.
    package static func percent(_ part: Double, of total: Double) -> String? {
        guard total > 0, part.isFinite else { return nil }
        let share = 100 * part / total
        return share > 0 && share < 0.05 ? "<0.1" : fixed(share, 1)
    }

    /// Seconds in the largest unit that keeps the number readable: 45s, 12.5m, 3.2h.
    static func duration(_ seconds: Double) -> String {
        switch abs(seconds) {
        case ..<90: return fixed(seconds, 0) + "s"
        case ..<5400: return fixed(seconds / 60, 1) + "m"
        default: return fixed(seconds / 3600, 1) + "h"
        }
    }
}

enum SimDurationText {
    static func describe(_ d: SimDuration) -> String {
        let days = d.seconds / 86_400
        return days == days.rounded() ? "\(Int(days)) day\(days == 1 ? "" : "s")" : "\(d)"
    }
}

extension ComparisonTable {
    /// A sweep's paired differences point by point: each policy against the baseline at each
    /// point, mean [95% interval] of background energy and mean staleness, as comparisons.csv
    /// has them; `nil` past `maxPoints` points (the report draws them) or without a baseline.
    package static func sweepPairs(_ plan: StudyPlan, runs: [[RunValues]], maxPoints: Int = 24) -> String? {
        guard plan.isSweep, plan.points.count <= maxPoints, plan.policies.count > 1 else { return nil }
        let metrics = ["background_energy_j", "staleness_mean_s"]
        let index = metrics.compactMap { name in RunMetrics.columns.firstIndex { $0.name == name } }
        guard index.count == metrics.count else { return nil }
        let baselineLabel = plan.points[0].scenario.metrics.baseline
        guard let baseline = plan.policies.first(where: { $0.label == baselineLabel }) else { return nil }
        var rows = [["point"] + plan.parameters + ["policy", "energy J", "staleness"]]
        for (p, point) in plan.points.enumerated() {
            let pairs = PairedComparison.compare(runs[p], policies: plan.policies, baseline: baseline)
            for policy in plan.policies where policy.label != baseline.label {
                var row = [String(p)] + point.values + [policy.label]
                for k in index {
                    let found = pairs.first { $0.policy.label == policy.label && $0.metric == k }
                    row.append(found.map { cell($0.difference, seconds: k == index[1]) } ?? "-")
                }
                rows.append(row)
            }
        }
        return "\nAgainst \(baseline.label), point by point: mean difference [95% interval]\n" + aligned(rows)
    }

    static func cell(_ ci: ConfidenceInterval, seconds: Bool) -> String {
        func f(_ x: Double) -> String { seconds ? signedDuration(x) : (x >= 0 ? "+" : "") + fixed(x, 0) }
        guard ci.mean.isFinite else { return "-" }
        return f(ci.mean) + (ci.halfWidth.isFinite ? " [\(f(ci.lower)), \(f(ci.upper))]" : "")
    }

    static func signedDuration(_ s: Double) -> String { (s >= 0 ? "+" : "-") + duration(abs(s)) }
}
