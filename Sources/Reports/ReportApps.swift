import Experiments
import Foundation
import ResultFiles
import Scheduling
import SimRandom

extension Report {
    /// The columns of apps.csv the per-app section reads.
    static let appColumns: Set<String> = [
        "policy", "replication", "app", "identifier", "kind", "runs_per_day", "energy_per_day_j", "battery_pct_per_day", "staleness_mean_s",
        "held_rules",
    ]

    /// Per app, each scheduled task identifier (refresh, processing, legacy fetch) under each
    /// policy across replications (people, for a fleet): runs a day, the share with none and,
    /// for a fleet, the drawn values more common among them, energy, staleness, and the rule
    /// that held it longest. Rows come from apps.csv, for a run.
    func appRows() -> [[String]] {
        guard let t = results.apps, let pc = t.column("policy"), let rc = t.column("replication"), let ac = t.column("app"),
            let ic = t.column("identifier"), let kc = t.column("kind"), let runs = t.column("runs_per_day"),
            let energy = t.column("energy_per_day_j"), let battery = t.column("battery_pct_per_day"),
            let stale = t.column("staleness_mean_s"), let rules = t.column("held_rules")
        else { return [] }
        let n = results.replications
        var order: [String] = []
        var rowsOf: [String: [[String]]] = [:]
        for row in t.rows {
            guard let kind = TaskKind(rawValue: row[kc]), kind.isScheduled else { continue }
            let key = [row[pc], row[ac], row[ic]].joined(separator: "\u{1f}")
            if rowsOf[key] == nil { order.append(key) }
            rowsOf[key, default: []].append(row)
        }
        let policyIndex = Dictionary(uniqueKeysWithValues: results.policies.enumerated().map { ($1, $0) })
        // By app and identifier as apps.csv first lists them, then by policy.
        var pairIndex: [String: Int] = [:]
        for key in order {
            let pair = String(key.split(separator: "\u{1f}", maxSplits: 1)[1])
            if pairIndex[pair] == nil { pairIndex[pair] = pairIndex.count }
        }
        func rank(_ key: String) -> (Int, Int) {
            let parts = key.split(separator: "\u{1f}", maxSplits: 1)
            return (pairIndex[String(parts[1])]!, policyIndex[String(parts[0])] ?? 0)
        }
        let keys = order.sorted { rank($0) < rank($1) }
        var out: [[String]] = []
        for key in keys {
            let rows = rowsOf[key]!
            let parts = key.split(separator: "\u{1f}").map(String.init)
            // Per replication; a replication without the row ran it 0 times.
            var perRep = [Double](repeating: 0, count: n), seen = Set<Int>()
            for row in rows {
                guard let r = Int(row[rc]), r < n else { continue }
                perRep[r] = Double(row[runs]) ?? 0
                seen.insert(r)
            }
            let spread = Spread(perRep, of: n)
            func median(_ c: Int) -> String {
                let xs = rows.compactMap { Double($0[c]) }.filter(\.isFinite).sorted()
                return xs.isEmpty ? "" : PlainNumber.text(Statistics.quantile(sorted: xs, 0.5))
            }
            var held: [String: Double] = [:]
            for row in rows {
                for item in row[rules].split(separator: ";") {
                    let pair = item.split(separator: "=")
                    if pair.count == 2, let s = Double(pair[1]) { held[String(pair[0]), default: 0] += s }
                }
            }
            let total = held.values.reduce(0, +)
            let top = held.max { ($0.value, $1.key) < ($1.value, $0.key) }.map { "\($0.key) (\(Int((100 * $0.value / total).rounded()))%)" } ?? ""
            let none = (0..<n).filter { perRep[$0] == 0 }
            out.append([
                parts[0], parts[1], parts[2],
                "\(PlainNumber.text(spread.median)) (\(PlainNumber.text(spread.p10))–\(PlainNumber.text(spread.p90)))",
                "\(Int(spread.zeroPct.rounded()))%", traitsOf(none), median(energy), median(battery),
                median(stale).isEmpty ? "" : SVG.duration(Double(median(stale)) ?? 0), top,
            ])
        }
        return out
    }

    static let appHeadings = [
        "policy", "app", "task", "runs a day, median (p10–p90)", "with none", "more common among those with none", "J a day (median)",
        "battery % a day (median)", "staleness at launch (median)", "held longest by",
    ]

    /// The fleet's drawn values over-represented among `people` (10 points or more above their
    /// share among everyone), listed values only.
    func traitsOf(_ people: [Int]) -> String {
        // A trait of one or two people is noise: said from five on.
        guard !results.fleet.isEmpty, people.count >= 5, let rc = results.runs.column("replication") else { return "" }
        var value: [Int: [String]] = [:]
        for row in results.runs.rows {
            guard let r = Int(row[rc]), value[r] == nil else { continue }
            value[r] = results.fleet.map { path in results.runs.column(path).map { row[$0] } ?? "" }
        }
        let all = value.count
        var out: [(String, Double, Double)] = []
        for (k, path) in results.fleet.enumerated() {
            var counts: [String: Int] = [:]
            for v in value.values { counts[v[k], default: 0] += 1 }
            guard counts.count <= 8 else { continue }
            for (v, count) in counts {
                let among = Double(people.count { value[$0]?[k] == v }) / Double(people.count)
                let share = Double(count) / Double(all)
                if among >= share + 0.1 { out.append(("\(path)=\(v)", among, share)) }
            }
        }
        return out.sorted { ($0.1 - $0.2, $1.0) > ($1.1 - $1.2, $0.0) }.prefix(3).map {
            "\($0.0) \(Int((100 * $0.1).rounded()))% (all \(Int((100 * $0.2).rounded()))%)"
        }
        .joined(separator: ", ")
    }

    /// The section, for a run with apps.csv.
    func appsSection() -> String {
        let rows = appRows()
        guard !rows.isEmpty else { return "" }
        var s = "<section><h2>Apps</h2><p class=\"note\">Each app's scheduled tasks (refresh, processing, legacy fetch) across "
        s += results.fleet.isEmpty ? "replications" : "people"
        s += ", from apps.csv: the median and 10th–90th percentiles; the share that never ran it; the policy's rule that held it longest.</p>"
        s += "<div class=\"wide\"><table><tr>" + Self.appHeadings.map { "<th>\(Quoting.html($0))</th>" }.joined() + "</tr>"
        for row in rows { s += "<tr>" + row.map { "<td>\(Quoting.html($0))</td>" }.joined() + "</tr>" }
        return s + "</table></div></section>"
    }
}

/// Numbers in tables: three significant digits, no exponent for everyday magnitudes.
enum PlainNumber {
    static func text(_ x: Double) -> String {
        guard x.isFinite else { return "" }
        if x == 0 { return "0" }
        let a = abs(x)
        return String(format: a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", x)
    }
}
