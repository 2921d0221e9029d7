import Experiments
import Foundation
import PhoneWorld
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine

/// The report's one-phone timeline: lanes for the battery, the charger, the network, the
/// screen and each app, over one window of one replication.
enum Timeline {
    static let appStateFill: [AppState: String] = [
        .notRunning: "none", .suspended: "#e4e4e8", .background: "#fbd9a8", .inactive: "#cfe3f5", .active: "#a9cdee",
    ]
    /// By kind name, so that a kind keeps its colour whichever mechanism declares it.
    static let kindFill: [String: String] = [
        "refresh": "#0072B2", "processing": "#009E73", "finite_length": "#CC79A7", "fetch": "#56B4E9", "silent_push": "#D55E00",
        "background_transfer": "#E69F00", "region": "#F0E442", "audio": "#7B3294", "location": "#1B7837", "voip": "#C51B7D",
        "bluetooth": "#2166AC", "redo": "#B2182B",
    ]
    /// A kind's fill: fixed for the long-standing kinds, hashed from the name for others.
    static func fill(_ kind: TaskKind) -> String {
        kindFill[kind.rawValue] ?? Palette.free[Int(Palette.fnv1a(kind.rawValue) % UInt64(Palette.free.count))]
    }

    /// Segments of a step function over [from, to): (start, end, value).
    static func segments<V>(_ changes: [(SimInstant, V)], from: SimInstant, to: SimInstant) -> [(SimInstant, SimInstant, V)] {
        var out: [(SimInstant, SimInstant, V)] = []
        for (k, (t, v)) in changes.enumerated() {
            let end = k + 1 < changes.count ? changes[k + 1].0 : to
            let a = max(t, from), b = min(end, to)
            if a < b { out.append((a, b, v)) }
        }
        return out
    }

    /// One line, right-aligned: a coloured square per task kind drawn in the window, then the
    /// app states' fills, so each lane's colours read without the paragraph above.
    static func legend(kinds: [TaskKind], x: Double, y: Double) -> String {
        func swatch(_ fill: String, _ label: String) -> String {
            "<tspan fill=\"\(fill)\" stroke=\"#999\" stroke-width=\"0.5\">■</tspan>\u{a0}\(Quoting.html(label))"
        }
        let tasks = kinds.map { swatch(fill($0), $0.rawValue) }
        let states: [(AppState, String)] = [(.suspended, "suspended"), (.background, "background"), (.active, "foreground")]
        let app = "app: " + states.map { swatch(appStateFill[$0.0] ?? "#fff", $0.1) }.joined(separator: " ")
        return "<text x=\"\(SVG.c(x))\" y=\"\(SVG.c(y))\" text-anchor=\"end\" class=\"tick\">"
            + (tasks + [app, "red outline: expired or killed"]).joined(separator: "\u{a0}\u{a0} ") + "</text>"
    }

    static func svg(
        id: String, policy: String, color: String, trace: PhoneTrace, apps: [String],
        from: SimInstant, to: SimInstant
    ) -> String {
        let width = 1280.0, left = 120.0, right = 16.0
        let batteryH = 56.0, band = 11.0, appH = 21.0, top = 28.0
        let bandsTop = top + batteryH + 8
        let appsTop = bandsTop + 3 * (band + 4) + 6
        let causes = waitCauses(trace)
        let height = appsTop + Double(apps.count) * appH + 30 + (causes.isEmpty ? 0 : 18)
        let span = max((to - from).seconds, 1)
        func x(_ t: SimInstant) -> Double { left + (t - from).seconds / span * (width - left - right) }
        var s = SVG.open(Int(width), Int(height), title: "Timeline under \(policy)", id: id)
        s += "<rect x=\"0\" y=\"4\" width=\"6\" height=\"16\" fill=\"\(color)\"/>"
        s += SVG.text(12, 18, "\(policy)", cls: "ctitle")
        s += legend(
            kinds: TaskKind.allCases.filter { k in trace.runs.contains { $0.kind == k && $0.end >= from && $0.start <= to } },
            x: width - right, y: 18)
        // Hour grid.
        let hours = Int((span / 3600).rounded(.up))
        let step = hours > 36 ? 6 : 3
        for h in stride(from: 0, through: hours, by: step) {
            let t = from + .hours(Int64(h))
            guard t <= to else { break }
            s += SVG.line(x(t), top, x(t), height - 24 - (causes.isEmpty ? 0 : 18), cls: "grid")
            s += SVG.text(
                x(t), height - 10 - (causes.isEmpty ? 0 : 18), String(format: "%02d:00", (Int((from - .start).seconds / 3600) + h) % 24), anchor: "middle",
                cls: "tick")
        }
        // Battery: charging shaded behind the level line.
        s += SVG.text(left - 8, top + batteryH / 2 + 4, "battery %", anchor: "end", cls: "label")
        for (a, b, on) in segments(trace.charging, from: from, to: to) where on {
            s += "<rect x=\"\(SVG.c(x(a)))\" y=\"\(SVG.c(top))\" width=\"\(SVG.c(max(x(b) - x(a), 0.5)))\" height=\"\(SVG.c(batteryH))\" fill=\"#e3f3e3\"/>"
        }
        s += SVG.line(left, top + batteryH, width - right, top + batteryH, cls: "axis")
        for level in [0.0, 0.5, 1.0] {
            s += SVG.text(left + 3, top + batteryH * (1 - level) + (level == 1 ? 10 : level == 0 ? -2 : 4), String(format: "%.0f", level * 100), cls: "tick")
        }
        if !trace.charge.isEmpty {
            // The level is piecewise linear between observations; at most ~1,500 vertices.
            let stride = max(1, trace.charge.count / 1500)
            var points: [String] = []
            for (k, (t, c)) in trace.charge.enumerated() where k % stride == 0 || k == trace.charge.count - 1 {
                points.append("\(SVG.c(x(max(t, from)))),\(SVG.c(top + batteryH * (1 - c)))")
            }
            s += "<polyline points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"#2a7a2a\" stroke-width=\"1.6\"/>"
        }
        for t in trace.shutdowns {
            s +=
                "<line x1=\"\(SVG.c(x(t)))\" y1=\"\(SVG.c(top))\" x2=\"\(SVG.c(x(t)))\" y2=\"\(SVG.c(top + batteryH))\" stroke=\"#d00\" stroke-width=\"2\"><title>shut down</title></line>"
        }
        // Charger, network, screen.
        func lane(_ row: Int, _ name: String) -> Double {
            let y = bandsTop + Double(row) * (band + 4)
            s += SVG.text(left - 8, y + band - 1, name, anchor: "end", cls: "label")
            s += "<rect x=\"\(SVG.c(left))\" y=\"\(SVG.c(y))\" width=\"\(SVG.c(width - left - right))\" height=\"\(SVG.c(band))\" fill=\"#fafafa\"/>"
            return y
        }
        func rect(_ a: SimInstant, _ b: SimInstant, _ y: Double, _ h: Double, _ fill: String, _ tip: String, extra: String = "") -> String {
            "<rect x=\"\(SVG.c(x(a)))\" y=\"\(SVG.c(y))\" width=\"\(SVG.c(max(x(b) - x(a), 0.6)))\" height=\"\(SVG.c(h))\" fill=\"\(fill)\"\(extra)><title>\(Quoting.html(tip))</title></rect>"
        }
        let clock = { (t: SimInstant) in
            let s = Int((t - .start).seconds)
            return String(format: "%02d:%02d:%02d", s / 3600 % 24, s / 60 % 60, s % 60)
        }
        var y = lane(0, "charger")
        for (a, b, on) in segments(trace.charging, from: from, to: to) where on {
            s += rect(a, b, y, band, "#3a9a3a", "charging \(clock(a))–\(clock(b))")
        }
        y = lane(1, "network")
        let netFill: [NetworkKind: String] = [.wifi: "#56B4E9", .cellular: "#E69F00", .none: "#bbbbbb"]
        for (a, b, kind) in segments(trace.network, from: from, to: to) {
            s += rect(a, b, y, band, netFill[kind] ?? "#bbb", "\(kind.rawValue) \(clock(a))–\(clock(b))")
        }
        y = lane(2, "screen")
        for (a, b, app) in segments(trace.screen, from: from, to: to) {
            guard let app else { continue }
            s += rect(a, b, y, band, "#333", "\(app < apps.count ? apps[app] : "app") in use \(clock(a))–\(clock(b))")
        }
        // Apps: state band, task bars on top.
        for (i, name) in apps.enumerated() {
            let ay = appsTop + Double(i) * appH
            s += SVG.text(left - 8, ay + appH - 4, name, anchor: "end", cls: "tick")
            s += SVG.line(left, ay + appH - 0.5, width - right, ay + appH - 0.5, cls: "grid")
            if i < trace.appStates.count {
                for (a, b, state) in segments(trace.appStates[i], from: from, to: to) {
                    guard let fill = appStateFill[state], fill != "none" else { continue }
                    s += rect(a, b, ay + 1, 13, fill, "\(name): \(state.rawValue) \(clock(a))–\(clock(b))")
                }
            }
            // Beneath the runs, each request's wait, coloured by what held it then.
            for w in trace.waits where w.app == i {
                s += rect(
                    w.from, w.to, ay + 15, 4, Palette.cause(w.cause),
                    "\(name) \(w.kind.rawValue) waiting \(clock(w.from))–\(clock(w.to)) (\(SVG.duration((w.to - w.from).seconds))), held by \(w.cause)",
                    extra: " fill-opacity=\"0.8\"")
            }
            for run in trace.runs where run.app == i {
                let a = max(run.start, from), b = min(run.end, to)
                let failed = run.outcome == .expired || run.outcome == .killed
                s += rect(
                    a, b, ay + 4, 7, fill(run.kind),
                    "\(name) \(run.kind.rawValue) \(clock(run.start))–\(clock(run.end)) (\(SVG.duration((run.end - run.start).seconds))), \(run.outcome.rawValue)",
                    extra: failed ? " stroke=\"#d00\" stroke-width=\"1.5\"" : "")
            }
        }
        if !causes.isEmpty {
            let keys = causes.map { "<tspan fill=\"\(Palette.cause($0))\">■</tspan>\u{a0}\(Quoting.html($0))" }
            s += "<text x=\"\(SVG.c(width - right))\" y=\"\(SVG.c(height - 4))\" text-anchor=\"end\" class=\"tick waits\">"
            s += "waiting (thin strip under each app), held by:\u{a0} " + keys.joined(separator: "\u{a0}\u{a0} ") + "</text>"
        }
        return s + "</svg>"
    }

    /// The causes of the waits drawn, gates first in their order, then the policy's rules by
    /// name: the legend's order is the same in every report.
    static func waitCauses(_ trace: PhoneTrace) -> [String] {
        let present = Set(trace.waits.map(\.cause))
        let gates = ["earliest_begin"] + HoldReason.allCases.map(\.token)
        return gates.filter(present.contains) + present.subtracting(gates).sorted()
    }
}
