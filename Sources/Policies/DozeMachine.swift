import PolicyAPI
import SimEngine

/// Android's Doze, deep and light, as AOSP's `DeviceIdleController` steps it (docs/sources.md
/// §9), driven by time and by whether jobs are running.
///
/// Off the charger with the screen off since `inactiveSince`, deep Doze goes INACTIVE (30
/// min), IDLE_PENDING (30 min), SENSING (up to 4 min) and LOCATING (up to 30 s), then
/// alternates IDLE (60 min, doubling to 6 h) with IDLE_MAINTENANCE windows (5 min, doubling to
/// 10). Light Doze goes INACTIVE (1 min), then alternates IDLE (5 min, doubling to 15) with
/// maintenance windows of its budget (1 to 5 min); once deep Doze is IDLE, light Doze is
/// OVERRIDE. A maintenance window ends early once no job is running and its minimum (30 s
/// deep, 5 s light) has passed; a light window shorter than the minimum budget adds the rest to
/// the budget, a longer one takes its excess from it. Jobs are held in deep and light IDLE.
struct DozeMachine: Sendable, Equatable {
    /// Deep Doze's states.
    enum Deep: String, Sendable {
        case active, inactive
        case idlePending = "idle_pending"
        case sensing, locating, idle, maintenance
    }
    /// Light Doze's states.
    enum Light: String, Sendable { case active, inactive, idle, maintenance, override }

    /// The timeouts, AOSP's `DeviceIdleController.Constants`.
    struct Timing: Equatable, Sendable {
        /// Whether deep Doze runs at all, and light Doze.
        var deep = true, light = true
        /// INACTIVE, IDLE_PENDING, SENSING and LOCATING (0: no location provider, straight to IDLE).
        var inactive: SimDuration = .minutes(30), idlePending: SimDuration = .minutes(30)
        /// SENSING and LOCATING: the longest they take (AOSP's timeouts).
        var sensing: SimDuration = .minutes(4), locating: SimDuration = .seconds(30)
        /// Deep IDLE: the first, the longest, and the factor between one and the next.
        var firstIdle: SimDuration = .hours(1), maxIdle: SimDuration = .hours(6), idleFactor = 2.0
        /// Deep maintenance windows: the first, the longest, the factor, and the least one lasts.
        var firstWindow: SimDuration = .minutes(5), maxWindow: SimDuration = .minutes(10), windowFactor = 2.0
        /// The least a deep maintenance window lasts (MIN_DEEP_MAINTENANCE_TIME).
        var minDeepMaintenance: SimDuration = .seconds(30)
        /// Light INACTIVE, then light IDLE: the first, the longest, the factor.
        var lightInactive: SimDuration = .minutes(1)
        var lightFirstIdle: SimDuration = .minutes(5), lightMaxIdle: SimDuration = .minutes(15), lightIdleFactor = 2.0
        /// Light maintenance: the budget's bounds and the least a window lasts.
        var lightMinBudget: SimDuration = .minutes(1), lightMaxBudget: SimDuration = .minutes(5)
        /// The least a light maintenance window lasts (MIN_LIGHT_MAINTENANCE_TIME).
        var minLightMaintenance: SimDuration = .seconds(5)
        /// AOSP's defaults.
        init() {}
    }

    /// Its timeouts.
    let timing: Timing
    /// Where each is, and when its current state ends if jobs keep running (`nil`: not timed).
    var deep = Deep.active, light = Light.active
    var deepEnds: SimInstant?, lightEnds: SimInstant?
    /// When the current maintenance window began (deep, light).
    var deepWindowStart = SimInstant.start, lightWindowStart = SimInstant.start
    var nextIdle: SimDuration, nextWindow: SimDuration, lightNextIdle: SimDuration, lightBudget: SimDuration
    /// Since when the phone has been off the charger with the screen off (`nil`: active).
    var inactiveSince: SimInstant?
    /// Since when no job has been running (`nil`: one is).
    var jobsIdleSince: SimInstant?

    /// A machine in ACTIVE, no job running since `.start`.
    init(_ timing: Timing = Timing()) {
        self.timing = timing
        nextIdle = timing.firstIdle
        nextWindow = timing.firstWindow
        lightNextIdle = timing.lightFirstIdle
        lightBudget = timing.lightMinBudget
        jobsIdleSince = .start
    }

    /// Whether jobs may run: not in deep or light IDLE.
    var allowsJobs: Bool { deep != .idle && light != .idle }

    /// The screen came on or the charger was connected.
    mutating func becomeActive() {
        deep = .active
        light = .active
        deepEnds = nil
        lightEnds = nil
        inactiveSince = nil
    }

    /// Off the charger with the screen off since `time`: INACTIVE, deep and light.
    mutating func becomeInactive(at time: SimInstant) {
        let t = timing
        inactiveSince = time
        nextIdle = t.firstIdle
        nextWindow = t.firstWindow
        lightNextIdle = t.lightFirstIdle
        lightBudget = t.lightMinBudget
        deep = t.deep ? .inactive : .active
        deepEnds = t.deep ? time + t.inactive : nil
        light = t.light ? .inactive : .active
        lightEnds = t.light ? time + t.lightInactive : nil
    }

    /// A job started, or the last one running ended, at `time`.
    mutating func jobs(running: Bool, at time: SimInstant) {
        if running {
            jobsIdleSince = nil
        } else if jobsIdleSince == nil {
            jobsIdleSince = time
        }
    }

    /// When the current deep state ends, given whether jobs run.
    func deepNext() -> SimInstant? {
        guard let ends = deepEnds else { return nil }
        guard deep == .maintenance, let idle = jobsIdleSince else { return ends }
        return min(ends, max(deepWindowStart + timing.minDeepMaintenance, idle))
    }

    func lightNext() -> SimInstant? {
        guard let ends = lightEnds else { return nil }
        guard light == .maintenance, let idle = jobsIdleSince else { return ends }
        return min(ends, max(lightWindowStart + timing.minLightMaintenance, idle))
    }

    /// The next change of either, if jobs go on as they are now.
    var nextChange: SimInstant? {
        switch (deepNext(), lightNext()) {
        case (let a?, let b?): min(a, b)
        case (let a?, nil): a
        case (nil, let b): b
        }
    }

    /// Until when jobs started now may run before an IDLE begins, if jobs keep running (`nil`:
    /// no IDLE ahead: active, or Doze off).
    var jobsMayRunUntil: SimInstant? {
        var out: SimInstant?
        // Deep IDLE begins when LOCATING ends (or SENSING, with no location step), or a window.
        if deep == .locating || deep == .maintenance || (deep == .sensing && timing.locating == .zero) { out = deepEnds }
        if light == .inactive || light == .maintenance, let l = lightEnds { out = min(out ?? l, l) }
        return out
    }

    /// Moves to the next state change; false if there is none.
    @discardableResult
    mutating func step() -> Bool {
        switch (deepNext(), lightNext()) {
        case (let d?, let l?): d <= l ? stepDeep(at: d) : stepLight(at: l)
        case (let d?, nil): stepDeep(at: d)
        case (nil, let l?): stepLight(at: l)
        case (nil, nil): return false
        }
        return true
    }

    /// Takes every change up to and including `now`.
    mutating func advance(to now: SimInstant) {
        while let next = nextChange, next <= now { step() }
    }

    mutating func stepDeep(at time: SimInstant) {
        let t = timing
        switch deep {
        case .inactive:
            deep = .idlePending
            deepEnds = time + t.idlePending
            nextWindow = t.firstWindow
        case .idlePending:
            deep = .sensing
            deepEnds = time + t.sensing
        case .sensing where t.locating > .zero:
            deep = .locating
            deepEnds = time + t.locating
        case .sensing, .locating, .maintenance:
            deep = .idle
            deepEnds = time + nextIdle
            nextIdle = min(t.maxIdle, max(t.firstIdle, SimDuration(seconds: nextIdle.seconds * t.idleFactor)))
            if light != .active { light = .override }
            lightEnds = nil
        case .idle:
            deep = .maintenance
            deepWindowStart = time
            deepEnds = time + nextWindow
            nextWindow = min(t.maxWindow, SimDuration(seconds: nextWindow.seconds * t.windowFactor))
        case .active: deepEnds = nil
        }
    }

    mutating func stepLight(at time: SimInstant) {
        let t = timing
        switch light {
        case .inactive:
            toLightIdle(at: time)
        case .idle:
            light = .maintenance
            lightWindowStart = time
            lightBudget = min(t.lightMaxBudget, max(t.lightMinBudget, lightBudget))
            lightEnds = time + lightBudget
        case .maintenance:
            // A short window adds to the budget what it left of the minimum; a long one takes
            // its excess from it.
            lightBudget = lightBudget + t.lightMinBudget - (time - lightWindowStart)
            toLightIdle(at: time)
        case .active, .override: lightEnds = nil
        }
    }

    mutating func toLightIdle(at time: SimInstant) {
        light = .idle
        lightEnds = time + lightNextIdle
        lightNextIdle = min(timing.lightMaxIdle, SimDuration(seconds: lightNextIdle.seconds * timing.lightIdleFactor))
    }
}
