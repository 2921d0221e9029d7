import Experiments
import Foundation
import ResultFiles
import SimRandom

extension Report {
    /// The metrics compared pair by pair against the baseline.
    static let pairedMetrics: [Column] = [
        Column("background_energy_j", "Background energy (J)", SVG.number),
        Column("latency_mean_s", "Mean start latency", SVG.duration),
        Column("staleness_mean_s", "Mean staleness at launch", SVG.duration),
        Column("fresh_launches_pct", "Fresh launches (% points)", SVG.number),
        Column("completed_pct", "Completed (% points)", SVG.number),
    ]

    /// The paired difference of `metric` between `policy` and `baseline`: per replication the
    /// policy's mean less the baseline's (the same world under both: common random numbers),
    /// then the 95% interval over replications. Much tighter than the two policies' own
    /// intervals, whose overlap says nothing about the difference.
    func paired(_ metric: String, policy: String, baseline: String) -> ConfidenceInterval {
        paired(metric, policy: policyRows[policy] ?? [], baseline: policyRows[baseline] ?? [])
    }

    /// The policies compared and the one they are compared with; empty without a baseline.
    var pairedPolicies: (baseline: String, others: [String])? {
        guard let baseline = results.baseline, results.policies.contains(baseline), results.policies.count > 1 else { return nil }
        return (baseline, results.policies.filter { $0 != baseline })
    }

    /// Forest plots of the paired differences, one per metric.
    func pairedSection(colors: [String]) -> String {
        guard let (baseline, others) = pairedPolicies else { return "" }
        let color = Dictionary(uniqueKeysWithValues: zip(results.policies, colors))
        var s = "<section id=\"paired\"><h2>Against \(Quoting.html(baseline)), pair by pair</h2><p class=\"note\">"
        s += "Each policy's difference from \(Quoting.html(baseline)) in the same replications (the same people and days: common random numbers), "
        s += "mean and 95% interval over replications"
        s += results.kind == "sweep" ? " (each replication averaged over all points; value by value under \"Against the swept parameters\")" : ""
        s +=
            ". An interval clear of the zero line is a difference the study resolves, however much the policies' own intervals in the table overlap.</p><div class=\"grid\">"
        for (k, metric) in Self.pairedMetrics.enumerated() {
            s += SVG.forest(
                id: "paired-\(k)", title: "\(metric.title): difference from \(baseline)",
                rows: others.map { p in
                    SVG.Bar(label: p, color: color[p] ?? "#000", interval: paired(metric.metric, policy: p, baseline: baseline), bound: isBound(p))
                }, format: metric.format, durations: metric.isDuration, better: better(metric.metric))
        }
        return s + "</div></section>"
    }

    /// The same as a Markdown table: one row per policy, one column per metric.
    func pairedMarkdown() -> String {
        guard let (baseline, others) = pairedPolicies else { return "" }
        let md = Quoting.markdown
        var s = "\n### Against \(md(baseline)), pair by pair\n\nEach policy's difference from \(md(baseline)) in the same replications"
        s += " (common random numbers): mean [95% interval]; an interval that excludes 0 is a resolved difference"
        s += results.kind == "sweep" ? ". Each replication is averaged over all points here; value by value below.\n\n" : ".\n\n"
        s += "| policy | " + Self.pairedMetrics.map { md($0.title) }.joined(separator: " | ") + " |\n"
        s += "| --- |" + String(repeating: " ---: |", count: Self.pairedMetrics.count) + "\n"
        for p in others {
            s += "| \(md(p)) |"
            for metric in Self.pairedMetrics {
                let ci = paired(metric.metric, policy: p, baseline: baseline)
                s += " " + Self.signed(ci.mean, metric.format)
                if ci.halfWidth.isFinite { s += " [\(Self.signed(ci.lower, metric.format)), \(Self.signed(ci.upper, metric.format))]" }
                s += " |"
            }
            s += "\n"
        }
        return s
    }

    /// `+1.2 kJ`-style: a sign on every non-zero value.
    static func signed(_ x: Double, _ format: (Double) -> String) -> String {
        guard x.isFinite else { return "–" }
        return (x > 0 ? "+" : "") + format(x)
    }
}
