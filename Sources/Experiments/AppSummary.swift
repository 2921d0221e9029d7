import Foundation
import ResultFiles
import Scheduling
import SimRandom

/// summary.csv's per-app rows of a run: for each policy and each scheduled task identifier
/// (refresh, processing, legacy fetch) of each app, a few of apps.csv's columns over
/// replications (people, for a fleet), read back from the units' apps.csv rows.
struct AppSummary: Sendable {
    var policy: PolicySpec
    var app, identifier, metric: String
    var interval: ConfidenceInterval
    var spread: Spread

    /// apps.csv's columns summarised, and whether a replication without the identifier's row
    /// counts as 0 (a count a day) or is left out (a mean over runs).
    /// Their names in summary.csv begin with `app_`, so that none is also a phone metric's
    /// (runs.csv has `staleness_mean_s` too).
    static let metrics: [(column: String, name: String, zeroWhenAbsent: Bool)] = [
        ("runs_per_day", "app_runs_per_day", true),
        ("completed", "app_completed_per_day", true),
        ("expired", "app_expired_per_day", true),
        ("rejected", "app_rejected_per_day", true),
        ("energy_per_day_j", "app_energy_per_day_j", true),
        ("battery_pct_per_day", "app_battery_pct_per_day", true),
        ("energy_per_run_j", "app_energy_per_run_j", false),
        ("latency_mean_s", "app_latency_mean_s", false),
        ("staleness_mean_s", "app_staleness_mean_s", false),
        ("fresh_pct", "app_fresh_pct", false),
    ]
    static let perDay: Set<String> = ["completed", "expired", "rejected"]

    /// The rows for `policies`, each policy's replications' apps.csv rows read from `file(k, r)`.
    static func rows(policies: [PolicySpec], replications: Int, file: (_ policy: Int, _ replication: Int) -> URL) throws(RuntimeFailure) -> [AppSummary] {
        var out: [AppSummary] = []
        for (k, policy) in policies.enumerated() {
            // (app, kind index, identifier) -> per replication, the row's fields by column.
            var table: [String: (order: (String, Int, String), values: [[String: Double]?])] = [:]
            var appOrder: [String: Int] = [:]
            for r in 0..<replications {
                for row in try read(file(k, r)) {
                    guard let app = row["app"], let id = row["identifier"], let kind = row["kind"].flatMap(TaskKind.init(rawValue:)),
                        kind.isScheduled
                    else { continue }
                    if appOrder[app] == nil { appOrder[app] = appOrder.count }
                    let key = app + "\u{1f}" + id
                    if table[key] == nil { table[key] = ((app, kind.index, id), Array(repeating: nil, count: replications)) }
                    var numbers: [String: Double] = [:]
                    for m in metrics { numbers[m.column] = row[m.column].flatMap(Double.init) }
                    let days = row["days"].flatMap(Double.init) ?? 1
                    for c in perDay { numbers[c] = (numbers[c] ?? 0) / days }
                    if let killed = row["killed"].flatMap(Double.init) { numbers["expired"] = (numbers["expired"] ?? 0) + killed / days }
                    table[key]!.values[r] = numbers
                }
            }
            let keys = table.keys.sorted {
                let a = table[$0]!.order, b = table[$1]!.order
                return (appOrder[a.0]!, a.1, a.2) < (appOrder[b.0]!, b.1, b.2)
            }
            for key in keys {
                let (order, values) = table[key]!
                for m in metrics {
                    let xs = values.compactMap { v -> Double? in v == nil ? (m.zeroWhenAbsent ? 0 : nil) : v![m.column] }
                    out.append(
                        AppSummary(
                            policy: policy, app: order.0, identifier: order.2, metric: m.name, interval: ConfidenceInterval(xs),
                            spread: Spread(xs, of: replications)))
                }
            }
        }
        return out
    }

    /// A unit's apps.csv rows (no header; the unit's prefix fields first), as column -> text.
    static func read(_ url: URL) throws(RuntimeFailure) -> [[String: String]] {
        guard let data = FileManager.default.contents(atPath: url.path) else { throw RuntimeFailure("cannot read \(url.path)") }
        let header = AppRows.header
        var rows: [[String: String]] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = split(line)
            // The unit's prefix: a sweep's point first, then policy and replication.
            let offset = fields.count - header.count
            guard offset >= 0 else { throw RuntimeFailure("\(url.path): a row of \(fields.count) fields, expected \(header.count)") }
            var row: [String: String] = [:]
            for (name, value) in zip(header, fields[offset...]) { row[name] = value }
            rows.append(row)
        }
        return rows
    }

    /// One CSV record's fields (RFC 4180: a quoted field may hold commas and doubled quotes).
    static func split(_ line: Substring) -> [String] {
        guard line.contains("\"") else { return line.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        var fields: [String] = [], field = "", quoted = false, previous: Character?
        for c in line {
            if quoted {
                if c == "\"" { quoted = false } else { field.append(c) }
            } else if c == "\"" {
                if previous == "\"" { field.append("\"") }
                quoted = true
            } else if c == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(c)
            }
            previous = c
        }
        fields.append(field)
        return fields
    }
}
