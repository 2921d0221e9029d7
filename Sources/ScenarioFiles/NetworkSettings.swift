import PhoneWorld
import Scheduling
import SimEngine

/// `network:` the environment's schedule and radios, or a trace of changes.
struct NetworkSection {
    var environment = NetworkEnvironment(), trace: TraceFile?

    /// A radio profile: promotion, active power by throughput, tail stages (docs/sources.md §6).
    static let radio: [Setting<RadioProfile>] = [
        .text("name", \.name, help: "the radio's name").required(),
        describedBy(),
        .duration("promotion", \.promotion, help: "time from idle to the active state"),
        .atLeastZero("promotion_w", \.promotionW, .watts(), help: "power while promoting"),
        .atLeastZero("active_w", \.activeW, .watts(), help: "power while transferring, before throughput").required(),
        .atLeastZero("up_w_per_mbps", \.upWPerMbps, .wattsPerMbps, help: "added power per Mbit/s sent"),
        .atLeastZero("down_w_per_mbps", \.downWPerMbps, .wattsPerMbps, help: "added power per Mbit/s received"),
        .list(
            "tail", \.tail, of: tailStage, item: TailStage(duration: .zero, powerW: 0), noun: "stages {duration, power_w}", help: "the tail's stages, in order"),
    ]
    static let tailStage: [Setting<TailStage>] = [
        .duration("duration", \.duration, in: .positive, help: "how long the stage lasts").required(),
        .atLeastZero("power_w", \.powerW, .watts(), help: "power in the stage").required(),
    ]
    /// A throughput: required unless the network is none, which has none (stored as 0).
    static func mbps(_ name: String, _ property: WritableKeyPath<NetworkEnvironment.Segment, Double> & Sendable, help: String) -> Setting<
        NetworkEnvironment.Segment
    > {
        .custom(
            name, .orNone(.number(NumberRange(0.001...1e6), unit: .megabitsPerSecond)), help: help,
            get: { $0[keyPath: property] == 0 ? .off : .number($0[keyPath: property]) },
            set: { s, v in s[keyPath: property] = if case .number(let x) = v { x } else { 0 } })
    }
    /// A schedule's segment; the throughputs are required unless the network is none.
    static let segment: [Setting<NetworkEnvironment.Segment>] = [
        .timeOfDay("at", \.start, help: "when the segment starts").required(),
        .choice("network", \.state.kind, help: "the network").required(),
        mbps("down_mbps", \.state.downMbps, help: "download throughput"),
        mbps("up_mbps", \.state.upMbps, help: "upload throughput"),
        .optional(
            "place", \.place, .text, help: "where the phone is (region monitoring names places)", to: { .text($0) },
            from: {
                if case .text(let t) = $0 { t } else { nil }
            }),
    ]
    static func schedule(_ name: String, _ property: WritableKeyPath<Self, [NetworkEnvironment.Segment]> & Sendable, help: String) -> Setting<Self> {
        .list(
            name, property, of: segment, item: .init(start: .zero, state: NetworkState(kind: .none)), count: 1...Int.max,
            noun: "segments {at, network, down_mbps, up_mbps, place}, the first at 00:00", help: help)
    }

    static let declared = Declared<Self>(
        settings: [
            describedBy(),
            .section("wifi_radio", \.environment.wifiRadio, radio, defaults: RadioProfile(name: ""), help: "the Wi-Fi radio").required(),
            .section("cellular_radio", \.environment.cellularRadio, radio, defaults: RadioProfile(name: ""), help: "the cellular radio").required(),
            TraceFile.setting(\.trace, help: "a file of network changes, replayed instead of the schedule"),
            schedule("weekday", \.environment.weekday, help: "the weekday schedule (required unless trace is given)"),
            schedule("weekend", \.environment.weekend, help: "the weekend schedule (default: the weekday's)"),
            .duration("jitter", \.environment.jitter, help: "spread of each boundary"),
            .number("dead_spots_per_hour", \.environment.deadSpotsPerHour, in: 0...3600, unit: .perHour("a rate"), help: "dead spots on cellular"),
            .duration("dead_spot_mean", \.environment.deadSpotMean, in: .positive, help: "mean length of a dead spot"),
        ],
        check: { n, given in
            if n.trace == nil, !given.contains("weekday") {
                return .at("weekday", "missing; expected a list of segments {at, network, down_mbps, up_mbps, place}")
            }
            if !given.contains("weekend") { n.environment.weekend = n.environment.weekday }
            for (name, days) in [("weekday", n.environment.weekday), ("weekend", n.environment.weekend)] {
                for (i, s) in days.enumerated() {
                    let at: [ConfigKeyPath.Component] = [.key(name), .index(i), .key("at")]
                    if i == 0, s.start != .zero { return .at(at, "the first segment must start at 00:00") }
                    if i > 0, s.start <= days[i - 1].start { return .at(at, "segments must be in time-of-day order") }
                    // A given throughput is at least 0.001: zero is one not given.
                    for (key, mbps) in [("down_mbps", s.state.downMbps), ("up_mbps", s.state.upMbps)] where s.state.kind != .none && mbps == 0 {
                        return .at([.key(name), .index(i), .key(key)], "missing; expected a throughput in Mbit/s from 0.001 to 1000000")
                    }
                }
            }
            for i in n.environment.weekday.indices where n.environment.weekday[i].state.kind == .none {
                n.environment.weekday[i].state = NetworkState(kind: .none)
            }
            for i in n.environment.weekend.indices where n.environment.weekend[i].state.kind == .none {
                n.environment.weekend[i].state = NetworkState(kind: .none)
            }
            return nil
        })
}

/// `load:` a bench load, as steps (`power_w` or `c_rate`, and `for`; `repeat`) or a trace
/// (`time,power_w`). A C-rate is a share of the capacity per hour (LoadProfile).
struct LoadSection {
    struct Step { var powerW: Double?, cRate: Double?, duration: SimDuration = .zero }
    var trace: TraceFile?, repeats = false, steps: [Step] = []

    static let step: [Setting<Step>] = [
        .optional(
            "power_w", \.powerW, .number(NumberRange(0...1000), unit: .watts()), help: "power drawn", to: { .number($0) },
            from: {
                if case .number(let x) = $0 { x } else { nil }
            }),
        .optional(
            "c_rate", \.cRate, .number(NumberRange(0...100), unit: "a C-rate (capacities per hour)"), help: "power drawn, as capacities per hour",
            to: { .number($0) },
            from: {
                if case .number(let x) = $0 { x } else { nil }
            }),
        .duration("for", \.duration, in: .seconds(1)...(.days(36_500)), help: "how long the step lasts").required(),
    ]

    static let declared = Declared<Self>(
        settings: [
            TraceFile.setting(\.trace, help: "a file of time,power_w rows"),
            .flag("repeat", \.repeats, help: "whether the steps repeat until the horizon"),
            .list("steps", \.steps, of: step, item: Step(), count: 1...Int.max, noun: "steps, such as {power_w: 2, for: 1h}", help: "the load's steps"),
        ],
        check: { l, given in
            if l.trace != nil, given.contains("steps") { return .at("steps", "expected either steps or trace, not both") }
            for (i, s) in l.steps.enumerated() where (s.powerW == nil) == (s.cRate == nil) {
                return .at([.key("steps"), .index(i)], "expected exactly one of power_w and c_rate")
            }
            if l.trace != nil, l.repeats { return .at("repeat", "a traced load does not repeat: remove repeat") }
            if l.trace == nil, !given.contains("steps") { return .at([], "expected steps (a list of {power_w or c_rate, for}) or trace (a file)") }
            // A cycle's length times its count is an instant: together at most 100 years.
            if l.steps.reduce(0.0, { $0 + $1.duration.seconds }) > SimDuration.days(36_500).seconds {
                return .at("steps", "expected steps lasting at most 100 years in all")
            }
            return nil
        })
}

extension Scenario {
    static func readPhone(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> (BatteryParameters, PowerParameters) {
        let phone = try read(PhoneSection.declared, into: PhoneSection(), node, path, r)
        return (phone.battery, phone.power)
    }

    static func readCharging(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> (ChargingHabit, [ChargingSession]?) {
        let c = try read(ChargingSection.declared, into: ChargingSection(), node, path, r)
        guard let t = c.trace else { return (c.habit, nil) }
        return (c.habit, try TraceReader.charging(file: t.path, relativeTo: t.relativeTo))
    }

    static func readCharger(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> ChargingCurve {
        try read(ChargerSection.declared, into: ChargerSection(), node, path, r).curve
    }

    static func readNetwork(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> (NetworkEnvironment, [NetworkChange]?) {
        let n = try read(NetworkSection.declared, into: NetworkSection(), node, path, r)
        guard let t = n.trace else { return (n.environment, nil) }
        return (n.environment, try TraceReader.network(file: t.path, relativeTo: t.relativeTo))
    }

    static func readSettings(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> (Settings, Bool) {
        let s = try read(SettingsSection.declared, into: SettingsSection(), node, path, r)
        return (s.settings, s.optimized)
    }

    static func readLoad(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, capacityWh: Double) throws(ScenarioError) -> LoadProfile {
        let l = try read(LoadSection.declared, into: LoadSection(), node, path, r)
        if let t = l.trace { return try TraceReader.load(file: t.path, relativeTo: t.relativeTo) }
        return LoadProfile(steps: l.steps.map { .init(powerW: $0.powerW ?? $0.cRate! * capacityWh, duration: $0.duration) }, repeats: l.repeats)
    }
}
