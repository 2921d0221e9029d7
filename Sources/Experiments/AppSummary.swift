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
        ("gap_median_s", "app_gap_median_s", false),
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

    /// A unit's apps.csv rows (no header; the unit's prefix fields first), as column -> text,
    /// with only the columns the summary reads. Read from bytes: splitting Strings on
    /// Characters (grapheme breaking) and a field dictionary per row took 17 M instructions
    /// for one 33-row unit of the reference scenario (callgrind).
    static func read(_ url: URL) throws(RuntimeFailure) -> [[String: String]] {
        guard let data = FileManager.default.contents(atPath: url.path) else { throw RuntimeFailure("cannot read \(url.path)") }
        let header = AppRows.header
        let wanted = Set(["app", "identifier", "kind", "days", "killed"] + metrics.map(\.column))
        var rows: [[String: String]] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        func endRecord() throws(RuntimeFailure) {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            defer { fields.removeAll(keepingCapacity: true) }
            guard fields.count > 1 else { return }
            // The unit's prefix: a sweep's point first, then policy and replication.
            let offset = fields.count - header.count
            guard offset >= 0 else { throw RuntimeFailure("\(url.path): a row of \(fields.count) fields, expected \(header.count)") }
            var row: [String: String] = [:]
            for (k, name) in header.enumerated() where wanted.contains(name) { row[name] = fields[offset + k] }
            rows.append(row)
        }
        var previous: UInt8 = 0
        for byte in [UInt8](data) {
            if quoted {
                if byte == UInt8(ascii: "\"") { quoted = false } else { field.append(byte) }
            } else if byte == UInt8(ascii: "\"") {
                if previous == UInt8(ascii: "\"") { field.append(byte) }
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
            } else if byte == UInt8(ascii: "\n") {
                try endRecord()
            } else if byte != UInt8(ascii: "\r") {
                field.append(byte)
            }
            previous = byte
        }
        if !field.isEmpty || !fields.isEmpty { try endRecord() }
        return rows
    }
}
