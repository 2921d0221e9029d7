import Foundation
import PhoneWorld
import ResultFiles
import Scheduling
import SimEngine
import SimRandom

/// A policy in a scenario: its rule with parameters, and the label that names it in the outputs
/// (the rule's name unless the scenario gives one; distinct within a scenario).
public struct PolicySpec: Equatable, Sendable, CustomStringConvertible {
    /// A policy type, built-in or registered, and the parameter values a scenario set for it.
    package struct Rule: Equatable, Sendable {
        /// The policy type.
        package let type: any RegisteredPolicy.Type
        /// The values set, by parameter name; the others keep their defaults.
        package var values: [String: PolicyParameterValue]

        /// The rule of `type` with `values` set (none: every parameter at its default).
        package init(_ type: any RegisteredPolicy.Type, values: [String: PolicyParameterValue] = [:]) {
            self.type = type
            self.values = values
        }

        /// The rule's name as scenario files write it.
        package var name: String { type.policyName }

        /// The policy these values make, in the box the simulation is specialised for.
        package func makePolicy() -> DynamicPolicy { type.makeDynamic(values) }

        /// Same type, and every parameter the same, whether set or left at its default.
        package static func == (a: Rule, b: Rule) -> Bool {
            guard ObjectIdentifier(a.type) == ObjectIdentifier(b.type) else { return false }
            // Compared often (results are grouped by policy); the defaults are made only when
            // the values set differ.
            return a.values == b.values
                || a.type.parameterInfo.allSatisfy { (a.values[$0.name] ?? $0.defaultValue) == (b.values[$0.name] ?? $0.defaultValue) }
        }
    }

    /// The rule and its parameters.
    package var rule: Rule
    /// The name in every output; the rule's name unless the scenario gives a `label`.
    package var label: String

    /// `rule` under `label` (by default the rule's name).
    package init(_ rule: Rule, label: String? = nil) {
        self.rule = rule
        self.label = label ?? rule.name
    }

    /// The policy `type` with its default parameters, under `label` (by default its name).
    package init(_ type: any RegisteredPolicy.Type, label: String? = nil) {
        self.init(Rule(type), label: label)
    }

    /// The name in output files: the label.
    public var name: String { label }
    /// The label.
    public var description: String { label }
    /// Whether the policy sees the future (`isClairvoyant`): a bound, not a deployable policy.
    package var isBound: Bool { rule.type.isClairvoyant }
}

/// How a scenario's results are measured and compared.
package struct MetricsSettings: Equatable, Sendable {
    /// A launch counts as served fresh when the app's content is at most this old
    /// (`fresh_within`; an assumption: one hour, the scale of the refresh intervals in
    /// models/apps/).
    package var freshWithin: SimDuration = .hours(1)
    /// The label of the policy the others are compared with, pair by pair, in
    /// `comparisons.csv` (`baseline`; the first policy by default).
    package var baseline: String = ""
    /// Settings comparing with `baseline` (the first policy when empty), fresh within an hour.
    package init(baseline: String = "") { self.baseline = baseline }
}

/// A complete, validated description of one study: the phone, its apps, the policies to
/// compare, and how many replications to run from which seed.
public struct Scenario: Equatable, Sendable {
    /// Names the output folder and the rows of the output files.
    package var name: String
    /// The master seed of every random stream.
    package var seed: UInt64
    /// Replications per policy.
    public var replications: Int
    /// The GSL generator the streams use.
    package var generator: GeneratorKind
    /// The phone, its world and its apps.
    public var setup: PhoneSetup
    /// The policies to compare, in output order.
    public var policies: [PolicySpec]
    /// How results are measured and compared (the `metrics:` section).
    package var metrics = MetricsSettings()
    /// The file the scenario was read from.
    package var file: String
    /// The scenario as read, profiles in place and overrides applied, as canonical JSON: its
    /// SHA-256 in `manifest.json` identifies what was simulated. Empty for a person of a fleet
    /// (`person(replication:)`), which the fleet's scenario and the replication identify.
    package var resolvedJSON = ""
    /// The key paths drawn per replication, one person each (`fleet:`); empty for one person.
    package var fleet: [FleetParameter] = []
    /// What reading a person of the fleet takes; `nil` without a fleet.
    package var source: ScenarioSource?

    /// Reads and validates a scenario file, after applying `overrides` in order.
    /// - Throws: `ScenarioError` naming the file, the key path and the line.
    public static func load(file: String, overrides: [Override] = []) throws(ScenarioError) -> Scenario {
        let text = try InputFile.read(file, .scenario)
        return try parse(yaml: text, file: file, overrides: overrides)
    }

    /// Reads and validates scenario YAML; `file` is used in messages and for the default name.
    /// `documents` keeps the parsed files for the next scenario read from the same ones.
    package static func parse(yaml: String, file: String, overrides: [Override] = []) throws(ScenarioError) -> Scenario {
        try parse(yaml: yaml, file: file, overrides: overrides, documents: DocumentCache())
    }

    package static func parse(
        yaml: String, file: String, overrides: [Override], documents: DocumentCache, readingPerson: Bool = false
    ) throws(ScenarioError) -> Scenario {
        let resolved = try tree(yaml: yaml, file: file, overrides: overrides, documents: documents)
        var scenario = try read(resolved, file: file, documents: documents)
        // A person of a fleet is identified by the fleet's scenario and the replication: the
        // JSON of each was about a million instructions, a sixtieth of a forecast's person.
        if !readingPerson { scenario.resolvedJSON = resolved.canonicalJSON }
        if !scenario.fleet.isEmpty && !readingPerson {
            let source = ScenarioSource(yaml: yaml, file: file, overrides: overrides, documents: documents)
            // Every value a person may take is read once now, so that no run meets a bad one:
            // each listed value, and each number's bounds.
            for parameter in scenario.fleet {
                for value in parameter.extremes {
                    _ = try source.read(with: [Override(path: parameter.path, value: value, origin: "fleet: \(parameter.path)=\(value)")], seed: scenario.seed)
                }
            }
            scenario.source = source
        }
        return scenario
    }

    /// The document with every profile reference replaced by the profile, after overrides:
    /// what `read` checks.
    ///
    /// Overrides that choose a profile (`people=heavy`, `network.cellular_radio=3g`, `models`),
    /// or set a value that may name profiles (`apps=[news, mail]`), apply first, then profiles
    /// are resolved, then every other override applies to the result, so `--set` reaches any
    /// field of a profile, inside its lists too, in whatever order the options were given.
    static func tree(
        yaml: String, file: String, overrides: [Override] = [],
        documents: DocumentCache = DocumentCache()
    ) throws(ScenarioError) -> ConfigNode {
        var tree = try documents.tree(yaml: yaml, file: file)
        if let base = Sweep.baseScenarioEntry(tree) {
            throw ScenarioError(
                .invalid, file: file, keyPath: "scenario", line: base.keyLine,
                message: "this is a sweep, not a scenario (it names a base scenario and axes); "
                    + "run it with: \(ProgramName.current) sweep \(Quoting.shell(file))")
        }
        // An app profile (tasks of its own, no apps or policies) given where a scenario goes.
        if case .mapping(let pairs) = tree.value, let tasks = pairs.first(where: { $0.key == "tasks" }),
            !pairs.contains(where: { $0.key == "apps" || $0.key == "policies" })
        {
            throw ScenarioError(
                .invalid, file: file, keyPath: "tasks", line: tasks.keyLine,
                message: "this is an app profile, not a scenario (it has tasks of its own and no apps or policies); "
                    + "forecast it with: \(ProgramName.current) forecast \(Quoting.shell(file)), or list it in a scenario's apps")
        }
        func apply(_ o: Override) throws(ScenarioError) {
            let value = try documents.value(o.value, file: file, origin: o.description)
            try tree.set(o.path.components[...], to: value, file: file, origin: o.description)
            // `policies=[eager, ios]` names policies again: written as mappings, so that a later
            // `policies[1].threshold` (or a sweep axis) reaches their parameters.
            if o.path.components.first == .key("policies") { expandPolicyNames(&tree) }
        }
        let choosesProfile = { (o: Override) in
            o.path == ConfigKeyPath([.key("models")]) || Profiles.isReference(o.path) || Profiles.mayHoldReferences(o.path)
                || (o.path.components.last == .key("profile") && Profiles.isReference(ConfigKeyPath(Array(o.path.components.dropLast()))))
        }
        for o in overrides where choosesProfile(o) { try apply(o) }
        try Profiles.resolve(&tree, modelsDirs: try modelsDirs(tree, file: file), file: file, documents: documents)
        expandPolicyNames(&tree)
        for o in overrides where !choosesProfile(o) { try apply(o) }
        return tree
    }

    /// Writes each policy given by name alone (`- coalesce`) as `{name: coalesce}`, so that
    /// `--set policies[2].max_delay=30m` (and a sweep axis) reaches its parameters.
    static func expandPolicyNames(_ tree: inout ConfigNode) {
        guard case .mapping(var pairs) = tree.value,
            let k = pairs.firstIndex(where: { $0.key == "policies" }),
            case .sequence(var items) = pairs[k].value.value
        else { return }
        for i in items.indices {
            guard case .scalar = items[i].value else { continue }
            var wrapper = items[i]
            wrapper.value = .mapping([(key: "name", keyLine: items[i].line, value: items[i])])
            items[i] = wrapper
        }
        pairs[k].value.value = .sequence(items)
        tree.value = .mapping(pairs)
    }

    /// The folders searched for profiles, in order: the scenario's own folder (laid out like
    /// `models/`: `phones/`, `people/`, ...), then `models:` relative to the scenario file (by
    /// default the scenario folder's parent, so `models/scenarios/x.yaml` finds `models/`), then
    /// the bundled `models/` folder, so a scenario copied anywhere still finds the bundled
    /// profiles. Each folder once.
    static func modelsDirs(_ tree: ConfigNode, file: String) throws(ScenarioError) -> [String] {
        let here = (file as NSString).deletingLastPathComponent
        var dirs = [here.isEmpty ? "." : here, try modelsDir(tree, file: file)]
        if let bundled = BundledModels.folder { dirs.append(bundled) }
        var seen = Set<String>()
        return dirs.filter { seen.insert(URL(literalPath: $0).standardizedFileURL.path).inserted }
    }

    /// `models:` relative to the scenario file, by default the scenario folder's parent
    /// (`models/scenarios/x.yaml` -> `models/`).
    static func modelsDir(_ tree: ConfigNode, file: String) throws(ScenarioError) -> String {
        let here = (file as NSString).deletingLastPathComponent
        guard case .mapping(let pairs) = tree.value, let node = pairs.first(where: { $0.key == "models" })?.value,
            !node.isNull
        else {
            let last = (here as NSString).lastPathComponent
            if here.isEmpty || last == "." || last == ".." { return ((here.isEmpty ? "." : here) as NSString).appendingPathComponent("..") }
            let parent = (here as NSString).deletingLastPathComponent
            return parent.isEmpty ? "." : parent
        }
        let dir = try ConfigReader(file: file).string(node, ConfigKeyPath([.key("models")]))
        return dir.hasPrefix("/") ? dir : ((here.isEmpty ? "." : here) as NSString).appendingPathComponent(dir)
    }

    static let knownGenerators = Set(GeneratorKind.available)

    static func read(_ tree: ConfigNode, file: String, documents: DocumentCache) throws(ScenarioError) -> Scenario {
        let r = ConfigReader(file: file)
        var top = try r.mapping(tree, at: .root)
        let stem = URL(literalPath: file).deletingPathExtension().lastPathComponent
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
                throw r.error(n, p, "expected one of GSL's generators for simulation (\(GeneratorKind.available.joined(separator: ", "))), not '\(g)'")
            }
            return GeneratorKind(g)
        }
        _ = top.node("models")  // read before profiles were resolved
        (setup.battery, setup.power) = try top.required("phone", "a phone profile such as iphone-15") { n, p throws(ScenarioError) in
            try readPhone(n, p, r)
        }
        (setup.charging, setup.chargingTrace) = try top.required("charging", "a charging habit such as nightly") { n, p throws(ScenarioError) in
            try readCharging(n, p, r)
        }
        setup.charger = try top.optional("charger", default: ChargingCurve()) { n, p throws(ScenarioError) in
            try readCharger(n, p, r)
        }
        (setup.network, setup.networkTrace) = try top.required("network", "a network environment such as home-office") { n, p throws(ScenarioError) in
            try readNetwork(n, p, r)
        }
        var optimizedCharging = setup.charger.optimized
        (setup.settings, optimizedCharging) = try top.optional("settings", default: (setup.settings, optimizedCharging)) { n, p throws(ScenarioError) in
            try readSettings(n, p, r)
        }
        setup.charger.optimized = optimizedCharging
        setup.system = try top.optional("system", default: setup.system) { n, p throws(ScenarioError) in
            try readSystem(n, p, r)
        }
        // Places apps may monitor: those the network model names (none known with a trace).
        let places: [String]? =
            setup.networkTrace != nil
            ? nil
            : Array(Set((setup.network.weekday + setup.network.weekend).compactMap(\.place))).sorted()
        setup.apps = try top.required("apps", "a list of apps") { n, p throws(ScenarioError) in
            try documents.apps(n, file: file, places: places) { () throws(ScenarioError) in try readApps(n, p, r, places: places) }
        }
        let appNames = setup.apps.map(\.name)
        (setup.people, setup.peopleTrace) = try top.required("people", "a people profile such as median") { n, p throws(ScenarioError) in
            try readPeople(n, p, r, apps: appNames)
        }
        let policies = try top.required("policies", "a list of policies, such as [eager, charge-only]") { n, p throws(ScenarioError) in
            try readPolicies(n, p, r)
        }
        let metrics = try top.optional("metrics", default: MetricsSettings(baseline: policies[0].label)) { n, p throws(ScenarioError) in
            try readMetrics(n, p, r, policies: policies)
        }
        setup.load = try top.optional("load", default: LoadProfile.none) { n, p throws(ScenarioError) in
            try readLoad(n, p, r, capacityWh: setup.battery.capacityWh)
        }
        let fleet = try top.optional("fleet", default: []) { n, p throws(ScenarioError) in try readFleet(n, p, r) }
        if policies.count * replications > Self.maxUnits {
            throw r.error(
                top.node("replications") ?? tree, ConfigKeyPath([.key("replications")]),
                "\(policies.count) policies x \(replications) replications is \(policies.count * replications) runs; "
                    + "a study has at most \(Self.maxUnits) (its summary keeps about 1.5 kB a run)")
        }
        try top.finish()
        var scenario = Scenario(
            name: name, seed: seed, replications: replications, generator: generator,
            setup: setup, policies: policies, metrics: metrics, file: file)
        scenario.fleet = fleet
        return scenario
    }

    static func readMetrics(
        _ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader,
        policies: [PolicySpec]
    ) throws(ScenarioError) -> MetricsSettings {
        var m = try r.mapping(node, at: path)
        var out = MetricsSettings(baseline: policies[0].label)
        out.freshWithin = try m.optional("fresh_within", default: out.freshWithin) { n, p throws(ScenarioError) in try r.duration(n, p) }
        out.baseline = try m.optional("baseline", default: out.baseline) { n, p throws(ScenarioError) in
            let label = try r.string(n, p)
            guard policies.contains(where: { $0.label == label }) else {
                throw r.error(n, p, "expected the label of one of the scenario's policies (\(policies.map(\.label).joined(separator: ", "))), got '\(label)'")
            }
            return label
        }
        try m.finish()
        return out
    }

    static func percent(_ r: ConfigReader, _ what: String) -> (ConfigNode, ConfigKeyPath) throws(ScenarioError) -> Double {
        { n, p throws(ScenarioError) in
            try r.number(n, p, "\(what) from 0 to 100 (percent)") { (0...100).contains($0) } / 100
        }
    }

    static func readPolicies(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> [PolicySpec] {
        let known = PolicyRegistry.names.joined(separator: ", ")
        var out: [PolicySpec] = []
        let items = try r.list(node, at: path)
        guard !items.isEmpty else { throw r.error(node, path, "expected at least one policy (\(known))") }
        guard items.count <= 64 else { throw r.error(node, path, "expected at most 64 policies, got \(items.count)") }
        for (i, item) in items.enumerated() {
            let p = path.appending(index: i)
            let spec: PolicySpec
            let labelNode: ConfigNode
            if case .mapping = item.value {
                spec = try readPolicy(item, p, r)
                labelNode = item
            } else {
                spec = PolicySpec(try rule(named: try r.string(item, p), item, p, r))
                labelNode = item
            }
            if out.contains(where: { $0.label == spec.label }) {
                throw r.error(labelNode, p, "policy label '\(spec.label)' is used twice; give each variant a distinct 'label'")
            }
            out.append(spec)
        }
        return out
    }

    static func rule(named name: String, _ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> PolicySpec.Rule {
        guard let type = PolicyRegistry.type(named: name) else {
            var message = "unknown policy '\(name)'"
            let names = PolicyRegistry.names
            if let close = names.min(by: { editDistance($0, name) < editDistance($1, name) }), ConfigReader.Mapping.isClose(name, to: close) {
                message += "; did you mean '\(close)'? Known policies: "
            } else {
                message += "; known policies: "
            }
            message += names.joined(separator: ", ") + " (a policy of your own is known only to the program built with it, "
            message += "not to \(ProgramName.current): run the scenario with that program, the my-bgsim of docs/policies.md)"
            throw r.error(node, path, message)
        }
        return PolicySpec.Rule(type)
    }
}

extension Scenario {
    /// A duration written as scenario files write them (`30s`, `15m`, `1h30m`, `7d`).
    package static func duration(_ text: String) -> SimDuration? { ConfigReader.parseDuration(text) }

    /// The most units (point x policy x replication runs) a study may have: every unit's
    /// results stay in memory for the summary, about 1.5 kB each, so this bounds a study's
    /// memory at about 3 GB (docs/usage.md).
    package static let maxUnits = 2_000_000
}
