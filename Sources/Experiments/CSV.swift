import Scheduling

/// Writes RFC 4180 CSV text: fields with a comma, quote or line break are quoted and inner
/// quotes doubled; numbers use '.' and Swift's shortest round-trip form, whatever the
/// locale; a missing value is an empty field.
public struct CSVWriter {
    public private(set) var text = ""

    public init(header: [String]) { row(header) }

    public mutating func row(_ fields: [String]) {
        text += fields.map(Self.escape).joined(separator: ",")
        text += "\n"
    }

    public static func escape(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A number as text: integers without a decimal point when `count`, `nan` as empty.
    public static func number(_ x: Double, count: Bool = false) -> String {
        guard x.isFinite else { return x.isNaN ? "" : (x > 0 ? "inf" : "-inf") }
        if count, x == x.rounded(), abs(x) < 9e15 { return String(Int64(x)) }
        return x.description
    }
}

extension Experiment {
    /// `runs.csv`: one row per policy x replication.
    public static func runsCSV(_ scenario: Scenario, _ runs: [RunResult]) -> String {
        var csv = CSVWriter(header: ["scenario", "policy", "replication", "seed"] + RunMetrics.columns.map(\.name))
        for run in runs {
            let values = zip(RunMetrics.columns, run.metrics.columnValues).map { CSVWriter.number($1, count: $0.isCount) }
            csv.row([scenario.name, run.policy.name, String(run.replication), String(scenario.seed)] + values)
        }
        return csv.text
    }

    /// `summary.csv`: one row per policy; per metric its mean and 95% t-interval.
    public static func summaryCSV(_ scenario: Scenario, _ summaries: [PolicySummary]) -> String {
        let metricHeaders = RunMetrics.columns.flatMap { ["\($0.name)_mean", "\($0.name)_ci95_low", "\($0.name)_ci95_high"] }
        var csv = CSVWriter(header: ["scenario", "policy", "replications"] + metricHeaders)
        for s in summaries {
            let values = s.intervals.flatMap { ci in
                [ci.mean, ci.lower, ci.upper].map { CSVWriter.number($0) }
            }
            csv.row([scenario.name, s.policy.name, String(s.replications)] + values)
        }
        return csv.text
    }
}

extension Experiment {
    /// `events.csv` (opt-in): every event of every run, runs in `runs.csv` order, events in
    /// the order they happened.
    public static func eventsCSV(_ scenario: Scenario, _ runs: [RunResult]) -> String {
        var csv = CSVWriter(header: ["policy", "replication", "time_s", "subject", "app", "task", "event", "detail"])
        let names = scenario.setup.apps.map(\.name)
        for run in runs {
            for e in run.events ?? [] {
                csv.row([run.policy.name, String(run.replication), CSVWriter.number(Double(e.time.microseconds) / 1e6),
                         e.subject.rawValue, e.app.map { names[$0] } ?? "", e.task.map { String($0.rawValue) } ?? "",
                         e.event, e.detail])
            }
        }
        return csv.text
    }
}
