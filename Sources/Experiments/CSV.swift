// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

import PhoneWorld
import Scheduling
import SimEngine
import SimRandom

/// Writes RFC 4180 CSV text: fields with a comma, quote or line break are quoted and inner
/// quotes doubled; numbers use '.' and Swift's shortest round-trip form, whatever the
/// locale; a missing value is an empty field. Lines end in LF.
///
/// For single records and values (headers, a unit's values, the manifest's numbers); files are
/// built as bytes by `CSVBytes`, which this wraps, so both write the same text.
public enum CSVWriter {
    /// One record with its line break.
    public static func line(_ fields: [String]) -> String {
        let line = CSVBytes()
        for field in fields { line.field(field) }
        line.endRecord()
        return line.text
    }

    /// The field, quoted if it holds a comma, a quote or a line break (RFC 4180).
    public static func escape(_ field: String) -> String {
        let line = CSVBytes()
        line.field(field)
        return line.text
    }

    /// A number as text: integers without a decimal point when `count`, `nan` as empty.
    public static func number(_ x: Double, count: Bool = false) -> String {
        let line = CSVBytes()
        line.number(x, count: count)
        return line.text
    }
}

/// CSV records built straight into bytes, field by field, with the rules of `CSVWriter`.
///
/// The row files are most of what a run writes (tasks.csv: about 250 bytes for each of 400
/// tasks a phone-day on the reference scenario). Built as an array of strings per row, then
/// joined, rows took more than half of a run that wrote tasks.csv, and such a run took five
/// times as long as one without it. Appended byte by byte to a `[UInt8]`, each byte still
/// paid a uniqueness and a capacity check, and formatting rows was still more than a third of
/// such a run (perf, 20 x 30 days of eager): so a field reserves its room once and its bytes
/// are stored through a pointer, and a double's text is handed over by the standard library
/// without being made a String.
///
/// A class, not a struct: it owns the buffer it writes through, and a record is built in
/// place by whoever holds it.
public final class CSVBytes {
    // Unchecked: a class's stored properties are otherwise checked for overlapping access at
    // run time, on every byte (callgrind: more instructions than the formatting itself). The
    // buffer is written by one caller at a time, and nothing here hands out a reference to a
    // property while it is written.
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    /// Bytes written so far.
    @exclusivity(unchecked) public private(set) var count = 0
    /// Whether the next field is the first of its record (no comma before it).
    @exclusivity(unchecked) private var atRecordStart = true

    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// A copy of the bytes.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
    public var isEmpty: Bool { count == 0 }
    /// The bytes as text (valid UTF-8: every field came from a String or from digits).
    public var text: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    /// The bytes written, in place (valid until the next change).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    public func removeAll() { count = 0; atRecordStart = true }

    /// Room for `n` more bytes.
    @inline(__always) private func ensure(_ n: Int) {
        if count + n > capacity { grow(to: count + n) }
    }

    @inline(never) private func grow(to needed: Int) {
        let larger = max(needed, 2 * capacity)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    /// Stores a byte; the room was ensured.
    @inline(__always) private func put(_ b: UInt8) {
        base[count] = b
        count += 1
    }

    /// Stores bytes; the room was ensured.
    @inline(__always) private func put(_ b: UnsafeBufferPointer<UInt8>) {
        guard let from = b.baseAddress, !b.isEmpty else { return }
        (base + count).update(from: from, count: b.count)
        count += b.count
    }

    @inline(__always) private func separate() {
        if atRecordStart { atRecordStart = false } else { ensure(1); put(UInt8(ascii: ",")) }
    }

    /// Ends the record with its line break.
    public func endRecord() {
        ensure(1)
        put(UInt8(ascii: "\n"))
        atRecordStart = true
    }

    /// Fields already written as CSV (a record's first fields, joined by commas, no line break).
    public func fields(_ written: [UInt8]) {
        separate()
        ensure(written.count)
        written.withUnsafeBufferPointer { put($0) }
    }

    /// A missing value.
    public func empty() { separate() }

    /// A text field, quoted if it holds a comma, a quote or a line break (RFC 4180).
    ///
    /// The bytes are scanned, not the characters: comparing each character (a grapheme
    /// cluster) with four others was half of a run's instructions when it writes tasks.csv and
    /// events.csv, and it missed a comma or a quote carrying a combining mark, and a CR LF pair,
    /// which are single characters. In UTF-8 those bytes never occur inside another character,
    /// so doubling each quote byte doubles each quote.
    public func field(_ text: String) { field { $0.write(text) } }

    @inline(__always) private static func needsQuotes(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    }

    /// Text fields joined by `;` into one field (a list in a cell).
    public func list(_ items: [String]) {
        field { text in
            for k in items.indices {
                if k > 0 { text.write(";") }
                text.write(items[k])
            }
        }
    }

    /// An integer in decimal.
    public func integer<I: BinaryInteger>(_ value: I) {
        separate()
        appendDigits(Int64(value))
    }

    private func appendDigits(_ value: Int64) {
        ensure(20)
        if value < 0 { put(UInt8(ascii: "-")) }
        var m = value.magnitude
        var digits = 1
        var rest = m
        while rest >= 10 { rest /= 10; digits += 1 }
        var p = base + count + digits
        count += digits
        repeat {
            p -= 1
            p.pointee = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: m % 10)
            m /= 10
        } while m != 0
    }

    /// A number: integers without a decimal point when `count`, `nan` as empty, otherwise
    /// Swift's shortest round-trip form (`0.1`, `1234.5`, `1e-06`).
    public func number(_ x: Double, count: Bool = false) {
        separate()
        guard x.isFinite else {
            if !x.isNaN {
                var inf = x > 0 ? "inf" : "-inf";
                inf.withUTF8 {
                    ensure($0.count); put($0)
                }
            }
            return
        }
        // Whole is tested by converting to an integer and back (`rounded()` is a call to libm's
        // round on baseline x86-64); only below 9e15, where the conversion cannot overflow.
        let limit = count ? 9e15 : 1e15
        if abs(x) < limit, Double(Int64(x)) == x {
            if count { appendDigits(Int64(x)); return }
            // Whole numbers (most held times are 0, byte counts are whole) written as Swift
            // writes them, without formatting: digits, then ".0". Below 10^15 the digits are
            // exact and Swift does not switch to an exponent (it does from 2^53).
            if !(x == 0 && x.sign == .minus) {
                appendDigits(Int64(x))
                ensure(2)
                put(UInt8(ascii: "."))
                put(UInt8(ascii: "0"))
                return
            }
        }
        // `description`'s text, written without making it a String.
        var text = Text(out: self)
        x.write(to: &text)
    }

    /// A text field written in pieces by `build`, then quoted if it holds a comma, a quote or
    /// a line break (RFC 4180): the pieces are not joined first, and most fields need no quotes.
    @inline(__always)
    public func field(_ build: (inout Text) -> Void) {
        separate()
        let start = count
        var text = Text(out: self)
        build(&text)
        let length = count - start
        let written = UnsafeBufferPointer(start: base + start, count: length)
        guard Self.needsQuotes(written) else { return }
        // Quoted in place, from the end: each quote doubled, one quote either side.
        let quotes = written.reduce(0) { $0 + ($1 == UInt8(ascii: "\"") ? 1 : 0) }
        ensure(quotes + 2)
        var to = start + length + quotes + 1
        base[to] = UInt8(ascii: "\"")
        for from in stride(from: start + length - 1, through: start, by: -1) {
            let b = base[from]
            to -= 1
            base[to] = b
            if b == UInt8(ascii: "\"") { to -= 1; base[to] = b }
        }
        base[start] = UInt8(ascii: "\"")
        count = start + length + quotes + 2
    }

    /// Text written straight into the buffer, unquoted: what `field(_ build:)` hands its
    /// builder, and where `Double.write(to:)` puts a double's text. The standard library hands
    /// a number's ASCII over through `_writeASCII` (the digits of `description`, without the
    /// String); another standard library that calls `write` instead writes the same text.
    public struct Text: TextOutputStream {
        unowned(unsafe) let out: CSVBytes  // used only while `out` writes the field
        public mutating func write(_ string: String) {
            // In place for a native string (all of bgsim's); a copy made contiguous otherwise.
            let written: Void? = string.utf8.withContiguousStorageIfAvailable { (utf8: UnsafeBufferPointer<UInt8>) in
                out.ensure(utf8.count)
                out.put(utf8)
            }
            if written != nil { return }
            var string = string
            string.withUTF8 {
                out.ensure($0.count); out.put($0)
            }
        }
        public mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
            out.ensure(buffer.count)
            out.put(buffer)
        }
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
    public func seconds(microseconds k: Int64) {
        guard k >= 100, k < 1_000_000_000_000_000 else {
            number(Double(k) / 1e6)
            return
        }
        separate()
        appendDigits(k / 1_000_000)
        ensure(7)
        put(UInt8(ascii: "."))
        var fraction = k % 1_000_000
        var width = 6
        while width > 1, fraction % 10 == 0 { fraction /= 10; width -= 1 }
        var p = base + count + width
        count += width
        for _ in 0..<width {
            p -= 1
            p.pointee = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction % 10)
            fraction /= 10
        }
    }

    public func seconds(_ t: SimInstant) { seconds(microseconds: t.microseconds) }
    public func seconds(_ d: SimDuration) { seconds(microseconds: d.microseconds) }
    /// An optional instant or duration; empty when `nil`.
    public func seconds(_ t: SimInstant?) { if let t { seconds(t) } else { empty() } }
    public func seconds(_ d: SimDuration?) { if let d { seconds(d) } else { empty() } }
}

/// `tasks.csv`: one row per task of every run.
public enum TaskRows {
    public static let header: [String] =
        [
            "policy", "replication", "task", "app", "identifier", "kind", "submitted_s", "earliest_begin_s", "started_s",
            "ended_s", "outcome", "success", "rejection", "latency_s", "completion_latency_s", "cpu_time_s",
            "up_bytes", "down_bytes", "energy_j", "cpu_energy_j", "radio_energy_j", "radio_tail_energy_j",
        ] + HoldReason.allCases.map { "held_\($0.token)_s" } + ["delayed_by", "policy_reasons"]

    /// The fields after `policy` and `replication`, then the line break.
    static func write(_ r: TaskRecord, appNames: [String], to out: CSVBytes) {
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
    public static let header = [
        "policy", "replication", "time_s", "charge_pct", "phone_on", "charging", "network",
        "screen_on", "foreground_app", "in_call", "low_power_mode", "tasks_running",
    ]

    static func write(_ s: TimelineSample, appNames: [String], to out: CSVBytes) {
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

    /// A sweep's design as CSV (`bgsim validate SWEEP --points`): `scenario`, `point` and one
    /// column per axis, one row per point, with the names and values the result files give
    /// them, so the listing joins runs.csv on `point` and shows the points a sweep will run
    /// (a Latin hypercube's or Sobol sequence's coverage, say) before anything runs.
    public static func designCSV(_ plan: StudyPlan) -> String {
        let out = resultFile(plan, header: [])
        for p in plan.points.indices {
            out.fields(rowHead(plan, p))
            out.endRecord()
        }
        return out.text
    }

    /// A result file's header record, and the fields that open each of its rows at `point`
    /// (the scenario's name and the point's), written once per point. The result files are
    /// written record by record into one buffer: built as arrays of strings per row, the
    /// summary of a 2,000-point sweep took a fifteenth of the sweep (perf).
    static func resultFile(_ plan: StudyPlan, header: [String]) -> CSVBytes {
        let out = CSVBytes(capacity: 1 << 16)
        for name in ["scenario"] + pointHeader(plan) + header { out.field(name) }
        out.endRecord()
        return out
    }
    static func rowHead(_ plan: StudyPlan, _ point: Int) -> [UInt8] {
        let head = CSVBytes()
        for f in [plan.name] + pointFields(plan, point) { head.field(f) }
        return head.bytes
    }

    /// `runs.csv`: one row per (point x) policy x replication.
    public static func runsCSV<R: RunValuesProtocol>(_ scenario: Scenario, _ runs: [R]) -> String {
        runsCSV(StudyPlan(scenario: scenario), [runs])
    }

    public static func runsCSV<R: RunValuesProtocol>(_ plan: StudyPlan, _ runs: [[R]]) -> String { runsRows(plan, runs).text }

    static func runsRows<R: RunValuesProtocol>(_ plan: StudyPlan, _ runs: [[R]]) -> ResultRows {
        ResultRows(plan, header: ["policy", "replication", "seed"] + RunMetrics.columns.map(\.name)) { point, csv in
            let head = rowHead(plan, point)
            for run in runs[point] {
                csv.fields(head)
                csv.field(run.policy.name)
                csv.integer(run.replication)
                csv.field(String(plan.points[point].scenario.seed))
                for (metric, value) in zip(RunMetrics.columns, run.values) { csv.number(value, count: metric.isCount) }
                csv.endRecord()
            }
        }
    }

    /// `summary.csv`: one row per (point x) policy x metric: n, mean, standard deviation, 95% t-interval.
    public static func summaryCSV(_ scenario: Scenario, _ summaries: [PolicySummary]) -> String {
        summaryCSV(StudyPlan(scenario: scenario), [summaries])
    }

    public static func summaryCSV(_ plan: StudyPlan, _ summaries: [[PolicySummary]]) -> String {
        summaryRows(plan) { summaries[$0] }.text
    }

    /// The file from each point's summaries, which `summaries` makes when the point is written.
    static func summaryRows(_ plan: StudyPlan, _ summaries: @escaping @Sendable (_ point: Int) -> [PolicySummary]) -> ResultRows {
        ResultRows(plan, header: ["policy", "metric", "n", "mean", "sd", "ci95_low", "ci95_high", "ci95_half_width"]) { point, csv in
            let head = rowHead(plan, point)
            for s in summaries(point) {
                for (metric, ci) in zip(RunMetrics.columns, s.intervals) {
                    csv.fields(head)
                    csv.field(s.policy.name)
                    csv.field(metric.name)
                    csv.integer(ci.count)
                    csv.number(ci.mean)
                    csv.number(ci.standardDeviation)
                    csv.number(ci.lower)
                    csv.number(ci.upper)
                    csv.number(ci.halfWidth)
                    csv.endRecord()
                }
            }
        }
    }

    /// `comparisons.csv`: one row per (point x) policy (other than the baseline) x metric:
    /// the paired difference policy - baseline over replications.
    public static func comparisonsCSV(_ scenario: Scenario, _ comparisons: [PairedComparison]) -> String {
        comparisonsCSV(StudyPlan(scenario: scenario), [comparisons])
    }

    public static func comparisonsCSV(_ plan: StudyPlan, _ comparisons: [[PairedComparison]]) -> String {
        comparisonRows(plan) { comparisons[$0] }.text
    }

    /// The file from each point's comparisons, which `comparisons` makes when the point is written.
    static func comparisonRows(_ plan: StudyPlan, _ comparisons: @escaping @Sendable (_ point: Int) -> [PairedComparison]) -> ResultRows {
        ResultRows(
            plan,
            header: [
                "policy", "baseline", "metric", "n", "baseline_mean", "difference_mean",
                "difference_sd", "ci95_low", "ci95_high", "relative_difference_pct", "p_value",
            ]
        ) { point, csv in
            let head = rowHead(plan, point)
            for c in comparisons(point) {
                let d = c.difference
                csv.fields(head)
                csv.field(c.policy.name)
                csv.field(c.baseline.name)
                csv.field(RunMetrics.columns[c.metric].name)
                csv.integer(d.count)
                for x in [c.baselineMean, d.mean, d.standardDeviation, d.lower, d.upper, 100 * c.relativeDifference, c.pValue] {
                    csv.number(x)
                }
                csv.endRecord()
            }
        }
    }
}

/// A result file of a study (runs.csv, summary.csv, comparisons.csv) as its header and a
/// function that writes one point's rows. Written to disk a point at a time
/// (`OutputContent.pieces`), a sweep's file is never whole in memory: summary.csv holds
/// about 7.6 kB a point and policy (152 MB for `Benchmarks/sweeps/points-20k.yaml`), and
/// built whole it was copied twice more on its way to disk: that sweep peaked at 700 MB,
/// now 96 MB. `text` is the whole file.
struct ResultRows: Sendable {
    let header: [String]
    let points: Int
    let write: @Sendable (_ point: Int, _ out: CSVBytes) -> Void

    init(_ plan: StudyPlan, header: [String], write: @escaping @Sendable (_ point: Int, _ out: CSVBytes) -> Void) {
        self.header = ["scenario"] + Experiment.pointHeader(plan) + header
        points = plan.points.count
        self.write = write
    }

    var text: String {
        let out = CSVBytes(capacity: 1 << 16)
        for name in header { out.field(name) }
        out.endRecord()
        for p in 0..<points { write(p, out) }
        return out.text
    }

    var content: OutputContent { .pieces(header: CSVWriter.line(header), count: points, write: write) }
}

/// `events.csv` (opt-in): every event of every run.
public enum EventRows {
    public static let header = ["policy", "replication", "time_s", "subject", "app", "task", "event", "detail"]

    static func write(_ e: LoggedEvent, appNames: [String], to out: CSVBytes) {
        out.seconds(e.time)
        out.field(e.subject.rawValue)
        if let app = e.app { out.field(appNames[app]) } else { out.empty() }
        if let task = e.task { out.integer(task.rawValue) } else { out.empty() }
        out.field { e.write(event: &$0) }
        out.field { e.write(detail: &$0) }
        out.endRecord()
    }
}
