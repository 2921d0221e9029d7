import Foundation
import PhoneWorld
import SimEngine

/// Reads the trace files a scenario can replay instead of sampling: charging sessions,
/// network changes, and the person's launches, calls and purges. Formats: `models/traces/README.md`.
///
/// A trace is a small CSV file: a header row naming the columns, then one row per event;
/// `#` starts a comment line; blank lines are skipped; fields are not quoted. Times are
/// seconds since the start of the run (`86400`, `3600.25`, at most six decimals) or a
/// duration (`1d7h30m`). Any problem is an error naming the file, the line and the column.
struct TraceReader {
    let path: String
    var rows: [(line: Int, fields: [String: String])] = []

    /// Reads `path` (relative to `relativeTo`'s folder) with exactly these columns, in any order.
    init(file: String, relativeTo base: String, columns: [String]) throws(ScenarioError) {
        let path =
            file.hasPrefix("/")
            ? file
            : ((base as NSString).deletingLastPathComponent as NSString).appendingPathComponent(file)
        self.path = path
        let text = try InputFile.read(path, .trace)
        var header: [String]?
        // Any line ending: "\r\n" is one Character, which a split on "\n" does not cut.
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard let names = header else {
                let missing = columns.filter { !fields.contains($0) }
                let extra = fields.filter { !columns.contains($0) }
                guard missing.isEmpty, extra.isEmpty, Set(fields).count == fields.count else {
                    throw ScenarioError(
                        .invalid, file: path, line: i + 1,
                        message:
                            "expected the header row '\(columns.joined(separator: ","))' (columns in any order), got '\(line)'")
                }
                header = fields
                continue
            }
            guard fields.count == names.count else {
                throw ScenarioError(
                    .invalid, file: path, line: i + 1,
                    message: "expected \(names.count) fields (\(names.joined(separator: ","))), got \(fields.count)")
            }
            rows.append((i + 1, Dictionary(uniqueKeysWithValues: zip(names, fields))))
        }
        guard header != nil else {
            throw ScenarioError(.invalid, file: path, message: "empty trace: expected the header row '\(columns.joined(separator: ","))'")
        }
    }

    func error(_ line: Int, _ column: String, _ message: String) -> ScenarioError {
        ScenarioError(.invalid, file: path, line: line, message: "column '\(column)': \(message)")
    }

    /// A time since the start: exact seconds with up to six decimals, or a duration.
    func time(_ row: (line: Int, fields: [String: String]), _ column: String) throws(ScenarioError) -> SimInstant {
        let t = row.fields[column]!
        if let us = Self.exactMicroseconds(t) { return .after(.microseconds(us)) }
        if t != "0", let d = ConfigReader.parseDuration(t) { return .after(d) }
        throw error(row.line, column, "expected a time such as 3600, 3600.5 or 1d7h30m, got '\(t)'")
    }

    func duration(_ row: (line: Int, fields: [String: String]), _ column: String) throws(ScenarioError) -> SimDuration {
        let d = try time(row, column) - .start
        guard d > .zero else { throw error(row.line, column, "expected a duration > 0, got '\(row.fields[column]!)'") }
        return d
    }

    func number(
        _ row: (line: Int, fields: [String: String]), _ column: String, _ what: String,
        where valid: (Double) -> Bool
    ) throws(ScenarioError) -> Double {
        let t = row.fields[column]!
        guard let x = Double(t), x.isFinite, valid(x) else { throw error(row.line, column, "expected \(what), got '\(t)'") }
        return x
    }

    func choice<T: RawRepresentable>(
        _ row: (line: Int, fields: [String: String]), _ column: String,
        _ type: T.Type, _ known: [String]
    ) throws(ScenarioError) -> T where T.RawValue == String {
        let t = row.fields[column]!
        guard let v = T(rawValue: t) else {
            throw error(row.line, column, "expected one of \(known.joined(separator: ", ")), got '\(t)'")
        }
        return v
    }

    /// Whole and fractional seconds, parsed as decimal digits so that replay is exact.
    static func exactMicroseconds(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber),
            let whole = Int64(parts[0]), whole < 9_000_000_000_000
        else { return nil }
        var us = whole * 1_000_000
        if parts.count == 2 {
            let frac = parts[1]
            guard (1...6).contains(frac.count), frac.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            us += Int64(frac.padding(toLength: 6, withPad: "0", startingAt: 0))!
        }
        return us
    }

    // MARK: - The three kinds

    /// `plug_in,unplug`: one charging session per row, in order, not overlapping.
    static func charging(file: String, relativeTo base: String) throws(ScenarioError) -> [ChargingSession] {
        let t = try TraceReader(file: file, relativeTo: base, columns: ["plug_in", "unplug"])
        var out: [ChargingSession] = []
        for row in t.rows {
            let s = ChargingSession(start: try t.time(row, "plug_in"), end: try t.time(row, "unplug"))
            guard s.end > s.start else { throw t.error(row.line, "unplug", "expected a time after plug_in") }
            if let last = out.last, s.start < last.end {
                throw t.error(row.line, "plug_in", "sessions must be in time order and not overlap (the previous one ends at \(last.end))")
            }
            out.append(s)
        }
        return out
    }

    /// `time,network,down_mbps,up_mbps`: from `time` on, the connection is this; the first
    /// row is at time 0 and times increase.
    static func network(file: String, relativeTo base: String) throws(ScenarioError) -> [NetworkChange] {
        let t = try TraceReader(file: file, relativeTo: base, columns: ["time", "network", "down_mbps", "up_mbps"])
        var out: [NetworkChange] = []
        for row in t.rows {
            let time = try t.time(row, "time")
            if out.isEmpty, time != .start { throw t.error(row.line, "time", "the first row must be at time 0") }
            if let last = out.last, time <= last.time { throw t.error(row.line, "time", "times must increase (previous row: \(last.time))") }
            let kind = try t.choice(row, "network", NetworkKind.self, NetworkKind.allCases.map(\.rawValue))
            var state = NetworkState.disconnected
            if kind != .none {
                state = NetworkState(
                    kind: kind,
                    downMbps: try t.number(row, "down_mbps", "a throughput in Mbit/s from 0.001 to 1000000") { (0.001...1e6).contains($0) },
                    upMbps: try t.number(row, "up_mbps", "a throughput in Mbit/s from 0.001 to 1000000") { (0.001...1e6).contains($0) })
            }
            out.append(NetworkChange(time: time, state: state))
        }
        guard !out.isEmpty else { throw ScenarioError(.invalid, file: t.path, message: "the trace has no rows; expected at least the state at time 0") }
        return out
    }

    /// `time,power_w`: from `time` on, the bench load draws `power_w`; the first row is at
    /// time 0 and times increase; the last row's power holds to the end.
    static func load(file: String, relativeTo base: String) throws(ScenarioError) -> LoadProfile {
        let t = try TraceReader(file: file, relativeTo: base, columns: ["time", "power_w"])
        var times: [SimInstant] = [], watts: [Double] = []
        for row in t.rows {
            let time = try t.time(row, "time")
            if times.isEmpty, time != .start { throw t.error(row.line, "time", "the first row must be at time 0") }
            if let last = times.last, time <= last { throw t.error(row.line, "time", "times must increase (previous row: \(last))") }
            times.append(time)
            watts.append(try t.number(row, "power_w", "a power in watts from 0 to 1000") { (0...1000).contains($0) })
        }
        guard !times.isEmpty else { throw ScenarioError(.invalid, file: t.path, message: "the trace has no rows; expected at least the load at time 0") }
        let steps = times.indices.map { i in
            LoadProfile.Step(powerW: watts[i], duration: i + 1 < times.count ? times[i + 1] - times[i] : .zero)
        }
        return LoadProfile(steps: steps, repeats: false)
    }

    /// `time,event,app,duration,exit`, one event per row in time order:
    /// `launch` (app: a scenario app or `other`; duration; exit: `home` or `swipe`),
    /// `call` (duration), `purge` (app, or empty for the first suspended app).
    /// Launches do not overlap; a launch that starts as the previous one ends continues its
    /// session.
    static func people(file: String, relativeTo base: String, apps: [String]) throws(ScenarioError) -> PeopleTimeline {
        let t = try TraceReader(file: file, relativeTo: base, columns: ["time", "event", "app", "duration", "exit"])
        var out = PeopleTimeline()
        var previous = SimInstant.start
        // A launch of an app the scenario does not model (a converted log names hundreds) is a
        // launch of another app; a purge must name a scenario app, whose memory it frees.
        func app(_ row: (line: Int, fields: [String: String]), allowOther: Bool) throws(ScenarioError) -> Int? {
            let name = row.fields["app"]!
            if let i = apps.firstIndex(of: name) { return i }
            if allowOther, !name.isEmpty { return nil }
            throw t.error(
                row.line, "app", "expected one of the scenario's apps (\(apps.joined(separator: ", "))), got '\(name)'")
        }
        for row in t.rows {
            let time = try t.time(row, "time")
            guard time >= previous else { throw t.error(row.line, "time", "rows must be in time order (previous row: \(previous))") }
            previous = time
            switch row.fields["event"]! {
            case "launch":
                let end = time + (try t.duration(row, "duration"))
                let swiped: Bool
                switch row.fields["exit"]! {
                case "home": swiped = false
                case "swipe": swiped = true
                default: throw t.error(row.line, "exit", "expected home or swipe, got '\(row.fields["exit"]!)'")
                }
                if let last = out.launches.last, time < last.end {
                    throw t.error(row.line, "time", "this launch starts before the previous one ends (\(last.end))")
                }
                if out.launches.last?.end != time { out.sessionStarts.append(out.launches.count) }
                out.launches.append(AppLaunch(app: try app(row, allowOther: true), start: time, end: end, swipedAway: swiped))
            case "call":
                let end = time + (try t.duration(row, "duration"))
                if let last = out.calls.last, time < last.end {
                    throw t.error(row.line, "time", "this call starts before the previous one ends (\(last.end))")
                }
                out.calls.append(Call(start: time, end: end))
            case "purge":
                out.purges.append(Purge(time: time, app: row.fields["app"]!.isEmpty ? nil : try app(row, allowOther: false)))
            case let other:
                throw t.error(row.line, "event", "expected launch, call or purge, got '\(other)'")
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
    public func peopleTrace(appNames: [String]) -> String {
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
