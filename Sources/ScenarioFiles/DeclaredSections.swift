import PhoneWorld
import Scheduling
import SimEngine

/// A section of a scenario as declared: its keys (`Setting`s of the type it fills) and the
/// rules that span keys (`top_up_until` after `top_up_from`), which no one key can check.
struct Declared<Root>: Sendable {
    let settings: [Setting<Root>]
    /// Checks the section once read, and may complete it (a value that follows another key's);
    /// `given` holds the keys the section gave.
    var check: @Sendable (inout Root, _ given: Set<String>) -> Violation? = { _, _ in nil }

    /// A rule broken: the key (a path below the section) and what was expected.
    struct Violation: Sendable {
        var path: [ConfigKeyPath.Component]
        var message: String
        init(_ path: [ConfigKeyPath.Component], _ message: String) {
            self.path = path
            self.message = message
        }
        init(_ key: String, _ message: String) { self.init([.key(key)], message) }
        static func at(_ path: [ConfigKeyPath.Component], _ message: String) -> Self { Self(path, message) }
        static func at(_ key: String, _ message: String) -> Self { Self(key, message) }
    }
}

extension Scenario {
    /// `root` with the keys of the mapping at `node` set as `declared` says: each key read and
    /// checked by its kind, absent ones left at their values in `root` (listed as defaults by
    /// `validate --print`), unknown ones an error that names the known ones; then the rules.
    static func read<Root>(
        _ declared: Declared<Root>, into root: Root, _ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, places: [String]? = nil
    ) throws(ScenarioError) -> Root {
        var root = root
        var m = try r.mapping(node, at: path)
        var given = Set<String>()
        for setting in declared.settings {
            let kind = setting.kind
            let read = { (n: ConfigNode, p: ConfigKeyPath) throws(ScenarioError) in try readParameter(kind, n, p, r, places: places) }
            let value =
                setting.isRequired
                ? try m.required(setting.name, kind.expected, read)
                : try m.given(setting.name, kind, default: { setting.value(in: root) }, read)
            guard let value else { continue }
            given.insert(setting.name)
            setting.apply(value, to: &root)
        }
        try m.finish()
        if let broken = declared.check(&root, given) {
            var n = node, p = path
            for step in broken.path {
                p = p.appending(step)
                switch (step, n.value) {
                case (.key(let k), .mapping(let pairs)): if let v = pairs.first(where: { $0.key == k })?.value { n = v }
                case (.index(let i), .sequence(let items)) where items.indices.contains(i): n = items[i]
                default: break
                }
            }
            throw r.error(n, p, broken.message)
        }
        return root
    }

    /// The keys of the mapping at `node` that it gives, read as `declared` says; absent ones
    /// are listed at their defaults.
    static func readGiven(
        _ declared: [PolicyParameterInfo], _ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, places: [String]? = nil
    ) throws(ScenarioError) -> [String: ParameterValue] {
        var m = try r.mapping(node, at: path)
        var values: [String: ParameterValue] = [:]
        for info in declared {
            let kind = info.kind
            let read = { (n: ConfigNode, p: ConfigKeyPath) throws(ScenarioError) in try readParameter(kind, n, p, r, places: places) }
            let value = info.isRequired ? try m.required(info.name, kind.expected, read) : try m.given(info.name, kind, default: { info.defaultValue }, read)
            if let value { values[info.name] = value }
        }
        try m.finish()
        return values
    }

    /// One value, read and checked as its kind says.
    /// `places`: the network model's places a `places` key may name (`nil`: any).
    static func readParameter(
        _ kind: PolicyParameterKind, _ n: ConfigNode, _ p: ConfigKeyPath, _ r: ConfigReader, places known: [String]? = nil
    ) throws(ScenarioError) -> PolicyParameterValue {
        switch kind {
        case .duration(let range, let noneAllowed):
            if noneAllowed, case .scalar("none", _) = n.value { return .off }
            let t = try r.text(n, p, expected: kind.expected)
            guard let d = ConfigReader.parseDuration(t) else { throw r.error(n, p, ConfigReader.durationError(t)) }
            guard range.contains(d) else { throw r.error(n, p, "expected \(kind.expected), got '\(t)'") }
            return .duration(d)
        case .timeOfDay:
            return .duration(try r.timeOfDay(n, p))
        case .number(let range, _):
            return .number(try r.number(n, p, kind.expected) { range.contains($0) })
        case .optionalNumber(let range, _):
            if case .scalar("none", _) = n.value { return .off }
            return .number(try r.number(n, p, kind.expected) { range.contains($0) })
        case .choices(let names):
            if case .scalar("none", _) = n.value { return .off }
            var chosen: [String] = []
            for (j, item) in try r.list(n, at: p).enumerated() {
                let name = try r.string(item, p.appending(index: j))
                guard names.contains(name) else {
                    throw r.error(item, p.appending(index: j), "expected one of \(names.joined(separator: ", ")), got '\(name)'")
                }
                chosen.append(name)
            }
            return .names(chosen)
        case .choice(let names):
            let name = try r.string(n, p)
            guard names.contains(name) else { throw r.error(n, p, "expected \(kind.expected), got '\(name)'") }
            return .text(name)
        case .integer(let range, _):
            return .integer(try r.integer(n, p, kind.expected, in: range))
        case .flag:
            return .flag(try r.bool(n, p))
        case .text:
            return .text(try r.name(n, p))
        case .label:
            return .text(try r.label(n, p))
        case .prose:
            return .text(try r.string(n, p))
        case .pattern:
            // An entry may end in `.*`: every identifier under it (iOS 26).
            if case .scalar(let t, let plain) = n.value, t.hasSuffix(".*"), t.count > 2 {
                var stem = n
                stem.value = .scalar(String(t.dropLast(2)), plain: plain)
                _ = try r.name(stem, p)
                return .text(t)
            }
            return .text(try r.name(n, p))
        case .file:
            return .file(try r.string(n, p), relativeTo: n.file ?? r.file)
        case .distribution(.seconds):
            return .distribution(try seconds(n, p, r))
        case .distribution(.kilobytes):
            return .distribution(try bytes(n, p, r))
        case .places:
            var places: [String] = []
            for (j, item) in try r.list(n, at: p).enumerated() {
                let place = try r.name(item, p.appending(index: j))
                if let known, !known.contains(place) {
                    throw r.error(
                        item, p.appending(index: j),
                        "expected a place of the network model (\(known.isEmpty ? "it names none" : known.joined(separator: ", "))), got '\(place)'")
                }
                places.append(place)
            }
            return .names(places)
        case .orNone(let inner):
            if case .scalar("none", _) = n.value { return .off }
            return try readParameter(inner, n, p, r, places: known)
        case .orFlag(let inner):
            if case .scalar = n.value { return .flag(try r.bool(n, p)) }
            return try readParameter(inner, n, p, r, places: known)
        case .presets(let named, let inner):
            if case .scalar(let t, _) = n.value {
                if let preset = named.first(where: { $0.name == t }) { return preset.value }
                if case .duration = inner, ConfigReader.parseDuration(t) == nil { throw r.error(n, p, "expected \(kind.expected), got '\(t)'") }
            }
            return try readParameter(inner, n, p, r, places: known)
        case .section(let keys):
            return .section(try readGiven(keys, n, p, r, places: known))
        case .list(let item, let count, _):
            let items = try r.list(n, at: p)
            guard count.contains(items.count) else { throw r.error(n, p, "expected \(kind.expected), got \(items.count)") }
            var out: [ParameterValue] = []
            out.reserveCapacity(items.count)
            for (j, node) in items.enumerated() { out.append(try readParameter(item, node, p.appending(index: j), r, places: known)) }
            return .list(out)
        }
    }
}

extension ConfigReader.Mapping {
    /// The value under `key`, read by `read`, or nil when the mapping does not give it: then
    /// `default` is listed for `validate --print` (an unset optional value as `~`).
    mutating func given(
        _ key: String, _ kind: PolicyParameterKind, default defaultValue: () -> ParameterValue,
        _ read: (ConfigNode, ConfigKeyPath) throws(ScenarioError) -> ParameterValue
    ) throws(ScenarioError) -> ParameterValue? {
        guard let v = node(key) else {
            if let listing = KeyListing.ifActive {
                let value = defaultValue()
                if case .orNone = kind, value == .off {
                    listing.add(path.appending(key), "~", given: false)
                } else {
                    listing.addDefault(value, at: path.appending(key), read)
                }
            }
            return nil
        }
        return try read(v, path.appending(key))
    }
}

extension Declared {
    /// The keys with their values in `root` as defaults.
    func keys(_ root: Root) -> [PolicyParameterInfo] { settings.map { $0.info(root) } }
}

extension Scenario {
    /// Every world and app section's keys as declared, by the section's key path (`apps[]`
    /// for each app): what the key reference in docs/scenarios.md and the units' test read.
    package static var declaredSections: [(section: String, keys: [PolicyParameterInfo])] {
        [
            ("phone", PhoneSection.declared.keys(PhoneSection())),
            ("charging", ChargingSection.declared.keys(ChargingSection())),
            ("charger", ChargerSection.declared.keys(ChargerSection())),
            ("network", NetworkSection.declared.keys(NetworkSection())),
            ("settings", SettingsSection.declared.keys(SettingsSection())),
            ("people", PeopleSection.declared.keys(PeopleSection())),
            ("load", LoadSection.declared.keys(LoadSection())),
            ("system", SystemRules.declared.keys(SystemRules())),
            ("apps[]", AppParameters.declared.keys(AppParameters(name: ""))),
        ]
    }
}

extension Scenario {
    /// docs/scenarios.md's "Every key of the world's and apps' sections": each declared key
    /// with what it accepts, its default and its help, nested keys by their paths.
    package static var keyReference: String {
        var out = ""
        func walk(_ prefix: String, _ keys: [PolicyParameterInfo]) {
            for k in keys {
                let path = prefix + k.name
                switch k.kind {
                case .section(let nested), .orNone(.section(let nested)), .orFlag(.section(let nested)):
                    out += "\(path): \(brief(k.kind)); \(k.help)\n"
                    walk(path + ".", nested)
                case .list(.section(let nested), _, _), .orNone(.list(.section(let nested), _, _)):
                    out += "\(path): \(brief(k.kind)); \(k.help)\n"
                    walk(path + "[].", nested)
                default:
                    out += "\(path): \(k.kind.expected), \(k.isRequired ? "required" : "default \(shown(k.defaultValue, k.kind))"); \(k.help)\n"
                }
            }
        }
        for (section, keys) in declaredSections { walk(section + ".", keys) }
        return out
    }

    /// A nesting kind in a few words.
    static func brief(_ kind: PolicyParameterKind) -> String {
        switch kind {
        case .section: "a mapping of the keys below"
        case .orNone(let inner): "\(brief(inner)), or none"
        case .orFlag(let inner): "true, false or \(brief(inner))"
        case .list(_, let count, let noun): PolicyParameterKind.list(.flag, count: count, noun: noun).expected
        default: kind.expected
        }
    }

    /// A default as a scenario writes it.
    static func shown(_ value: ParameterValue, _ kind: PolicyParameterKind) -> String {
        switch value {
        case .duration(let d):
            if case .timeOfDay = kind {
                let s = d.microseconds / 1_000_000
                return (s / 3600 < 10 ? "0" : "") + "\(s / 3600):" + (s / 60 % 60 < 10 ? "0" : "") + "\(s / 60 % 60)"
            }
            return "\(d)"
        case .number(let x): return KeyListing.number(x)
        case .integer(let n): return "\(n)"
        case .flag(let b): return "\(b)"
        case .text(let t): return t.isEmpty ? "none" : t
        case .off: return "none"
        case .names(let n): return "[\(n.joined(separator: ", "))]"
        case .list(let items): return "[\(items.map { shown($0, kind) }.joined(separator: ", "))]"
        case .distribution(let d):
            let kb: Bool
            if case .distribution(.kilobytes) = kind { kb = true } else { kb = false }
            func q(_ x: Double) -> String { kb ? KeyListing.number(x / 1000) : "\(SimDuration(seconds: x))" }
            return switch d {
            case .fixed(let v): q(v)
            case .exponential(let m): "{exponential: \(q(m))}"
            case .uniform(let a, let b): "{uniform: [\(q(a)), \(q(b))]}"
            case .lognormal(let m, let s): "{lognormal: {median: \(q(m)), sigma: \(KeyListing.number(s))}}"
            }
        case .file(let path, _): return path
        case .section: return "its keys' defaults"
        }
    }
}
