import Foundation
import PhoneWorld
import Scheduling
import SimEngine
import SimRandom

/// A policy named in a scenario.
public struct PolicySpec: Equatable, Sendable, CustomStringConvertible {
    /// The built-in policies, by the names scenario files use.
    public enum Kind: String, CaseIterable, Sendable {
        case eager
        case chargeOnly = "charge-only"
    }

    public var kind: Kind
    public init(_ kind: Kind) { self.kind = kind }
    public var name: String { kind.rawValue }
    public var description: String { name }
}

/// A complete, validated description of one study: the phone, its apps, the policies to
/// compare, and how many replications to run from which seed.
public struct Scenario: Equatable, Sendable {
    /// Names the output folder and the rows of the output files.
    public var name: String
    public var seed: UInt64
    public var replications: Int
    public var generator: GeneratorKind
    public var setup: PhoneSetup
    public var policies: [PolicySpec]
    /// The file the scenario was read from.
    public var file: String

    /// Reads and validates a scenario file, after applying `overrides` in order.
    /// - Throws: `ScenarioError` naming the file, the key path and the line.
    public static func load(file: String, overrides: [Override] = []) throws(ScenarioError) -> Scenario {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            let reason = FileManager.default.fileExists(atPath: file)
                ? "cannot read the scenario file (\(Self.reason(error)))"
                : "no such scenario file"
            throw ScenarioError(.unreadable, file: file, message: reason)
        }
        return try parse(yaml: text, file: file, overrides: overrides)
    }

    /// Reads and validates scenario YAML; `file` is used in messages and for the default name.
    public static func parse(yaml: String, file: String, overrides: [Override] = []) throws(ScenarioError) -> Scenario {
        var tree = try ConfigNode.parse(yaml: yaml, file: file)
        for o in overrides {
            let value = try ConfigNode.parse(yaml: o.value, file: file, origin: o.description)
            try tree.set(o.path.components[...], to: value, file: file, origin: o.description)
        }
        return try read(tree, file: file)
    }

    private static func reason(_ error: Error) -> String {
        (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }

    static let knownGenerators = Set(GeneratorKind.available)

    static func read(_ tree: ConfigNode, file: String) throws(ScenarioError) -> Scenario {
        let r = ConfigReader(file: file)
        var top = try r.mapping(tree, at: .root)
        let stem = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        let name = try top.optional("name", default: stem, r.name)
        var setup = PhoneSetup()
        setup.duration = try top.required("duration", "a duration such as 7d") { n, p throws(ScenarioError) in
            let d = try r.duration(n, p)
            guard d <= .days(36_500) else { throw r.error(n, p, "expected a duration of at most 100 years") }
            return d
        }
        let seed = try top.optional("seed", default: 1, r.seed)
        let replications = try top.optional("replications", default: 10) { n, p throws(ScenarioError) in
            try r.integer(n, p, "a whole number of replications from 1 to 1000000", in: 1...1_000_000)
        }
        let generator = try top.optional("generator", default: GeneratorKind.mt19937) { n, p throws(ScenarioError) in
            let g = try r.string(n, p)
            guard knownGenerators.contains(g) else {
                throw r.error(n, p, "unknown GSL generator '\(g)'; for example mt19937, ranlxd2, taus2")
            }
            return GeneratorKind(g)
        }
        setup.battery = try top.optional("battery", default: BatteryParameters()) { n, p throws(ScenarioError) in
            try readBattery(n, p, r)
        }
        setup.charging = try top.optional("charging", default: NightlyChargingParameters()) { n, p throws(ScenarioError) in
            try readCharging(n, p, r)
        }
        setup.charger = try top.optional("charger", default: ChargingCurve()) { n, p throws(ScenarioError) in
            try readCharger(n, p, r)
        }
        setup.refreshBudget = try top.optional("system", default: setup.refreshBudget) { n, p throws(ScenarioError) in
            var m = try r.mapping(n, at: p)
            let budget = try m.optional("refresh_budget", default: setup.refreshBudget) { n, p throws(ScenarioError) in
                try r.duration(n, p)
            }
            try m.finish()
            return budget
        }
        setup.apps = try top.required("apps", "a list of apps") { n, p throws(ScenarioError) in
            try readApps(n, p, r)
        }
        let policies = try top.required("policies", "a list of policies, such as [eager, charge-only]") { n, p throws(ScenarioError) in
            try readPolicies(n, p, r)
        }
        try top.finish()
        return Scenario(name: name, seed: seed, replications: replications, generator: generator,
                        setup: setup, policies: policies, file: file)
    }

    static func percent(_ r: ConfigReader, _ what: String) -> (ConfigNode, KeyPath) throws(ScenarioError) -> Double {
        { n, p throws(ScenarioError) in
            try r.number(n, p, "\(what) from 0 to 100 (percent)") { (0...100).contains($0) } / 100
        }
    }

    static func readBattery(_ node: ConfigNode, _ path: KeyPath, _ r: ConfigReader) throws(ScenarioError) -> BatteryParameters {
        var m = try r.mapping(node, at: path)
        var b = BatteryParameters()
        b.model = try m.optional("model", default: b.model) { n, p throws(ScenarioError) in
            let name = try r.string(n, p)
            guard let kind = BatteryModelKind(rawValue: name) else {
                throw r.error(n, p, "unknown battery model '\(name)'; known models: \(BatteryModelKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        b.capacityWh = try m.optional("capacity_wh", default: b.capacityWh) { n, p throws(ScenarioError) in
            try r.number(n, p, "a capacity in watt-hours > 0") { $0 > 0 }
        }
        b.initialCharge = try m.optional("initial_charge_pct", default: b.initialCharge, percent(r, "a charge"))
        b.idleDrainPerHour = try m.optional("idle_drain_pct_per_hour", default: b.idleDrainPerHour) { n, p throws(ScenarioError) in
            try r.number(n, p, "a drain from 0 to 100 (percent of capacity per hour)") { (0...100).contains($0) } / 100
        }
        b.bootCharge = try m.optional("boot_charge_pct", default: b.bootCharge) { n, p throws(ScenarioError) in
            try r.number(n, p, "a boot charge above 0 and at most 100 (percent)") { $0 > 0 && $0 <= 100 } / 100
        }
        b.kibamC = try m.optional("kibam_c", default: b.kibamC) { n, p throws(ScenarioError) in
            try r.number(n, p, "a share of capacity strictly between 0 and 1") { $0 > 0 && $0 < 1 }
        }
        b.kibamK = try m.optional("kibam_k_per_s", default: b.kibamK) { n, p throws(ScenarioError) in
            try r.number(n, p, "a rate constant > 0 (per second)") { $0 > 0 }
        }
        try m.finish()
        return b
    }

    static func readCharging(_ node: ConfigNode, _ path: KeyPath, _ r: ConfigReader) throws(ScenarioError) -> NightlyChargingParameters {
        var m = try r.mapping(node, at: path)
        var c = NightlyChargingParameters()
        c.plugIn = try m.optional("plug_in", default: c.plugIn, r.timeOfDay)
        c.plugInJitter = try m.optional("plug_in_jitter", default: c.plugInJitter) { n, p throws(ScenarioError) in
            try r.duration(n, p, allowZero: true)
        }
        c.unplug = try m.optional("unplug", default: c.unplug, r.timeOfDay)
        c.unplugJitter = try m.optional("unplug_jitter", default: c.unplugJitter) { n, p throws(ScenarioError) in
            try r.duration(n, p, allowZero: true)
        }
        c.nightlyProbability = try m.optional("nights_charged_pct", default: c.nightlyProbability, percent(r, "a share of nights"))
        try m.finish()
        return c
    }

    static func readCharger(_ node: ConfigNode, _ path: KeyPath, _ r: ConfigReader) throws(ScenarioError) -> ChargingCurve {
        var m = try r.mapping(node, at: path)
        var c = ChargingCurve()
        // A preset sets the power; power_w, if given too, wins (so --set can adjust a preset).
        let preset = try m.optional("preset", default: ChargerPreset?.none) { n, p throws(ScenarioError) in
            let name = try r.string(n, p)
            guard let preset = ChargerPreset(rawValue: name) else {
                throw r.error(n, p, "unknown charger preset '\(name)'; known presets: \(ChargerPreset.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return preset
        }
        c.powerW = try m.optional("power_w", default: preset?.powerW ?? c.powerW) { n, p throws(ScenarioError) in
            try r.number(n, p, "a charger power in watts > 0") { $0 > 0 }
        }
        func share(_ key: String, _ value: Double, _ what: String, above zero: Bool = true) throws(ScenarioError) -> Double {
            try m.optional(key, default: value) { n, p throws(ScenarioError) in
                try r.number(n, p, "\(what) \(zero ? "above 0 and at most" : "from 0 to") 100 (percent)") {
                    (zero ? $0 > 0 : $0 >= 0) && $0 <= 100
                } / 100
            }
        }
        c.deliveredShare = try share("delivered_pct", c.deliveredShare, "a share of the rated power")
        c.knee = try share("knee_pct", c.knee, "a charge")
        c.taperFloor = try share("taper_floor_pct", c.taperFloor, "a share of the peak power")
        c.taperStep = try share("taper_step_pct", c.taperStep, "a charge step")
        c.limit = try share("limit_pct", c.limit, "a charge limit")
        c.optimized = try m.optional("optimized", default: c.optimized, r.bool)
        c.optimizedHold = try share("optimized_hold_pct", c.optimizedHold, "a charge")
        c.optimizedLead = try m.optional("optimized_lead", default: c.optimizedLead) { n, p throws(ScenarioError) in
            try r.duration(n, p, allowZero: true)
        }
        try m.finish()
        return c
    }

    static func readApps(_ node: ConfigNode, _ path: KeyPath, _ r: ConfigReader) throws(ScenarioError) -> [AppParameters] {
        var apps: [AppParameters] = []
        for (i, item) in try r.list(node, at: path).enumerated() {
            let p = path.appending(index: i)
            var m = try r.mapping(item, at: p)
            let name = try m.required("name", "the app's name", r.name)
            if apps.contains(where: { $0.name == name }) {
                throw r.error(item, p.appending("name"), "another app is already named '\(name)'")
            }
            var a = AppParameters(name: name)
            a.refreshInterval = try m.optional("refresh_every", default: a.refreshInterval) { n, p throws(ScenarioError) in
                try r.duration(n, p)
            }
            a.earliestBeginDelay = try m.optional("earliest_begin", default: a.earliestBeginDelay) { n, p throws(ScenarioError) in
                try r.duration(n, p, allowZero: true)
            }
            a.meanTaskDuration = try m.optional("mean_task_duration", default: a.meanTaskDuration) { n, p throws(ScenarioError) in
                try r.duration(n, p)
            }
            a.taskPowerW = try m.optional("task_power_w", default: a.taskPowerW) { n, p throws(ScenarioError) in
                try r.number(n, p, "a power in watts >= 0") { $0 >= 0 }
            }
            try m.finish()
            apps.append(a)
        }
        return apps
    }

    static func readPolicies(_ node: ConfigNode, _ path: KeyPath, _ r: ConfigReader) throws(ScenarioError) -> [PolicySpec] {
        let known = PolicySpec.Kind.allCases.map(\.rawValue).joined(separator: ", ")
        var out: [PolicySpec] = []
        let items = try r.list(node, at: path)
        guard !items.isEmpty else { throw r.error(node, path, "expected at least one policy (\(known))") }
        for (i, item) in items.enumerated() {
            let p = path.appending(index: i)
            let nameNode: ConfigNode
            let namePath: KeyPath
            if case .mapping = item.value {
                var m = try r.mapping(item, at: p)
                nameNode = try m.required("name", "a policy name (\(known))") { n, _ in n }
                namePath = p.appending("name")
                try m.finish()
            } else {
                nameNode = item
                namePath = p
            }
            let name = try r.string(nameNode, namePath)
            guard let kind = PolicySpec.Kind(rawValue: name) else {
                throw r.error(nameNode, namePath, "unknown policy '\(name)'; known policies: \(known)")
            }
            if out.contains(PolicySpec(kind)) {
                throw r.error(nameNode, namePath, "policy '\(name)' is listed twice")
            }
            out.append(PolicySpec(kind))
        }
        return out
    }
}
