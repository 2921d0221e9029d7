import PhoneWorld
import Scheduling
import SimEngine

/// What `bgsim forecast` simulates: a developer's app profile placed among the apps of a base
/// scenario (the bundled fleet, or one named person), under the policies asked for.
package struct ForecastSetup: Sendable {
    /// The base scenario with the app in it: every person of its fleet, or one person's days.
    package var scenario: Scenario
    /// The developer's app, as an index into the scenario's apps.
    package var app: Int
    /// The app profile's file.
    package var appFile: String
    /// The overrides that place the app and set the study (`apps`, `policies`, ...), the
    /// user's `--set` last.
    package var overrides: [Override]
    /// The base scenario's file.
    package var baseFile: String
    /// The developer's own what-ifs (`--change NAME:KEY=VALUE`), in the order first named:
    /// each a name and the values it sets, run in the forecast's paired sweep.
    package var changes: [(name: String, sets: [(path: String, value: String)])] = []

    /// `NAME:KEY=VALUE` as its three parts; `nil` when one is missing. KEY is a scenario key
    /// path, or the app's own as `app.KEY` (`app.opens_per_day`, `app.tasks[0].interval`).
    package static func change(parsing text: String) -> (name: String, path: String, value: String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, let o = Override(parsing: String(text[text.index(after: colon)...])) else { return nil }
        return (name, o.path.description, o.value)
    }

    /// The app's parameters as read.
    package var appParameters: AppParameters { scenario.setup.apps[app] }

    /// Reads the app profile on its own (errors name its file, line and key), then the base
    /// scenario with the app in its list (replacing a bundled app of the same name), the
    /// `policies`, `replications` (people, or days of one person), `duration` and, for one
    /// person, `people` set and the fleet emptied; `more` (the user's `--set`) apply last.
    package static func load(
        app appFile: String, base baseFile: String, person: String?, policies: [String], replications: Int,
        duration: String?, seed: String?, more: [Override]
    ) throws(ScenarioError) -> ForecastSetup {
        let text = try InputFile.read(appFile, .profile)
        let node = try ConfigNode.parse(yaml: text, file: appFile)
        let reader = ConfigReader(file: appFile)
        let list = ConfigNode(value: .sequence([node]), line: node.line, column: node.column, origin: nil, file: appFile)
        let read: [AppParameters]
        do {
            read = try Scenario.readApps(list, ConfigKeyPath(), reader)
        } catch {
            // Key paths of the file itself: `tasks[0].kind`, not the list's `[0].tasks[0].kind`.
            var path = Substring(error.keyPath)
            if path.hasPrefix("[0]") { path = path.dropFirst(3) }
            if path.hasPrefix(".") { path = path.dropFirst() }
            throw ScenarioError(
                error.kind, file: error.file, keyPath: String(path), line: error.line, column: error.column, origin: error.origin,
                message: error.message)
        }
        let name = read[0].name
        let baseText = try InputFile.read(baseFile, .scenario)
        let tree = try ConfigNode.parse(yaml: baseText, file: baseFile)
        guard case .mapping(let pairs) = tree.value, let appsNode = pairs.first(where: { $0.key == "apps" })?.value,
            case .sequence(let items) = appsNode.value
        else { throw ScenarioError(.invalid, file: baseFile, keyPath: "apps", message: "expected a list of apps to place the app among") }
        // The base's apps but one of the same name, then the developer's.
        let kept = items.filter { item in
            switch item.value {
            case .scalar(let text, _): return text != name
            case .mapping(let m): return !m.contains { ($0.key == "profile" || $0.key == "name") && $0.value.scalarText == name }
            case .sequence: return true
            }
        }
        let apps = "[" + (kept.map(\.canonicalJSON) + [node.canonicalJSON]).joined(separator: ",") + "]"
        func set(_ key: String, _ value: String, _ origin: String) -> Override {
            Override(path: ConfigKeyPath([.key(key)]), value: value, origin: origin)
        }
        var overrides = [
            set("apps", apps, "the app profile \(appFile)"),
            set("policies", "[" + policies.joined(separator: ", ") + "]", "--policy"),
            set("replications", String(replications), person == nil ? "--people" : "--days"),
            set("name", "forecast-" + name, "bgsim forecast"),
        ]
        if let person {
            overrides += [set("people", person, "--person \(person)"), set("fleet", "[]", "--person \(person)")]
        }
        if let duration { overrides.append(set("duration", duration, "--duration \(duration)")) }
        if let seed { overrides.append(set("seed", seed, "--seed \(seed)")) }
        overrides += more
        let scenario = try Scenario.load(file: baseFile, overrides: overrides)
        guard let index = scenario.setup.apps.firstIndex(where: { $0.name == name }) else {
            throw ScenarioError(.invalid, file: appFile, keyPath: "name", message: "the app '\(name)' is not in the scenario after --set")
        }
        return ForecastSetup(scenario: scenario, app: index, appFile: appFile, overrides: overrides, baseFile: baseFile)
    }

    /// The scenario with `more` overrides after the forecast's, and each fleet parameter at a
    /// path in `pinned` drawn as that one value for everyone. A pinned parameter still takes its
    /// draw, so every other drawn value, and so each person, stays the same.
    package func variant(_ more: [Override], pinned: [(path: String, value: String)] = []) throws(ScenarioError) -> Scenario {
        let pins = pinned.map { Override(path: ConfigKeyPath(parsing: $0.path)!, value: $0.value, origin: "forecast: \($0.path)=\($0.value)") }
        var s = try Scenario.load(file: baseFile, overrides: overrides + more + pins)
        for pin in pins {
            if let k = s.fleet.firstIndex(where: { $0.path == pin.path }) { s.fleet[k].distribution = .values([pin.value], weights: [1]) }
        }
        return s
    }
}

extension ConfigNode {
    /// A scalar's text; `nil` for a mapping or list.
    var scalarText: String? {
        if case .scalar(let text, _) = value { return text }
        return nil
    }
}
