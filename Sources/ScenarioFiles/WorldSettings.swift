import PhoneWorld
import Scheduling
import SimEngine

// The world's sections of a scenario, declared: phone, charging, charger, network (with its
// radios), settings, load and people. Each key is a `Setting` of the model's type; what spans
// keys is the section's check. Trace files are read once the section is.

/// A trace file as a scenario names it, and the file that names it.
struct TraceFile: Sendable {
    var path: String, relativeTo: String

    static func setting<Root>(_ property: WritableKeyPath<Root, TraceFile?> & Sendable, help: String) -> Setting<Root> {
        .optional(
            "trace", property, .file, help: help, to: { .file($0.path, relativeTo: $0.relativeTo) },
            from: {
                if case .file(let path, let base) = $0 { TraceFile(path: path, relativeTo: base) } else { nil }
            })
    }
}

/// A `description`: for people, read and kept nowhere.
func describedBy<Root>() -> Setting<Root> {
    .custom("description", .orNone(.prose), help: "what the section models, for people", get: { _ in .off }, set: { _, _ in })
}

extension Setting {
    /// A number of `unit` at or above zero.
    static func atLeastZero(_ name: String, _ property: WritableKeyPath<Root, Double> & Sendable, _ unit: SettingUnit, help: String) -> Self {
        .number(name, property, in: NumberRange(0...), unit: unit, help: help)
    }
    /// A share in percent, from 0 to 100 (above 0 if `aboveZero`), stored as a fraction.
    static func percent(
        _ name: String, _ property: WritableKeyPath<Root, Double> & Sendable, _ what: String, aboveZero: Bool = false, help: String
    ) -> Self {
        .number(name, property, in: NumberRange(lower: 0, lowerIncluded: !aboveZero, upper: 100), unit: .percent(what), help: help)
    }
}

extension ClosedRange<SimDuration> {
    /// Above zero and at most `longest`.
    static func upTo(_ longest: SimDuration) -> Self { .microseconds(1)...longest }
}

/// `phone:` a battery and the power of its components.
struct PhoneSection {
    var battery = BatteryParameters(), power = PowerParameters()

    static let battery: [Setting<BatteryParameters>] = [
        .choice("model", \.model, help: "the battery model"),
        // A megawatt-hour is no phone; in joules it stays far from a double's overflow.
        .number("capacity_wh", \.capacityWh, in: NumberRange(lower: 0, lowerIncluded: false, upper: 1e6), unit: .wattHours("a capacity"), help: "capacity"),
        .percent("initial_charge_pct", \.initialCharge, "a charge", help: "charge at the start"),
        .number(
            "idle_drain_pct_per_hour", \.idleDrainPerHour, in: NumberRange(0...100),
            unit: SettingUnit("a drain in percent of capacity per hour", suffix: "_pct_per_hour", scale: .dividedBy(100)),
            help: "drain of the phone idle and asleep"),
        .percent("boot_charge_pct", \.bootCharge, "a boot charge", aboveZero: true, help: "charge at which a dead phone boots on the charger"),
        .number(
            "kibam_c", \.kibamC, in: NumberRange(lower: 0, lowerIncluded: false, upper: 1, upperIncluded: false), unit: "a share of capacity",
            help: "the kinetic model's available share"),
        .number("kibam_k_per_s", \.kibamK, in: .above(0), unit: "a rate constant per second", help: "the kinetic model's rate constant"),
    ]
    static let power: [Setting<PowerParameters>] = [
        .atLeastZero("screen_w", \.screenW, .watts(), help: "the screen on"),
        .atLeastZero("cpu_foreground_w", \.cpuForegroundW, .watts(), help: "the CPU in foreground use"),
        .atLeastZero("cpu_background_w", \.cpuBackgroundW, .watts(), help: "the CPU running background work"),
        .atLeastZero("call_w", \.callW, .watts(), help: "a call"),
    ]
    static let declared = Declared<Self>(settings: [
        describedBy(),
        .section("battery", \.battery, battery, defaults: BatteryParameters(), help: "the battery"),
        .section("power", \.power, power, defaults: PowerParameters(), help: "the power of the phone's components"),
    ])
}

/// `charging:` the person's habit, or a trace of sessions.
struct ChargingSection {
    var habit = ChargingHabit(), trace: TraceFile?

    static let declared = Declared<Self>(
        settings: [
            describedBy(),
            .timeOfDay("plug_in", \.habit.plugIn, help: "when the phone goes on the charger at night"),
            .duration("plug_in_jitter", \.habit.plugInJitter, help: "spread of plug_in"),
            .timeOfDay("unplug", \.habit.unplug, help: "when it comes off in the morning"),
            .duration("unplug_jitter", \.habit.unplugJitter, help: "spread of unplug"),
            .percent("nights_charged_pct", \.habit.nightlyProbability, "a share of nights", help: "nights on the charger"),
            .number("top_ups_per_day", \.habit.topUpsPerDay, in: 0...100, unit: .perDay("a mean number of top-ups"), help: "daytime top-ups"),
            .timeOfDay("top_up_from", \.habit.topUpFrom, help: "earliest top-up"),
            .timeOfDay("top_up_until", \.habit.topUpUntil, help: "latest top-up"),
            .duration("top_up_mean", \.habit.topUpMean, in: .positive, help: "mean length of a top-up"),
            TraceFile.setting(\.trace, help: "a file of charging sessions, replayed instead of the habit"),
        ],
        check: { c, given in
            given.contains("top_up_until") && c.habit.topUpUntil < c.habit.topUpFrom
                ? .at("top_up_until", "expected a time of day after top_up_from") : nil
        })
}

/// `charger:` the charger's power and curve, from a preset or key by key.
struct ChargerSection {
    var curve = ChargingCurve(), preset: ChargerPreset?

    static let declared = Declared<Self>(settings: [
        // A preset sets the power; power_w, if given too, wins (so --set can adjust a preset).
        .optional(
            "preset", \.preset, .choice(ChargerPreset.allCases.map(\.rawValue)), help: "a charger's power by name", to: { .text($0.rawValue) },
            from: {
                if case .text(let t) = $0 { ChargerPreset(rawValue: t) } else { nil }
            }),
        .custom(
            "power_w", .number(.above(0), unit: .watts("a charger power")), help: "rated power",
            get: { .number($0.preset?.powerW ?? $0.curve.powerW) },
            set: { if case .number(let w) = $1 { $0.curve.powerW = w } }),
        .percent("delivered_pct", \.curve.deliveredShare, "a share of the rated power", aboveZero: true, help: "power reaching the battery"),
        .percent("knee_pct", \.curve.knee, "a charge", aboveZero: true, help: "charge where the taper starts"),
        .percent("taper_floor_pct", \.curve.taperFloor, "a share of the peak power", aboveZero: true, help: "power at full"),
        .percent("taper_step_pct", \.curve.taperStep, "a charge step", aboveZero: true, help: "steps of the taper"),
        .percent("limit_pct", \.curve.limit, "a charge limit", aboveZero: true, help: "charge at which charging stops"),
        .percent("optimized_hold_pct", \.curve.optimizedHold, "a charge", aboveZero: true, help: "Optimized Battery Charging's hold"),
        .duration("optimized_lead", \.curve.optimizedLead, help: "how long before unplugging the hold ends"),
    ]) { c, given in
        if !given.contains("power_w"), let preset = c.preset { c.curve.powerW = preset.powerW }
        return nil
    }
}

/// `settings:` Background App Refresh, Low Power Mode, Optimized Battery Charging.
struct SettingsSection {
    var settings = Settings(), optimized = ChargingCurve().optimized

    static let declared = Declared<Self>(settings: [
        .choice("background_app_refresh", \.settings.backgroundAppRefresh, help: "Background App Refresh"),
        .choice("low_power_mode", \.settings.lowPowerMode, help: "Low Power Mode: auto follows the person's answers"),
        .flag("optimized_battery_charging", \.optimized, help: "Optimized Battery Charging"),
    ])
}

/// `people:` the routine and phone use, or a trace of launches, calls and purges (the Low
/// Power Mode answer still comes from `low_power_accept_pct`).
struct PeopleSection {
    var people = PeopleParameters(), trace: TraceFile?

    /// A use of the phone lasts minutes; a day bounds it (and what is drawn per use).
    static let use = ClosedRange<SimDuration>.upTo(.days(1))

    static let declared = Declared<Self>(
        settings: [
            describedBy(),
            .timeOfDay("bedtime", \.people.bedtime, help: "when the person goes to sleep"),
            .timeOfDay("wake_weekday", \.people.wakeWeekday, help: "when they wake on weekdays"),
            .timeOfDay("wake_weekend", \.people.wakeWeekend, help: "when they wake at weekends"),
            .duration("sleep_jitter", \.people.sleepJitter, help: "spread of bedtime and waking"),
            .number("sessions_per_day", \.people.sessionsPerDay, in: 0...10_000, unit: .perDay("a mean number of sessions"), help: "uses of the phone"),
            hourlyWeights("hourly_weights", \.people.hourlyWeights, in: NumberRange(0...), help: "relative use by hour of day"),
            .duration("session_body_mean", \.people.sessionBodyMean, in: use, help: "mean length of a session's body"),
            .percent("session_tail_pct", \.people.sessionTailShare, "a share of sessions", help: "sessions with a long tail"),
            .duration("session_tail_min", \.people.sessionTailMinimum, in: use, help: "shortest long tail"),
            .number(
                "session_tail_shape", \.people.sessionTailShape, in: NumberRange(lower: 1, lowerIncluded: false, upper: 100),
                unit: "a Pareto shape (the mean is infinite at 1 or less)", help: "shape of the long tails"),
            .percent("single_app_pct", \.people.singleAppShare, "a share of sessions", help: "sessions that open one app"),
            .number("extra_apps_mean", \.people.extraAppsMean, in: 1...20, unit: "a mean number of further apps", help: "apps a multi-app session adds"),
            .atLeastZero("other_apps_weight", \.people.otherAppsWeight, "a relative weight", help: "use of apps the scenario does not model"),
            .percent("swipe_away_pct", \.people.swipeAwayShare, "a share of app exits", help: "exits that swipe the app away"),
            .number("calls_per_day", \.people.callsPerDay, in: 0...1000, unit: .perDay("a mean number of calls"), help: "calls"),
            .duration("call_mean", \.people.callMean, in: use, help: "mean length of a call"),
            .percent("low_power_accept_pct", \.people.lowPowerAcceptShare, "a probability", help: "the chance of accepting Low Power Mode's prompt"),
            .percent("purge_per_launch_pct", \.people.purgePerLaunch, "a probability", help: "the chance that opening an app purges a suspended one"),
            .duration("history", \.people.history, in: .zero...(.days(365)), help: "use before the run that the system has seen"),
            .number("interruptions_per_hour", \.people.interruptionsPerHour, in: 0...3600, unit: .perHour("a rate of use"), help: "interruptions of a session"),
            .duration("interruption_mean", \.people.interruptionMean, in: .upTo(.hours(1)), help: "mean length of an interruption"),
            .number("habit_scale", \.people.habitScale, in: 0...10, unit: "a factor on the apps' habit strengths", help: "scales every app's habit"),
            TraceFile.setting(\.trace, help: "a file of launches, calls and purges, replayed instead of the routine"),
        ],
        check: { p, given in
            given.contains("hourly_weights") && !p.people.hourlyWeights.contains(where: { $0 > 0 })
                ? .at("hourly_weights", "expected at least one weight > 0") : nil
        })
}

/// Twenty-four weights, one per hour from 00:00, within `range`.
func hourlyWeights<Root>(
    _ name: String, _ property: WritableKeyPath<Root, [Double]> & Sendable, in range: NumberRange, help: String
) -> Setting<Root> {
    .custom(
        name, hourlyKind(range), help: help, get: { .list($0[keyPath: property].map { .number($0) }) },
        set: { root, value in if let w = weights(value) { root[keyPath: property] = w } })
}

func hourlyKind(_ range: NumberRange) -> PolicyParameterKind {
    .list(.number(range, unit: "a relative weight"), count: 24...24, noun: "weights, one per hour from 00:00")
}

func weights(_ value: ParameterValue) -> [Double]? {
    guard case .list(let items) = value else { return nil }
    return items.map { if case .number(let x) = $0 { x } else { 0 } }
}

extension Scenario {
    static func readPeople(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader, apps: [String]) throws(ScenarioError) -> (
        PeopleParameters, PeopleTimeline?
    ) {
        let p = try read(PeopleSection.declared, into: PeopleSection(), node, path, r)
        guard let t = p.trace else { return (p.people, nil) }
        return (p.people, try TraceReader.people(file: t.path, relativeTo: t.relativeTo, apps: apps))
    }
}
