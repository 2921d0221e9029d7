import PhoneWorld
import Scheduling
import SimEngine
import SimRandom

/// Writes RFC 4180 CSV text: fields with a comma, quote or line break are quoted and inner
/// quotes doubled; numbers use '.' and Swift's shortest round-trip form, whatever the
/// locale; a missing value is an empty field. Lines end in LF.
///
/// Used for the small files (runs, summary, comparisons); the row files, which grow with the
/// run, are built as bytes by `CSVBytes`, which this wraps so both write the same text.
public struct CSVWriter {
    public private(set) var text = ""

    public init(header: [String]) { row(header) }

    public mutating func row(_ fields: [String]) {
        text += Self.line(fields)
    }

    /// One record with its line break.
    public static func line(_ fields: [String]) -> String {
        var line = CSVBytes()
        for field in fields { line.field(field) }
        line.endRecord()
        return line.text
    }

    /// The field, quoted if it holds a comma, a quote or a line break (RFC 4180).
    public static func escape(_ field: String) -> String {
        var line = CSVBytes()
        line.field(field)
        return line.text
    }

    /// A number as text: integers without a decimal point when `count`, `nan` as empty.
    public static func number(_ x: Double, count: Bool = false) -> String {
        var line = CSVBytes()
        line.number(x, count: count)
        return line.text
    }
}

/// CSV records built straight into bytes, field by field, with the rules of `CSVWriter`.
///
/// The row files are most of what a run writes (tasks.csv: about 250 bytes for each of 400
/// tasks a phone-day on the reference scenario). Built as an array of strings per row, then
/// joined, rows took more than half of a run that wrote tasks.csv, and such a run took five
/// times as long as one without it; appended as bytes, no string is made but the digits of
/// a fractional number.
public struct CSVBytes {
    public private(set) var bytes: [UInt8] = []
    /// Whether the next field is the first of its record (no comma before it).
    private var atRecordStart = true

    public init() {}

    /// The bytes as text (valid UTF-8: every field came from a String or from digits).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func reserveCapacity(_ n: Int) { bytes.reserveCapacity(n) }
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true); atRecordStart = true }

    @inline(__always) private mutating func separate() {
        if atRecordStart { atRecordStart = false } else { bytes.append(UInt8(ascii: ",")) }
    }

    /// Ends the record with its line break.
    public mutating func endRecord() {
        bytes.append(UInt8(ascii: "\n"))
        atRecordStart = true
    }

    /// Fields already written as CSV (a record's first fields, joined by commas, no line break).
    public mutating func fields(_ written: [UInt8]) {
        separate()
        bytes.append(contentsOf: written)
    }

    /// A missing value.
    public mutating func empty() { separate() }

    /// A text field, quoted if it holds a comma, a quote or a line break (RFC 4180).
    ///
    /// The bytes are scanned, not the characters: comparing each character (a grapheme
    /// cluster) with four others was half of a run's instructions when it writes tasks.csv and
    /// events.csv, and it missed a comma or a quote carrying a combining mark, and a CR LF pair,
    /// which are single characters. In UTF-8 those bytes never occur inside another character,
    /// so doubling each quote byte doubles each quote.
    public mutating func field(_ text: String) {
        separate()
        var text = text
        text.withUTF8 { utf8 in
            let special = utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
            guard special else { bytes.append(contentsOf: utf8); return }
            bytes.append(UInt8(ascii: "\""))
            for b in utf8 {
                bytes.append(b)
                if b == UInt8(ascii: "\"") { bytes.append(b) }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// Text fields joined by `;` into one field (a list in a cell).
    public mutating func list(_ items: [String]) {
        field(items.joined(separator: ";"))
    }

    /// An integer in decimal.
    public mutating func integer<I: BinaryInteger>(_ value: I) {
        separate()
        appendDigits(Int64(value))
    }

    private mutating func appendDigits(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var m = value.magnitude
        guard m != 0 else { bytes.append(UInt8(ascii: "0")); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, most significant last
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while m != 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(m % 10)
                m /= 10
                count += 1
            }
            for k in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[k]) }
        }
    }

    /// A number: integers without a decimal point when `count`, `nan` as empty, otherwise
    /// Swift's shortest round-trip form (`0.1`, `1234.5`, `1e-06`).
    public mutating func number(_ x: Double, count: Bool = false) {
        separate()
        guard x.isFinite else {
            if !x.isNaN { bytes.append(contentsOf: (x > 0 ? "inf" : "-inf").utf8) }
            return
        }
        if count, x == x.rounded(), abs(x) < 9e15 { appendDigits(Int64(x)); return }
        // Whole numbers (most held times are 0, byte counts are whole) written as Swift
        // writes them, without formatting: digits, then ".0". Below 10^15 the digits are exact
        // and Swift does not switch to an exponent (it does from 2^53).
        if x == x.rounded(), abs(x) < 1e15, !(x == 0 && x.sign == .minus) {
            appendDigits(Int64(x))
            bytes.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0")])
            return
        }
        var text = x.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// An instant as seconds since the start, exact to the microsecond: the text
    /// `number(Double(microseconds) / 1e6)` writes, made from the integer.
    ///
    /// Swift writes a double as the shortest decimal that reads back as it. For
    /// microseconds / 10^6 with at most 15 significant digits, that decimal is the quotient
    /// itself: decimals of 15 digits or fewer are distinct as doubles, so no shorter one reads
    /// back the same. From 10^-4 seconds up Swift writes it without an exponent, with at least
    /// one digit after the point. Other values (below 100 µs, above 10^15 µs) go through
    /// `number`. A test compares both for every microsecond count up to two seconds and for
    /// random ones up to 10^15.
    public mutating func seconds(microseconds k: Int64) {
        guard k >= 100, k < 1_000_000_000_000_000 else {
            number(Double(k) / 1e6)
            return
        }
        separate()
        appendDigits(k / 1_000_000)
        bytes.append(UInt8(ascii: "."))
        var fraction = k % 1_000_000
        var width = 6
        while width > 1, fraction % 10 == 0 { fraction /= 10; width -= 1 }
        var scale: Int64 = 1
        for _ in 1..<width { scale *= 10 }
        while scale > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(fraction / scale))
            fraction %= scale
            scale /= 10
        }
    }

    public mutating func seconds(_ t: SimInstant) { seconds(microseconds: t.microseconds) }
    public mutating func seconds(_ d: SimDuration) { seconds(microseconds: d.microseconds) }
    /// An optional instant or duration; empty when `nil`.
    public mutating func seconds(_ t: SimInstant?) { if let t { seconds(t) } else { empty() } }
    public mutating func seconds(_ d: SimDuration?) { if let d { seconds(d) } else { empty() } }
}

/// `tasks.csv`: one row per task of every run.
public enum TaskRows {
    public static let header: [String] = [
        "policy", "replication", "task", "app", "identifier", "kind", "submitted_s", "earliest_begin_s", "started_s",
        "ended_s", "outcome", "success", "rejection", "latency_s", "completion_latency_s", "cpu_time_s",
        "up_bytes", "down_bytes", "energy_j", "cpu_energy_j", "radio_energy_j", "radio_tail_energy_j",
    ] + HoldReason.allCases.map { "held_\($0.token)_s" } + ["delayed_by", "policy_reasons"]

    /// The fields after `policy` and `replication`, then the line break.
    static func write(_ r: TaskRecord, appNames: [String], to out: inout CSVBytes) {
        let q = r.request
        out.integer(q.id.rawValue)
        out.field(appNames[q.app])
        out.field(q.identifier)
        out.field(q.kind.rawValue)
        out.seconds(q.submitted)
        out.seconds(q.earliestBegin)
        out.seconds(r.started)
        out.seconds(r.ended)
        out.field(r.outcome.rawValue)
        if r.outcome == .completed { out.field(r.success ? "true" : "false") } else { out.empty() }
        if let rejection = r.rejection { out.field(rejection.rawValue) } else { out.empty() }
        out.seconds(r.latency)
        out.seconds(r.completionLatency)
        out.seconds(r.cpuTime)
        out.number(r.movedUpBytes)
        out.number(r.movedDownBytes)
        out.number(r.energyJ)
        out.number(r.cpuEnergyJ)
        out.number(r.radioEnergyJ)
        out.number(r.radioTailEnergyJ)
        for reason in HoldReason.allCases { out.number(r.held[reason]) }
        out.list(HoldReason.allCases.filter { r.held[$0] > 0 }.map(\.token))
        out.list(r.policyReasons)
        out.endRecord()
    }
}

/// `timeline.csv`: the phone's state sampled at an interval, in every run.
public enum TimelineRows {
    public static let header = ["policy", "replication", "time_s", "charge_pct", "phone_on", "charging", "network",
                                "screen_on", "foreground_app", "in_call", "low_power_mode", "tasks_running"]

    static func write(_ s: TimelineSample, appNames: [String], to out: inout CSVBytes) {
        func flag(_ b: Bool) -> String { b ? "1" : "0" }
        out.seconds(s.time)
        out.number(100 * s.charge)
        out.field(flag(s.isOn))
        out.field(flag(s.isCharging))
        out.field(s.network.rawValue)
        out.field(flag(s.screenOn))
        if let app = s.foregroundApp { out.field(appNames[app]) } else { out.empty() }
        out.field(flag(s.inCall))
        out.field(flag(s.lowPowerMode))
        out.integer(s.tasksRunning)
        out.endRecord()
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

    static func write(_ e: LoggedEvent, appNames: [String], to out: inout CSVBytes) {
        out.seconds(e.time)
        out.field(e.subject.rawValue)
        if let app = e.app { out.field(appNames[app]) } else { out.empty() }
        if let task = e.task { out.integer(task.rawValue) } else { out.empty() }
        out.field(e.event)
        out.field(e.detail)
        out.endRecord()
    }
}
