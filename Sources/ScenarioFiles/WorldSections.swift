import Foundation
import PhoneWorld
import SimEngine

/// Readers of the world's sections of a scenario: phone, charging, charger, network, people
/// and settings. Each returns the model's parameters (and a trace, where one can replace the
/// sampled model), checking every value's range and unit.
extension Scenario {
    /// `phone:` a battery and the power of its components.
    static func readPhone(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> (BatteryParameters, PowerParameters) {
        var m = try r.mapping(node, at: path)
        _ = try m.optional("description", default: "", r.string)
        let battery = try m.optional("battery", default: BatteryParameters()) { n, p throws(ScenarioError) in
            try readBattery(n, p, r)
        }
        let power = try m.optional("power", default: PowerParameters()) { n, p throws(ScenarioError) in
            var m = try r.mapping(n, at: p)
            var w = PowerParameters()
            func watts(_ key: String, _ value: Double) throws(ScenarioError) -> Double {
                try m.optional(key, default: value) { n, p throws(ScenarioError) in
                    try r.number(n, p, "a power in watts >= 0") { $0 >= 0 }
                }
            }
            w.screenW = try watts("screen_w", w.screenW)
            w.cpuForegroundW = try watts("cpu_foreground_w", w.cpuForegroundW)
            w.cpuBackgroundW = try watts("cpu_background_w", w.cpuBackgroundW)
            w.callW = try watts("call_w", w.callW)
            try m.finish()
            return w
        }
        try m.finish()
        return (battery, power)
    }

    static func readBattery(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> BatteryParameters {
        var m = try r.mapping(node, at: path)
        var b = BatteryParameters()
        b.model = try m.optional("model", default: b.model) { n, p throws(ScenarioError) in
            try r.choice(n, p, BatteryModelKind.self, what: "battery model")
        }
        b.capacityWh = try m.optional("capacity_wh", default: b.capacityWh) { n, p throws(ScenarioError) in
            // A megawatt-hour is no phone; in joules it stays far from a double's overflow.
            try r.number(n, p, "a capacity in watt-hours above 0 and at most 1000000") { $0 > 0 && $0 <= 1e6 }
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

    /// `charging:` the person's habit, or a trace of sessions.
    static func readCharging(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> (ChargingHabit, [ChargingSession]?) {
        var m = try r.mapping(node, at: path)
        _ = try m.optional("description", default: "", r.string)
        var c = ChargingHabit()
        c.plugIn = try m.optional("plug_in", default: c.plugIn, r.timeOfDay)
        c.plugInJitter = try m.optional("plug_in_jitter", default: c.plugInJitter, r.durationOrZero)
        c.unplug = try m.optional("unplug", default: c.unplug, r.timeOfDay)
        c.unplugJitter = try m.optional("unplug_jitter", default: c.unplugJitter, r.durationOrZero)
        c.nightlyProbability = try m.optional("nights_charged_pct", default: c.nightlyProbability, percent(r, "a share of nights"))
        c.topUpsPerDay = try m.optional("top_ups_per_day", default: c.topUpsPerDay) { n, p throws(ScenarioError) in
            try r.number(n, p, "a mean number of top-ups per day from 0 to 100") { (0...100).contains($0) }
        }
        c.topUpFrom = try m.optional("top_up_from", default: c.topUpFrom, r.timeOfDay)
        c.topUpUntil = try m.optional("top_up_until", default: c.topUpUntil, r.timeOfDay)
        c.topUpMean = try m.optional("top_up_mean", default: c.topUpMean) { n, p throws(ScenarioError) in try r.duration(n, p) }
        if c.topUpUntil < c.topUpFrom, let n = m.nodeIfPresent("top_up_until") {
            throw r.error(n, path.appending("top_up_until"), "expected a time of day after top_up_from")
        }
        let trace = try m.optional("trace", default: [ChargingSession]?.none) { n, p throws(ScenarioError) in
            try TraceReader.charging(file: try r.string(n, p), relativeTo: n.file ?? r.file)
        }
        try m.finish()
        return (c, trace)
    }

    static func readCharger(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> ChargingCurve {
        var m = try r.mapping(node, at: path)
        var c = ChargingCurve()
        // A preset sets the power; power_w, if given too, wins (so --set can adjust a preset).
        let preset = try m.optional("preset", default: ChargerPreset?.none) { n, p throws(ScenarioError) in
            try r.choice(n, p, ChargerPreset.self, what: "charger preset")
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
        c.optimizedHold = try share("optimized_hold_pct", c.optimizedHold, "a charge")
        c.optimizedLead = try m.optional("optimized_lead", default: c.optimizedLead, r.durationOrZero)
        try m.finish()
        return c
    }

    /// `network:` the environment's schedule and radios, or a trace of changes.
    static func readNetwork(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> (NetworkEnvironment, [NetworkChange]?) {
        var m = try r.mapping(node, at: path)
        _ = try m.optional("description", default: "", r.string)
        var e = NetworkEnvironment()
        e.wifiRadio = try m.required("wifi_radio", "a radio profile such as wifi") { n, p throws(ScenarioError) in try readRadio(n, p, r) }
        e.cellularRadio = try m.required("cellular_radio", "a radio profile such as lte") { n, p throws(ScenarioError) in try readRadio(n, p, r) }
        let trace = try m.optional("trace", default: [NetworkChange]?.none) { n, p throws(ScenarioError) in
            try TraceReader.network(file: try r.string(n, p), relativeTo: n.file ?? r.file)
        }
        func schedule(_ n: ConfigNode, _ p: ConfigKeyPath) throws(ScenarioError) -> [NetworkEnvironment.Segment] {
            var out: [NetworkEnvironment.Segment] = []
            let items = try r.list(n, at: p)
            guard !items.isEmpty else { throw r.error(n, p, "expected at least one segment, the first at 00:00") }
            for (i, item) in items.enumerated() {
                let ip = p.appending(index: i)
                var s = try r.mapping(item, at: ip)
                let at = try s.required("at", "a time of day such as 08:30") { n, p throws(ScenarioError) in
                    let t = try r.timeOfDay(n, p)
                    if i == 0, t != .zero { throw r.error(n, p, "the first segment must start at 00:00") }
                    if let last = out.last, t <= last.start { throw r.error(n, p, "segments must be in time-of-day order") }
                    return t
                }
                let kind = try s.required("network", "wifi, cellular or none") { n, p throws(ScenarioError) in
                    try r.choice(n, p, NetworkKind.self, what: "network")
                }
                func mbps(_ key: String) throws(ScenarioError) -> Double {
                    guard kind != .none else { _ = s.node(key); return 0 }
                    return try s.required(key, "a throughput in Mbit/s from 0.001 to 1000000") { n, p throws(ScenarioError) in
                        try r.number(n, p, "a throughput in Mbit/s from 0.001 to 1000000") { (0.001...1e6).contains($0) }
                    }
                }
                let state = NetworkState(kind: kind, downMbps: try mbps("down_mbps"), upMbps: try mbps("up_mbps"))
                let place = try s.optional("place", default: String?.none) { n, p throws(ScenarioError) in try r.name(n, p) }
                try s.finish()
                out.append(.init(start: at, state: state, place: place))
            }
            return out
        }
        if trace == nil {
            e.weekday = try m.required("weekday", "a list of segments {at, network, down_mbps, up_mbps, place}", schedule)
            e.weekend = try m.optional("weekend", default: e.weekday, schedule)
        } else {
            _ = m.node("weekday")
            _ = m.node("weekend")
        }
        e.jitter = try m.optional("jitter", default: e.jitter, r.durationOrZero)
        e.deadSpotsPerHour = try m.optional("dead_spots_per_hour", default: e.deadSpotsPerHour) { n, p throws(ScenarioError) in
            try r.number(n, p, "a rate per hour from 0 to 3600") { (0...3600).contains($0) }
        }
        e.deadSpotMean = try m.optional("dead_spot_mean", default: e.deadSpotMean) { n, p throws(ScenarioError) in try r.duration(n, p) }
        try m.finish()
        return (e, trace)
    }

    /// A radio profile: promotion, active power by throughput, tail stages (docs/sources.md §6).
    static func readRadio(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> RadioProfile {
        var m = try r.mapping(node, at: path)
        var radio = RadioProfile(name: try m.required("name", "the radio's name", r.name))
        _ = try m.optional("description", default: "", r.string)
        func watts(_ key: String) throws(ScenarioError) -> Double {
            try m.optional(key, default: 0) { n, p throws(ScenarioError) in
                try r.number(n, p, "a power in watts >= 0") { $0 >= 0 }
            }
        }
        radio.promotion = try m.optional("promotion", default: .zero, r.durationOrZero)
        radio.promotionW = try watts("promotion_w")
        radio.activeW = try m.required("active_w", "a power in watts >= 0") { n, p throws(ScenarioError) in
            try r.number(n, p, "a power in watts >= 0") { $0 >= 0 }
        }
        radio.upWPerMbps = try watts("up_w_per_mbps")
        radio.downWPerMbps = try watts("down_w_per_mbps")
        radio.tail = try m.optional("tail", default: []) { n, p throws(ScenarioError) in
            var stages: [TailStage] = []
            for (i, item) in try r.list(n, at: p).enumerated() {
                var s = try r.mapping(item, at: p.appending(index: i))
                let d = try s.required("duration", "a duration > 0") { n, p throws(ScenarioError) in try r.duration(n, p) }
                let w = try s.required("power_w", "a power in watts >= 0") { n, p throws(ScenarioError) in
                    try r.number(n, p, "a power in watts >= 0") { $0 >= 0 }
                }
                try s.finish()
                stages.append(TailStage(duration: d, powerW: w))
            }
            return stages
        }
        try m.finish()
        return radio
    }

    /// `settings:` Background App Refresh, Low Power Mode, Optimized Battery Charging.
    /// `load:` a bench load, as steps (`power_w` or `c_rate`, and `for`; `repeat`) or a trace
    /// (`time,power_w`). A C-rate is a share of `capacityWh` per hour (LoadProfile).
    static func readLoad(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, capacityWh: Double) throws(ScenarioError) -> LoadProfile {
        var m = try r.mapping(node, at: path)
        let trace = try m.optional("trace", default: LoadProfile?.none) { n, p throws(ScenarioError) in
            try TraceReader.load(file: try r.string(n, p), relativeTo: n.file ?? r.file)
        }
        let stepsNode = m.nodeIfPresent("steps")
        if trace != nil, let n = stepsNode {
            throw r.error(n, path.appending("steps"), "expected either steps or trace, not both")
        }
        let repeats = try m.optional("repeat", default: false, r.bool)
        let steps = try m.optional("steps", default: [LoadProfile.Step]()) { n, p throws(ScenarioError) in
            let items = try r.list(n, at: p)
            guard !items.isEmpty else { throw r.error(n, p, "expected at least one step, such as {power_w: 2, for: 1h}") }
            return try items.enumerated().map { (i, item) throws(ScenarioError) in
                let p = p.appending(index: i)
                var s = try r.mapping(item, at: p)
                let watts = try s.optional("power_w", default: Double?.none) { n, p throws(ScenarioError) in
                    try r.number(n, p, "a power in watts from 0 to 1000") { (0...1000).contains($0) }
                }
                let rate = try s.optional("c_rate", default: Double?.none) { n, p throws(ScenarioError) in
                    try r.number(n, p, "a C-rate from 0 to 100 (capacities per hour)") { (0...100).contains($0) }
                }
                guard (watts == nil) != (rate == nil) else {
                    throw r.error(item, p, "expected exactly one of power_w and c_rate")
                }
                let duration = try s.required("for", "a duration such as 1h") { n, p throws(ScenarioError) in
                    let d = try r.duration(n, p)
                    guard d >= .seconds(1), d <= .days(36_500) else { throw r.error(n, p, "expected a duration from 1s to 100 years") }
                    return d
                }
                try s.finish()
                return LoadProfile.Step(powerW: watts ?? rate! * capacityWh, duration: duration)
            }
        }
        try m.finish()
        if let trace {
            guard !repeats else { throw r.error(node, path.appending("repeat"), "a traced load does not repeat: remove repeat") }
            return trace
        }
        guard let stepsNode else { throw r.error(node, path, "expected steps (a list of {power_w or c_rate, for}) or trace (a file)") }
        // A cycle's length times its count is an instant: together at most 100 years.
        let cycle = steps.reduce(0.0) { $0 + $1.duration.seconds }
        guard cycle <= SimDuration.days(36_500).seconds else {
            throw r.error(stepsNode, path.appending("steps"), "expected steps lasting at most 100 years in all")
        }
        return LoadProfile(steps: steps, repeats: repeats)
    }

    static func readSettings(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> (Settings, Bool) {
        var m = try r.mapping(node, at: path)
        var s = Settings()
        s.backgroundAppRefresh = try m.optional("background_app_refresh", default: s.backgroundAppRefresh) { n, p throws(ScenarioError) in
            try r.choice(n, p, Settings.BackgroundAppRefresh.self, what: "Background App Refresh setting")
        }
        s.lowPowerMode = try m.optional("low_power_mode", default: s.lowPowerMode) { n, p throws(ScenarioError) in
            try r.choice(n, p, Settings.LowPowerMode.self, what: "Low Power Mode setting")
        }
        let optimized = try m.optional("optimized_battery_charging", default: ChargingCurve().optimized, r.bool)
        try m.finish()
        return (s, optimized)
    }

    /// `people:` the routine and phone use, or a trace of launches, calls and purges (the
    /// Low Power Mode answer still comes from `low_power_accept_pct`).
    static func readPeople(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, apps: [String]) throws(ScenarioError) -> (
        PeopleParameters, PeopleTimeline?
    ) {
        var m = try r.mapping(node, at: path)
        _ = try m.optional("description", default: "", r.string)
        var p = PeopleParameters()
        p.bedtime = try m.optional("bedtime", default: p.bedtime, r.timeOfDay)
        p.wakeWeekday = try m.optional("wake_weekday", default: p.wakeWeekday, r.timeOfDay)
        p.wakeWeekend = try m.optional("wake_weekend", default: p.wakeWeekend, r.timeOfDay)
        p.sleepJitter = try m.optional("sleep_jitter", default: p.sleepJitter, r.durationOrZero)
        func rate(_ key: String, _ value: Double, _ what: String, max: Double) throws(ScenarioError) -> Double {
            try m.optional(key, default: value) { n, p throws(ScenarioError) in
                try r.number(n, p, "\(what) from 0 to \(Int(max))") { (0...max).contains($0) }
            }
        }
        p.sessionsPerDay = try rate("sessions_per_day", p.sessionsPerDay, "a mean number of sessions per day", max: 10_000)
        p.hourlyWeights = try m.optional("hourly_weights", default: p.hourlyWeights) { n, path throws(ScenarioError) in
            let items = try r.list(n, at: path)
            guard items.count == 24 else { throw r.error(n, path, "expected 24 weights, one per hour from 00:00, got \(items.count)") }
            var w: [Double] = []
            for (i, item) in items.enumerated() {
                w.append(try r.number(item, path.appending(index: i), "a relative weight >= 0") { $0 >= 0 })
            }
            guard w.contains(where: { $0 > 0 }) else { throw r.error(n, path, "expected at least one weight > 0") }
            return w
        }
        p.sessionBodyMean = try m.optional("session_body_mean", default: p.sessionBodyMean) { n, p throws(ScenarioError) in
            // A use of the phone lasts minutes; a day bounds it (and what is drawn per use).
            let d = try r.duration(n, p)
            guard d <= .days(1) else { throw r.error(n, p, "expected a duration of at most 1d") }
            return d
        }
        p.sessionTailShare = try m.optional("session_tail_pct", default: p.sessionTailShare, percent(r, "a share of sessions"))
        p.sessionTailMinimum = try m.optional("session_tail_min", default: p.sessionTailMinimum) { n, p throws(ScenarioError) in
            // A use of the phone lasts minutes; a day bounds it (and what is drawn per use).
            let d = try r.duration(n, p)
            guard d <= .days(1) else { throw r.error(n, p, "expected a duration of at most 1d") }
            return d
        }
        p.sessionTailShape = try m.optional("session_tail_shape", default: p.sessionTailShape) { n, p throws(ScenarioError) in
            try r.number(n, p, "a Pareto shape > 1 (the mean is infinite at 1 or less)") { $0 > 1 && $0 <= 100 }
        }
        p.singleAppShare = try m.optional("single_app_pct", default: p.singleAppShare, percent(r, "a share of sessions"))
        p.extraAppsMean = try m.optional("extra_apps_mean", default: p.extraAppsMean) { n, p throws(ScenarioError) in
            try r.number(n, p, "a mean number of further apps from 1 to 20") { (1...20).contains($0) }
        }
        p.otherAppsWeight = try m.optional("other_apps_weight", default: p.otherAppsWeight) { n, p throws(ScenarioError) in
            try r.number(n, p, "a relative weight >= 0") { $0 >= 0 }
        }
        p.swipeAwayShare = try m.optional("swipe_away_pct", default: p.swipeAwayShare, percent(r, "a share of app exits"))
        p.callsPerDay = try rate("calls_per_day", p.callsPerDay, "a mean number of calls per day", max: 1000)
        p.callMean = try m.optional("call_mean", default: p.callMean) { n, p throws(ScenarioError) in
            // A use of the phone lasts minutes; a day bounds it (and what is drawn per use).
            let d = try r.duration(n, p)
            guard d <= .days(1) else { throw r.error(n, p, "expected a duration of at most 1d") }
            return d
        }
        p.lowPowerAcceptShare = try m.optional("low_power_accept_pct", default: p.lowPowerAcceptShare, percent(r, "a probability"))
        p.purgePerLaunch = try m.optional("purge_per_launch_pct", default: p.purgePerLaunch, percent(r, "a probability"))
        p.history = try m.optional("history", default: p.history) { n, p throws(ScenarioError) in
            let d = try r.duration(n, p, allowZero: true)
            guard d <= .days(365) else { throw r.error(n, p, "expected a duration of at most 365d") }
            return d
        }
        p.interruptionsPerHour = try rate("interruptions_per_hour", p.interruptionsPerHour, "a rate per hour of use", max: 3600)
        p.interruptionMean = try m.optional("interruption_mean", default: p.interruptionMean) { n, p throws(ScenarioError) in
            let d = try r.duration(n, p)
            guard d <= .hours(1) else { throw r.error(n, p, "expected a duration of at most 1h") }
            return d
        }
        p.habitScale = try m.optional("habit_scale", default: p.habitScale) { n, p throws(ScenarioError) in
            try r.number(n, p, "a factor on the apps' habit strengths from 0 to 10") { (0...10).contains($0) }
        }
        let trace = try m.optional("trace", default: PeopleTimeline?.none) { n, p throws(ScenarioError) in
            try TraceReader.people(file: try r.string(n, p), relativeTo: n.file ?? r.file, apps: apps)
        }
        try m.finish()
        return (p, trace)
    }
}

extension ConfigReader {
    /// A duration that may be zero (`0`, `0s`).
    func durationOrZero(_ node: ConfigNode, _ path: ConfigKeyPath) throws(ScenarioError) -> SimDuration {
        try duration(node, path, allowZero: true)
    }

    /// One of an enumeration's raw values, listing them when it is not.
    func choice<T: RawRepresentable & CaseIterable>(
        _ node: ConfigNode, _ path: ConfigKeyPath, _ type: T.Type,
        what: String
    ) throws(ScenarioError) -> T where T.RawValue == String {
        let name = try string(node, path)
        guard let v = T(rawValue: name) else {
            throw error(node, path, "unknown \(what) '\(name)'; known: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return v
    }
}

extension ConfigReader.Mapping {
    /// The node under `key` without marking the key as read.
    func nodeIfPresent(_ key: String) -> ConfigNode? { pairs.first { $0.key == key }?.value }
}
