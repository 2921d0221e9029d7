import Experiments
import ResultFiles

/// The forecast's answers over the assumptions' plausible ranges (docs/forecast.md): the
/// answer's line, the page's table and the chart of what each task's runs depend on.
extension ForecastPage {
    /// One identifier's runs a day over the assumptions' ranges, in words: the range, the
    /// value at the defaults and the assumptions it depends on most.
    func rangeLine(_ policy: String, _ id: String) -> String? {
        guard let r = index[Self.key(policy, "ranges", id, "runs_per_day")] else { return nil }
        var line = "across the assumptions' ranges: \(Self.n(r.p10))-\(Self.n(r.p90)) runs a day (p10-p90 of \(rangePoints) points; "
        line += "\(Self.n(r.mean)) at the defaults, \(r.people) people); " + dependsOn(policy, id, "runs_per_day")
        return line
    }

    /// Which assumptions an answer depends on most, in words: the top ones with a share of 5%
    /// or more; none when its range is within 5% of its size (the shares of a flat answer are
    /// noise).
    func dependsOn(_ policy: String, _ id: String, _ metric: String) -> String {
        guard let r = index[Self.key(policy, "ranges", id, metric)] else { return "" }
        if r.p90 - r.p10 <= 0.05 * max(abs(r.p10), abs(r.p90)) { return "hardly depends on them" }
        let shares = rangeShares(policy, id, metric).filter { $0.pct >= 5 }.prefix(2)
        return shares.isEmpty ? "" : "depends most on " + shares.map { "\($0.assumption) (\(Self.n($0.pct))%)" }.joined(separator: " and ")
    }

    /// Each answer over the assumptions' ranges.
    var rangeTable: Table {
        var t = Table(
            header: ["policy", "task", "answer", "at the defaults", "p10–p90 over the assumptions", "depends most on (share)"], rows: [])
        for policy in policies {
            for (id, _) in forecast.identifiers {
                for (metric, name) in [("runs_per_day", "runs a day"), ("energy_per_day_j", "J a day"), ("none_pct", "% of people with none")] {
                    guard let r = index[Self.key(policy, "ranges", id, metric)] else { continue }
                    let depends = dependsOn(policy, id, metric)
                    t.rows.append([
                        policy, id, name, Self.n(r.mean), "\(Self.n(r.p10))–\(Self.n(r.p90))",
                        depends.hasPrefix("depends most on ") ? String(depends.dropFirst("depends most on ".count)) : depends,
                    ])
                }
            }
        }
        return t
    }

    /// The ranges' method in words, with their design's size.
    var rangeIntro: String {
        guard let r = forecast.ranges.first else { return "" }
        return "Each assumption of the policy (a default no published figure fixes; bgsim policies lists them with their plausible ranges, "
            + "docs/sources.md §12 says why) is varied over its range: Morris screening of all of them, then Sobol' indices of the few that "
            + "matter most (each task's two, at least three), \(r.points) points in all, each run on the same \(r.people) people. The range is "
            + "the 10th to 90th percentile of the answer (a mean over those people) over the points; an assumption's share is its total "
            + "Sobol' index over the sum of those few's, rough with this design (the first is reliable, a second under about 20% is not). "
            + "A wide range says the answer rests on what is not known about iOS: docs/forecast.md says which observation of your own app "
            + "would narrow it."
    }

    /// Per identifier, the top assumptions' shares of its runs a day as bars.
    func rangeChart(_ policy: String, _ id: String) -> String {
        let shares = rangeShares(policy, id, "runs_per_day")
        guard !shares.isEmpty else { return "" }
        let w = 640, h = 24 * shares.count + 30
        var s =
            "<svg class=\"chart\" width=\"\(w)\" height=\"\(h)\" role=\"img\"><title>\(Quoting.html("\(id) under \(policy): what its runs a day depend on"))</title>"
        for (k, share) in shares.enumerated() {
            let y = 6 + 24 * k
            let bw = 300 * min(max(share.pct, 0), 100) / 100
            s += "<text x=\"196\" y=\"\(y + 14)\" text-anchor=\"end\" font-size=\"12\">\(Quoting.html(share.assumption))</text>"
            s +=
                "<rect x=\"200\" y=\"\(y)\" width=\"\(SVG.c(bw))\" height=\"18\" fill=\"#e15759\"><title>\(Quoting.html("\(share.assumption) \(Self.n(share.pct))%"))</title></rect>"
            s += "<text x=\"\(SVG.c(204 + bw))\" y=\"\(y + 14)\" font-size=\"12\">\(Self.n(share.pct))%</text>"
        }
        s += "<text x=\"200\" y=\"\(h - 6)\" font-size=\"11\">share of the variation of its runs a day over the assumptions' ranges</text></svg>"
        return s
    }

    /// The top assumptions of a range, with their shares in percent, largest first.
    func rangeShares(_ policy: String, _ id: String, _ metric: String) -> [(assumption: String, pct: Double)] {
        let prefix = metric + ":share:"
        return (byTask[Self.key(policy, "ranges", id, "")] ?? []).filter { $0.metric.hasPrefix(prefix) }
            .map { (String($0.metric.dropFirst(prefix.count)), $0.mean) }.sorted { $0.1 > $1.1 }
    }

    var rangePoints: Int { forecast.ranges.first?.points ?? 0 }
}
