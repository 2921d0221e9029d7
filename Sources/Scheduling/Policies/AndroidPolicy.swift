import PhoneWorld
import SimEngine

/// Android's JobScheduler under Doze and App Standby buckets (docs/sources.md §9), applied to the
/// scenario's requests, for comparison with iOS.
///
/// - **Doze** (AOSP DeviceIdleController): the phone enters Doze `inactiveAfter` (30 min)
///   after it was last in use or unplugged, whichever is later, and stays out of it while in
///   use or charging. In Doze it alternates idle periods (60 min, doubling to 6 h) with
///   maintenance windows (5 min, doubling to 10 min); jobs start only in a window. (The motion
///   and location checks before idle, and light Doze, are not modelled.)
/// - **Standby buckets** by time since the app was last used: active within `activeWithin`,
///   working set within `workingSetWithin`, frequent within `frequentWithin`, rare beyond
///   (and never used). Each bucket has a quota of job run time per window (working set 10 min
///   per 2 h, frequent 10 min per 8 h, rare 10 min per 24 h, active none) and a job-count cap
///   per window, and every app at most 4 h of jobs per 24 h. No limits while charging.
/// - **Constraints**: battery not low (at or below 15%, until back above 20%), and when
///   `requireUnmetered`, Wi-Fi only. Charging and idle constraints of processing requests are
///   the system's gates already.
///
/// Quotas are checked when a job would start; a job that runs past its quota is not stopped
/// (the QuotaController would stop it): jobs here last seconds.
public struct AndroidPolicy: RegisteredPolicy {
    /// App Standby buckets, by how recently the app was used.
    public enum Bucket: Int, CaseIterable, Sendable { case active, workingSet, frequent, rare }

    /// A bucket's job quota.
    public struct Quota: Equatable, Sendable {
        /// Job run time allowed per window; `nil`: unlimited.
        public var time: SimDuration?
        /// The window `time` and `maxJobs` count over.
        public var window: SimDuration
        /// Most jobs started per window.
        public var maxJobs: Int
        /// A quota of `time` and `maxJobs` per `window`.
        public init(time: SimDuration?, window: SimDuration, maxJobs: Int) {
            self.time = time
            self.window = window
            self.maxJobs = maxJobs
        }
    }

    /// Every number of the model; each is a scenario key of the `android` policy.
    public struct Parameters: Equatable, Sendable {
        // Doze (docs/sources.md §9).
        /// Whether Doze is modelled.
        public var doze = true
        /// Time after the last use or unplug before Doze begins.
        public var inactiveAfter: SimDuration = .minutes(30)
        /// The first idle period.
        public var firstIdle: SimDuration = .minutes(60)
        /// The longest idle period (they double up to it).
        public var maxIdle: SimDuration = .hours(6)
        /// The first maintenance window.
        public var firstWindow: SimDuration = .minutes(5)
        /// The longest maintenance window (they double up to it).
        public var maxWindow: SimDuration = .minutes(10)
        // Buckets: recency thresholds are assumptions after AOSP AppStandbyController.
        /// An app used within this is active.
        public var activeWithin: SimDuration = .hours(1)
        /// An app used within this (but not `activeWithin`) is in the working set.
        public var workingSetWithin: SimDuration = .hours(12)
        /// An app used within this (but not `workingSetWithin`) is frequent; otherwise rare.
        public var frequentWithin: SimDuration = .hours(24)
        /// Per bucket, in `Bucket` order (docs/sources.md §9).
        public var quotas = [
            Quota(time: nil, window: .minutes(10), maxJobs: 75),
            Quota(time: .minutes(10), window: .hours(2), maxJobs: 120),
            Quota(time: .minutes(10), window: .hours(8), maxJobs: 200),
            Quota(time: .minutes(10), window: .hours(24), maxJobs: 48),
        ]
        /// Most job time per app per day, over every bucket.
        public var dailyCap: SimDuration = .hours(4)
        // Constraints.
        /// Whether jobs wait while the battery is low.
        public var batteryNotLow = true
        /// The level at or below which the battery is low.
        public var lowLevel = 0.15
        /// How far above `lowLevel` the battery must climb to stop being low.
        public var lowHysteresis = 0.05
        /// Whether jobs need an unmetered (Wi-Fi) connection.
        public var requireUnmetered = false
        /// AOSP's values where docs/sources.md §9 gives them, the assumptions of §12 elsewhere.
        public init() {}
    }

    /// The model's numbers.
    public var parameters: Parameters
    /// Per app, its jobs' (start, end) over the last 24 h, in start order. Jobs that ended
    /// before the last 24 h count for nothing; they are dropped from the front as they age
    /// (one that started before a longer job still in the day waits for that job).
    var runs: [[(start: SimInstant, end: SimInstant)]] = []
    /// Jobs started and not yet ended: task id and start. A few at a time, so a list (a
    /// dictionary's hashing cost more than the search).
    var running: [(id: Int, start: SimInstant)] = []
    var batteryLow = false

    /// The model with `parameters` and no jobs run yet.
    public init(_ parameters: Parameters) { self.parameters = parameters }
    /// The model with the default numbers and no jobs run yet.
    public init() { self.init(Parameters()) }

    /// `android`.
    public static let policyName = "android"
    /// For `bgsim policies`.
    public static let summary = "JobScheduler under Doze and App Standby buckets, for comparison with iOS"
    /// Every number of the model, as scenario keys; a bucket's quota is a mapping
    /// (`quota_rare: {time: none, max_jobs: 5}`).
    public static let parameters: [PolicyParameter<Self>] = [
        .flag("doze", \.parameters.doze, help: "model Doze"),
        .duration("inactive_after", \.parameters.inactiveAfter, help: "time after the last use or unplug before Doze begins"),
        .duration("first_idle", \.parameters.firstIdle, in: .positive, help: "the first idle period"),
        .duration("max_idle", \.parameters.maxIdle, in: .positive, help: "the longest idle period (they double up to it)"),
        .duration("first_window", \.parameters.firstWindow, in: .positive, help: "the first maintenance window"),
        .duration("max_window", \.parameters.maxWindow, in: .positive, help: "the longest maintenance window (they double up to it)"),
        .duration("active_within", \.parameters.activeWithin, in: .positive, help: "an app used within this is active"),
        .duration("working_set_within", \.parameters.workingSetWithin, in: .positive, help: "an app used within this is in the working set"),
        .duration("frequent_within", \.parameters.frequentWithin, in: .positive, help: "an app used within this is frequent; otherwise rare"),
        .optionalDuration("quota_active.time", \.parameters.quotas[0].time, in: .positive, help: "active bucket: job run time per window (none: unlimited)"),
        .duration("quota_active.window", \.parameters.quotas[0].window, in: .positive, help: "active bucket: the window its quota counts over"),
        .integer(
            "quota_active.max_jobs", \.parameters.quotas[0].maxJobs, in: 1...1_000_000, unit: "a whole number of jobs",
            help: "active bucket: most jobs started per window"),
        .optionalDuration(
            "quota_working_set.time", \.parameters.quotas[1].time, in: .positive, help: "working set bucket: job run time per window (none: unlimited)"),
        .duration("quota_working_set.window", \.parameters.quotas[1].window, in: .positive, help: "working set bucket: the window its quota counts over"),
        .integer(
            "quota_working_set.max_jobs", \.parameters.quotas[1].maxJobs, in: 1...1_000_000, unit: "a whole number of jobs",
            help: "working set bucket: most jobs started per window"),
        .optionalDuration(
            "quota_frequent.time", \.parameters.quotas[2].time, in: .positive, help: "frequent bucket: job run time per window (none: unlimited)"),
        .duration("quota_frequent.window", \.parameters.quotas[2].window, in: .positive, help: "frequent bucket: the window its quota counts over"),
        .integer(
            "quota_frequent.max_jobs", \.parameters.quotas[2].maxJobs, in: 1...1_000_000, unit: "a whole number of jobs",
            help: "frequent bucket: most jobs started per window"),
        .optionalDuration("quota_rare.time", \.parameters.quotas[3].time, in: .positive, help: "rare bucket: job run time per window (none: unlimited)"),
        .duration("quota_rare.window", \.parameters.quotas[3].window, in: .positive, help: "rare bucket: the window its quota counts over"),
        .integer(
            "quota_rare.max_jobs", \.parameters.quotas[3].maxJobs, in: 1...1_000_000, unit: "a whole number of jobs",
            help: "rare bucket: most jobs started per window"),
        .duration("daily_cap", \.parameters.dailyCap, in: .positive, help: "most job time per app per day, over every bucket"),
        .flag("battery_not_low", \.parameters.batteryNotLow, help: "jobs wait while the battery is low"),
        .number(
            "low_level_pct", in: NumberRange(0...100), unit: "a level in percent", help: "the level at or below which the battery is low",
            get: { 100 * $0.parameters.lowLevel }, set: { $0.parameters.lowLevel = $1 / 100 }),
        .number(
            "low_hysteresis_pct", in: NumberRange(0...100), unit: "percentage points",
            help: "how far above the low level the battery must climb to stop being low",
            get: { 100 * $0.parameters.lowHysteresis }, set: { $0.parameters.lowHysteresis = $1 / 100 }),
        .flag("require_unmetered", \.parameters.requireUnmetered, help: "jobs need an unmetered (Wi-Fi) connection"),
    ]

    /// Starts the eligible requests that Doze, the constraints and their apps' quotas allow; asks again when Doze's next window opens or a quota frees up.
    public mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        let p = parameters
        if p.batteryNotLow {
            if batteryLow, state.charge > p.lowLevel + p.lowHysteresis || state.isCharging { batteryLow = false }
            if !batteryLow, state.charge <= p.lowLevel, !state.isCharging { batteryLow = true }
            if batteryLow { return PolicyDecision(start: .none, reason: "battery_low") }
        }
        if p.requireUnmetered && state.network != .wifi { return PolicyDecision(start: .none, reason: "metered") }
        switch dozeState(state) {
        case .awake: break
        case .dozing(let next): return PolicyDecision(start: .none, reconsiderAt: next, reason: "doze")
        }
        // The ids chosen, made only once a request is refused: usually every one starts.
        var chosen: [TaskID]?, wake: SimInstant?
        for (k, task) in eligible.enumerated() {
            if let until = quotaExhausted(task.app, state) {
                wake = min(wake ?? until, until)
                if chosen == nil { chosen = eligible[..<k].map(\.id) }
            } else {
                chosen?.append(task.id)
                running.append((task.id.rawValue, state.now))
                while runs.count <= task.app { runs.append([]) }
                // Counted as running now; its end is filled in when it ends.
                runs[task.app].append((state.now, state.now))
            }
        }
        guard let chosen else { return .startAll }
        return PolicyDecision(start: chosen.isEmpty ? .none : .some(chosen), reconsiderAt: wake, reason: "quota")
    }

    /// Books the job's end for its app's quota.
    public mutating func taskEnded(_ record: TaskRecord) {
        guard let k = running.firstIndex(where: { $0.id == record.request.id.rawValue }) else { return }
        let start = running[k].start
        running.swapAt(k, running.count - 1)
        running.removeLast()
        let app = record.request.app
        if let i = runs[app].lastIndex(where: { $0.start == start && $0.end == start }) {
            runs[app][i].end = max(start, record.ended)
        }
    }

    /// Whether Doze holds jobs now.
    public enum DozeState: Equatable, Sendable {
        case awake
        /// In an idle period, until `next` maintenance window.
        case dozing(until: SimInstant)
    }

    /// Where Doze is now: a pure function of when the phone was last in use or unplugged.
    public func dozeState(_ state: DeviceState) -> DozeState {
        let p = parameters
        guard p.doze, !state.inUse, !state.isCharging else { return .awake }
        var t = max(state.lastInUse, state.powerChangedAt) + p.inactiveAfter
        if state.now < t { return .awake }
        var idle = p.firstIdle, window = p.firstWindow
        while true {
            let windowStart = t + idle
            if state.now < windowStart { return .dozing(until: windowStart) }
            let windowEnd = windowStart + window
            if state.now < windowEnd { return .awake }
            t = windowEnd
            idle = min(idle * 2, p.maxIdle)
            window = min(window * 2, p.maxWindow)
        }
    }

    /// The app's standby bucket now.
    public func bucket(_ app: Int, _ state: DeviceState) -> Bucket {
        guard let since = state.usage.sinceLastUse(app, now: state.now) else { return .rare }
        let p = parameters
        if since < p.activeWithin { return .active }
        if since < p.workingSetWithin { return .workingSet }
        if since < p.frequentWithin { return .frequent }
        return .rare
    }

    /// `nil` if the app may start a job now; else when its quota frees up.
    mutating func quotaExhausted(_ app: Int, _ state: DeviceState) -> SimInstant? {
        guard !state.isCharging else { return nil }
        while runs.count <= app { runs.append([]) }
        let now = state.now
        // Keep the last 24 h (the longest window). A running job's entry ends at its start
        // until it ends, and is recent.
        let keep = now - .hours(24)
        var aged = 0
        while aged < runs[app].count && runs[app][aged].end <= keep { aged += 1 }
        if aged > 0 { runs[app].removeFirst(aged) }
        let quota = parameters.quotas[bucket(app, state).rawValue]
        // Job time and jobs within the bucket's window, and job time within the day, in one
        // pass. A job counts in a window when it ends in it or starts at its start or later,
        // for the time it overlaps it; one that ended before the day counts in neither.
        let from = now - quota.window
        var inWindow = (time: SimDuration.zero, jobs: 0), dayTime = SimDuration.zero
        for r in runs[app] where r.end > keep {
            dayTime += min(r.end, now) - max(r.start, keep)
            if r.end > from || r.start >= from {
                inWindow.time += min(r.end, now) - max(r.start, from)
                inWindow.jobs += 1
            }
        }
        let overTime = quota.time.map { inWindow.time >= $0 } ?? false
        if overTime || inWindow.jobs >= quota.maxJobs || dayTime >= parameters.dailyCap {
            // Retry when the oldest job in the window leaves it.
            let from = inWindow.jobs >= quota.maxJobs || overTime ? now - quota.window : keep
            let oldest = runs[app].first { $0.end > keep && ($0.end > from || $0.start >= from) }
            return max(now + .seconds(1), oldest.map { $0.end + (from == keep ? .hours(24) : quota.window) } ?? now + .minutes(1))
        }
        return nil
    }
}
