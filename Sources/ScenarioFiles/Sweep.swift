import CGSL
import Foundation
import ResultFiles
import SimEngine
import SimRandom

/// A sweep file: a base scenario and axes over its key paths (the paths `--set` takes),
/// combined by a design into points. Every point runs every policy in every replication.
///
/// ```yaml
/// scenario: ../scenarios/default.yaml   # relative to the sweep file
/// set: {duration: 7d}                   # applied to every point (optional)
/// replications: 5                       # optional: replaces the scenario's
/// design: grid                          # grid, zip, random, lhs, sobol or morris
/// axes:
///   - {path: settings.background_app_refresh, values: [wifi, wifi-and-cellular]}
///   - {path: people.sessions_per_day, from: 20, to: 100, steps: 5, integer: true}
/// ```
package struct SweepDesign: Sendable, Equatable {
    /// How the axes' values combine into points.
    package enum Kind: String, Sendable, CaseIterable {
        /// Every combination of the axes' values; the first axis varies slowest.
        case grid
        /// The axes' value lists side by side: point i takes each axis's i-th value.
        case zip
        /// Independent uniform draws per axis (`points` of them, from `design_seed`).
        case random
        /// Latin hypercube: each axis's range cut into `points` equal strata, each stratum
        /// used exactly once, strata paired at random (McKay, Beckman & Conover, 1979).
        case lhs
        /// GSL's Sobol sequence (`gsl_qrng_sobol`, at most 40 axes): low discrepancy, no seed.
        case sobol
        /// Morris's trajectories (`trajectories` of them, on a grid of `levels` levels, from
        /// `design_seed`): consecutive points of a trajectory differ in one axis, so each step
        /// is that axis's elementary effect on every result (`bgsim sensitivity`).
        case morris
    }

    /// One axis: a key path and either values or a range.
    package struct Axis: Sendable, Equatable {
        /// The scenario value it varies (`settings.background_app_refresh`).
        package var path: ConfigKeyPath
        /// Listed values, as YAML text. A random design picks among them uniformly.
        package var values: [String]?
        /// A range, for `steps` (grid, zip) or for random designs.
        package var from: Double = 0, to: Double = 0
        /// Whether the range's ends are durations (`15m`), so values are written as durations
        /// in whole seconds (`2436s`).
        package var isDuration = false
        /// How many evenly spread values a grid or zip takes from the range.
        package var steps: Int?
        /// Whether values are rounded to whole numbers.
        package var integer = false
        /// Spread values evenly in log scale (both ends positive).
        package var log = false

        /// The value at fraction `u` of the range (0 ... 1), or of the value list.
        func value(at u: Double) -> String {
            if let values { return values[min(values.count - 1, Int(u * Double(values.count)))] }
            var x = log ? from * Foundation.pow(to / from, u) : from + (to - from) * u
            if isDuration { return "\(Int64((x / 1e6).rounded()))s" }  // whole seconds
            if integer { x = x.rounded() }
            return CSVWriter.number(x, count: integer)
        }

        /// How many values `listed` has, without making them.
        var valueCount: Int { values?.count ?? steps ?? 0 }

        /// The listed values, or `steps` evenly spread over the range, ends included.
        var listed: [String] {
            if let values { return values }
            let n = steps ?? 0
            return (0..<n).map { n == 1 ? value(at: 0) : value(at: Double($0) / Double(n - 1)) }
        }
    }

    /// How the axes combine.
    package var kind: Kind
    /// The axes, in the file's order.
    package var axes: [Axis]
    /// Points of a random, lhs or sobol design.
    package var points: Int
    /// Seed of a random, lhs or morris design (`design_seed`), independent of the simulation's seed.
    package var seed: UInt64
    /// A morris design's trajectories, each of one point more than the axes.
    package var trajectories = 0
    /// A morris design's grid: each axis takes `levels` evenly spread values (an even number).
    package var levels = 4

    /// The most points a sweep may have, whatever its design. The plan reads and keeps every
    /// point's scenario before anything runs (about 3 kB and, on one core, 1 ms a point for
    /// the default scenario), so this bounds a plan's memory and reading time; docs/usage.md
    /// lists what it costs at the limit.
    package static let maxPoints = 100_000

    /// How many points the design has, without making them: a grid's product of its axes'
    /// lengths (`Int.max` if that overflows), a zip's shortest axis, a sampled design's `points`.
    package var pointCount: Int {
        switch kind {
        case .grid:
            return axes.reduce(1) { total, axis in
                let (product, overflow) = total.multipliedReportingOverflow(by: axis.valueCount)
                return overflow ? Int.max : product
            }
        case .zip: return axes.map(\.valueCount).min() ?? 0
        case .random, .lhs, .sobol: return points
        case .morris:
            let (n, overflow) = trajectories.multipliedReportingOverflow(by: axes.count + 1)
            return overflow ? Int.max : n
        }
    }

    /// The points, in order, one at a time: a pure function of the design. Only the axes'
    /// value lists (and an lhs design's strata) are held, never the points.
    package func makePoints() -> PointIterator { PointIterator(self) }

    /// Every point at once; for small designs (tests, `validate --points`).
    package func pointValues() -> [[String]] { Array(IteratorSequence(makePoints())) }

    /// The points of a design in order, each made when asked for.
    package final class PointIterator: IteratorProtocol {
        let design: SweepDesign
        let count: Int
        var index = 0
        /// Grid and zip: each axis's values.
        var listed: [[String]] = []
        /// Random: the design's stream.
        var stream: RandomStream?
        /// Lhs: per axis, each point's stratum and its place within it.
        var strata: [[Int32]] = [], offsets: [[Double]] = []
        /// Sobol: GSL's generator and its output.
        var sobol: UnsafeMutablePointer<gsl_qrng>?
        var u: [Double] = []
        /// Morris: every point of the unit cube (trajectories × (axes + 1) × axes numbers).
        var morris: [[Double]] = []

        init(_ design: SweepDesign) {
            self.design = design
            count = design.pointCount
            switch design.kind {
            case .grid, .zip:
                listed = design.axes.map(\.listed)
            case .random:
                stream = SweepDesign.stream(design.seed, "sweep.random")
            case .lhs:
                let stream = SweepDesign.stream(design.seed, "sweep.lhs")
                let n = design.points
                // Per axis, a random stratum for each point (a shuffle), and a place within it.
                for _ in design.axes {
                    var column = (0..<n).map { Int32($0) }
                    for i in stride(from: n - 1, to: 0, by: -1) {
                        column.swapAt(i, min(i, Int(stream.uniform() * Double(i + 1))))
                    }
                    strata.append(column)
                    offsets.append((0..<n).map { _ in stream.uniform() })
                }
            case .sobol:
                sobol = gsl_qrng_alloc(bgsim_qrng_sobol(), UInt32(design.axes.count))
                u = [Double](repeating: 0, count: design.axes.count)
            case .morris:
                morris = design.morrisGrid()
            }
        }

        deinit { if let sobol { gsl_qrng_free(sobol) } }

        /// The next point's value per axis, or nil after the last.
        package func next() -> [String]? {
            guard index < count else { return nil }
            defer { index += 1 }
            let axes = design.axes
            switch design.kind {
            case .grid:
                // The first axis varies slowest: the index in mixed radix, last axis fastest.
                var rest = index
                var out = [String](repeating: "", count: axes.count)
                for a in axes.indices.reversed() {
                    out[a] = listed[a][rest % listed[a].count]
                    rest /= listed[a].count
                }
                return out
            case .zip:
                return listed.map { $0[index] }
            case .random:
                return axes.map { $0.value(at: stream!.uniform()) }
            case .lhs:
                let n = Double(design.points)
                return axes.indices.map { a in axes[a].value(at: (Double(strata[a][index]) + offsets[a][index]) / n) }
            case .sobol:
                guard let sobol else { return nil }
                _ = u.withUnsafeMutableBufferPointer { gsl_qrng_get(sobol, $0.baseAddress) }
                return zip(axes, u).map { $0.value(at: $1) }
            case .morris:
                return zip(axes, morris[index]).map { $0.value(at: $1) }
            }
        }
    }

    /// A morris design's points in the unit cube, each coordinate on its grid level exactly
    /// (`k / (levels - 1)`), so that a level gives one value whatever the steps that led to it.
    package func morrisGrid() -> [[Double]] {
        let top = Double(levels - 1)
        return Sensitivity.morrisDesign(
            factors: axes.count, trajectories: trajectories, levels: levels, stream: SweepDesign.stream(seed, "sweep.morris")
        ).map { $0.map { ($0 * top).rounded() / top } }
    }

    package static func stream(_ seed: UInt64, _ name: String) -> RandomStream {
        // mt19937 always exists, so this cannot fail.
        try! RandomStream(kind: .mt19937, seed: StreamID(masterSeed: seed, replication: 0, name: name).seed)
    }

    /// Sobol's limit in GSL.
    static let sobolMaxAxes = 40
}

/// A sweep file read and checked: its design, and the overrides every point shares.
package struct Sweep: Sendable {
    /// The sweep's name (`name:`, else the file's name); every point's scenario carries it.
    package var name: String
    /// The sweep file, as given.
    package var file: String
    /// The base scenario file, as a path usable from the current directory.
    package var scenarioFile: String
    /// Applied to every point before the axes (`set:`, then `policies`, `replications`, `seed`).
    package var common: [Override]
    /// The axes and how they combine into points.
    package var design: SweepDesign
    /// The sweep file as canonical JSON, for the manifest.
    package var resolvedJSON: String

    /// The path without `.` and `name/..` steps (`models/sweeps/../scenarios/default.yaml` as
    /// `models/scenarios/default.yaml`), for what people read: `validate`, messages and
    /// manifests. Kept as it is when the shorter path is not the same file (a symbolic link
    /// before a `..` leads elsewhere) or when the file cannot be found.
    static func tidy(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
            if part == "..", path.hasPrefix("/"), parts.isEmpty { continue }
            parts.append(part)
        }
        let short = (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
        guard short != path, !short.isEmpty else { return path }
        var a = stat(), b = stat()
        guard stat(path, &a) == 0, stat(short, &b) == 0, a.st_dev == b.st_dev, a.st_ino == b.st_ino else { return path }
        return short
    }

    /// Whether `file` reads as a sweep. False for anything unreadable, which the caller's own
    /// reader then reports.
    package static func isSweep(file: String) -> Bool {
        guard let text = try? InputFile.read(file, .sweep),
            let tree = try? ConfigNode.parse(yaml: text, file: file)
        else { return false }
        return baseScenarioEntry(tree) != nil
    }

    /// The top-level `scenario` entry, naming the base scenario, that makes a document a sweep:
    /// no scenario has that key.
    static func baseScenarioEntry(_ tree: ConfigNode) -> (key: String, keyLine: Int?, value: ConfigNode)? {
        guard case .mapping(let pairs) = tree.value else { return nil }
        return pairs.first { $0.key == "scenario" }
    }

    /// Reads a sweep file. Errors name the file, the key path and the line.
    package static func load(file: String) throws(ScenarioError) -> Sweep {
        let text = try InputFile.read(file, .sweep)
        let tree = try ConfigNode.parse(yaml: text, file: file)
        let r = ConfigReader(file: file)
        var top = try r.mapping(tree, at: .root)
        let stem = URL(literalPath: file).deletingPathExtension().lastPathComponent
        let name = try top.optional("name", default: stem, r.name)
        if top.node("scenario") == nil, top.node("duration") != nil || top.node("apps") != nil {
            throw ScenarioError(
                .invalid, file: file, keyPath: "scenario",
                message: "this is a scenario, not a sweep (a sweep names its base scenario under 'scenario'); "
                    + "run it with: \(ProgramName.current) run \(Quoting.shell(file))")
        }
        let scenario = try top.required("scenario", "the base scenario file, relative to the sweep file") { n, p throws(ScenarioError) in
            try r.string(n, p)
        }
        let here = (file as NSString).deletingLastPathComponent
        let scenarioFile = tidy(scenario.hasPrefix("/") || here.isEmpty ? scenario : (here as NSString).appendingPathComponent(scenario))
        // Checked here, where the key's line is known: a sweep that names a missing file is
        // most often a path written relative to the current folder instead of the sweep's.
        if !FileManager.default.fileExists(atPath: scenarioFile), let node = top.node("scenario") {
            throw r.error(
                node, ConfigKeyPath([.key("scenario")]),
                "no such scenario file: \(scenarioFile)"
                    + (scenario.hasPrefix("/") ? "" : " (a relative path is read from the sweep file's folder)"))
        }
        var common: [Override] = []
        if let set = top.node("set") {
            guard case .mapping(let pairs) = set.value else {
                throw r.error(set, ConfigKeyPath([.key("set")]), "expected a mapping of key paths to values, such as {duration: 7d}")
            }
            for pair in pairs {
                guard let path = ConfigKeyPath(parsing: pair.key) else {
                    throw r.error(pair.value, ConfigKeyPath([.key("set"), .key(pair.key)]), "expected a key path such as phone.battery.capacity_wh")
                }
                common.append(Override(path: path, value: yamlText(pair.value), origin: "\(file): set.\(pair.key)"))
            }
        }
        for key in ["policies", "replications", "seed"] {
            if let node = top.node(key) {
                common.append(Override(path: ConfigKeyPath([.key(key)]), value: yamlText(node), origin: "\(file): \(key)"))
            }
        }
        let kind = try top.optional("design", default: SweepDesign.Kind.grid) { n, p throws(ScenarioError) in
            try r.choice(n, p, SweepDesign.Kind.self, what: "design")
        }
        let sampled = kind == .random || kind == .lhs || kind == .sobol
        let points = try top.optional("points", default: 0) { n, p throws(ScenarioError) in
            guard sampled else {
                throw r.error(
                    n, p,
                    kind == .morris
                        ? "a morris design's points are its trajectories, each of one point more than the axes: give 'trajectories'"
                        : "'points' is for random, lhs and sobol designs; a \(kind.rawValue) design's points come from its axes")
            }
            return try r.integer(n, p, "a number of points from 1 to \(SweepDesign.maxPoints)", in: 1...SweepDesign.maxPoints)
        }
        if sampled && points == 0 {
            throw r.error(tree, ConfigKeyPath([.key("points")]), "missing; a \(kind.rawValue) design needs the number of points, such as points: 20")
        }
        let trajectories = try top.optional("trajectories", default: 0) { n, p throws(ScenarioError) in
            guard kind == .morris else { throw r.error(n, p, "'trajectories' is for a morris design") }
            return try r.integer(n, p, "a number of trajectories from 2 to 10000", in: 2...10_000)
        }
        if kind == .morris && trajectories == 0 {
            throw r.error(tree, ConfigKeyPath([.key("trajectories")]), "missing; a morris design needs its number of trajectories, such as trajectories: 10")
        }
        let levels = try top.optional("levels", default: 4) { n, p throws(ScenarioError) in
            guard kind == .morris else { throw r.error(n, p, "'levels' is for a morris design") }
            let levels = try r.integer(n, p, "an even number of levels from 2 to 20", in: 2...20)
            guard levels % 2 == 0 else { throw r.error(n, p, "expected an even number of levels from 2 to 20 (Morris's steps need it), got \(levels)") }
            return levels
        }
        let seed = try top.optional("design_seed", default: UInt64(1), r.seed)
        let axes = try top.required("axes", "a list of axes, such as [{path: people.sessions_per_day, values: [20, 50]}]") {
            n, p throws(ScenarioError) in try readAxes(n, p, r, kind: kind)
        }
        try top.finish()
        if kind == .zip, Set(axes.map(\.valueCount)).count > 1 {
            throw r.error(
                tree, ConfigKeyPath([.key("axes")]),
                "a zip design needs axes of equal length; got \(axes.map { "\($0.path): \($0.valueCount)" }.joined(separator: ", "))")
        }
        var design = SweepDesign(kind: kind, axes: axes, points: points, seed: seed)
        design.trajectories = trajectories
        design.levels = levels
        if design.pointCount > SweepDesign.maxPoints {
            let total = design.pointCount == Int.max ? "more than \(Int.max)" : "\(design.pointCount)"
            throw r.error(
                top.node("axes") ?? tree, ConfigKeyPath([.key("axes")]),
                "a sweep has at most \(SweepDesign.maxPoints) points; this \(kind.rawValue) design has \(total) (\(axes.map { "\($0.valueCount)" }.joined(separator: " x ")))"
            )
        }
        if kind == .sobol, axes.count > SweepDesign.sobolMaxAxes {
            throw r.error(tree, ConfigKeyPath([.key("axes")]), "GSL's Sobol sequence has at most \(SweepDesign.sobolMaxAxes) axes; got \(axes.count)")
        }
        return Sweep(
            name: name, file: file, scenarioFile: scenarioFile, common: common,
            design: design, resolvedJSON: tree.canonicalJSON)
    }

    static func readAxes(
        _ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader,
        kind: SweepDesign.Kind
    ) throws(ScenarioError) -> [SweepDesign.Axis] {
        let items = try r.list(node, at: path)
        guard !items.isEmpty else { throw r.error(node, path, "expected at least one axis") }
        var axes: [SweepDesign.Axis] = []
        for (i, item) in items.enumerated() {
            let p = path.appending(index: i)
            var m = try r.mapping(item, at: p)
            let keyPath = try m.required("path", "a scenario key path, such as people.sessions_per_day", r.keyPath)
            if axes.contains(where: { $0.path == keyPath }) { throw r.error(item, p.appending("path"), "another axis already sweeps '\(keyPath)'") }
            let fixed = ["policies", "replications", "seed", "name"]
            // A policy's parameter may vary (`policies[1].threshold`); the list, and each
            // policy's rule and label, which name it in every file, may not.
            let policyParameter =
                keyPath.components.count == 3 && keyPath.components[0] == .key("policies")
                && !(keyPath.components[2] == .key("name") || keyPath.components[2] == .key("label"))
            if case .key(let first) = keyPath.components[0], fixed.contains(first), !policyParameter {
                throw r.error(
                    item, p.appending("path"),
                    "'\(first)' cannot be swept: every point runs the same policies and replications from the same seed (common random numbers); set it at the top of the sweep file (a policy's parameter can be swept: policies[1].threshold)"
                )
            }
            var axis = SweepDesign.Axis(path: keyPath)
            axis.values = try m.optional("values", default: nil) { n, p throws(ScenarioError) in
                let list = try r.list(n, at: p)
                guard !list.isEmpty else { throw r.error(n, p, "expected at least one value") }
                return list.map(yamlText)
            }
            let from = m.node("from"), to = m.node("to")
            axis.steps = try m.optional("steps", default: nil) { n, p throws(ScenarioError) in
                try r.integer(n, p, "a number of values from 1 to 100000", in: 1...100_000)
            }
            axis.integer = try m.optional("integer", default: false, r.bool)
            axis.log = try m.optional("log", default: false, r.bool)
            try m.finish()
            switch (axis.values, from, to) {
            case (.some, nil, nil):
                if axis.steps != nil { throw r.error(item, p.appending("steps"), "'steps' spreads a range (from, to); this axis lists its values") }
            case (nil, .some(let a), .some(let b)):
                (axis.from, axis.to, axis.isDuration) = try ends(a, b, p, r)
                if axis.log && !(axis.from > 0 && axis.to > 0) {
                    throw r.error(a, p.appending("from"), "a log-scale range needs both ends above zero")
                }
                if (kind == .grid || kind == .zip) && axis.steps == nil {
                    throw r.error(item, p, "a \(kind.rawValue) design needs 'steps' (how many values from 'from' to 'to') or 'values'")
                }
            default:
                throw r.error(item, p, "expected either 'values' (a list) or a range 'from' and 'to'")
            }
            axes.append(axis)
        }
        return axes
    }

    /// A range's ends: numbers, or durations (`15m`, `2h`) converted to microseconds.
    static func ends(
        _ a: ConfigNode, _ b: ConfigNode, _ p: ConfigKeyPath,
        _ r: ConfigReader
    ) throws(ScenarioError) -> (Double, Double, Bool) {
        let ta = try r.string(a, p.appending("from")), tb = try r.string(b, p.appending("to"))
        if let x = Double(ta), let y = Double(tb), x.isFinite, y.isFinite { return (x, y, false) }
        if let x = ConfigReader.parseDuration(ta), let y = ConfigReader.parseDuration(tb) {
            return (Double(x.microseconds), Double(y.microseconds), true)
        }
        throw r.error(a, p.appending("from"), "expected two numbers or two durations (such as 15m and 2h), got '\(ta)' and '\(tb)'")
    }

    /// A value as result files show it: a quoted scalar's text without its quotes (`"off"`,
    /// quoted so that YAML does not read a boolean, is `off`, as the reader takes it).
    package static func displayText(_ yaml: String) -> String {
        guard yaml.count >= 2, yaml.hasPrefix("\""), yaml.hasSuffix("\""),
            let text = (try? JSONSerialization.jsonObject(with: Data(yaml.utf8), options: .fragmentsAllowed)) as? String
        else { return yaml }
        return text
    }

    /// A node as YAML text that parses back to the same node: scalars as written (quoted if
    /// they were), lists and mappings in flow style.
    static func yamlText(_ node: ConfigNode) -> String {
        switch node.value {
        case .scalar(let text, let plain): plain ? text : JSON.string(text)
        case .sequence, .mapping: node.canonicalJSON
        }
    }
}
