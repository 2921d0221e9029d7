import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import SimRandom

/// Small inline-SVG charts for the report: no script, no external resource, text as text
/// (searchable, selectable, readable by screen readers through each chart's `<title>`).
enum SVG {
    /// A coordinate with at most one decimal: enough on screen, and keeps big charts small.
    static func c(_ x: Double) -> String {
        guard x.isFinite else { return "0" }
        let r = (x * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    /// A number as a person reads it: 3 significant figures, thousands without exponent.
    static func number(_ x: Double) -> String {
        guard x.isFinite else { return "–" }
        let a = abs(x)
        if a == 0 { return "0" }
        if a >= 100 { return String(format: "%.0f", x) }
        if a >= 10 { return String(format: "%.1f", x) }
        if a >= 1 { return String(format: "%.2f", x) }
        return String(format: "%.3g", x)
    }

    /// Seconds in the largest unit that keeps the number readable: 45 s, 12.5 min, 3.2 h, 2.1 d.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "–" }
        switch abs(seconds) {
        case ..<90: return number(seconds) + " s"
        case ..<5400: return number(seconds / 60) + " min"
        case ..<172_800: return number(seconds / 3600) + " h"
        default: return number(seconds / 86_400) + " d"
        }
    }

    /// A formatter for the ticks of a linear duration axis: every tick in one unit, the one
    /// `duration` would give the largest, and no more decimals than the ticks need
    /// ("0 h, 1 h, 2 h", never "0 s, 60.0 min, 2.00 h").
    static func durationTicks(_ ticks: [Double]) -> (Double) -> String {
        let top = ticks.map(abs).max() ?? 0
        let (unit, name): (Double, String) =
            switch top {
            case ..<90: (1, "s")
            case ..<5400: (60, "min")
            case ..<172_800: (3600, "h")
            default: (86_400, "d")
            }
        let decimals = decimals(ticks.map { $0 / unit })
        return { v in String(format: "%.\(decimals)f", abs(v) < 1e-9 ? 0 : v / unit) + " " + name }
    }

    /// A formatter for the ticks of a linear number axis: no more decimals than the ticks need,
    /// the same for all ("-10, -5, 0", never "-10.0, -5.00, 0").
    static func numberTicks(_ ticks: [Double]) -> (Double) -> String {
        let decimals = decimals(ticks)
        return { v in String(format: "%.\(decimals)f", abs(v) < 1e-12 ? 0 : v) }
    }

    /// The fewest decimals (at most 4) that write every value exactly.
    static func decimals(_ values: [Double]) -> Int {
        (0...4).first { d in values.allSatisfy { abs($0 * pow(10, Double(d)) - ($0 * pow(10, Double(d))).rounded()) < 1e-6 } } ?? 4
    }

    /// The tick formatter of `scale` when it has its own: one unit for a linear duration axis.
    static func unitTicks(_ scale: Scale, _ ticks: [Double]) -> ((Double) -> String)? {
        guard scale.durations else { return nil }
        guard scale.log else { return durationTicks(ticks) }
        // A log axis's ticks are round durations in their own units: 1 s, 10 s, 1 min, 6 h, 1 d.
        return { v in
            let units: [(Double, String)] = [(604_800, "wk"), (86_400, "d"), (3600, "h"), (60, "min"), (1, "s")]
            let (u, name) = units.first { v >= $0.0 && (v / $0.0).rounded() == v / $0.0 } ?? (1, "s")
            return String(format: "%.0f", v / u) + " " + name
        }
    }

    /// A linear or base-10 logarithmic map from data to pixels.
    struct Scale {
        var lo: Double, hi: Double
        var from: Double, to: Double
        var log = false
        /// Seconds: ticks at round durations (1 min, 15 min, 6 h, 1 d) rather than round numbers.
        var durations = false

        static let durationSteps: [Double] = [
            1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
            43200, 86400, 172_800, 604_800,
        ]

        func callAsFunction(_ x: Double) -> Double {
            let (a, b, v) = log ? (log10(lo), log10(hi), log10(max(x, lo))) : (lo, hi, x)
            return b == a ? (from + to) / 2 : from + (v - a) / (b - a) * (to - from)
        }

        /// About `count` round ticks within the domain.
        func ticks(_ count: Int = 5) -> [Double] {
            if log && durations {
                return [1, 10, 60, 600, 3600, 21600, 86400, 604_800].filter { $0 >= lo * 0.9999 && $0 <= hi * 1.0001 }
            }
            if durations && !log && hi > lo {
                let step = Self.durationSteps.first { (hi - lo) / $0 <= Double(count) + 1 } ?? 604_800
                var t = ceil(lo / step) * step
                var out: [Double] = []
                while t <= hi + step * 1e-9 {
                    out.append(t)
                    t += step
                }
                return out
            }
            if log {
                var out: [Double] = []
                var p = floor(log10(lo))
                while pow(10, p) <= hi * 1.0001 {
                    if pow(10, p) >= lo * 0.9999 { out.append(pow(10, p)) }
                    p += 1
                }
                return out
            }
            guard hi > lo else { return [lo] }
            let raw = (hi - lo) / Double(max(count, 1))
            let mag = pow(10, floor(log10(raw)))
            let step = [1.0, 2, 2.5, 5, 10].map { $0 * mag }.first { $0 >= raw } ?? 10 * mag
            var t = ceil(lo / step) * step
            var out: [Double] = []
            while t <= hi + step * 1e-9 {
                out.append(abs(t) < step * 1e-9 ? 0 : t)
                t += step
            }
            return out
        }
    }

    /// Widens [lo, hi] to start at zero when that is near, and never to an empty span.
    static func domain(_ values: [Double], includeZero: Bool = true, pad: Double = 0.05) -> (Double, Double) {
        let finite = values.filter(\.isFinite)
        guard var lo = finite.min(), var hi = finite.max() else { return (0, 1) }
        if includeZero { lo = min(lo, 0); hi = max(hi, 0) }
        if hi == lo { hi = lo + (lo == 0 ? 1 : abs(lo) * 0.1) }
        let span = hi - lo
        if !(includeZero && lo == 0) { lo -= span * pad }
        hi += span * pad
        return (lo, hi)
    }

    static func open(_ width: Int, _ height: Int, title: String, id: String) -> String {
        "<svg class=\"chart\" id=\"\(id)\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" role=\"img\" aria-labelledby=\"\(id)-t\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"\(id)-t\">\(Quoting.html(title))</title>"
    }

    static func text(_ x: Double, _ y: Double, _ s: String, anchor: String = "start", cls: String = "", extra: String = "") -> String {
        "<text x=\"\(c(x))\" y=\"\(c(y))\" text-anchor=\"\(anchor)\"\(cls.isEmpty ? "" : " class=\"\(cls)\"")\(extra)>\(Quoting.html(s))</text>"
    }

    static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, cls: String) -> String {
        "<line x1=\"\(c(x1))\" y1=\"\(c(y1))\" x2=\"\(c(x2))\" y2=\"\(c(y2))\" class=\"\(cls)\"/>"
    }

    /// Horizontal and vertical axes with grid lines and tick labels.
    static func axes(
        x: Scale, y: Scale, xLabel: String, yLabel: String, xFormat: (Double) -> String,
        yFormat: (Double) -> String, xTicks: [Double]? = nil
    ) -> String {
        var s = ""
        let yTicks = y.ticks(), xTicks = xTicks ?? x.ticks()
        let yf = unitTicks(y, yTicks), xf = unitTicks(x, xTicks)
        for t in yTicks {
            s += line(x.from, y(t), x.to, y(t), cls: "grid")
            s += text(x.from - 6, y(t) + 4, yf?(t) ?? yFormat(t), anchor: "end", cls: "tick")
        }
        for t in xTicks {
            s += line(x(t), y.from, x(t), y.to, cls: "grid")
            s += text(x(t), y.from + 16, xf?(t) ?? xFormat(t), anchor: "middle", cls: "tick")
        }
        s += line(x.from, y.from, x.to, y.from, cls: "axis")
        s += text((x.from + x.to) / 2, y.from + 34, xLabel, anchor: "middle", cls: "label")
        s += "<text transform=\"translate(14 \(c((y.from + y.to) / 2))) rotate(-90)\" text-anchor=\"middle\" class=\"label\">\(Quoting.html(yLabel))</text>"
        return s
    }

    /// One row per policy: a dot at the mean, a whisker over the 95% interval, the value.
    struct Bar {
        var label: String
        var color: String
        var interval: ConfidenceInterval
        var best = false
        var bound = false
    }

    /// The rows as dots with their intervals on an axis that fits them (not from zero: policies
    /// 1 kJ apart at 20 kJ stay apart); the table gives the values, the paired chart their
    /// differences.
    static func bars(id: String, title: String, unit: String, rows: [Bar], format: (Double) -> String, durations: Bool = false) -> String {
        dots(id: id, title: title, footnote: unit, rows: rows, format: format, durations: durations, zeroLine: false)
    }

    /// Paired differences from a baseline: a dot and interval per policy around a zero line,
    /// the axis fitted to the intervals and zero.
    static func forest(
        id: String, title: String, rows: [Bar], format: @escaping (Double) -> String, durations: Bool, better: Metric.Better
    ) -> String {
        let note =
            switch better {
            case .lower: "left of 0 is better"
            case .higher: "right of 0 is better"
            case .neither: "difference"
            }
        return dots(
            id: id, title: title, footnote: note, rows: rows, format: { x in (x > 0 ? "+" : "") + format(x) }, durations: durations,
            zeroLine: true, brackets: true)
    }

    static func dots(
        id: String, title: String, footnote: String, rows: [Bar], format: (Double) -> String, durations: Bool, zeroLine: Bool,
        brackets: Bool = false
    ) -> String {
        let rowH = 26.0, top = 30.0, left = 130.0, right = brackets ? 200.0 : 150.0, width = 600.0
        let height = top + rowH * Double(rows.count) + 34
        let values: [Double] = rows.flatMap { [$0.interval.mean, $0.interval.lower, $0.interval.upper] } + (zeroLine ? [0] : [])
        let (lo, hi) = domain(values, includeZero: zeroLine)
        let x = Scale(lo: lo, hi: hi, from: left, to: width - right, durations: durations)
        var s = open(Int(width), Int(height), title: title, id: id)
        s += text(8, 18, title, cls: "ctitle")
        let ticks = x.ticks(4)
        let tf = unitTicks(x, ticks) ?? numberTicks(ticks)
        for t in ticks {
            s += line(x(t), top - 4, x(t), top + rowH * Double(rows.count), cls: "grid")
            s += text(x(t), top + rowH * Double(rows.count) + 16, tf(t), anchor: "middle", cls: "tick")
        }
        if zeroLine { s += line(x(0), top - 6, x(0), top + rowH * Double(rows.count) + 2, cls: "zero") }
        for (i, r) in rows.enumerated() {
            let y = top + rowH * Double(i)
            let m = r.interval.mean
            s += text(left - 8, y + 17, r.label + (r.bound ? " (bound)" : ""), anchor: "end", cls: r.best ? "best" : "")
            guard m.isFinite else {
                s += text(left + 4, y + 17, "not defined", cls: "tick")
                continue
            }
            if r.interval.halfWidth.isFinite {
                let a = x(r.interval.lower), b = x(r.interval.upper)
                s += line(a, y + 13, b, y + 13, cls: "whisker") + line(a, y + 7, a, y + 19, cls: "whisker") + line(b, y + 7, b, y + 19, cls: "whisker")
            }
            let fill = r.bound ? "white" : r.color
            s +=
                "<circle class=\"dot\" cx=\"\(c(x(m)))\" cy=\"\(c(y + 13))\" r=\"6\" fill=\"\(fill)\" stroke=\"\(r.color)\" stroke-width=\"2\"><title>\(Quoting.html(r.label)): \(Quoting.html(format(m)))</title></circle>"
            var label = format(m)
            if r.interval.halfWidth.isFinite {
                label += brackets ? " [\(format(r.interval.lower)), \(format(r.interval.upper))]" : " ± " + format(r.interval.halfWidth)
            }
            if r.best { label += " ★" }
            s += text(width - right + 8, y + 17, label, cls: r.best ? "best" : "")
        }
        s += text(width - 8, height - 4, footnote, anchor: "end", cls: "tick")
        return s + "</svg>"
    }

    /// Empirical CDFs, one step line per series, on a logarithmic time axis.
    struct Series {
        var label: String
        var color: String
        /// Sorted ascending.
        var values: [Double]
    }

    static func cdf(
        id: String, title: String, xLabel: String, series: [Series], floor: Double = 1, of items: String = "tasks",
        durations: Bool = true, linear: Bool = false
    ) -> String {
        let width = 640.0, height = 300.0, left = 56.0, right = 130.0, top = 30.0, bottom = 50.0
        let maxV = series.compactMap { $0.values.last }.max() ?? floor * 10
        let minV = max(series.compactMap { $0.values.first }.min() ?? floor, floor)
        // Log only when the values span more than a decade; then from the decade below the
        // least (at least `floor`), so that curves a few percent apart are not one line.
        let log = !linear && maxV > minV * 10
        let x: Scale
        if log {
            let lo = max(floor, pow(10, Foundation.floor(log10(minV))))
            x = Scale(lo: lo, hi: max(maxV, lo * 10), from: left, to: width - right, log: true, durations: durations)
        } else {
            let (lo, hi) = domain(series.flatMap { [$0.values.first ?? .nan, $0.values.last ?? .nan] }, includeZero: linear)
            x = Scale(lo: lo, hi: hi, from: left, to: width - right, durations: durations)
        }
        let y = Scale(lo: 0, hi: 1, from: height - bottom, to: top)
        var s = open(Int(width), Int(height), title: title, id: id)
        s += text(8, 18, title, cls: "ctitle")
        s += axes(
            x: x, y: y, xLabel: xLabel + (log ? " (log scale\(durations && x.lo <= 1 ? "; under 1 s drawn at 1 s" : ""))" : ""),
            yLabel: "share of \(items)", xFormat: durations ? duration : number,
            yFormat: { String(format: "%.0f%%", $0 * 100) })
        for (k, serie) in series.enumerated() {
            let v = serie.values
            guard !v.isEmpty else { continue }
            // At most ~300 steps per line: the quantiles at evenly spaced shares.
            let steps = min(v.count, 300)
            var d = "M\(c(x(x.lo))) \(c(y(0)))"
            for j in 1...steps {
                let share = Double(j) / Double(steps)
                let value = v[min(v.count - 1, Int((share * Double(v.count)).rounded(.up)) - 1)]
                d += "H\(c(x(value)))V\(c(y(share)))"
            }
            d += "H\(c(x.to))"
            s += "<path d=\"\(d)\" fill=\"none\" stroke=\"\(serie.color)\" stroke-width=\"2\"><title>\(Quoting.html(serie.label))</title></path>"
            s += "<rect x=\"\(c(width - right + 12))\" y=\"\(c(top + Double(k) * 18))\" width=\"12\" height=\"12\" fill=\"\(serie.color)\"/>"
            s += text(width - right + 30, top + Double(k) * 18 + 10, serie.label)
        }
        return s + "</svg>"
    }

    /// One point per policy with its two intervals; the Pareto front (lower is better on both
    /// axes) joined by a line.
    struct Point {
        var label: String
        var color: String
        var x: ConfidenceInterval
        var y: ConfidenceInterval
        var bound = false
    }

    static func scatter(
        id: String, title: String, xLabel: String, yLabel: String, points: [Point], front: [Int],
        xFormat: @escaping (Double) -> String, yFormat: @escaping (Double) -> String, yDurations: Bool = false
    ) -> String {
        let width = 640.0, height = 340.0, left = 70.0, right = 150.0, top = 30.0, bottom = 50.0
        let (xlo, xhi) = domain(points.flatMap { [$0.x.lower, $0.x.upper, $0.x.mean] }, includeZero: false)
        let (ylo, yhi) = domain(points.flatMap { [$0.y.lower, $0.y.upper, $0.y.mean] }, includeZero: false)
        let x = Scale(lo: xlo, hi: xhi, from: left, to: width - right)
        let y = Scale(lo: ylo, hi: yhi, from: height - bottom, to: top, durations: yDurations)
        var s = open(Int(width), Int(height), title: title, id: id)
        s += text(8, 18, title, cls: "ctitle")
        s += axes(x: x, y: y, xLabel: xLabel, yLabel: yLabel, xFormat: xFormat, yFormat: yFormat)
        let ordered = front.sorted { points[$0].x.mean < points[$1].x.mean }
        if ordered.count > 1 {
            s += "<polyline class=\"front\" points=\"" + ordered.map { "\(c(x(points[$0].x.mean))),\(c(y(points[$0].y.mean)))" }.joined(separator: " ") + "\"/>"
        }
        for (k, p) in points.enumerated() where p.x.mean.isFinite && p.y.mean.isFinite {
            let px = x(p.x.mean), py = y(p.y.mean)
            if p.x.halfWidth.isFinite { s += line(x(p.x.lower), py, x(p.x.upper), py, cls: "whisker") }
            if p.y.halfWidth.isFinite { s += line(px, y(p.y.lower), px, y(p.y.upper), cls: "whisker") }
            let fill = p.bound ? "white" : p.color
            s +=
                "<circle cx=\"\(c(px))\" cy=\"\(c(py))\" r=\"\(front.contains(k) ? 7 : 5)\" fill=\"\(fill)\" stroke=\"\(p.color)\" stroke-width=\"2\"><title>\(Quoting.html(p.label)): \(Quoting.html(xFormat(p.x.mean))), \(Quoting.html(yFormat(p.y.mean)))</title></circle>"
            s += "<rect x=\"\(c(width - right + 12))\" y=\"\(c(top + Double(k) * 18))\" width=\"12\" height=\"12\" fill=\"\(fill)\" stroke=\"\(p.color)\"/>"
            s += text(width - right + 30, top + Double(k) * 18 + 10, p.label + (front.contains(k) ? " ◆" : "") + (p.bound ? " (bound)" : ""))
        }
        s += text(width - right + 12, top + Double(points.count) * 18 + 14, "◆ on the Pareto front", cls: "tick")
        return s + "</svg>"
    }

    /// The indices of the points no other point beats on both axes (lower is better), among
    /// those with finite means.
    static func paretoFront(_ points: [(Double, Double)]) -> [Int] {
        points.indices.filter { i in
            let (xi, yi) = points[i]
            guard xi.isFinite, yi.isFinite else { return false }
            return !points.indices.contains { j in
                let (xj, yj) = points[j]
                return j != i && xj.isFinite && yj.isFinite && xj <= xi && yj <= yi && (xj < xi || yj < yi)
            }
        }
    }

    /// A metric against a swept parameter: one line per policy through the points' means,
    /// with a band over their 95% intervals.
    struct Line {
        var label: String
        var color: String
        /// x positions (data units, or category index) with their intervals, ascending in x.
        var points: [(x: Double, ci: ConfidenceInterval)]
    }

    static func lines(
        id: String, title: String, xLabel: String, yLabel: String, lines: [Line], categories: [String]?,
        logX: Bool, xFormat: @escaping (Double) -> String, yFormat: @escaping (Double) -> String,
        xDurations: Bool = false, yDurations: Bool = false, zeroLine: Bool = false
    ) -> String {
        let width = 640.0, height = 300.0, left = 70.0, right = 140.0, top = 30.0, bottom = 50.0
        let xs = lines.flatMap { $0.points.map(\.x) }
        let x: Scale
        if let categories {
            x = Scale(lo: -0.5, hi: Double(categories.count) - 0.5, from: left, to: width - right)
        } else if logX, let lo = xs.filter({ $0 > 0 }).min(), let hi = xs.max(), hi > lo {
            x = Scale(lo: lo, hi: hi, from: left, to: width - right, log: true, durations: xDurations)
        } else {
            let (lo, hi) = domain(xs, includeZero: false, pad: 0.02)
            x = Scale(lo: lo, hi: hi, from: left, to: width - right, durations: xDurations)
        }
        let values: [Double] = lines.flatMap { $0.points.flatMap { [$0.ci.mean, $0.ci.lower, $0.ci.upper] } } + (zeroLine ? [0] : [])
        let (ylo, yhi) = domain(values, includeZero: false)
        let y = Scale(lo: ylo, hi: yhi, from: height - bottom, to: top, durations: yDurations)
        var s = open(Int(width), Int(height), title: title, id: id)
        s += text(8, 18, title, cls: "ctitle")
        let ticks = categories.map { $0.indices.map(Double.init) }
        s += axes(
            x: x, y: y, xLabel: xLabel, yLabel: yLabel,
            xFormat: { v in categories.map { cats in cats[min(max(Int(v.rounded()), 0), cats.count - 1)] } ?? xFormat(v) },
            yFormat: yFormat, xTicks: ticks)
        if zeroLine { s += line(x.from, y(0), x.to, y(0), cls: "zero") }
        for (k, l) in lines.enumerated() {
            let pts = l.points.filter { $0.ci.mean.isFinite }
            guard !pts.isEmpty else { continue }
            let banded = pts.filter { $0.ci.halfWidth.isFinite }
            if banded.count > 1 {
                let upper = banded.map { "\(c(x($0.x))),\(c(y($0.ci.upper)))" }
                let lower = banded.reversed().map { "\(c(x($0.x))),\(c(y($0.ci.lower)))" }
                s += "<polygon points=\"\((upper + lower).joined(separator: " "))\" fill=\"\(l.color)\" fill-opacity=\"0.15\" stroke=\"none\"/>"
            }
            s +=
                "<polyline points=\"" + pts.map { "\(c(x($0.x))),\(c(y($0.ci.mean)))" }.joined(separator: " ")
                + "\" fill=\"none\" stroke=\"\(l.color)\" stroke-width=\"2\"/>"
            if pts.count <= 60 {
                for p in pts {
                    s +=
                        "<circle cx=\"\(c(x(p.x)))\" cy=\"\(c(y(p.ci.mean)))\" r=\"3\" fill=\"\(l.color)\"><title>\(Quoting.html(l.label)): \(Quoting.html(yFormat(p.ci.mean)))</title></circle>"
                }
            }
            s += "<rect x=\"\(c(width - right + 12))\" y=\"\(c(top + Double(k) * 18))\" width=\"12\" height=\"12\" fill=\"\(l.color)\"/>"
            s += text(width - right + 30, top + Double(k) * 18 + 10, l.label)
        }
        return s + "</svg>"
    }
}
