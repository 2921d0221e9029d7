import Foundation
import PhoneWorld
import PolicyAPI
import SimEngine

extension DuetPolicy {
    /// One rule's answer for one request. The answers rank as dasd's numbers do (absolutely
    /// must not 100, must 67, must not 33, docs/sources.md §4): the highest present decides,
    /// and with none of them the weighted mean of the scores against the threshold.
    enum Verdict: Equatable, Sendable {
        /// The rule does not apply.
        case canProceed
        /// Must not run, unless a rule says it must.
        case mustNot
        /// Must run, unless a rule says it absolutely must not.
        case must
        /// Must not run, whatever the other rules say.
        case absolutelyMustNot
        /// A score in [0, 1] (0 or less: must not) with its weight in the mean.
        case score(Double, weight: Double)
    }

    /// The model's rules, each named by the token `tasks.csv` gives when it holds a request.
    enum Rule: String, CaseIterable, Sendable {
        /// The battery curve's score, or the class's floor.
        case battery
        /// On battery at or below the critical level (WWDC20 10063).
        case lowBattery = "low_battery"
        /// Processing on battery (iPhone).
        case notCharging = "not_charging"
        /// Processing while the person uses the phone, or within `processingIdleAfter` of it.
        case deviceInUse = "device_in_use"
        /// The app never used, not opened for `pauseAfter`, or (processing) not opened since
        /// its last processing launch.
        case appUnused = "app_unused"
        /// Within `learningPeriod` of the app's first use.
        case newApp = "new_app"
        /// The app's allowance of refresh launches, which follows its use, is spent for now.
        case allowance
        /// The allowance, stretched because the app's last task overran.
        case misbehaviour
        /// Predicted use: the application rule's score.
        case predictedUse = "predicted_use"
        /// No connection, or one too poor; or its quality's score.
        case network
        case energyBudget = "energy_budget"
        case dataBudget = "data_budget"
        /// `minLaunchSpacing` between any two launches of one app.
        case rateLimit = "rate_limit"
        /// Waiting longer than `maxWait`: must.
        case overdue
        /// A processing request past `processingDueAfter`: must.
        case processingDue = "processing_due"

        /// Whether the rule starts requests (must) rather than holds them.
        var starts: Bool { self == .overdue || self == .processingDue }
        /// Its number among the rules that hold (`DuetPolicy.holdReasons`); -1 for those that
        /// start. A switch, not a search of `holding`: each fresh outcome names one, and the
        /// search was a tenth of `outcome` (callgrind); a test checks it against `holding`.
        var number: Int {
            switch self {
            case .battery: 0
            case .lowBattery: 1
            case .notCharging: 2
            case .deviceInUse: 3
            case .appUnused: 4
            case .newApp: 5
            case .allowance: 6
            case .misbehaviour: 7
            case .predictedUse: 8
            case .network: 9
            case .energyBudget: 10
            case .dataBudget: 11
            case .rateLimit: 12
            case .overdue, .processingDue: -1
            }
        }
        /// The rules that hold requests, in their order.
        static let holding = allCases.filter { !$0.starts }
        /// Whether the rule reads the app alone (its use, allowance and launches), and comes
        /// before every rule that reads the phone's network, the idle window or the budgets.
        var isTheApps: Bool {
            switch self {
            case .appUnused, .newApp, .allowance, .misbehaviour, .rateLimit: true
            default: false
            }
        }
    }

    /// A rule and its verdict.
    struct RuleVerdict: Equatable, Sendable {
        /// The rule.
        var rule: Rule
        /// What it says of the request.
        var verdict: Verdict
        /// `rule` says `verdict`.
        init(_ rule: Rule, _ verdict: Verdict) {
            self.rule = rule
            self.verdict = verdict
        }
    }

    /// What deciding one request concluded: start it, or the rule that held it and when the
    /// rules that held it may change.
    struct Outcome {
        var start: Bool
        let rule: Rule?
        /// The number of the rule a hold names (`Rule.number`): `rule`, or `predictedUse` when
        /// a short mean names none.
        let holdReason: Int
        var wake: SimInstant?
        /// Started because a rule said it must.
        var byMust = false
        /// Until when (exclusive) the same inputs give the same outcome: the wake, and the
        /// instants at which a rule's verdict or the rule named changes with the time alone.
        var until = SimInstant.distantFuture
        /// Whether the application score's value counted: a must-not before the application
        /// rule decides whatever the score (a must starts it, or the must-not holds it). The
        /// score's side of `burstScore` may count all the same (`readsBurst`).
        var readsScore = false
        /// Whether the allowance read the score's side of `burstScore` (`Rules.allowanceHolds`).
        var readsBurst = false
        /// Whether the phone's network, its quality, the battery's score, the idle window or the
        /// data budget counted: not when a rule refused the request outright or a must-not of
        /// the app's own (its use, its allowance, the rate limit) held it, where only whether
        /// the battery refuses counts (`PowerInputs`).
        var readsPhone = true

        init(
            start: Bool, rule: Rule? = nil, wake: SimInstant? = nil, byMust: Bool = false, until: SimInstant = .distantFuture,
            readsScore: Bool = false, readsBurst: Bool = false, readsPhone: Bool = true
        ) {
            self.start = start
            self.rule = rule
            holdReason = (rule ?? .predictedUse).number
            self.wake = wake
            self.byMust = byMust
            self.until = until
            self.readsScore = readsScore
            self.readsBurst = readsBurst
            self.readsPhone = readsPhone
        }

        /// Whether `other` decides the same, whatever its `until` (a kept outcome's may be
        /// earlier than a fresh one's: the phone's idle window, say, no longer about to open),
        /// reading the score no less (the allowance's spacing ends with time alone, and with it
        /// the read of the burst side).
        func decidesAs(_ other: Outcome) -> Bool {
            start == other.start && rule == other.rule && wake == other.wake && byMust == other.byMust && readsScore == other.readsScore
                && (readsBurst || !other.readsBurst) && readsPhone == other.readsPhone
        }
    }

    /// Verdicts combined so far, by rank: absolutely must not, then must, then must not, then
    /// the weighted mean.
    struct Tally {
        var must = false, weighted = 0.0, weights = 0.0
        var mustNot: Rule?
        /// The scored rule with the largest weighted shortfall (`weight × (1 − score)`): what
        /// holds a request whose mean is short.
        var shortfall = 0.0, short: Rule?
        /// A score of zero or less (must not).
        var zero: Rule?
        /// Adds a verdict; false if it refuses outright (absolutely must not).
        mutating func add(_ v: Verdict, _ rule: Rule) -> Bool {
            switch v {
            case .absolutelyMustNot: return false
            case .mustNot: if mustNot == nil { mustNot = rule }
            case .must: must = true
            case .canProceed: break
            case .score(let s, let w):
                if s <= 0, zero == nil { zero = rule }
                weighted += s * w
                weights += w
                if w * (1 - s) > shortfall {
                    shortfall = w * (1 - s)
                    short = rule
                }
            }
            return true
        }
        /// Whether the request starts, and if not, the rule that held it.
        func result(threshold: Double) -> (start: Bool, rule: Rule?) {
            if must { return (true, nil) }
            if let mustNot { return (false, mustNot) }
            if let zero { return (false, zero) }
            if weights == 0 || weighted / weights >= threshold { return (true, nil) }
            return (false, short ?? .predictedUse)
        }
    }

    /// Combines verdicts by rank: absolutely must not, must, must not, then the weighted mean
    /// against the threshold (a score of zero or less is a must-not).
    static func combine(_ verdicts: [Verdict], threshold: Double) -> Bool {
        var tally = Tally()
        for v in verdicts where !tally.add(v, .battery) { return false }
        return tally.result(threshold: threshold).start
    }

    /// The battery rule's scores for each class at a scored level and charger state.
    struct BatteryScores: Sendable {
        var level: Double
        var charging: Bool
        var refresh, processing: Double
    }

    /// What an app's use earns it (`DuetPolicy.allowance`), worked out once per decision.
    struct AppUse {
        /// Refresh launches a day; 0 when paused or never used.
        var perDay: Double
        /// When the learning period after its first use ends (`nil`: over, or never used).
        var learningUntil: SimInstant?
        /// The app has never been used.
        var neverUsed: Bool
        /// Until when (exclusive) this holds while the app's record stays the same: no launch,
        /// no leaving (`allowance`).
        var until = SimInstant.distantFuture

        /// Whether two allowances earn the same, whatever their `until`.
        func earnsTheSame(as other: AppUse) -> Bool {
            perDay == other.perDay && learningUntil == other.learningUntil && neverUsed == other.neverUsed
        }
    }

    /// What the rules read, bound once per decision. The rules are its methods rather than
    /// the policy's: a non-mutating method of the policy called from `decide` (mutating) was
    /// handed a copy of the whole policy (377 bytes, memcpy) twice per request.
    struct Rules {
        var parameters: Parameters
        var energyLeftJ: Double
        var dataLeft: Double

        /// When the idle window on a charger and Wi-Fi opened, if the phone is in one: idle for
        /// `idleWindowAfter`, and since the later of that and the plug-in.
        func idleWindowOpened(_ state: DeviceState) -> SimInstant? {
            guard let after = parameters.idleWindowAfter, state.isCharging, state.network == .wifi, !state.inUse, state.idleFor >= after
            else { return nil }
            return max(state.lastInUse + after, state.powerChangedAt)
        }

        /// Hands each rule's verdict for `task` to `visit`, in the order of `Rule`, until
        /// `visit` returns false; notes in `wake` when a rule that said no may say yes, in
        /// `until` the first instant at which a verdict may change with the time alone, and in
        /// `readsBurst` whether the allowance read the score's side of `burstScore`.
        /// Deciding streams the verdicts this way, so it allocates nothing.
        ///
        /// `appScore` is the application rule's score (cached per app by `decide`), `use` what
        /// the app's use earns, `launches` the app's last background launches and whether its
        /// last task overran.
        func forEachVerdict(
            _ task: EligibleTask, _ state: DeviceState, level: Double, battery: BatteryScores? = nil, appScore: Double,
            use: AppUse, launches: borrowing Launches, wake: inout SimInstant?, until: inout SimInstant, readsBurst: inout Bool,
            _ visit: (Rule, Verdict) -> Bool
        ) {
            let p = parameters, now = state.now
            func later(_ t: SimInstant) {
                if t > now {
                    wake = min(wake ?? t, t)
                    until = min(until, t)
                }
            }
            // Battery: the critical level, the class's floor and processing on battery, then the score.
            let processing = task.kind == .processing, refreshLike = task.kind.isRefreshLike
            let curve = processing ? p.processingBattery : p.refreshBattery
            if !state.isCharging && 100 * state.charge <= p.criticalBattery || level <= curve.floor - 1 {
                guard visit(.lowBattery, .absolutelyMustNot) else { return }
            } else if processing && p.processingNeedsPower && !state.isCharging {
                guard visit(.notCharging, .absolutelyMustNot) else { return }
            } else {
                let score = battery.map { processing ? $0.processing : $0.refresh } ?? batteryScore(curve, level: level, state)
                guard visit(.battery, .score(score, weight: p.batteryWeight)) else { return }
            }
            if processing && (state.inUse || state.idleFor < p.processingIdleAfter) {
                if !state.inUse { later(state.lastInUse + p.processingIdleAfter) }
                guard visit(.deviceInUse, .absolutelyMustNot) else { return }
            } else {
                guard visit(.deviceInUse, .canProceed) else { return }
            }
            // App usage: an app's background launches follow its use.
            if use.neverUsed {
                guard visit(.appUnused, .mustNot) else { return }
            } else if refreshLike {
                if let until = use.learningUntil {
                    later(until)
                    guard visit(.newApp, .mustNot) else { return }
                } else if use.perDay <= 0 {
                    guard visit(.appUnused, .mustNot) else { return }
                } else if let held = allowanceHolds(
                    use.perDay, launches, now: now, appScore: appScore, wake: &wake, until: &until, readsBurst: &readsBurst)
                {
                    guard visit(held, .mustNot) else { return }
                }
            } else if processing, p.processingFollowsUse, let last = launches.lastProcessing,
                !(state.usage.apps[task.app].launches.last.map { $0 > last } ?? false), !state.usage.apps[task.app].inForeground
            {
                guard visit(.appUnused, .mustNot) else { return }
            }
            if let last = launches.last, last < now, now - last < p.minLaunchSpacing {
                later(last + p.minLaunchSpacing)
                guard visit(.rateLimit, .mustNot) else { return }
            } else if let last = launches.last, last >= now {
                // A launch at this instant spaces the next ones from the next instant on.
                until = min(until, last + .microseconds(1))
            }
            // Predicted use, unless the phone is in the idle window on power and Wi-Fi and the
            // app has had fewer refreshes in this window than `idleWindowShare` of its day's
            // allowance (at least one): the rest waits for predicted use.
            if refreshLike {
                let opened = idleWindowOpened(state)
                if opened == nil
                    || Double(launches.recentRefreshes.count { $0 >= opened! }) >= max(1, (use.perDay * p.idleWindowShare).rounded(.down))
                {
                    guard visit(.predictedUse, .score(appScore, weight: p.applicationWeight)) else { return }
                }
            }
            // Network quality.
            guard
                visit(
                    .network,
                    state.network == .none || state.networkQuality < p.minNetworkQuality
                        ? .mustNot : .score(state.networkQuality / 100, weight: p.networkWeight))
            else { return }
            // Budgets.
            if !state.isCharging && energyLeftJ <= 0 {
                if p.energyBudgetPerDay > 0 { later(now + SimDuration(seconds: -energyLeftJ / p.energyBudgetPerDay * 86_400 + 1)) }
                guard visit(.energyBudget, .mustNot) else { return }
            }
            guard visit(.dataBudget, state.network == .cellular && dataLeft <= 0 ? .mustNot : .canProceed) else { return }
            // Overdue.
            if let maxWait = p.maxWait {
                if now - task.eligibleSince >= maxWait {
                    guard visit(.overdue, .must) else { return }
                } else {
                    later(task.eligibleSince + maxWait)
                }
            }
            // Processing due: the system tries to run it within two days if the app was used
            // in the past week (BGProcessingTaskRequest, docs/sources.md §2).
            if processing, let due = p.processingDueAfter,
                let since = state.usage.sinceLastUse(task.app, now: now), since <= p.processingUsedWithin
            {
                // The app's last use leaves the window the instant after this, unless it is in use.
                if !state.usage.apps[task.app].inForeground {
                    until = min(until, now + (p.processingUsedWithin - since) + .microseconds(1))
                }
                if now - task.eligibleSince >= due {
                    _ = visit(.processingDue, .must)
                } else {
                    later(task.eligibleSince + due)
                }
            }
        }

        /// Whether the app's allowance holds a refresh now, and if so by which rule: at most
        /// `perDay` refresh launches in any day (an allowance under one a day: one in any
        /// 1 / `perDay` days, at most a week), at least `allowanceSpread` of a day over
        /// `perDay` apart unless the app's score reaches `burstScore`; an app whose last task
        /// overran counts over `misbehaviourFactor` times as long and spaces by that factor
        /// too (no burst). Requests started at `now` are one launch.
        func allowanceHolds(
            _ perDay: Double, _ launches: borrowing Launches, now: SimInstant, appScore: Double, wake: inout SimInstant?,
            until: inout SimInstant, readsBurst: inout Bool
        ) -> Rule? {
            let p = parameters
            let factor = launches.overran ? p.misbehaviourFactor : 1
            let span = Self.allowanceSpan(perDay)
            // Whole microseconds: this runs for every refresh request at every decision.
            let day = Int64(Double(SimDuration.days(1).microseconds) * span)
            let window = launches.overran ? Int64(Double(day) * factor) : day
            let allowed = perDay * span
            var count = 0, normal = 0
            var oldest: Int64?, oldestNormal: Int64?, last: Int64?
            let now = now.microseconds
            func later(_ t: Int64) {
                guard t > now else { return }
                wake = min(wake ?? .init(microseconds: t), .init(microseconds: t))
                bound(t)
            }
            // When the rule named changes while the allowance still holds.
            func bound(_ t: Int64) { if t > now { until = min(until, .init(microseconds: t)) } }
            for r in launches.recentRefreshes {
                let t = r.microseconds
                guard t < now else {
                    // Counted from the next instant on.
                    bound(t + 1)
                    continue
                }
                last = t
                if t > now - window {
                    count += 1
                    if oldest == nil { oldest = t }
                    if t > now - day {
                        normal += 1
                        if oldestNormal == nil { oldestNormal = t }
                    }
                }
            }
            if Double(count + 1) > allowed {
                if let oldest { later(oldest + window) }
                if launches.overran, let oldestNormal { bound(oldestNormal + day) }
                return Double(normal + 1) > allowed ? .allowance : .misbehaviour
            }
            let spacing = Int64(Double(SimDuration.days(1).microseconds) / perDay * p.allowanceSpread)
            let stretched = launches.overran ? Int64(Double(spacing) * factor) : spacing
            guard let last, now < last + stretched else { return nil }
            if !launches.overran, let burst = p.burstScore {
                readsBurst = true
                if appScore >= burst { return nil }
            }
            later(last + stretched)
            bound(last + spacing)
            return now < last + spacing ? .allowance : .misbehaviour
        }

        /// The days over which an allowance of `perDay` is counted: one, or for an allowance
        /// under one a day as many as it takes to earn one refresh, at most seven (so that an
        /// app earning 0.6 a day gets one every 1.7 days, not none).
        static func allowanceSpan(_ perDay: Double) -> Double { perDay >= 1 ? 1 : min(7, 1 / perDay) }

        /// `clamp(((L - B) / (100 - B))^k, 0, 1)`, times the bonus when plugged in.
        func batteryScore(_ curve: BatteryCurve, level: Double, _ state: DeviceState) -> Double {
            let base = max(0, min(1, (level - curve.floor) / (100 - curve.floor)))
            return pow(base, curve.exponent) * (state.isCharging ? parameters.pluggedInBonus : 1)
        }

        /// Whether `task` starts now, or the rule that holds it and when to ask again.
        func decide(
            _ task: EligibleTask, _ state: DeviceState, level: Double, battery: BatteryScores? = nil, appScore: Double,
            use: AppUse, launches: borrowing Launches
        ) -> Outcome {
            var tally = Tally(), refused: Rule?, wake: SimInstant?, until = SimInstant.distantFuture, readsScore = false,
                readsBurst = false
            forEachVerdict(
                task, state, level: level, battery: battery, appScore: appScore, use: use, launches: launches, wake: &wake, until: &until,
                readsBurst: &readsBurst
            ) {
                rule, v in
                if rule == .predictedUse, tally.mustNot == nil { readsScore = true }
                if !tally.add(v, rule) { refused = rule }
                return refused == nil
            }
            if let refused { return Outcome(start: false, rule: refused, wake: wake, until: until, readsBurst: readsBurst, readsPhone: false) }
            let (start, rule) = tally.result(threshold: parameters.threshold)
            return Outcome(
                start: start, rule: rule, wake: wake, byMust: tally.must, until: until, readsScore: readsScore, readsBurst: readsBurst,
                readsPhone: !(tally.mustNot?.isTheApps ?? false))
        }
    }

    /// One app's last background launches, as the rules read them: its refresh (and fetch)
    /// launches within the last `misbehaviourFactor` days, in time order.
    struct Launches {
        var last, lastProcessing: SimInstant?
        var recentRefreshes: [SimInstant] = []
        var overran = false
        /// Counts the changes above: a kept outcome read the version it was decided at.
        var version = 0
    }

    /// What `app`'s use earns it at `now` (docs/sources.md §4): nothing if never used or not
    /// opened for `pauseAfter`; in the `learningPeriod` after its first use, nothing yet;
    /// otherwise `refreshesPerLaunch` per launch a day over the `usageWindow` (or since its
    /// first use, if later, and at least a day), between `minRefreshesPerDay` and
    /// `maxRefreshesPerDay`. Its `until` is the first instant the answer may change while the
    /// app is neither opened nor left: the learning period's end, the pause, the oldest launch
    /// leaving the window, the span starting to grow (before then, `now` itself).
    static func allowance(_ usage: UsageHistory, app: Int, now: SimInstant, _ p: Parameters) -> AppUse {
        let launches = usage.apps[app].launches
        guard let first = launches.first else { return AppUse(perDay: 0, neverUsed: true) }
        if now < first + p.learningPeriod {
            return AppUse(perDay: 0, learningUntil: first + p.learningPeriod, neverUsed: false, until: first + p.learningPeriod)
        }
        if let since = usage.sinceLastUse(app, now: now), since >= p.pauseAfter { return AppUse(perDay: 0, neverUsed: false) }
        let from = now - p.usageWindow
        // Launches within the window: the first index at or after `from`, by bisection.
        var lo = 0, hi = launches.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if launches[mid] < from { lo = mid + 1 } else { hi = mid }
        }
        let span = max(min(p.usageWindow, now - first), .days(1))
        let perDay = Double(launches.count - lo) / (span.seconds / 86_400)
        var until = SimInstant.distantFuture
        if !usage.apps[app].inForeground, let left = usage.apps[app].lastLeft { until = left + p.pauseAfter }
        // The launch at `lo` leaves the window once `from` passes it.
        if lo < launches.count { until = min(until, launches[lo] + p.usageWindow + .microseconds(1)) }
        let age = now - first
        if age < p.usageWindow { until = min(until, age > .days(1) ? now : first + .days(1) + .microseconds(1)) }
        return AppUse(
            perDay: min(p.maxRefreshesPerDay, max(p.minRefreshesPerDay, p.refreshesPerLaunch * perDay)), neverUsed: false, until: until)
    }
}
