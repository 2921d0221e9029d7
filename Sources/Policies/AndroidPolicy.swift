import PhoneWorld
import PolicyAPI
import SimEngine

/// Android's JobScheduler under Doze and App Standby buckets, as AOSP implements them
/// (docs/sources.md §9), applied to the scenario's requests for comparison with iOS.
///
/// - **Doze** (`DozeMachine`, AOSP `DeviceIdleController`): off the charger with the screen
///   off, light Doze holds jobs after a minute except in short maintenance windows, and deep
///   Doze after an hour (INACTIVE, IDLE_PENDING, SENSING, LOCATING) except in its windows.
///   Windows end early once no job runs. A job started in a window or before an IDLE runs at
///   most until that IDLE begins.
/// - **Standby buckets** (AOSP `AppStandbyController`): by time since the app was last used and
///   screen-on time since: ACTIVE, WORKING_SET from 12 h, FREQUENT from 24 h and 1 h of screen,
///   RARE from 48 h and 2 h of screen, RESTRICTED from 8 days and 6 h of screen (Android 12+);
///   an app never opened is NEVER and runs no job.
/// - **Quotas** (`QuotaTracker`, AOSP `QuotaController`): per bucket, job time (10 min) per
///   window (10 min, 2 h, 8 h, 24 h, 24 h), jobs (75, 120, 200, 48, 10) and sessions (75, 10, 8,
///   3, 1) per window, 4 h of jobs a day, 20 jobs and 20 sessions a minute; none while charging
///   (RESTRICTED excepted). Quota comes back 30 s after the oldest usage ages out; a job runs at
///   most until its app's quota is used up.
/// - **Constraints**: battery not low (at or below 15%, until back above 20%), and when
///   `requireUnmetered`, Wi-Fi only; RESTRICTED apps' jobs only while charging.
struct AndroidPolicy: RegisteredPolicy {
    /// What holds a job besides its app's quota (`QuotaTracker.Limit`), as `tasks.csv` names it.
    enum Hold: String, CaseIterable, Sendable {
        case batteryLow = "battery_low", metered, doze, lightDoze = "light_doze", neverOpened = "never_opened", restricted
        /// Its number in `AndroidPolicy.holdReasons`.
        var number: Int { Self.all.firstIndex(of: self)! }
        static let all = allCases
    }

    /// The constraints, Doze, the buckets and the quota's limits.
    /// Numbered in this order: `Hold`'s, then `QuotaTracker.Limit`'s (`number`).
    static let holdReasons = Hold.allCases.map(\.rawValue) + QuotaTracker.Limit.allCases.map(\.rawValue)
    /// A quota limit's number in `holdReasons`.
    static func number(_ limit: QuotaTracker.Limit) -> Int { Hold.all.count + limits.firstIndex(of: limit)! }
    static let limits = QuotaTracker.Limit.allCases

    /// App Standby buckets (AOSP's indices).
    enum Bucket: Int, CaseIterable, Sendable { case active, workingSet, frequent, rare, restricted, never }

    /// Every number of the model; each is a scenario key of the `android` policy.
    struct Parameters: Equatable, Sendable {
        /// Doze's timeouts (`doze` and `light_doze` turn each off).
        var doze = DozeMachine.Timing()
        // Buckets (AppStandbyController's elapsed and screen-time thresholds).
        /// Time since last use before WORKING_SET, FREQUENT, RARE and RESTRICTED.
        var workingSetAfter: SimDuration = .hours(12), frequentAfter: SimDuration = .hours(24)
        var rareAfter: SimDuration = .hours(48), restrictedAfter: SimDuration = .days(8)
        /// Screen-on time since last use before FREQUENT and RARE.
        var frequentScreen: SimDuration = .hours(1), rareScreen: SimDuration = .hours(2)
        /// Screen-on time since last use before RESTRICTED.
        var restrictedScreen: SimDuration = .hours(6)
        /// Whether apps unused long enough become RESTRICTED (Android 12+).
        var restrictedBucket = true
        /// Per bucket in `Bucket` order, NEVER excluded (QuotaController's defaults, Android 11-15).
        var quotas = Self.legacyQuotas
        /// What applies to every bucket.
        var common = QuotaTracker.Common()
        /// Android 16's adjusted quota defaults instead (set before the quota keys, which win).
        var android16 = false
        // Constraints.
        /// Whether jobs wait while the battery is low.
        var batteryNotLow = true
        /// The level at or below which the battery is low.
        var lowLevel = 0.15
        /// How far above `lowLevel` the battery must climb to stop being low.
        var lowHysteresis = 0.05
        /// Whether jobs need an unmetered (Wi-Fi) connection.
        var requireUnmetered = false
        /// AOSP's values (docs/sources.md §9).
        init() {}

        /// QuotaController's defaults through Android 15.
        static let legacyQuotas = [
            QuotaTracker.Limits(time: .minutes(10), window: .minutes(10), maxJobs: 75, maxSessions: 75),
            QuotaTracker.Limits(time: .minutes(10), window: .hours(2), maxJobs: 120, maxSessions: 10),
            QuotaTracker.Limits(time: .minutes(10), window: .hours(8), maxJobs: 200, maxSessions: 8),
            QuotaTracker.Limits(time: .minutes(10), window: .hours(24), maxJobs: 48, maxSessions: 3),
            QuotaTracker.Limits(time: .minutes(10), window: .hours(24), maxJobs: 10, maxSessions: 1),
        ]
        /// Android 16's, with its adjust-quota and window-tuning flags both on: ACTIVE 20 min per
        /// 60 min, WORKING_SET 10 min per 4 h, FREQUENT 10 min per 12 h.
        static let android16Quotas: [QuotaTracker.Limits] = {
            var q = legacyQuotas
            q[0].time = .minutes(20)
            q[0].window = .minutes(60)
            q[1].window = .hours(4)
            q[2].window = .hours(12)
            return q
        }()
    }

    /// The model's numbers.
    var parameters: Parameters { didSet { doze = DozeMachine(parameters.doze) } }
    var doze: DozeMachine
    /// Per app, its quota's sessions, and until when it is out of quota (the in-quota alarm)
    /// and why.
    var quota: [QuotaTracker] = []
    var outUntil: [(until: SimInstant, limit: QuotaTracker.Limit, bucket: Bucket)?] = []
    /// The jobs running: id and app.
    var running: [(id: Int, app: Int)] = []
    /// The holds array of the last decision, its buffer kept for the next (`decide`).
    var holdsBuffer: [PolicyHold] = []
    var batteryLow = false
    var wasCharging = false

    /// The model with `parameters` and no jobs run yet.
    init(_ parameters: Parameters) {
        self.parameters = parameters
        doze = DozeMachine(parameters.doze)
    }
    /// The model with the default numbers and no jobs run yet.
    init() { self.init(Parameters()) }

    /// `android`.
    static let policyName = "android"
    /// For `bgsim policies`.
    static let summary = "JobScheduler under Doze and App Standby buckets, as AOSP implements them, for comparison with iOS"

    /// Starts the eligible requests that Doze, the constraints and their apps' buckets and
    /// quotas allow, each limited to its quota and to the next IDLE; asks again when Doze or a
    /// quota lets go.
    mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        let p = parameters
        follow(state)
        if p.batteryNotLow {
            if batteryLow, state.charge > p.lowLevel + p.lowHysteresis || state.isCharging { batteryLow = false }
            if !batteryLow, state.charge <= p.lowLevel, !state.isCharging { batteryLow = true }
            if batteryLow { return PolicyDecision(start: .none, reason: Hold.batteryLow.rawValue) }
        }
        if p.requireUnmetered && state.network != .wifi { return PolicyDecision(start: .none, reason: Hold.metered.rawValue) }
        if !doze.allowsJobs {
            return PolicyDecision(
                start: .none, reconsiderAt: doze.nextChange.map { max($0, state.now + .microseconds(1)) },
                reason: (doze.deep == .idle ? Hold.doze : .lightDoze).rawValue)
        }
        let dozeLimit = doze.jobsMayRunUntil.map { $0 - state.now }
        // The last decision's holds buffer, which the phone has let go of by now (no malloc).
        var chosen: [TaskID] = [], holds = holdsBuffer, timeLimits: [PolicyTimeLimit] = []
        holdsBuffer = []
        holds.removeAll(keepingCapacity: true)
        defer { holdsBuffer = holds }
        var wake = doze.nextChange.flatMap { $0 > state.now ? $0 : nil }
        for task in eligible {
            let app = task.app
            while quota.count <= app {
                quota.append(QuotaTracker())
                outUntil.append(nil)
            }
            let bucket = self.bucket(app, state)
            if bucket == .never {
                holds.append(PolicyHold(task.id, Hold.neverOpened.number))
                continue
            }
            if bucket == .restricted && !state.isCharging {
                holds.append(PolicyHold(task.id, Hold.restricted.number))
                continue
            }
            let limits = p.quotas[bucket.rawValue]
            let free = state.isCharging && bucket != .restricted
            if !free {
                // Out of quota, an app waits for its in-quota alarm, unless its bucket changed.
                if let out = outUntil[app], out.until > state.now, out.bucket == bucket {
                    holds.append(PolicyHold(task.id, Self.number(out.limit)))
                    wake = min(wake ?? out.until, out.until)
                    continue
                }
                if let (limit, back) = quota[app].check(limits, at: state.now, p.common) {
                    let until = max(back, state.now + .seconds(1))
                    outUntil[app] = (until, limit, bucket)
                    holds.append(PolicyHold(task.id, Self.number(limit)))
                    wake = min(wake ?? until, until)
                    continue
                }
                outUntil[app] = nil
            }
            var limit = free ? nil : quota[app].timeUntilConsumed(limits, at: state.now, p.common)
            if let d = dozeLimit { limit = min(limit ?? d, d) }
            if let limit, limit > .zero { timeLimits.append(PolicyTimeLimit(task.id, limit)) }
            chosen.append(task.id)
            quota[app].jobStarted(at: state.now, charging: free, p.common)
            running.append((task.id.rawValue, app))
            doze.jobs(running: true, at: state.now)
        }
        if chosen.count == eligible.count { return PolicyDecision(start: .all, timeLimits: timeLimits) }
        return PolicyDecision(
            start: chosen.isEmpty ? .none : .some(chosen), reconsiderAt: wake, holds: holds, timeLimits: timeLimits)
    }

    /// A job ended: its app's session ends with its last, and a maintenance window may end.
    mutating func taskEnded(_ record: TaskRecord) {
        guard let k = running.firstIndex(where: { $0.id == record.request.id.rawValue }) else { return }
        let app = running[k].app
        running.remove(at: k)
        doze.advance(to: record.ended)
        quota[app].jobEnded(at: record.ended, parameters.common)
        if running.isEmpty { doze.jobs(running: false, at: record.ended) }
    }

    /// Brings Doze and the quota sessions up to `state`: the screen or the charger came or went.
    mutating func follow(_ state: DeviceState) {
        if state.isCharging != wasCharging {
            for a in quota.indices { quota[a].charging(state.isCharging, at: state.powerChangedAt, parameters.common) }
            wasCharging = state.isCharging
        }
        if state.inUse || state.isCharging {
            doze.becomeActive()
            return
        }
        let since = max(state.lastInUse, state.powerChangedAt)
        if doze.inactiveSince != since {
            doze.becomeInactive(at: since)
        }
        doze.advance(to: state.now)
    }

    /// Whether `app`, in `bucket`, may start a job now as far as its quota goes (AOSP's
    /// `isWithinQuotaLocked`): never in NEVER, always while charging (but in RESTRICTED).
    func isWithinQuota(_ app: Int, _ bucket: Bucket, charging: Bool, at now: SimInstant) -> Bool {
        if bucket == .never { return false }
        if charging && bucket != .restricted { return true }
        let tracker = app < quota.count ? quota[app] : QuotaTracker()
        return tracker.check(parameters.quotas[bucket.rawValue], at: now, parameters.common) == nil
    }

    /// The app's standby bucket now: the deepest whose time since last use and screen-on time
    /// since both reach its thresholds; NEVER if never used.
    func bucket(_ app: Int, _ state: DeviceState) -> Bucket {
        guard let elapsed = state.usage.sinceLastUse(app, now: state.now), let screen = state.usage.screenTimeSinceUse(app, now: state.now)
        else { return .never }
        let p = parameters
        if p.restrictedBucket, elapsed >= p.restrictedAfter, screen >= p.restrictedScreen { return .restricted }
        if elapsed >= p.rareAfter, screen >= p.rareScreen { return .rare }
        if elapsed >= p.frequentAfter, screen >= p.frequentScreen { return .frequent }
        if elapsed >= p.workingSetAfter { return .workingSet }
        return .active
    }
}
