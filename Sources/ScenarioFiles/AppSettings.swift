import PhoneWorld
import Scheduling
import SimEngine
import SimRandom

// An app profile's keys and `system`'s, declared: each a `Setting` of `AppParameters` or
// `SystemRules`, the mechanisms' sections and BGTaskScheduler's tasks among them.

extension AppParameters {
    /// The most tasks an app may declare: each is a lane of the forecast's week and a row of
    /// every table, and a run's cost grows with them (docs/usage.md, "Limits on input").
    static let maxTasks = 1000

    static let habitKeys: [Setting<AppHabit>] = [
        .number("strength", \.strength, in: 0...1, unit: "a share", help: "the share of the app's opens its habit places"),
        .list(
            "anchors", \.anchors, of: anchorKeys, item: AppHabit.Anchor(at: .zero, spread: .minutes(30)), noun: "anchors {at, spread, days, weight}",
            help: "times of day the person opens it"),
        .custom(
            "hourly", .orNone(hourlyKind(NumberRange(0...1000))), help: "relative opens by hour of day",
            get: { $0.hourly.map { .list($0.map { .number($0) }) } ?? .off }, set: { $0.hourly = weights($1) }),
        .custom(
            "weekend_hourly", .orNone(hourlyKind(NumberRange(0...1000))), help: "relative opens by hour at weekends",
            get: { $0.weekendHourly.map { .list($0.map { .number($0) }) } ?? .off }, set: { $0.weekendHourly = weights($1) }),
    ]
    static let anchorKeys: [Setting<AppHabit.Anchor>] = [
        .timeOfDay("at", \.at, help: "the time of day").required(),
        .duration("spread", \.spread, in: .upTo(.hours(12)), help: "spread around it"),
        .choice("days", \.days, help: "the days it holds"),
        .number(
            "weight", \.weight, in: NumberRange(lower: 0, lowerIncluded: false, upper: 1000), unit: "a relative weight", help: "its weight among the anchors"),
    ]

    /// A mechanism's section: a mapping, or a list of them, of its declared keys; stored with
    /// every key, given or default.
    static func mechanism(_ type: any Mechanism.Type) -> Setting<Self> {
        // The closures are Sendable and a metatype existential is not: they capture its name.
        let keys = type.parameters, name = type.name
        let complete: @Sendable (ParameterValue) -> [String: ParameterValue] = { v in
            guard case .section(let given) = v else { return [:] }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0.name, given[$0.name] ?? $0.defaultValue) })
        }
        return type.isList
            ? .custom(
                type.name, .orNone(.list(.section(keys), count: 0...Int.max, noun: "entries")), help: type.summary, get: { _ in .off },
                set: { a, v in if case .list(let items) = v { a.mechanismLists[name] = items.map(complete) } })
            : .custom(
                type.name, .orNone(.section(keys)), help: type.summary, get: { _ in .off },
                set: { a, v in if v != .off { a.mechanisms[name] = complete(v) } })
    }

    static let settings: [Setting<Self>] =
        keys + MechanismRegistry.builtIn.filter { $0.isList }.map(mechanism) + MechanismRegistry.builtIn.filter { !$0.isList }.map(mechanism)

    static let keys: [Setting<Self>] = [
        .custom("name", .label, help: "the app's name", get: { .text($0.name) }, set: { if case .text(let t) = $1 { $0.name = t } }).required(),
        .atLeastZero("usage_weight", \.usageWeight, "a relative weight", help: "its share of the person's app opens"),
        .optional(
            "opens_per_day", \.opensPerDay, .number(NumberRange(0...1000), unit: .perDay("opens")), help: "opens a day", to: { .number($0) },
            from: {
                if case .number(let x) = $0 { x } else { nil }
            }),
        .custom(
            "opens_per_week", .orNone(.number(NumberRange(0...7000), unit: "opens a week")), help: "opens a week, for an app opened less than daily",
            get: { $0.opensGivenWeekly ? $0.opensPerDay.map { .number($0 * 7) } ?? .off : .off },
            set: { a, v in
                guard case .number(let x) = v else { return }
                a.opensPerDay = x / 7
                a.opensGivenWeekly = true
            }),
        .custom(
            "habit", .orNone(.section(habitKeys.map { $0.info(AppHabit()) })), help: "when in the day the person opens it",
            get: { _ in .off },
            set: { a, v in
                guard case .section(let given) = v else { return }
                var h = AppHabit()
                for s in habitKeys { if let x = given[s.name] { s.apply(x, to: &h) } }
                a.habit = h
            }),
        .flag("new_install", \.newInstall, help: "installed at the start: the system has seen no use of it"),
        .number("launch_down_kb", \.launchDownBytes, in: 0...1e9, unit: .kilobytes(), help: "what a launch downloads"),
        .flag("background_refresh", \.backgroundRefresh, help: "its Background App Refresh switch"),
        .optional(
            "cpu_w", \.cpuPowerW, .number(NumberRange(0...), unit: .watts("a CPU power")), help: "its CPU power in the background", to: { .number($0) },
            from: {
                if case .number(let x) = $0 { x } else { nil }
            }),
        .duration("expiration_response", \.expirationResponse, help: "how long its expiration handler takes"),
        .percent("forgets_completion_pct", \.forgetsCompletion, "a share", help: "tasks it never marks complete"),
        .percent("forgets_end_background_pct", \.forgetsEndBackground, "a share", help: "background time it never ends"),
        .flag("cancel_on_open", \.cancelOnOpen, help: "cancels its pending requests when opened"),
        .custom(
            "tasks", .list(.section(RegisteredTasks.parameters), count: 0...maxTasks, noun: "tasks in an app"), help: "its BGTaskScheduler requests",
            get: { _ in .list([]) },
            set: { a, v in
                guard case .list(let items) = v else { return }
                a.tasks = items.map { item in
                    var t = RegisteredTasks.defaults
                    if case .section(let given) = item { for s in RegisteredTasks.settings { if let x = given[s.name] { s.apply(x, to: &t) } } }
                    return t
                }
            }),
        .optional(
            "permitted_identifiers", \.permittedIdentifiers, .list(.pattern, count: 0...Int.max, noun: "identifiers"),
            help: "BGTaskSchedulerPermittedIdentifiers (default: its tasks' identifiers)", to: { .list($0.map { .text($0) }) },
            from: {
                guard case .list(let items) = $0 else { return nil }
                return items.map { if case .text(let t) = $0 { t } else { "" } }
            }),
        .optional(
            "background_modes", \.backgroundModes, .list(.choice(UIBackgroundMode.allCases.map(\.rawValue)), count: 0...Int.max, noun: "modes"),
            help: "UIBackgroundModes", to: { .list($0.map { .text($0.rawValue) }) },
            from: {
                guard case .list(let items) = $0 else { return nil }
                return Set(items.compactMap { if case .text(let t) = $0 { UIBackgroundMode(rawValue: t) } else { nil } })
            }),
        .flag("exits_on_suspend", \.exitsOnSuspend, help: "UIApplicationExitsOnSuspend"),
    ]

    /// What spans keys and tasks: one of the two rates; an identifier registered once;
    /// requirements only for processing.
    static let declared = Declared<Self>(settings: settings) { a, given in
        if given.contains("opens_per_day"), given.contains("opens_per_week") {
            return .at("opens_per_week", "give opens_per_day or opens_per_week, not both")
        }
        for (i, t) in a.tasks.enumerated() {
            if a.tasks[..<i].contains(where: { $0.identifier == t.identifier }) {
                // iOS kills an app that registers one identifier twice (docs/sources.md §2).
                return .at([.key("tasks"), .index(i), .key("id")], "the app already registers '\(t.identifier)'; identifiers are registered once")
            }
            if t.kind == .refresh, t.requiresExternalPower || t.requiresNetworkConnectivity {
                let name = t.requiresExternalPower ? "requires_external_power" : "requires_network"
                return .at([.key("tasks"), .index(i), .key(name)], "only processing tasks have requirements (BGProcessingTaskRequest)")
            }
        }
        return nil
    }
}

extension SystemRules {
    static let presets = BackgroundTimeGrant.allCases.map { NamedValue($0.rawValue, .duration($0.duration), shown: "\(Int($0.duration.seconds)) s") }

    static let cpuMonitorKeys: [Setting<CPUMonitor>] = [
        .number("threshold_pct", \.threshold, in: 0...100, unit: .percent("a share of one core"), help: "share of a core above which processing is killed"),
        .duration("window", \.window, in: .positive, help: "how long the work may stay above it"),
    ]

    static let declared = Declared<Self>(settings: keys + mechanismSections)

    static let mechanismSections: [Setting<Self>] = MechanismRegistry.builtIn.filter { !$0.systemParameters.isEmpty }.map { type in
        let keys = type.systemParameters, name = type.name
        return .custom(
            type.name, .section(keys), help: type.summary, get: { _ in .section([:]) },
            set: { s, v in
                guard case .section(let given) = v else { return }
                s.mechanisms[name] = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, given[$0.name] ?? $0.defaultValue) })
            })
    }

    static let keys: [Setting<Self>] = [
        .duration("refresh_budget", \.refreshBudget, in: .positive, help: "time a refresh task may run"),
        .optional(
            "refresh_grant", \.refreshGrant, .distribution(.seconds), help: "time granted to each refresh, at most the budget", to: { .distribution($0) },
            from: {
                if case .distribution(let d) = $0 { d } else { nil }
            }),
        .duration("processing_budget", \.processingBudget, in: .positive, help: "time a processing task may run"),
        .custom(
            "background_time", .presets(presets, or: .duration(.positive, noneAllowed: false)), help: "finite-length background time",
            get: { .duration($0.backgroundTime) }, set: { if case .duration(let d) = $1 { $0.backgroundTime = d } }),
        .duration(
            "suspension_delay", \.suspensionDelay, in: .zero...(.seconds(60) - .microseconds(1)),
            help: "time before an app with no work is suspended (\"less than 5 seconds\" in iOS)"),
        .duration("fetch_budget", \.fetchBudget, in: .positive, help: "time a legacy background fetch has"),
        .duration("wake_budget", \.wakeBudget, in: .positive, help: "time a silent push or a finished transfer wakes the app for"),
        .duration("region_budget", \.regionBudget, in: .positive, help: "time a geofence crossing wakes the app for"),
        .integer("pushes_per_hour", \.pushesPerHour, in: 1...3600, unit: .perHour("a whole number of pushes"), help: "silent pushes delivered to one app"),
        .duration("expiration_grace", \.expirationGrace, help: "time after an expiration handler before the app is killed"),
        .custom(
            "cpu_monitor", .orFlag(.section(cpuMonitorKeys.map { $0.info(CPUMonitor()) })), help: "the CPU monitor on battery (false: off)",
            get: { _ in .section([:]) },
            set: { s, v in
                switch v {
                case .flag(let on): s.cpuMonitor = on ? CPUMonitor() : nil
                case .section(let given):
                    var c = CPUMonitor()
                    for k in cpuMonitorKeys { if let x = given[k.name] { k.apply(x, to: &c) } }
                    s.cpuMonitor = c
                default: break
                }
            }),
    ]
}

extension Scenario {
    /// `places`: the network model's places, which region monitoring may name (`nil`: any).
    static func readApps(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, places known: [String]? = nil) throws(ScenarioError) -> [AppParameters] {
        var apps: [AppParameters] = []
        let items = try r.list(node, at: path)
        // Each app has its own random streams and books: a limit on what one phone holds.
        guard items.count <= 1000 else { throw r.error(node, path, "expected at most 1000 apps, got \(items.count)") }
        for (i, item) in items.enumerated() {
            let a = try read(AppParameters.declared, into: AppParameters(name: ""), item, path.appending(index: i), r, places: known)
            if apps.contains(where: { $0.name == a.name }) {
                throw r.error(item, path.appending(index: i).appending("name"), "another app is already named '\(a.name)'")
            }
            apps.append(a)
        }
        return apps
    }

    static func readSystem(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> SystemRules {
        try read(SystemRules.declared, into: SystemRules(), node, path, r)
    }

    /// A distribution of seconds: `3s`, `{exponential: 3s}`, `{uniform: [1s, 5s]}`,
    /// `{lognormal: {median: 2s, sigma: 1}}`.
    static func seconds(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> Distribution {
        try distribution(node, path, r, unit: "a duration such as 3s") { n, p throws(ScenarioError) in
            try r.duration(n, p, allowZero: true).seconds
        }
    }

    /// A distribution of sizes in kilobytes (1000 bytes), returned in bytes: `50`,
    /// `{exponential: 50}`, `{uniform: [10, 90]}`, `{lognormal: {median: 50, sigma: 1}}`.
    static func bytes(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> Distribution {
        try distribution(node, path, r, unit: "a size in kilobytes from 0 to 1e9") { n, p throws(ScenarioError) in
            try r.number(n, p, "a size in kilobytes (1000 bytes) from 0 to 1e9 (a terabyte)") { (0...1e9).contains($0) } * 1000
        }
    }

    static func distribution(
        _ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, unit: String,
        _ value: (ConfigNode, ConfigKeyPath) throws(ScenarioError) -> Double
    ) throws(ScenarioError) -> Distribution {
        guard case .mapping(let pairs) = node.value else { return .fixed(try value(node, path)) }
        let shapes = "exponential, uniform or lognormal"
        guard pairs.count == 1, let (key, _, inner) = pairs.first.map({ ($0.key, $0.keyLine, $0.value) }) else {
            throw r.error(node, path, "expected \(unit), or one of \(shapes) with its parameters")
        }
        let p = path.appending(key)
        // Read here, not through a mapping's keys: listed here.
        if let listing = KeyListing.ifActive, key != "lognormal", let text = KeyListing.flow(inner) { listing.add(p, text, given: true) }
        switch key {
        case "exponential":
            return .exponential(mean: try value(inner, p))
        case "uniform":
            let bounds = try r.list(inner, at: p)
            guard bounds.count == 2 else { throw r.error(inner, p, "expected [low, high]") }
            let low = try value(bounds[0], p.appending(index: 0)), high = try value(bounds[1], p.appending(index: 1))
            guard low <= high else { throw r.error(inner, p, "expected low <= high") }
            return .uniform(low: low, high: high)
        case "lognormal":
            var m = try r.mapping(inner, at: p)
            let median = try m.required("median", unit, value)
            guard median > 0 else { throw r.error(inner, p.appending("median"), "expected a median > 0") }
            // Beyond 5 a draw's spread (e^(5 x 6) at six sigma) is no model of anything.
            let sigma = try m.required("sigma", "the shape, a number from 0 to 5") { n, p throws(ScenarioError) in
                try r.number(n, p, "a number from 0 to 5") { (0...5).contains($0) }
            }
            try m.finish()
            return .lognormal(median: median, sigma: sigma)
        default:
            throw r.error(inner, p, "unknown distribution '\(key)'; expected \(unit) or one of \(shapes)")
        }
    }

}
