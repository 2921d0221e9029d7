import PhoneWorld
import Scheduling
import SimEngine
import SimRandom

/// Writes RFC 4180 CSV text: fields with a comma, quote or line break are quoted and inner
/// quotes doubled; numbers use '.' and Swift's shortest round-trip form, whatever the
/// locale; a missing value is an empty field. Lines end in LF.
public struct CSVWriter {
    public private(set) var text = ""

    public init(header: [String]) { row(header) }

    public mutating func row(_ fields: [String]) {
        text += Self.line(fields)
    }

    /// One record with its line break.
    public static func line(_ fields: [String]) -> String {
        // Into one string sized up front: `map(escape).joined(separator:) + "\n"` built three
        // strings per row, a tenth of the instructions of a run writing tasks.csv.
        var out = ""
        out.reserveCapacity(fields.reduce(fields.count + 2) { $0 + $1.utf8.count })
        for (k, field) in fields.enumerated() {
            if k > 0 { out += "," }
            out += escape(field)
        }
        out += "\n"
        return out
    }

    /// The field, quoted if it holds a comma, a quote or a line break (RFC 4180).
    ///
    /// The bytes are scanned, not the characters: comparing each character (a grapheme
    /// cluster) with four others was half of a run's instructions when it writes tasks.csv
    /// and events.csv, and it missed a comma or a quote carrying a combining mark, and a CR LF
    /// pair, which are single characters. In UTF-8 those bytes never occur inside another
    /// character.
    public static func escape(_ field: String) -> String {
        var field = field
        let special = field.withUTF8 { bytes in
            bytes.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
        }
        guard special else { return field }
        // Doubled by scalar for the same reason: a quote with a combining mark is one character.
        var quoted = "\""
        for u in field.unicodeScalars {
            if u == "\"" { quoted += "\"\"" } else { quoted.unicodeScalars.append(u) }
        }
        return quoted + "\""
    }

    /// A number as text: integers without a decimal point when `count`, `nan` as empty.
    public static func number(_ x: Double, count: Bool = false) -> String {
        guard x.isFinite else { return x.isNaN ? "" : (x > 0 ? "inf" : "-inf") }
        if count, x == x.rounded(), abs(x) < 9e15 { return String(Int64(x)) }
        return x.description
    }

    /// An instant as seconds since the start, exact to the microsecond.
    public static func seconds(_ t: SimInstant) -> String { number(Double(t.microseconds) / 1e6) }
    public static func seconds(_ d: SimDuration) -> String { number(Double(d.microseconds) / 1e6) }
}

/// `tasks.csv`: one row per task of every run.
public enum TaskRows {
    public static let header: [String] = [
        "policy", "replication", "task", "app", "identifier", "kind", "submitted_s", "earliest_begin_s", "started_s",
        "ended_s", "outcome", "success", "rejection", "latency_s", "completion_latency_s", "cpu_time_s",
        "up_bytes", "down_bytes", "energy_j", "cpu_energy_j", "radio_energy_j", "radio_tail_energy_j",
    ] + HoldReason.allCases.map { "held_\($0.token)_s" } + ["delayed_by", "policy_reasons"]

    /// The fields after `policy` and `replication`, joined, with the line break.
    static func fields(_ r: TaskRecord, appNames: [String]) -> String {
        let q = r.request
        let delayedBy = HoldReason.allCases.filter { r.held[$0] > 0 }.map(\.token).joined(separator: ";")
        let fields: [String] = [
            String(q.id.rawValue), appNames[q.app], q.identifier, q.kind.rawValue,
            CSVWriter.seconds(q.submitted), CSVWriter.seconds(q.earliestBegin), r.started.map(CSVWriter.seconds) ?? "",
            CSVWriter.seconds(r.ended), r.outcome.rawValue, r.outcome == .completed ? String(r.success) : "",
            r.rejection?.rawValue ?? "", r.latency.map(CSVWriter.seconds) ?? "", r.completionLatency.map(CSVWriter.seconds) ?? "",
            CSVWriter.seconds(r.cpuTime), CSVWriter.number(r.movedUpBytes), CSVWriter.number(r.movedDownBytes),
            CSVWriter.number(r.energyJ), CSVWriter.number(r.cpuEnergyJ), CSVWriter.number(r.radioEnergyJ),
            CSVWriter.number(r.radioTailEnergyJ),
        ] + HoldReason.allCases.map { CSVWriter.number(r.held[$0]) } + [delayedBy, r.policyReasons.joined(separator: ";")]
        return CSVWriter.line(fields)
    }
}

/// `timeline.csv`: the phone's state sampled at an interval, in every run.
public enum TimelineRows {
    public static let header = ["policy", "replication", "time_s", "charge_pct", "phone_on", "charging", "network",
                                "screen_on", "foreground_app", "in_call", "low_power_mode", "tasks_running"]

    static func fields(_ s: TimelineSample, appNames: [String]) -> String {
        func flag(_ b: Bool) -> String { b ? "1" : "0" }
        return CSVWriter.line([
            CSVWriter.seconds(s.time), CSVWriter.number(100 * s.charge), flag(s.isOn), flag(s.isCharging), s.network.rawValue,
            flag(s.screenOn), s.foregroundApp.map { appNames[$0] } ?? "", flag(s.inCall), flag(s.lowPowerMode),
            String(s.tasksRunning),
        ])
    }
}

extension Experiment {
    /// The columns that say which point a row belongs to: none for a run; for a sweep,
    /// `point` and one column per axis, named by its key path.
    static func pointHeader(_ plan: StudyPlan) -> [String] { plan.isSweep ? ["point"] + plan.parameters : [] }
    static func pointFields(_ plan: StudyPlan, _ point: Int) -> [String] {
        plan.isSweep ? [String(point)] + plan.points[point].values : []
    }

    /// `runs.csv`: one row per (point x) policy x replication.
    public static func runsCSV<R: RunValuesProtocol>(_ scenario: Scenario, _ runs: [R]) -> String {
        runsCSV(StudyPlan(scenario: scenario), [runs])
    }

    public static func runsCSV<R: RunValuesProtocol>(_ plan: StudyPlan, _ runs: [[R]]) -> String {
        var csv = CSVWriter(header: ["scenario"] + pointHeader(plan) + ["policy", "replication", "seed"] + RunMetrics.columns.map(\.name))
        for (point, group) in runs.enumerated() {
            let head = [plan.name] + pointFields(plan, point)
            for run in group {
                let values = zip(RunMetrics.columns, run.values).map { CSVWriter.number($1, count: $0.isCount) }
                csv.row(head + [run.policy.name, String(run.replication), String(plan.points[point].scenario.seed)] + values)
            }
        }
        return csv.text
    }

    /// `summary.csv`: one row per (point x) policy x metric: n, mean, standard deviation, 95% t-interval.
    public static func summaryCSV(_ scenario: Scenario, _ summaries: [PolicySummary]) -> String {
        summaryCSV(StudyPlan(scenario: scenario), [summaries])
    }

    public static func summaryCSV(_ plan: StudyPlan, _ summaries: [[PolicySummary]]) -> String {
        var csv = CSVWriter(header: ["scenario"] + pointHeader(plan)
                            + ["policy", "metric", "n", "mean", "sd", "ci95_low", "ci95_high", "ci95_half_width"])
        for (point, group) in summaries.enumerated() {
            let head = [plan.name] + pointFields(plan, point)
            for s in group {
                for (metric, ci) in zip(RunMetrics.columns, s.intervals) {
                    csv.row(head + [s.policy.name, metric.name, String(ci.count)]
                            + [ci.mean, ci.standardDeviation, ci.lower, ci.upper, ci.halfWidth].map { CSVWriter.number($0) })
                }
            }
        }
        return csv.text
    }

    /// `comparisons.csv`: one row per (point x) policy (other than the baseline) x metric:
    /// the paired difference policy - baseline over replications.
    public static func comparisonsCSV(_ scenario: Scenario, _ comparisons: [PairedComparison]) -> String {
        comparisonsCSV(StudyPlan(scenario: scenario), [comparisons])
    }

    public static func comparisonsCSV(_ plan: StudyPlan, _ comparisons: [[PairedComparison]]) -> String {
        var csv = CSVWriter(header: ["scenario"] + pointHeader(plan)
                            + ["policy", "baseline", "metric", "n", "baseline_mean", "difference_mean",
                               "difference_sd", "ci95_low", "ci95_high", "relative_difference_pct", "p_value"])
        for (point, group) in comparisons.enumerated() {
            let head = [plan.name] + pointFields(plan, point)
            for c in group {
                let d = c.difference
                csv.row(head + [c.policy.name, c.baseline.name, RunMetrics.columns[c.metric].name, String(d.count)]
                        + [c.baselineMean, d.mean, d.standardDeviation, d.lower, d.upper, 100 * c.relativeDifference, c.pValue]
                            .map { CSVWriter.number($0) })
            }
        }
        return csv.text
    }
}

/// `events.csv` (opt-in): every event of every run.
public enum EventRows {
    public static let header = ["policy", "replication", "time_s", "subject", "app", "task", "event", "detail"]

    static func fields(_ e: LoggedEvent, appNames: [String]) -> String {
        CSVWriter.line([CSVWriter.seconds(e.time), e.subject.rawValue, e.app.map { appNames[$0] } ?? "",
                        e.task.map { String($0.rawValue) } ?? "", e.event, e.detail])
    }
}
