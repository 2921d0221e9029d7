import Experiments
import Foundation
import ResultFiles
import Scheduling
import SimEngine

extension ForecastPage {
    /// The typical person's week: per identifier, each stretch of each request's wait coloured
    /// by the gate or rule that held it then, and when it ran.
    func weekChart(
        _ policy: String, replication: Int, records: [TaskRecord], holds: [TaskID: [(at: SimInstant, cause: String?)]]
    ) -> (svg: String, legend: [String]) {
        let byIdentifier = Dictionary(grouping: records, by: \.request.identifier)
        let ids = forecast.identifiers.map(\.identifier).filter { byIdentifier[$0] != nil }
        let span = max(days, 1) * 86_400
        let w = 1000, laneH = 34, left = 10, plot = 980
        let h = 40 + laneH * max(ids.count, 1) + 20
        // Each cause its page-wide colour (`Palette.cause`), unless a cause seen first took
        // it: then the next colour no cause on this chart has, so no two share one.
        var causes: [String] = [], colors: [String: String] = [:]
        func color(_ cause: String) -> String {
            if let c = colors[cause] { return c }
            var c = Palette.cause(cause)
            let taken = Set(colors.values)
            if taken.contains(c), let free = (Palette.rules + Palette.free).first(where: { !taken.contains($0) }) { c = free }
            causes.append(cause)
            colors[cause] = c
            return c
        }
        func x(_ t: Double) -> String { SVG.c(Double(left) + Double(plot) * min(max(t / span, 0), 1)) }
        var s =
            "<svg class=\"chart\" width=\"\(w)\" height=\"\(h)\" role=\"img\"><title>\(Quoting.html("\(appName) on a typical phone under \(policy)"))</title>"
        for d in 0...Int(span / 86_400) {
            s += "<line x1=\"\(x(Double(d) * 86_400))\" y1=\"20\" x2=\"\(x(Double(d) * 86_400))\" y2=\"\(h - 20)\" stroke=\"#ddd\"/>"
            if Double(d) < span / 86_400 {
                s += "<text x=\"\(x(Double(d) * 86_400 + 43_200))\" y=\"14\" text-anchor=\"middle\" font-size=\"11\">day \(d)</text>"
                // Hour ticks: 06, 12 and 18 of each day, under the lanes.
                for hour in [6, 12, 18] {
                    let t = Double(d) * 86_400 + Double(hour) * 3600
                    s += "<line x1=\"\(x(t))\" y1=\"\(h - 20)\" x2=\"\(x(t))\" y2=\"\(h - 16)\" stroke=\"#999\"/>"
                    s += "<text x=\"\(x(t))\" y=\"\(h - 6)\" text-anchor=\"middle\" font-size=\"9\" fill=\"#555\">\(hour < 10 ? "0" : "")\(hour):00</text>"
                }
            }
        }
        for (lane, id) in ids.enumerated() {
            let y = 24 + lane * laneH
            s += "<text x=\"\(left)\" y=\"\(y + 30)\" font-size=\"10\" fill=\"#555\">\(Quoting.html(id))</text>"
            for r in byIdentifier[id] ?? [] {
                // Each stretch held by one cause, up to the next change or the request's start or end.
                let changes = holds[r.request.id] ?? []
                let end = Self.secs(r.started ?? r.ended)
                for (k, change) in changes.enumerated() {
                    guard let cause = change.cause else { continue }
                    let from = Self.secs(change.at), to = k + 1 < changes.count ? Self.secs(changes[k + 1].at) : end
                    guard to > from else { continue }
                    s +=
                        "<rect x=\"\(x(from))\" y=\"\(y)\" width=\"\(SVG.c(max(Double(plot) * (to - from) / span, 0.5)))\" height=\"14\" fill=\"\(color(cause))\">"
                    s += "<title>\(Quoting.html("held \(Self.n((to - from) / 60)) min by \(cause)"))</title></rect>"
                }
                if let started = r.started {
                    s +=
                        "<rect x=\"\(x(Self.secs(started)))\" y=\"\(y - 3)\" width=\"2\" height=\"20\" fill=\"#000\"><title>ran at day \(Int(Self.secs(started) / 86_400)) \(Self.clock(Self.secs(started)))</title></rect>"
                }
            }
        }
        s += "</svg>"
        let legend = causes.map { c in
            "<span class=\"key\"><span class=\"swatch\" style=\"background:\(colors[c]!)\"></span>\(Quoting.html(c))</span>"
        }
        return (s, legend + ["<span class=\"key\"><span class=\"swatch\" style=\"background:#000\"></span>a run</span>"])
    }

    static func secs(_ t: SimInstant) -> Double { Double(t.microseconds) / 1e6 }

    static func clock(_ seconds: Double) -> String {
        let m = Int(seconds.truncatingRemainder(dividingBy: 86_400) / 60)
        return String(format: "%02d:%02d", m / 60, m % 60)
    }

    /// The typical week in words, per day: runs and what held the requests that waited.
    func weekText(records: [TaskRecord]) -> Table {
        var t = Table(header: ["day", "task", "runs", "waited for (longest first)"], rows: [])
        // Each record into its identifier's day, once: filtering every record for each day and
        // identifier made a long forecast quadratic in its days.
        var starts: [String: [Int: [TaskRecord]]] = [:], waited: [String: [Int: [TaskRecord]]] = [:]
        for r in records {
            if let s = r.started { starts[r.request.identifier, default: [:]][Int(Self.secs(s) / 86_400), default: []].append(r) }
            waited[r.request.identifier, default: [:]][Int(Self.secs(r.eligibleSince) / 86_400), default: []].append(r)
        }
        for d in 0..<Int(max(days, 1).rounded(.up)) {
            for (id, _) in forecast.identifiers {
                guard starts[id] != nil || waited[id] != nil else { continue }
                let runs = starts[id]?[d] ?? []
                var causes: [String: Double] = [:]
                for r in waited[id]?[d] ?? [] {
                    for (c, s) in Forecast.causes(r) { causes[c, default: 0] += s }
                }
                let waits = causes.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(3).map { "\($0.key) \(Self.n($0.value / 3600)) h" }
                t.rows.append([String(d), id, runs.map { Self.clock(Self.secs($0.started!)) }.joined(separator: " "), waits.joined(separator: ", ")])
            }
        }
        return t
    }
}
