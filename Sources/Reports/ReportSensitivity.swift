import Experiments
import Foundation
import ResultFiles

extension Report {
    /// One paired difference over a morris sweep's points, from sensitivity.csv.
    struct SensitivityRow {
        var policy, baseline, metric, verdict: String
        var above, below, neither: Int
        var low, high: Double
        /// Axes by share of the movement (most first), and those whose steps flipped the sign.
        var moves: [(axis: String, share: Double)]
        var flips: [(axis: String, flips: Int, steps: Int)]
    }

    /// sensitivity.csv's rows of the paired metrics, one per policy and metric, in the file's
    /// order; empty without the file. Damaged fields read as missing, never as a crash.
    func sensitivityRows() -> [SensitivityRow] {
        guard let t = results.sensitivity else { return [] }
        let metrics = Set(Self.pairedMetrics.map(\.metric))
        func field(_ row: [String], _ name: String) -> String { t.column(name).flatMap { $0 < row.count ? row[$0] : nil } ?? "" }
        func int(_ row: [String], _ name: String) -> Int { Int(field(row, name)) ?? 0 }
        func double(_ row: [String], _ name: String) -> Double { Double(field(row, name)) ?? .nan }
        var out: [SensitivityRow] = []
        for row in t.rows where metrics.contains(field(row, "metric")) {
            let key = (field(row, "policy"), field(row, "baseline"), field(row, "metric"))
            if out.last.map({ ($0.policy, $0.baseline, $0.metric) != key }) ?? true {
                out.append(
                    SensitivityRow(
                        policy: key.0, baseline: key.1, metric: key.2, verdict: field(row, "verdict"), above: int(row, "above"),
                        below: int(row, "below"), neither: int(row, "neither"), low: double(row, "difference_min"),
                        high: double(row, "difference_max"), moves: [], flips: []))
            }
            let axis = axisName(field(row, "assumption"))
            let share = double(row, "share")
            if share.isFinite, share > 0 { out[out.count - 1].moves.append((axis, share)) }
            let flips = int(row, "flips")
            if flips > 0 { out[out.count - 1].flips.append((axis, flips, int(row, "steps"))) }
        }
        for i in out.indices {
            out[i].moves.sort { $0.share > $1.share }
            out[i].flips.sort { $0.flips > $1.flips }
        }
        return out
    }

    /// `policies[3].x` (or `policies.ios.x`, as a sweep's columns name it) as `ios.x`, the
    /// policy named by its label.
    func axisName(_ path: String) -> String {
        if path.hasPrefix("policies."), let label = results.policies.first(where: { path.hasPrefix("policies.\($0).") }) {
            return String(path.dropFirst("policies.".count)).hasPrefix(label) ? String(path.dropFirst("policies.".count)) : path
        }
        guard path.hasPrefix("policies["), let close = path.firstIndex(of: "]"),
            let i = Int(path[path.index(path.startIndex, offsetBy: 9)..<close]), results.policies.indices.contains(i)
        else { return path }
        return results.policies[i] + path[path.index(after: close)...]
    }

    /// The cells of a row: difference, metric, verdict, points, range, moves most with, flipped by.
    func sensitivityCells(_ r: SensitivityRow) -> [String] {
        let format = Self.pairedMetrics.first { $0.metric == r.metric }?.format ?? SVG.number
        return [
            "\(r.policy) − \(r.baseline)", Self.pairedMetrics.first { $0.metric == r.metric }?.title ?? r.metric, r.verdict,
            "\(r.above) / \(r.below) / \(r.neither)",
            r.low.isFinite && r.high.isFinite ? "\(Self.signed(r.low, format)) to \(Self.signed(r.high, format))" : "–",
            r.moves.prefix(2).map { "\($0.axis) (\(Int(($0.share * 100).rounded()))%)" }.joined(separator: ", "),
            r.flips.isEmpty ? "–" : r.flips.prefix(3).map { "\($0.axis) (\($0.flips) of \($0.steps) steps)" }.joined(separator: ", "),
        ]
    }

    static let sensitivityHeadings = [
        "difference", "metric", "verdict", "points above / below / across 0", "range of the mean", "moves most with", "flipped by",
    ]
    static let sensitivityNote =
        "Each paired difference at every point of the Morris design over the assumptions' plausible ranges: "
        + "it holds when every point's 95% interval lies on the same side of zero, flips when some lie on each side, "
        + "and is unsure otherwise; an assumption flips it when one of its steps changes the sign of the mean. "
        + "Shares are of the elementary effects' μ* (Morris screening), from sensitivity.csv."

    /// The section of a `bgsim sensitivity` study: a table of its conclusions.
    func sensitivitySection() -> String {
        let rows = sensitivityRows()
        guard !rows.isEmpty else { return "" }
        var s = "<section id=\"sensitivity\"><h2>Over the assumptions' ranges</h2><p class=\"note\">\(Quoting.html(Self.sensitivityNote))</p>"
        s += "<table class=\"cmp\"><thead><tr>" + Self.sensitivityHeadings.map { "<th>\(Quoting.html($0))</th>" }.joined() + "</tr></thead><tbody>"
        for r in rows {
            let cells = sensitivityCells(r)
            s +=
                "<tr>"
                + cells.enumerated().map { i, c in i == 2 ? "<td class=\"v-\(Quoting.html(c))\">\(Quoting.html(c))</td>" : "<td>\(Quoting.html(c))</td>" }
                .joined() + "</tr>"
        }
        return s + "</tbody></table></section>"
    }

    /// The same as Markdown.
    func sensitivityMarkdown() -> String {
        let rows = sensitivityRows()
        guard !rows.isEmpty else { return "" }
        let md = Quoting.markdown
        var s = "\n### Over the assumptions' ranges\n\n\(md(Self.sensitivityNote))\n\n"
        s +=
            "| " + Self.sensitivityHeadings.map(md).joined(separator: " | ") + " |\n|" + String(repeating: " --- |", count: Self.sensitivityHeadings.count)
            + "\n"
        for r in rows { s += "| " + sensitivityCells(r).map(md).joined(separator: " | ") + " |\n" }
        return s
    }
}
