import PhoneWorld
import Scheduling
import SimEngine
import SimRandom

/// Reads the `apps` and `system` sections: the app models (usually profiles under
/// `models/apps/`) and the limits iOS sets on background work.
extension Scenario {
    /// `places`: the network model's places, which region monitoring may name (`nil`: any).
    static func readApps(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, places known: [String]? = nil) throws(ScenarioError) -> [AppParameters] {
        var apps: [AppParameters] = []
        let items = try r.list(node, at: path)
        // Each app has its own random streams and books: a limit on what one phone holds.
        guard items.count <= 1000 else { throw r.error(node, path, "expected at most 1000 apps, got \(items.count)") }
        for (i, item) in items.enumerated() {
            let p = path.appending(index: i)
            var m = try r.mapping(item, at: p)
            let name = try m.required("name", "the app's name", r.label)
            if apps.contains(where: { $0.name == name }) {
                throw r.error(item, p.appending("name"), "another app is already named '\(name)'")
            }
            var a = AppParameters(name: name)
            a.usageWeight = try m.optional("usage_weight", default: a.usageWeight) { n, p throws(ScenarioError) in
                try r.number(n, p, "a relative weight >= 0") { $0 >= 0 }
            }
            let perDay = try m.optional("opens_per_day", default: nil) { n, p throws(ScenarioError) in
                try r.number(n, p, "opens a day from 0 to 1000") { (0...1000).contains($0) }
            }
            let perWeek = try m.optional("opens_per_week", default: nil) { n, p throws(ScenarioError) in
                try r.number(n, p, "opens a week from 0 to 7000") { (0...7000).contains($0) }
            }
            if perDay != nil && perWeek != nil {
                throw r.error(item, p.appending("opens_per_week"), "give opens_per_day or opens_per_week, not both")
            }
            a.opensPerDay = perDay ?? perWeek.map { $0 / 7 }
            a.opensGivenWeekly = perWeek != nil
            a.habit = try m.optional("habit", default: nil) { n, p throws(ScenarioError) in try readHabit(n, p, r) }
            a.newInstall = try m.optional("new_install", default: a.newInstall, r.bool)
            a.launchDownBytes =
                try m.optional("launch_down_kb", default: a.launchDownBytes / 1000) { n, p throws(ScenarioError) in
                    try r.number(n, p, "a size in kilobytes (1000 bytes) from 0 to 1e9 (a terabyte)") { (0...1e9).contains($0) }
                } * 1000
            a.backgroundRefresh = try m.optional("background_refresh", default: a.backgroundRefresh, r.bool)
            a.cpuPowerW = try m.optional("cpu_w", default: a.cpuPowerW) { n, p throws(ScenarioError) in
                try r.number(n, p, "a CPU power in watts >= 0") { $0 >= 0 }
            }
            a.expirationResponse = try m.optional("expiration_response", default: a.expirationResponse) { n, p throws(ScenarioError) in
                try r.duration(n, p, allowZero: true)
            }
            a.forgetsCompletion = try m.optional("forgets_completion_pct", default: a.forgetsCompletion, percent(r, "a share"))
            a.forgetsEndBackground = try m.optional("forgets_end_background_pct", default: a.forgetsEndBackground, percent(r, "a share"))
            a.cancelOnOpen = try m.optional("cancel_on_open", default: a.cancelOnOpen, r.bool)
            a.tasks = try m.optional("tasks", default: []) { n, p throws(ScenarioError) in try readTasks(n, p, r) }
            a.permittedIdentifiers = try m.optional("permitted_identifiers", default: nil) { n, p throws(ScenarioError) in
                var ids: [String] = []
                for (j, item) in try r.list(n, at: p).enumerated() {
                    // An entry may end in `.*`: every identifier under it (iOS 26).
                    if case .scalar(let t, let plain) = item.value, t.hasSuffix(".*"), t.count > 2 {
                        var stem = item
                        stem.value = .scalar(String(t.dropLast(2)), plain: plain)
                        _ = try r.name(stem, p.appending(index: j))
                        ids.append(t)
                    } else {
                        ids.append(try r.name(item, p.appending(index: j)))
                    }
                }
                return ids
            }
            a.backgroundModes = try m.optional("background_modes", default: nil) { n, p throws(ScenarioError) in
                var modes = Set<UIBackgroundMode>()
                for (j, item) in try r.list(n, at: p).enumerated() {
                    modes.insert(try r.choice(item, p.appending(index: j), UIBackgroundMode.self, what: "background mode"))
                }
                return modes
            }
            a.exitsOnSuspend = try m.optional("exits_on_suspend", default: a.exitsOnSuspend, r.bool)
            for type in MechanismRegistry.builtIn where type.isList {
                if let entries = try m.optional(
                    type.name, default: [[String: ParameterValue]]?.none,
                    { n, p throws(ScenarioError) in
                        var out: [[String: ParameterValue]] = []
                        for (j, item) in try r.list(n, at: p).enumerated() {
                            out.append(try readMechanism(type.parameters, item, p.appending(index: j), r, places: known))
                        }
                        return out
                    })
                {
                    a.mechanismLists[type.name] = entries
                }
            }
            for type in MechanismRegistry.builtIn where !type.isList {
                if let values = try m.optional(
                    type.name, default: [String: ParameterValue]?.none,
                    { n, p throws(ScenarioError) in
                        try readMechanism(type.parameters, n, p, r, places: known)
                    })
                {
                    a.mechanisms[type.name] = values
                }
            }
            try m.finish()
            apps.append(a)
        }
        return apps
    }

    /// An app's `tasks`: each entry's keys as `RegisteredTasks` declares them; then what spans
    /// keys and entries (an identifier registered once, requirements only for processing).
    /// The most tasks an app may declare: each is a lane of the forecast's week and a row of
    /// every table, and a run's cost grows with them (docs/usage.md, "Limits on input").
    static let maxTasks = 1000

    static func readTasks(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> [AppTask] {
        var out: [AppTask] = []
        let items = try r.list(node, at: path)
        guard items.count <= maxTasks else { throw r.error(node, path, "expected at most \(maxTasks) tasks in an app, got \(items.count)") }
        for (i, item) in items.enumerated() {
            let p = path.appending(index: i)
            let t = RegisteredTasks.task(try readDeclared(RegisteredTasks.parameters, item, p, r))
            func key(_ name: String) -> ConfigNode {
                guard case .mapping(let pairs) = item.value, let pair = pairs.first(where: { $0.key == name }) else { return item }
                return pair.value
            }
            let id = t.identifier
            if out.contains(where: { $0.identifier == id }) {
                // iOS kills an app that registers one identifier twice (docs/sources.md §2).
                throw r.error(key("id"), p.appending("id"), "the app already registers '\(id)'; identifiers are registered once")
            }
            if t.kind == .refresh, t.requiresExternalPower || t.requiresNetworkConnectivity {
                let name = t.requiresExternalPower ? "requires_external_power" : "requires_network"
                throw r.error(key(name), p.appending(name), "only processing tasks have requirements (BGProcessingTaskRequest)")
            }
            out.append(t)
        }
        return out
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

    static func readSystem(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> SystemRules {
        var m = try r.mapping(node, at: path)
        var s = SystemRules()
        s.refreshBudget = try m.optional("refresh_budget", default: s.refreshBudget) { n, p throws(ScenarioError) in try r.duration(n, p) }
        s.refreshGrant = try m.optional("refresh_grant", default: s.refreshGrant) { n, p throws(ScenarioError) in
            if case .scalar("none", _) = n.value { return nil }
            return try seconds(n, p, r)
        }
        s.processingBudget = try m.optional("processing_budget", default: s.processingBudget) { n, p throws(ScenarioError) in
            try r.duration(n, p)
        }
        s.backgroundTime = try m.optional("background_time", default: s.backgroundTime) { n, p throws(ScenarioError) in
            if case .scalar(let t, _) = n.value, let grant = BackgroundTimeGrant(rawValue: t) { return grant.duration }
            guard case .scalar(let t, _) = n.value, ConfigReader.parseDuration(t) != nil else {
                let presets = BackgroundTimeGrant.allCases.map { "\($0.rawValue) (\(Int($0.duration.seconds)) s)" }
                throw r.error(n, p, "expected a duration or a preset: \(presets.joined(separator: ", "))")
            }
            return try r.duration(n, p)
        }
        s.suspensionDelay = try m.optional("suspension_delay", default: s.suspensionDelay) { n, p throws(ScenarioError) in
            let d = try r.duration(n, p, allowZero: true)
            guard d < .seconds(60) else { throw r.error(n, p, "expected a duration under 1 minute (\"less than 5 seconds\" in iOS)") }
            return d
        }
        s.fetchBudget = try m.optional("fetch_budget", default: s.fetchBudget) { n, p throws(ScenarioError) in try r.duration(n, p) }
        s.wakeBudget = try m.optional("wake_budget", default: s.wakeBudget) { n, p throws(ScenarioError) in try r.duration(n, p) }
        s.regionBudget = try m.optional("region_budget", default: s.regionBudget) { n, p throws(ScenarioError) in try r.duration(n, p) }
        s.pushesPerHour = try m.optional("pushes_per_hour", default: s.pushesPerHour) { n, p throws(ScenarioError) in
            try r.integer(n, p, "a whole number of pushes per hour from 1 to 3600", in: 1...3600)
        }
        s.expirationGrace = try m.optional("expiration_grace", default: s.expirationGrace) { n, p throws(ScenarioError) in
            try r.duration(n, p, allowZero: true)
        }
        s.cpuMonitor = try m.optional("cpu_monitor", default: s.cpuMonitor) { n, p throws(ScenarioError) in
            if case .scalar = n.value { return try r.bool(n, p) ? CPUMonitor() : nil }
            var c = try r.mapping(n, at: p)
            var monitor = CPUMonitor()
            monitor.threshold = try c.optional("threshold_pct", default: monitor.threshold, percent(r, "a share of one core"))
            monitor.window = try c.optional("window", default: monitor.window) { n, p throws(ScenarioError) in try r.duration(n, p) }
            try c.finish()
            return monitor
        }
        for type in MechanismRegistry.builtIn where !type.systemParameters.isEmpty {
            if let values = try m.optional(
                type.name, default: [String: ParameterValue]?.none,
                { n, p throws(ScenarioError) in
                    try readMechanism(type.systemParameters, n, p, r)
                })
            {
                s.mechanisms[type.name] = values
            }
        }
        try m.finish()
        return s
    }

    /// A declared mechanism's section (`continued_processing: {per_open_pct: 10}`): each key
    /// as the mechanism declares it, absent ones at their defaults; unknown keys are errors
    /// that name the known ones.
    static func readMechanism(
        _ declared: [PolicyParameterInfo], _ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, places: [String]? = nil
    ) throws(ScenarioError) -> [String: ParameterValue] {
        let values = try readDeclared(declared, node, path, r, places: places)
        var keyed: [String: ParameterValue] = [:]
        keyed.reserveCapacity(declared.count)
        for k in declared.indices { keyed[declared[k].name] = values[k] }
        return keyed
    }

    /// The values of a mapping's `declared` keys, in their order.
    static func readDeclared(
        _ declared: [PolicyParameterInfo], _ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, places: [String]? = nil
    ) throws(ScenarioError) -> [ParameterValue] {
        var m = try r.mapping(node, at: path)
        var values: [ParameterValue] = []
        values.reserveCapacity(declared.count)
        for k in declared.indices {
            let kind = declared[k].kind
            let read = { (n: ConfigNode, p: ConfigKeyPath) throws(ScenarioError) in try readParameter(kind, n, p, r, places: places) }
            values.append(
                try declared[k].isRequired
                    ? m.required(declared[k].name, kind.expected, read) : m.optional(declared[k].name, default: declared[k].defaultValue, read))
        }
        try m.finish()
        return values
    }

    /// `habit: {strength: 0.7, anchors: [{at: "07:30", spread: 20m, days: weekdays}], hourly: [...]}`.
    static func readHabit(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> AppHabit {
        var m = try r.mapping(node, at: path)
        var h = AppHabit()
        h.strength = try m.optional("strength", default: h.strength) { n, p throws(ScenarioError) in
            try r.number(n, p, "a share from 0 to 1") { (0...1).contains($0) }
        }
        h.anchors = try m.optional("anchors", default: []) { n, p throws(ScenarioError) in
            var out: [AppHabit.Anchor] = []
            for (i, item) in try r.list(n, at: p).enumerated() {
                let q = p.appending(index: i)
                var a = try r.mapping(item, at: q)
                let at = try a.required("at", "a time of day such as 07:30", r.timeOfDay)
                let spread = try a.optional("spread", default: SimDuration.minutes(30)) { n, p throws(ScenarioError) in
                    let d = try r.duration(n, p)
                    guard d <= .hours(12) else { throw r.error(n, p, "expected a spread from 1us to 12h, got \(d)") }
                    return d
                }
                let days = try a.optional("days", default: AppHabit.Days.all) { n, p throws(ScenarioError) in
                    let t = try r.string(n, p)
                    guard let d = AppHabit.Days(rawValue: t) else {
                        throw r.error(n, p, "expected one of \(AppHabit.Days.allCases.map(\.rawValue).joined(separator: ", ")), got '\(t)'")
                    }
                    return d
                }
                let weight = try a.optional("weight", default: 1.0) { n, p throws(ScenarioError) in
                    try r.number(n, p, "a relative weight > 0 and at most 1000") { $0 > 0 && $0 <= 1000 }
                }
                try a.finish()
                out.append(AppHabit.Anchor(at: at, spread: spread, days: days, weight: weight))
            }
            return out
        }
        func hours(_ key: String) throws(ScenarioError) -> [Double]? {
            try m.optional(key, default: [Double]?.none) { n, p throws(ScenarioError) in
                let items = try r.list(n, at: p)
                guard items.count == 24 else { throw r.error(n, p, "expected 24 weights, one per hour from 00:00, got \(items.count)") }
                var w: [Double] = []
                for (i, item) in items.enumerated() {
                    w.append(try r.number(item, p.appending(index: i), "a relative weight from 0 to 1000") { (0...1000).contains($0) })
                }
                return w
            }
        }
        h.hourly = try hours("hourly")
        h.weekendHourly = try hours("weekend_hourly")
        try m.finish()
        return h
    }
}
