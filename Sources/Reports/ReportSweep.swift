import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import SimRandom

extension Report {
    /// One swept parameter's values in the order its charts draw them: by number where every
    /// value is one (durations in seconds), else as written.
    struct Axis {
        var name: String
        var column: Int
        var labels: [String]
        var numbers: [Double]?
        var order: [Int]
        var logX: Bool
        var isDuration: Bool
        /// Each policy's rows of runs.csv at each value.
        var groups: [String: [String: [Int]]]

        /// A chart's x for the value at position `position` of `order`.
        func x(_ position: Int) -> Double { numbers?[order[position]] ?? Double(position) }
        var categories: [String]? { numbers == nil ? order.map { labels[$0] } : nil }
    }

    func axis(_ name: String) -> Axis? {
        guard let column = results.runs.column(name) else { return nil }
        let (labels, numbers) = parameterValues(name)
        let positive = numbers.map { $0.allSatisfy { $0 > 0 } } ?? false
        let spread = numbers.flatMap { n in n.min().flatMap { lo in n.max().map { $0 / lo } } } ?? 1
        return Axis(
            name: name, column: column, labels: labels, numbers: numbers,
            order: numbers.map { n in labels.indices.sorted { n[$0] < n[$1] } } ?? Array(labels.indices),
            logX: positive && spread >= 50, isDuration: numbers != nil && labels.contains { Double($0) == nil },
            groups: rowsByPolicyAndValue(column))
    }

    /// The paired difference of `metric` between the runs.csv rows `policy` and `baseline`:
    /// per replication each side's mean over its rows, then the interval of the differences.
    func paired(_ metric: String, policy: [Int], baseline: [Int]) -> ConfidenceInterval {
        let a = replicationMeans(metric, rows: policy)
        let b = replicationMeans(metric, rows: baseline)
        return ConfidenceInterval(a.keys.sorted().compactMap { r in b[r].map { a[r]! - $0 } })
    }

    func sweepSection(colors: [String]) -> String {
        var s = "<section id=\"sweep\"><h2>Against the swept parameters</h2>"
        s += "<p class=\"note\">Each line is a policy's mean at each value of the parameter, the band its 95% interval over replications"
        s += results.parameters.count > 1 ? "; each replication is first averaged over the other parameters' values at that value." : "."
        if let (baseline, _) = pairedPolicies {
            s += " Below them, each policy's paired difference from \(Quoting.html(baseline)) at each value (the same replications under both: "
            s +=
                "common random numbers), with its 95% interval: where the band leaves the dashed zero line, the study resolves the difference at that value.</p>"
        } else {
            s += "</p>"
        }
        let color = Dictionary(uniqueKeysWithValues: zip(results.policies, colors))
        for (a, name) in results.parameters.enumerated() {
            guard let axis = axis(name) else { continue }
            let shown = axisName(name)
            let xFormat: @Sendable (Double) -> String = axis.isDuration ? SVG.duration : SVG.number
            let xLabel = shown + (axis.logX ? " (log scale)" : "")
            s += "<h3>\(Quoting.html(shown))</h3><div class=\"grid\">"
            for (m, metric) in Self.sweepMetrics.enumerated() {
                let lines = results.policies.map { p in
                    SVG.Line(
                        label: p, color: color[p] ?? "#000",
                        points: axis.order.indices.map { (axis.x($0), interval(metric.metric, rows: axis.groups[p]?[axis.labels[axis.order[$0]]] ?? [])) })
                }
                s += SVG.lines(
                    id: "sweep-\(a)-\(m)", title: "\(metric.title) against \(shown)", xLabel: xLabel, yLabel: metric.title, lines: lines,
                    categories: axis.categories, logX: axis.logX, xFormat: xFormat, yFormat: metric.format,
                    xDurations: axis.isDuration, yDurations: metric.isDuration)
            }
            if let (baseline, others) = pairedPolicies {
                for (m, metric) in Self.pairedMetrics.enumerated() {
                    let lines = others.map { p in
                        SVG.Line(
                            label: p, color: color[p] ?? "#000", points: axis.order.indices.map { (axis.x($0), pairedAt(axis, $0, metric.metric, p, baseline)) }
                        )
                    }
                    s += SVG.lines(
                        id: "sweep-paired-\(a)-\(m)", title: "\(metric.title): difference from \(baseline)", xLabel: xLabel,
                        yLabel: "difference from \(baseline)", lines: lines, categories: axis.categories, logX: axis.logX, xFormat: xFormat,
                        yFormat: metric.format, xDurations: axis.isDuration, yDurations: metric.isDuration, zeroLine: true)
                }
            }
            s += "</div>"
        }
        return s + "</section>"
    }

    /// The paired difference at the value in position `position` of the axis's order.
    func pairedAt(_ axis: Axis, _ position: Int, _ metric: String, _ policy: String, _ baseline: String) -> ConfidenceInterval {
        let value = axis.labels[axis.order[position]]
        return paired(metric, policy: axis.groups[policy]?[value] ?? [], baseline: axis.groups[baseline]?[value] ?? [])
    }

    /// The Markdown of the sweep: per parameter, each policy's mean at each value, then each
    /// paired difference from the baseline at each value with its interval.
    func sweepMarkdown() -> String {
        let r = results, md = Quoting.markdown
        var s = ""
        for name in r.parameters {
            guard let axis = axis(name) else { continue }
            let shown = Quoting.markdownCode(axisName(name))
            let values = axis.order.map { axis.labels[$0] }
            for metric in Self.sweepMetrics.prefix(3) {
                s += "\n### \(metric.title) against \(shown)\n\n| \(md(axisName(name))) | " + r.policies.map(md).joined(separator: " | ") + " |\n"
                s += "| --- |" + String(repeating: " ---: |", count: r.policies.count) + "\n"
                for value in values {
                    s +=
                        "| \(md(value)) |"
                        + r.policies.map { p in
                            let ci = interval(metric.metric, rows: axis.groups[p]?[value] ?? [])
                            return " " + metric.format(ci.mean) + (ci.halfWidth.isFinite ? " ± " + metric.format(ci.halfWidth) : "") + " |"
                        }.joined() + "\n"
                }
            }
            guard let (baseline, others) = pairedPolicies else { continue }
            for metric in Self.pairedMetrics {
                s += "\n### \(md(metric.title)): difference from \(md(baseline)) against \(shown)\n\n"
                s += "Mean [95% interval] of the paired differences at each value; an interval that excludes 0 is resolved there.\n\n"
                s += "| \(md(axisName(name))) | " + others.map(md).joined(separator: " | ") + " |\n"
                s += "| --- |" + String(repeating: " ---: |", count: others.count) + "\n"
                for position in values.indices {
                    s += "| \(md(values[position])) |"
                    for p in others {
                        let ci = pairedAt(axis, position, metric.metric, p, baseline)
                        s += " " + Self.signed(ci.mean, metric.format)
                        if ci.halfWidth.isFinite { s += " [\(Self.signed(ci.lower, metric.format)), \(Self.signed(ci.upper, metric.format))]" }
                        s += " |"
                    }
                    s += "\n"
                }
            }
        }
        return s
    }
}
