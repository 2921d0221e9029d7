import Foundation
import ResultFiles
import SimEngine
import SimRandom

/// A population instead of one person: key paths of the scenario drawn per replication, so
/// replication r is one person, the same under every policy (common random numbers) and at
/// every point of a sweep.
///
/// ```yaml
/// fleet:
///   - {path: people.sessions_per_day, lognormal: {median: 50, sigma: 0.6}, min: 10, max: 200}
///   - {path: charging, values: [nightly, top-up, erratic], weights: [6, 3, 1]}
/// ```
package struct FleetParameter: Sendable, Equatable {
    /// How a value is drawn.
    package enum Distribution: Sendable, Equatable {
        /// One of the listed values (YAML text), with these weights (all 1 unless given).
        case values([String], weights: [Double])
        /// Uniform between the ends.
        case uniform(from: Double, to: Double)
        /// Log-normal with this median and log-scale standard deviation.
        case lognormal(median: Double, sigma: Double)
        /// Normal with this mean and standard deviation.
        case normal(mean: Double, sd: Double)
    }

    /// The scenario value drawn (`people.sessions_per_day`).
    package var path: ConfigKeyPath
    /// Its distribution.
    package var distribution: Distribution
    /// Bounds a drawn number is clamped to (a log-normal or normal needs both).
    package var min: Double = -.infinity, max: Double = .infinity
    /// Whether numbers are durations (in microseconds here, written in whole seconds).
    package var isDuration = false
    /// Whether numbers are rounded to whole numbers.
    package var integer = false

    /// The value drawn from `stream`, as the YAML text of an override.
    func draw(_ stream: RandomStream) -> String {
        var x: Double
        switch distribution {
        case .values(let values, let weights):
            let u = stream.uniform() * weights.reduce(0, +)
            var sum = 0.0
            for (i, w) in weights.enumerated() {
                sum += w
                if u < sum { return values[i] }
            }
            return values[values.count - 1]
        case .uniform(let a, let b): x = a + (b - a) * stream.uniform()
        case .lognormal(let median, let sigma): x = stream.lognormal(mu: Foundation.log(median), sigma: sigma)
        case .normal(let mean, let sd): x = stream.normal(mu: mean, sigma: sd)
        }
        return text(Swift.min(Swift.max(x, min), max))
    }

    /// A number as an override writes it: a duration in whole seconds, a whole number, or four
    /// significant digits (so that runs.csv shows the value the person ran with, readably).
    func text(_ x: Double) -> String {
        if isDuration { return "\(Int64((x / 1e6).rounded()))s" }
        if integer || x == 0 || !x.isFinite { return CSVWriter.number(x.rounded(), count: true) }
        let scale = Foundation.pow(10, 3 - Foundation.floor(Foundation.log10(abs(x))))
        let v = (x * scale).rounded() / scale
        return CSVWriter.number(v, count: v == v.rounded() && abs(v) < 1e15)
    }

    /// The values a check reads: each listed value, or both bounds of a number.
    var extremes: [String] {
        switch distribution {
        case .values(let values, _): values
        case .uniform(let a, let b): [text(Swift.max(Swift.min(a, b), min)), text(Swift.min(Swift.max(a, b), max))]
        case .lognormal, .normal: [text(min), text(max)]
        }
    }
}

extension Scenario {
    /// The stream a fleet's person is drawn from: (seed, replication, `fleet`), point 0 in a
    /// sweep too, so that replication r is the same person at every point.
    static func fleetStream(seed: UInt64, replication: Int, generator: GeneratorKind) -> RandomStream? {
        try? RandomStream(StreamID(masterSeed: seed, replication: UInt64(replication), name: "fleet"), kind: generator)
    }

    /// The fleet's values for `replication` as result files show them (`Sweep.displayText`).
    package func fleetDisplayValues(replication: Int) -> [String] {
        fleetValues(replication: replication).map(Sweep.displayText)
    }

    /// The fleet's values for `replication`, one per parameter, as overrides write them; empty
    /// without a fleet. A pure function of the scenario's seed and the replication.
    package func fleetValues(replication: Int) -> [String] {
        guard !fleet.isEmpty, let stream = Self.fleetStream(seed: seed, replication: replication, generator: generator) else { return [] }
        return fleet.map { $0.draw(stream) }
    }

    /// The person of `replication`: this scenario read again with the fleet's values for it
    /// set; the scenario itself without a fleet.
    package func person(replication: Int) throws(ScenarioError) -> Scenario {
        guard !fleet.isEmpty, let source else { return self }
        let values = fleetValues(replication: replication)
        return try source.read(with: zip(fleet, values).map { Override(path: $0.path, value: $1, origin: "fleet") }, seed: seed)
    }

    /// `fleet:` a list of `{path, <distribution>, min, max, integer}`.
    static func readFleet(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> [FleetParameter] {
        var out: [FleetParameter] = []
        for (i, item) in try r.list(node, at: path).enumerated() {
            let p = path.appending(index: i)
            var m = try r.mapping(item, at: p)
            let keyPath = try m.required("path", "a scenario key path, such as people.sessions_per_day", r.keyPath)
            if case .key(let first) = keyPath.components[0],
                ["fleet", "policies", "replications", "seed", "name", "generator", "metrics", "models"].contains(first)
            {
                throw r.error(item, p.appending("path"), "'\(first)' cannot vary from person to person: every person runs the same study")
            }
            if out.contains(where: { $0.path == keyPath }) { throw r.error(item, p.appending("path"), "another fleet parameter already draws '\(keyPath)'") }
            func number(_ n: ConfigNode, _ q: ConfigKeyPath) throws(ScenarioError) -> (Double, Bool) {
                let t = try r.string(n, q)
                if let x = Double(t), x.isFinite { return (x, false) }
                if let d = ConfigReader.parseDuration(t) { return (Double(d.microseconds), true) }
                throw r.error(n, q, "expected a number or a duration such as 30m, got '\(t)'")
            }
            var kinds: [(FleetParameter.Distribution, Bool)] = []
            var durations: [Bool] = []
            if let n = m.node("values") {
                let list = try r.list(n, at: p.appending("values"))
                guard !list.isEmpty else { throw r.error(n, p.appending("values"), "expected at least one value") }
                let weights = try m.optional("weights", default: [Double](repeating: 1, count: list.count)) { w, q throws(ScenarioError) in
                    let ws = try r.list(w, at: q)
                    guard ws.count == list.count else { throw r.error(w, q, "expected one weight per value (\(list.count)), got \(ws.count)") }
                    var out: [Double] = []
                    for (j, x) in ws.enumerated() { out.append(try r.number(x, q.appending(index: j), "a weight >= 0") { $0 >= 0 && $0 < 1e12 }) }
                    guard out.contains(where: { $0 > 0 }) else { throw r.error(w, q, "expected a weight above 0") }
                    return out
                }
                kinds.append((.values(list.map(Sweep.yamlText), weights: weights), false))
            }
            if let n = m.node("uniform") {
                var u = try r.mapping(n, at: p.appending("uniform"))
                let toNode = u.node("to")
                let (a, da) = try u.required("from", "the low end", number)
                let (b, db) = try u.required("to", "the high end", number)
                try u.finish()
                guard da == db else { throw r.error(n, p.appending("uniform"), "expected two numbers or two durations") }
                // Reversed ends would draw from the range all the same, but say something else.
                guard a <= b else { throw r.error(toNode ?? n, p.appending("uniform").appending("to"), "expected a high end no lower than 'from'") }
                kinds.append((.uniform(from: a, to: b), da))
                durations.append(da)
            }
            if let n = m.node("lognormal") {
                var u = try r.mapping(n, at: p.appending("lognormal"))
                let (median, d) = try u.required("median", "the median", number)
                let sigma = try u.required("sigma", "the log-scale standard deviation") { s, q throws(ScenarioError) in
                    try r.number(s, q, "a standard deviation from 0 to 5") { (0...5).contains($0) }
                }
                try u.finish()
                guard median > 0 else { throw r.error(n, p.appending("lognormal").appending("median"), "expected a median above 0") }
                kinds.append((.lognormal(median: median, sigma: sigma), d))
            }
            if let n = m.node("normal") {
                var u = try r.mapping(n, at: p.appending("normal"))
                let (mean, d) = try u.required("mean", "the mean", number)
                let (sd, dsd) = try u.required("sd", "the standard deviation", number)
                try u.finish()
                guard sd >= 0, d == dsd else { throw r.error(n, p.appending("normal"), "expected a standard deviation >= 0 in the mean's unit") }
                kinds.append((.normal(mean: mean, sd: sd), d))
            }
            guard kinds.count == 1, let (distribution, isDuration) = kinds.first else {
                throw r.error(item, p, "expected one distribution: values (with weights), uniform {from, to}, lognormal {median, sigma} or normal {mean, sd}")
            }
            var parameter = FleetParameter(path: keyPath, distribution: distribution)
            parameter.isDuration = isDuration
            let lo = try m.optional("min", default: (Double?).none) { n, q throws(ScenarioError) in
                let (x, d) = try number(n, q)
                guard d == isDuration else { throw r.error(n, q, "expected \(isDuration ? "a duration" : "a number"), as the distribution's") }
                return x
            }
            let hi = try m.optional("max", default: (Double?).none) { n, q throws(ScenarioError) in
                let (x, d) = try number(n, q)
                guard d == isDuration else { throw r.error(n, q, "expected \(isDuration ? "a duration" : "a number"), as the distribution's") }
                return x
            }
            parameter.integer = try m.optional("integer", default: false, r.bool)
            try m.finish()
            switch distribution {
            case .lognormal, .normal:
                guard let lo, let hi else {
                    throw r.error(
                        item, p,
                        "a \(distribution.isLognormal ? "log-normal" : "normal") draw needs 'min' and 'max' (the range the scenario accepts, checked before any run)"
                    )
                }
                guard lo <= hi else { throw r.error(item, p.appending("min"), "expected min <= max") }
                parameter.min = lo
                parameter.max = hi
            case .uniform, .values:
                if lo != nil || hi != nil, case .values = distribution { throw r.error(item, p, "'min' and 'max' bound a number; these are listed values") }
                if let lo { parameter.min = lo }
                if let hi { parameter.max = hi }
            }
            out.append(parameter)
        }
        return out
    }
}

extension FleetParameter.Distribution {
    var isLognormal: Bool { if case .lognormal = self { true } else { false } }
}

/// What reading a scenario again takes: its text, file, overrides and the parsed documents,
/// kept by a scenario with a fleet to read each person.
package struct ScenarioSource: Sendable, Equatable {
    let yaml: String
    let file: String
    let overrides: [Override]
    let documents: DocumentCache
    /// Names the source among others (a cache's key): SHA-256 of the file, text and overrides.
    package let key: String

    init(yaml: String, file: String, overrides: [Override], documents: DocumentCache) {
        self.yaml = yaml
        self.file = file
        self.overrides = overrides
        self.documents = documents
        key = SHA256.hex(([file, yaml] + overrides.map(\.description)).joined(separator: "\u{0}"))
    }

    /// The scenario read with `more` overrides after its own.
    func read(with more: [Override], seed: UInt64) throws(ScenarioError) -> Scenario {
        try Scenario.parse(yaml: yaml, file: file, overrides: overrides + more, documents: documents, readingPerson: true)
    }

    package static func == (a: ScenarioSource, b: ScenarioSource) -> Bool {
        a.yaml == b.yaml && a.file == b.file && a.overrides == b.overrides
    }
}
