import Foundation
import PhoneWorld
import SimEngine
import Synchronization

/// Reads the trace files a scenario can replay instead of sampling: charging sessions,
/// network changes, and the person's launches, calls and purges. Formats: `models/traces/README.md`.
///
/// A trace is a CSV file: a header row naming the columns, then one row per event; `#` starts
/// a comment line; blank lines are skipped; fields are not quoted. Times are seconds since the
/// start of the run (`86400`, `3600.25`, at most six decimals) or a duration (`1d7h30m`). Any
/// problem is an error naming the file, the line and the column.
///
/// Traces are logs, up to 256 MB: rows are read straight from the file's bytes, one at a
/// time, and each kind keeps only its own compact values, so memory stays within a small
/// multiple of the file and reading runs at tens of megabytes a second (docs/usage.md).
struct TraceReader {
    let path: String
    let columns: [String]

    /// One row while it is read: its line and its fields' bytes, in `columns` order. Valid
    /// only inside the callback that receives it.
    struct Row {
        let line: Int
        let bytes: UnsafeBufferPointer<UInt8>
        var fields: [Range<Int>]
        /// The file's line breaks plus one: no more rows can follow, so a kind reserves room
        /// for its values once, at its first row.
        let rowsAtMost: Int

        func text(_ column: Int) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[fields[column]]), as: UTF8.self) }
        func isEmpty(_ column: Int) -> Bool { fields[column].isEmpty }
        func equals(_ column: Int, _ word: StaticString) -> Bool {
            let r = fields[column]
            guard r.count == word.utf8CodeUnitCount else { return false }
            return word.withUTF8Buffer { w in zip(bytes[r], w).allSatisfy { $0 == $1 } }
        }
    }

    /// The trace `file`, relative to `relativeTo`'s folder, with exactly these columns in any order.
    init(file: String, relativeTo base: String, columns: [String]) {
        path =
            file.hasPrefix("/")
            ? file
            : ((base as NSString).deletingLastPathComponent as NSString).appendingPathComponent(file)
        self.columns = columns
    }

    /// Reads the file, calling `body` for each row in order.
    func rows(_ body: (Row) throws(ScenarioError) -> Void) throws(ScenarioError) {
        let data = try InputFile.readBytes(path, .trace)
        var failure: ScenarioError?
        data.withUnsafeBytes { raw in
            var lines = 1
            if var at = raw.baseAddress {
                let end = at + raw.count
                while let hit = memchr(at, 0x0A, end - at) {
                    lines += 1
                    at = UnsafeRawPointer(hit) + 1
                }
            }
            do throws(ScenarioError) {
                try Self.scan(raw.bindMemory(to: UInt8.self), path: path, columns: columns, rowsAtMost: lines, row: body)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Splits `bytes` into lines (any line ending: `\n`, `\r\n`, `\r`, and the rarer breaks
    /// Swift counts as new lines), trims each line and field of spaces and tabs, skips blank and
    /// `#` lines, checks the header, and hands each row to `body`.
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, path: String, columns: [String], rowsAtMost: Int,
        row body: (Row) throws(ScenarioError) -> Void
    ) throws(ScenarioError) {
        var order: [Int]?  // for each field of a row, its column in `columns`
        var fields = [Range<Int>](repeating: 0..<0, count: columns.count)
        var raw: [Range<Int>] = []
        var line = 0
        var i = 0
        let n = bytes.count
        while i < n {
            line += 1
            var end = i
            var next = n
            // The line's end, and where the next begins.
            while end < n {
                let b = bytes[end]
                if b == 0x0A || b == 0x0B || b == 0x0C { next = end + 1; break }
                if b == 0x0D { next = end + 1 < n && bytes[end + 1] == 0x0A ? end + 2 : end + 1; break }
                if b == 0xC2, end + 1 < n, bytes[end + 1] == 0x85 { next = end + 2; break }
                if b == 0xE2, end + 2 < n, bytes[end + 1] == 0x80, bytes[end + 2] == 0xA8 || bytes[end + 2] == 0xA9 { next = end + 3; break }
                end += 1
            }
            let (a, z) = trimmed(bytes, i, end)
            i = next
            if a == z || bytes[a] == UInt8(ascii: "#") { continue }
            // Fields go straight to their column (a row's array is not made again for each).
            var count = 0
            var f = a
            while true {
                var g = f
                while g < z && bytes[g] != UInt8(ascii: ",") { g += 1 }
                let (fa, fz) = trimmed(bytes, f, g)
                if let order {
                    if count < order.count { fields[order[count]] = fa..<fz }
                } else if raw.count <= columns.count {
                    // A header has exactly `columns` names: one more already says it is not
                    // one, and a line of millions of commas is not kept field by field.
                    raw.append(fa..<fz)
                }
                count += 1
                if g == z { break }
                f = g + 1
            }
            guard let order else {
                let names = raw.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
                let positions = names.map { columns.firstIndex(of: $0) }
                guard positions.allSatisfy({ $0 != nil }), Set(names).count == names.count, names.count == columns.count else {
                    // A header is a few short names; anything else (a file named by mistake)
                    // is not echoed.
                    let looksLikeHeader = names.allSatisfy { name in
                        (1...32).contains(name.utf8.count) && name.utf8.allSatisfy { ConfigReader.isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "_") }
                    }
                    throw ScenarioError(
                        .invalid, file: path, line: line,
                        message: "expected the header row '\(columns.joined(separator: ","))' (columns in any order), "
                            + (looksLikeHeader ? "got '\(names.joined(separator: ","))'" : "got a line that is not a row of column names"))
                }
                order = positions.map { $0! }
                continue
            }
            guard count == columns.count else {
                throw ScenarioError(
                    .invalid, file: path, line: line,
                    message: "expected \(columns.count) fields (\(order.map { columns[$0] }.joined(separator: ","))), got \(count)")
            }
            try body(Row(line: line, bytes: bytes, fields: fields, rowsAtMost: rowsAtMost))
        }
        guard order != nil else {
            throw ScenarioError(.invalid, file: path, message: "empty trace: expected the header row '\(columns.joined(separator: ","))'")
        }
    }

    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> (Int, Int) {
        var a = from, z = to
        while a < z && (bytes[a] == 0x20 || bytes[a] == 0x09) { a += 1 }
        while z > a && (bytes[z - 1] == 0x20 || bytes[z - 1] == 0x09) { z -= 1 }
        return (a, z)
    }

    func error(_ line: Int, _ column: Int, _ message: String) -> ScenarioError {
        ScenarioError(.invalid, file: path, line: line, message: "column '\(columns[column])': \(message)")
    }

    /// A time since the start: exact seconds with up to six decimals, or a duration.
    func time(_ row: Row, _ column: Int) throws(ScenarioError) -> SimInstant {
        if let us = Self.exactMicroseconds(UnsafeBufferPointer(rebasing: row.bytes[row.fields[column]])) { return .after(.microseconds(us)) }
        let t = row.text(column)
        if t != "0", let d = ConfigReader.parseDuration(t) { return .after(d) }
        throw error(row.line, column, "expected a time such as 3600, 3600.5 or 1d7h30m, got '\(t)'")
    }

    func duration(_ row: Row, _ column: Int) throws(ScenarioError) -> SimDuration {
        let d = try time(row, column) - .start
        guard d > .zero else { throw error(row.line, column, "expected a duration > 0, got '\(row.text(column))'") }
        return d
    }

    func number(_ row: Row, _ column: Int, _ what: String, where valid: (Double) -> Bool) throws(ScenarioError) -> Double {
        guard let x = Self.double(UnsafeBufferPointer(rebasing: row.bytes[row.fields[column]])), x.isFinite, valid(x) else {
            throw error(row.line, column, "expected \(what), got '\(row.text(column))'")
        }
        return x
    }

    /// A field's bytes as a number, as `Double(String)` reads it (C's `strtod`, which takes
    /// decimals, exponents, hexadecimal, `inf` and `nan`), without making a String.
    static func double(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        guard !b.isEmpty, b.count < 64 else { return b.isEmpty ? nil : Double(String(decoding: b, as: UTF8.self)) }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> Double? in
            for (k, x) in b.enumerated() { buffer[k] = CChar(bitPattern: x) }
            buffer[b.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            // The "C" locale, in which a program starts: bgsim never calls setlocale, so a
            // decimal point is always '.'.
            let x = strtod(buffer.baseAddress!, &end)
            // Whole field, and not led by a space strtod would skip (fields are trimmed).
            guard let end, end - buffer.baseAddress! == b.count, b[0] != 0x20, b[0] != 0x09 else { return nil }
            return x
        }
    }

    func choice<T: RawRepresentable & CaseIterable>(_ row: Row, _ column: Int, _ type: T.Type) throws(ScenarioError) -> T
    where T.RawValue == String {
        let field = row.bytes[row.fields[column]]
        for v in T.allCases where v.rawValue.utf8.elementsEqual(field) { return v }
        throw error(row.line, column, "expected one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), got '\(row.text(column))'")
    }

    /// Whole and fractional seconds, parsed as decimal digits so that replay is exact.
    static func exactMicroseconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { exactMicroseconds($0) }
    }

    /// `exactMicroseconds` on a field's bytes.
    static func exactMicroseconds(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0, whole: Int64 = 0
        let digit = { (x: UInt8) in x >= UInt8(ascii: "0") && x <= UInt8(ascii: "9") }
        while i < b.count, digit(b[i]) {
            whole = whole &* 10 &+ Int64(b[i] - UInt8(ascii: "0"))
            i += 1
            guard whole < 9_000_000_000_000 else { return nil }
        }
        guard i > 0 else { return nil }
        var us = whole * 1_000_000
        if i == b.count { return us }
        guard b[i] == UInt8(ascii: "."), (2...7).contains(b.count - i) else { return nil }
        var frac: Int64 = 0, scale: Int64 = 100_000
        for x in b[(i + 1)...] {
            guard digit(x) else { return nil }
            frac += Int64(x - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        us += frac
        return us
    }

    // MARK: - The kinds

    /// The last few traces read, by file identity (device, inode, size and modification time)
    /// and kind: a `--set` reads its scenario twice, and every point of a sweep reads the same
    /// trace; read once, they share one copy of the rows instead of one each.
    private static let recent = Mutex<[(key: String, value: any Sendable)]>([])
    private static let recentCount = 4

    /// `read(t)`, or the value read last time from the same, unchanged file.
    static func cached<T: Sendable>(
        _ t: TraceReader, _ extra: String = "", _ read: (TraceReader) throws(ScenarioError) -> T
    ) throws(ScenarioError) -> T {
        var info = stat()
        guard stat(t.path, &info) == 0 else { return try read(t) }
        let key =
            "\(T.self) \(extra) \(info.st_dev) \(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(t.path)"
        if let hit = recent.withLock({ $0.first { $0.key == key }?.value as? T }) { return hit }
        let value = try read(t)
        recent.withLock { list in
            list.removeAll { $0.key == key }
            list.insert((key, value), at: 0)
            if list.count > recentCount { list.removeLast() }
        }
        return value
    }

    /// `plug_in,unplug`: one charging session per row, in order, not overlapping.
    static func charging(file: String, relativeTo base: String) throws(ScenarioError) -> [ChargingSession] {
        try cached(TraceReader(file: file, relativeTo: base, columns: ["plug_in", "unplug"])) { t throws(ScenarioError) in try charging(t) }
    }

    static func charging(_ t: TraceReader) throws(ScenarioError) -> [ChargingSession] {
        var out: [ChargingSession] = []
        try t.rows { row throws(ScenarioError) in
            if out.isEmpty { out.reserveCapacity(row.rowsAtMost) }
            let s = ChargingSession(start: try t.time(row, 0), end: try t.time(row, 1))
            guard s.end > s.start else { throw t.error(row.line, 1, "expected a time after plug_in") }
            if let last = out.last, s.start < last.end {
                throw t.error(row.line, 0, "sessions must be in time order and not overlap (the previous one ends at \(last.end))")
            }
            out.append(s)
        }
        return out
    }

    /// `time,network,down_mbps,up_mbps`: from `time` on, the connection is this; the first
    /// row is at time 0 and times increase.
    static func network(file: String, relativeTo base: String) throws(ScenarioError) -> [NetworkChange] {
        try cached(TraceReader(file: file, relativeTo: base, columns: ["time", "network", "down_mbps", "up_mbps"])) { t throws(ScenarioError) in
            try network(t)
        }
    }

    static func network(_ t: TraceReader) throws(ScenarioError) -> [NetworkChange] {
        var out: [NetworkChange] = []
        try t.rows { row throws(ScenarioError) in
            if out.isEmpty { out.reserveCapacity(row.rowsAtMost) }
            let time = try t.time(row, 0)
            if out.isEmpty, time != .start { throw t.error(row.line, 0, "the first row must be at time 0") }
            if let last = out.last, time <= last.time { throw t.error(row.line, 0, "times must increase (previous row: \(last.time))") }
            let kind = try t.choice(row, 1, NetworkKind.self)
            var state = NetworkState.disconnected
            if kind != .none {
                state = NetworkState(
                    kind: kind,
                    downMbps: try t.number(row, 2, "a throughput in Mbit/s from 0.001 to 1000000") { (0.001...1e6).contains($0) },
                    upMbps: try t.number(row, 3, "a throughput in Mbit/s from 0.001 to 1000000") { (0.001...1e6).contains($0) })
            }
            out.append(NetworkChange(time: time, state: state))
        }
        guard !out.isEmpty else { throw ScenarioError(.invalid, file: t.path, message: "the trace has no rows; expected at least the state at time 0") }
        return out
    }

    /// `time,power_w`: from `time` on, the bench load draws `power_w`; the first row is at
    /// time 0 and times increase; the last row's power holds to the end.
    static func load(file: String, relativeTo base: String) throws(ScenarioError) -> LoadProfile {
        try cached(TraceReader(file: file, relativeTo: base, columns: ["time", "power_w"])) { t throws(ScenarioError) in try load(t) }
    }

    static func load(_ t: TraceReader) throws(ScenarioError) -> LoadProfile {
        var steps: [LoadProfile.Step] = []
        var last: SimInstant?
        try t.rows { row throws(ScenarioError) in
            if steps.isEmpty { steps.reserveCapacity(row.rowsAtMost) }
            let time = try t.time(row, 0)
            if last == nil, time != .start { throw t.error(row.line, 0, "the first row must be at time 0") }
            if let last, time <= last { throw t.error(row.line, 0, "times must increase (previous row: \(last))") }
            // Each step lasts until the next row's time; the last holds to the end.
            if let last { steps[steps.count - 1].duration = time - last }
            steps.append(LoadProfile.Step(powerW: try t.number(row, 1, "a power in watts from 0 to 1000") { (0...1000).contains($0) }, duration: .zero))
            last = time
        }
        guard !steps.isEmpty else { throw ScenarioError(.invalid, file: t.path, message: "the trace has no rows; expected at least the load at time 0") }
        return LoadProfile(steps: steps, repeats: false)
    }

    /// `time,event,app,duration,exit`, one event per row in time order:
    /// `launch` (app: a scenario app or `other`; duration; exit: `home` or `swipe`),
    /// `call` (duration), `purge` (app, or empty for the first suspended app).
    /// Launches do not overlap; a launch that starts as the previous one ends continues its
    /// session.
    static func people(file: String, relativeTo base: String, apps: [String]) throws(ScenarioError) -> PeopleTimeline {
        try cached(TraceReader(file: file, relativeTo: base, columns: ["time", "event", "app", "duration", "exit"]), apps.joined(separator: ",")) {
            t throws(ScenarioError) in try people(t, apps: apps)
        }
    }

    static func people(_ t: TraceReader, apps: [String]) throws(ScenarioError) -> PeopleTimeline {
        var out = PeopleTimeline()
        var previous = SimInstant.start
        // A launch of an app the scenario does not model (a converted log names hundreds) is a
        // launch of another app; a purge must name a scenario app, whose memory it frees.
        func app(_ row: Row, allowOther: Bool) throws(ScenarioError) -> Int? {
            let name = row.text(2)
            if let i = apps.firstIndex(of: name) { return i }
            if allowOther, !name.isEmpty { return nil }
            throw t.error(row.line, 2, "expected one of the scenario's apps (\(apps.joined(separator: ", "))), got '\(name)'")
        }
        try t.rows { row throws(ScenarioError) in
            let time = try t.time(row, 0)
            guard time >= previous else { throw t.error(row.line, 0, "rows must be in time order (previous row: \(previous))") }
            previous = time
            if row.equals(1, "launch") {
                let end = time + (try t.duration(row, 3))
                let swiped: Bool
                if row.equals(4, "home") {
                    swiped = false
                } else if row.equals(4, "swipe") {
                    swiped = true
                } else {
                    throw t.error(row.line, 4, "expected home or swipe, got '\(row.text(4))'")
                }
                if let last = out.launches.last, time < last.end {
                    throw t.error(row.line, 0, "this launch starts before the previous one ends (\(last.end))")
                }
                if out.launches.last?.end != time { out.sessionStarts.append(out.launches.count) }
                out.launches.append(AppLaunch(app: try app(row, allowOther: true), start: time, end: end, swipedAway: swiped))
            } else if row.equals(1, "call") {
                let end = time + (try t.duration(row, 3))
                if let last = out.calls.last, time < last.end {
                    throw t.error(row.line, 0, "this call starts before the previous one ends (\(last.end))")
                }
                out.calls.append(Call(start: time, end: end))
            } else if row.equals(1, "purge") {
                out.purges.append(Purge(time: time, app: row.isEmpty(2) ? nil : try app(row, allowOther: false)))
            } else {
                throw t.error(row.line, 1, "expected launch, call or purge, got '\(row.text(1))'")
            }
        }
        return out
    }
}

extension PeopleTimeline {
    /// The timeline as a people trace (`time,event,app,duration,exit`), which
    /// `people: {trace: ...}` replays: launches and calls exactly, to the microsecond; a
    /// purge as of the app it names, or of the first suspended app (a drawn purge's choice
    /// among suspended apps is not written). `appNames` names the scenario's apps; a launch of
    /// another app is written as `other`.
    package func peopleTrace(appNames: [String]) -> String {
        func time(_ t: SimInstant) -> String { seconds(t.microseconds) }
        func seconds(_ us: Int64) -> String {
            let whole = us / 1_000_000, frac = us % 1_000_000
            guard frac != 0 else { return String(whole) }
            var f = String(frac)
            f = String(repeating: "0", count: 6 - f.count) + f
            while f.hasSuffix("0") { f.removeLast() }
            return "\(whole).\(f)"
        }
        var rows: [(SimInstant, Int, String)] = []
        for (i, l) in launches.enumerated() {
            let name = l.app.map { appNames[$0] } ?? "other"
            rows.append((l.start, i, "\(time(l.start)),launch,\(name),\(seconds((l.end - l.start).microseconds)),\(l.swipedAway ? "swipe" : "home")"))
        }
        for c in calls { rows.append((c.start, launches.count, "\(time(c.start)),call,,\(seconds((c.end - c.start).microseconds)),")) }
        for p in purges { rows.append((p.time, launches.count + 1, "\(time(p.time)),purge,\(p.app.map { appNames[$0] } ?? ""),,")) }
        // Stable by time, launches in their order (a launch that starts as the previous ends
        // continues its session), then calls, then purges.
        let ordered = rows.enumerated().sorted { ($0.element.0, $0.element.1, $0.offset) < ($1.element.0, $1.element.1, $1.offset) }
        return "time,event,app,duration,exit\n" + ordered.map { $0.element.2 + "\n" }.joined()
    }
}
