import Foundation
import PhoneWorld
import SimEngine

/// A model of iOS's Duet Activity Scheduler (dasd), docs/sources.md §4: a set of policies each
/// answer for a request, and a weighted score decides what the answers leave open.
///
/// For each eligible request, every rule gives a verdict:
/// - **Battery**: with charge level L in percent (rescored only when it moved 5 points or the
///   charger came or went), `clamp(((L - B) / (100 - B))^k, 0, 1)`, times 1.2 when plugged in,
///   with B and k of the request's priority class (refresh: utility, B 10, k 0.4; processing:
///   maintenance, B 20, k 0.5). At or below B - 1 (19% for maintenance, 9% for utility) the
///   class is constrained: must not. A processing launch while unplugged: must not (iPhone).
/// - **Low Power Mode**: on, and L < 30 or unplugged: must not.
/// - **Device activity**: processing while the phone is in use (a foreground app or a call):
///   must not.
/// - **Application** (refresh and legacy fetch): `sqrt(1 - prod(1 - p))` over the predicted launch
///   probabilities of the app in the next 7.5 minutes, each p above 0.25 counting as 1, from
///   an online predictor learned from the simulated history (`LaunchPredictor`), weight 50.
/// - **Network quality**: no connection: must not; quality below `minNetworkQuality`: must
///   not; else quality / 100, weight 8.4.
/// - **Energy budget**: work done on battery spends a budget refilled evenly over the day; an
///   empty budget: must not (plugged in, none is needed).
/// - **Data budget**: the same for bytes over cellular.
/// - **Rate limit**: a second launch of the same app within `minLaunchSpacing`: must not.
/// - **Overdue** (off unless `maxWait` is set): waiting longer than that: must proceed.
/// - **Processing due**: a processing request eligible for `processingDueAfter` (2 days) whose
///   app was used within `processingUsedWithin` (7 days): must proceed.
/// - **Idle window**: on a charger and Wi-Fi, idle for `idleWindowAfter` (30 min), the
///   application rule gives way for refresh and fetch: the time practitioners report iOS
///   grants background work in (overnight, charging, on Wi-Fi, unused).
///
/// Combination: any must-not wins; otherwise any must-proceed starts it; otherwise the
/// weighted mean of the scores (battery weight 1, network 8.4, application 50) must reach
/// `threshold`. A score of zero or less is a must-not. Thermal and memory pressure are not
/// modelled, so their rules are left out rather than given a made-up constant score.
///
/// Every number is a parameter; defaults come from docs/sources.md §4 where it has one and are
/// marked as assumptions where it does not (threshold, budgets, rate limit: dasd's values are
/// unknown).
public struct DuetPolicy: RegisteredPolicy {
    /// A dasd priority class's battery curve.
    public struct BatteryCurve: Equatable, Sendable {
        /// B, in percent: the score is zero here, and at or below B - 1 the class is constrained.
        public var floor: Double
        /// k: the curve's exponent.
        public var exponent: Double
        /// The curve with floor `floor` and exponent `exponent`.
        public init(floor: Double, exponent: Double) {
            self.floor = floor
            self.exponent = exponent
        }
        /// Maintenance work (processing): B 20, k 0.5.
        public static let maintenance = BatteryCurve(floor: 20, exponent: 0.5)
        /// Utility work (refresh): B 10, k 0.4.
        public static let utility = BatteryCurve(floor: 10, exponent: 0.4)
        /// User-initiated work: B 5, k 0.25.
        public static let userInitiated = BatteryCurve(floor: 5, exponent: 0.25)
    }

    /// Every number of the model; each is a scenario key of the `ios` policy.
    public struct Parameters: Equatable, Sendable {
        // Battery policy (docs/sources.md §4).
        /// The battery curve of refresh requests (utility work).
        public var refreshBattery = BatteryCurve.utility
        /// The battery curve of processing requests (maintenance work).
        public var processingBattery = BatteryCurve.maintenance
        /// Factor on the battery score while plugged in.
        public var pluggedInBonus = 1.2
        /// Level changes smaller than this (percentage points) do not rescore.
        public var rescoreStep = 5.0
        /// Whether processing must not proceed on battery.
        public var processingNeedsPower = true
        /// Weight of the battery score in the weighted mean.
        public var batteryWeight = 1.0
        // Low Power Mode policy.
        /// With Low Power Mode on, below this level (percent) work must not proceed.
        public var lowPowerLevel = 30.0
        // Application policy.
        /// How far ahead the application rule looks for predicted launches.
        public var launchLookahead: SimDuration = .seconds(450)
        /// A bin's launch probability before any history.
        public var defaultLaunchProbability = 0.0025
        /// A predicted probability above this counts as 1.
        public var certainLaunchProbability = 0.25
        /// Weight of the application score in the weighted mean.
        public var applicationWeight = 50.0
        // Network quality policy.
        /// Weight of the network quality score in the weighted mean.
        public var networkWeight = 8.4
        /// Assumption: a Wi-Fi quality of 50 was seen as a requirement in a log (docs/sources.md §4);
        /// applied here to any connection.
        public var minNetworkQuality = 50.0
        // Budgets and rate limit: assumptions (dasd's values are not published).
        /// Energy background work may take from the battery per day, in joules (about 1% of a
        /// 12.4 Wh battery).
        public var energyBudgetPerDay = 450.0
        /// Cellular bytes background work may use per day.
        public var dataBudgetPerDay = 50e6
        /// Shortest time between two background launches of one app.
        public var minLaunchSpacing: SimDuration = .minutes(10)
        /// A request waiting this long must proceed; `nil`: never.
        public var maxWait: SimDuration?
        /// A processing request eligible this long must proceed (when nothing forbids it) if its
        /// app was used within `processingUsedWithin`; `nil`: never.
        public var processingDueAfter: SimDuration? = .days(2)
        /// How recently the app must have been used for `processingDueAfter` to apply.
        public var processingUsedWithin: SimDuration = .days(7)
        /// Idle this long on a charger and Wi-Fi, the phone is in the window iOS grants
        /// background time in (docs/sources.md §4 [secondary]): the application rule gives way
        /// (can proceed) for refresh and fetch. `nil`: no such window.
        public var idleWindowAfter: SimDuration? = .minutes(30)
        /// The weighted mean a request's scores must reach. dasd's value is unknown.
        public var threshold = 0.25
        /// dasd's values where known (docs/sources.md §4), the assumptions of docs/sources.md §12 elsewhere.
        public init() {}
    }

    /// One rule's answer for one request.
    public enum Verdict: Equatable, Sendable {
        /// The rule does not apply.
        case canProceed
        case mustNot
        case must
        case score(Double, weight: Double)
    }

    /// The model's numbers. Setting them starts the model afresh (a scenario's values are set
    /// on a policy made with `init()`).
    public var parameters: Parameters { didSet { self = DuetPolicy(parameters) } }
    var predictor: LaunchPredictor
    /// The battery level last scored, and whether plugged in then.
    var scoredLevel: Double?
    var batteryScores: BatteryScores?
    var scoredPlugged = false
    var energyLeftJ: Double
    var dataLeft: Double
    var budgetsAt = SimInstant.start
    /// Per app, its last background launch by this policy.
    var lastLaunch: [SimInstant?] = []
    /// Requests started on battery, and on cellular, whose cost is charged when they end.
    var onBattery = TaskIDBits()
    var onCellular = TaskIDBits()
    /// The application rule's score per app, for the prediction bins and the predictor's state
    /// `appScoresKey` names. It changes at a bin boundary (a launch counts in its bin from the
    /// next day on), not at each decision: a division per bin and a square root per refresh
    /// request per decision were a twentieth of a run. The predictor's state is in the key
    /// all the same, so the cache does not depend on that reasoning.
    var appScores: [Double?] = []
    var appScoresKey: AppScoresKey?

    struct AppScoresKey: Equatable {
        var firstBin, lastBin: SimInstant
        var launchesLearned, appsLearned: Int
    }

    /// The model with `parameters`, no history and full budgets.
    public init(_ parameters: Parameters) {
        self.parameters = parameters
        self.predictor = LaunchPredictor(prior: parameters.defaultLaunchProbability)
        energyLeftJ = parameters.energyBudgetPerDay
        dataLeft = parameters.dataBudgetPerDay
    }

    /// The model with the default numbers.
    public init() { self.init(Parameters()) }

    /// `ios`.
    public static let policyName = "ios"
    /// For `bgsim policies`.
    public static let summary = "the Duet Activity Scheduler: rules' verdicts and a weighted score decide each request"
    /// Every number of the model, as scenario keys.
    public static let parameters: [PolicyParameter<Self>] = [
        .number("threshold", \.parameters.threshold, in: 0...2, unit: "a score threshold", help: "the weighted mean a request's scores must reach"),
        .number(
            "refresh_battery_floor_pct", \.parameters.refreshBattery.floor, in: NumberRange(0..<100), unit: "a level in percent",
            help: "B of refresh (utility) work: its battery score is 0 here, and at or below B - 1 it must not run"),
        .number(
            "refresh_battery_exponent", \.parameters.refreshBattery.exponent, in: .above(0), unit: "an exponent",
            help: "k of refresh work's battery curve"),
        .number(
            "processing_battery_floor_pct", \.parameters.processingBattery.floor, in: NumberRange(0..<100), unit: "a level in percent",
            help: "B of processing (maintenance) work"),
        .number(
            "processing_battery_exponent", \.parameters.processingBattery.exponent, in: .above(0), unit: "an exponent",
            help: "k of processing work's battery curve"),
        .number("plugged_in_bonus", \.parameters.pluggedInBonus, in: NumberRange(1...), unit: "a factor", help: "factor on the battery score while plugged in"),
        .number(
            "rescore_step_pct", \.parameters.rescoreStep, in: 0...100, unit: "percentage points",
            help: "level changes smaller than this do not rescore the battery"),
        .flag("processing_needs_power", \.parameters.processingNeedsPower, help: "processing must not run on battery"),
        .number(
            "low_power_level_pct", \.parameters.lowPowerLevel, in: 0...100, unit: "a level in percent",
            help: "with Low Power Mode on, below this level work must not run"),
        .duration("launch_lookahead", \.parameters.launchLookahead, in: .positive, help: "how far ahead the application rule looks for predicted launches"),
        .number(
            "default_launch_probability", \.parameters.defaultLaunchProbability, in: 0...1, unit: "a probability",
            help: "a bin's launch probability before any history"),
        .number(
            "certain_launch_probability", \.parameters.certainLaunchProbability, in: 0...1, unit: "a probability",
            help: "a predicted probability above this counts as 1"),
        .number("battery_weight", \.parameters.batteryWeight, in: NumberRange(0...), unit: "a weight", help: "weight of the battery score"),
        .number("application_weight", \.parameters.applicationWeight, in: NumberRange(0...), unit: "a weight", help: "weight of the application score"),
        .number("network_weight", \.parameters.networkWeight, in: NumberRange(0...), unit: "a weight", help: "weight of the network quality score"),
        .number(
            "min_network_quality", \.parameters.minNetworkQuality, in: 0...100, unit: "a quality",
            help: "below this connection quality (0-100) work must not run"),
        .number(
            "energy_budget_j_per_day", \.parameters.energyBudgetPerDay, in: NumberRange(0...), unit: "joules per day",
            help: "battery energy background work may take per day"),
        .number(
            "data_budget_mb_per_day", in: NumberRange(0...), unit: "megabytes per day", help: "cellular data background work may use per day",
            get: { $0.parameters.dataBudgetPerDay / 1e6 }, set: { $0.parameters.dataBudgetPerDay = $1 * 1e6 }),
        .duration("min_launch_spacing", \.parameters.minLaunchSpacing, help: "shortest time between two background launches of one app"),
        .optionalDuration(
            "max_wait", \.parameters.maxWait, in: .positive, help: "a request waiting this long must run (none: never)"),
        .optionalDuration(
            "processing_due_after", \.parameters.processingDueAfter, in: .positive,
            help: "a processing request waiting this long must run, if its app was used recently (none: never)"),
        .duration(
            "processing_used_within", \.parameters.processingUsedWithin, in: .positive,
            help: "how recently the app must have been used for processing_due_after"),
        .optionalDuration(
            "idle_window_after", \.parameters.idleWindowAfter,
            help: "idle this long on a charger and Wi-Fi, refresh and fetch skip the application rule (none: never)"),
    ]

    /// Scores every eligible request by every rule and starts those that pass; asks again at the
    /// next prediction bin, when an app's launch spacing ends, or when the energy budget refills.
    public mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        predictor.learn(state.usage)
        refill(to: state.now)
        let rules = self.rules
        let level = scoredBatteryLevel(state)
        // The battery rule's scores depend only on the class, the scored level and the
        // charger: computed when those change, not per request (`pow` per request was a
        // twentieth of a run).
        if batteryScores?.level != level || batteryScores?.charging != state.isCharging {
            batteryScores = BatteryScores(
                level: level, charging: state.isCharging,
                refresh: rules.batteryScore(parameters.refreshBattery, level: level, state),
                processing: rules.batteryScore(parameters.processingBattery, level: level, state))
        }
        let battery = batteryScores!
        let key = AppScoresKey(
            firstBin: predictor.binStart(of: state.now),
            lastBin: predictor.binStart(of: state.now + parameters.launchLookahead),
            launchesLearned: predictor.learned, appsLearned: predictor.hits.count)
        if key != appScoresKey {
            appScoresKey = key
            for a in appScores.indices { appScores[a] = nil }
        }
        var chosen: [TaskID] = []
        var wake = predictor.nextBoundary(after: state.now)
        // Ask again when the phone, on a charger and Wi-Fi, has been idle long enough.
        if let after = parameters.idleWindowAfter, state.isCharging, state.network == .wifi, !state.inUse,
            state.idleFor < after
        {
            wake = min(wake, state.lastInUse + after)
        }
        for task in eligible {
            if lastLaunch.count <= task.app { lastLaunch += Array(repeating: nil, count: task.app + 1 - lastLaunch.count) }
            // Several requests of one app may start together: one launch.
            if let last = lastLaunch[task.app], last < state.now, state.now - last < parameters.minLaunchSpacing {
                wake = min(wake, last + parameters.minLaunchSpacing)
                continue
            }
            var appScore = 0.0
            if Self.scoresAppUsage(task.kind) {
                if appScores.count <= task.app { appScores += Array(repeating: nil, count: task.app + 1 - appScores.count) }
                if appScores[task.app] == nil {
                    appScores[task.app] = Self.applicationScore(
                        predictor, app: task.app, now: state.now, lookahead: parameters.launchLookahead,
                        certain: parameters.certainLaunchProbability)
                }
                appScore = appScores[task.app]!
            }
            if rules.admits(task, state, level: level, battery: battery, appScore: appScore) {
                chosen.append(task.id)
                lastLaunch[task.app] = state.now
                if !state.isCharging { onBattery.insert(task.id.rawValue) }
                if state.network == .cellular { onCellular.insert(task.id.rawValue) }
            } else if task.kind == .processing, let due = parameters.processingDueAfter, task.eligibleSince + due > state.now {
                wake = min(wake, task.eligibleSince + due)
            }
        }
        if energyLeftJ <= 0, parameters.energyBudgetPerDay > 0 {
            wake = min(wake, state.now + SimDuration(seconds: -energyLeftJ / parameters.energyBudgetPerDay * 86_400 + 1))
        }
        if chosen.count == eligible.count { return PolicyDecision(start: .all) }
        return PolicyDecision(start: chosen.isEmpty ? .none : .some(chosen), reconsiderAt: wake, reason: "score")
    }

    /// Whether the application rule scores a request of `kind`: refresh, and legacy background
    /// fetch, which iOS decides as it decides a refresh (docs/sources.md §2, §4).
    static func scoresAppUsage(_ kind: TaskKind) -> Bool { kind == .refresh || kind == .fetch }

    /// Charges a task started on battery or cellular to the energy or data budget.
    public mutating func taskEnded(_ record: TaskRecord) {
        let i = record.request.id.rawValue
        refill(to: max(budgetsAt, record.ended))
        if onBattery.remove(i) { energyLeftJ -= record.energyJ }
        if onCellular.remove(i), record.started != nil { dataLeft -= record.request.upBytes + record.request.downBytes }
    }

    /// Every rule's verdict for `task`, in the order documented above.
    public func verdicts(_ task: EligibleTask, _ state: DeviceState, level: Double) -> [Verdict] {
        var out: [Verdict] = []
        let appScore = Self.scoresAppUsage(task.kind) ? applicationScore(app: task.app, now: state.now) : 0
        rules.forEachVerdict(task, state, level: level, appScore: appScore) {
            out.append($0); return true
        }
        return out
    }

    /// Verdicts combined so far: must-not first, then must, then the weighted mean against
    /// the threshold.
    struct Tally {
        var must = false, weighted = 0.0, weights = 0.0
        /// Adds a verdict; false if it refuses outright (a must-not, or a score of zero).
        mutating func add(_ v: Verdict) -> Bool {
            switch v {
            case .mustNot: return false
            case .must: must = true
            case .canProceed: break
            case .score(let s, let w):
                if s <= 0 { return false }
                weighted += s * w
                weights += w
            }
            return true
        }
        func passes(threshold: Double) -> Bool { must || weights == 0 || weighted / weights >= threshold }
    }

    /// Combines verdicts: must-not first, then must, then the weighted mean against the threshold.
    public static func combine(_ verdicts: [Verdict], threshold: Double) -> Bool {
        var tally = Tally()
        for v in verdicts where !tally.add(v) { return false }
        return tally.passes(threshold: threshold)
    }

    /// The battery rule's score for each class at a scored level and charger state.
    struct BatteryScores: Sendable {
        var level: Double
        var charging: Bool
        var refresh, processing: Double
    }

    /// What the rules read, bound once per decision. The rules are its methods rather than
    /// the policy's: a non-mutating method of the policy called from `decide` (mutating) was
    /// handed a copy of the whole policy (377 bytes, memcpy) twice per request.
    struct Rules {
        var parameters: Parameters
        var energyLeftJ: Double
        var dataLeft: Double

        /// Hands each rule's verdict for `task` to `visit`, in the order documented above, until
        /// `visit` returns false. Deciding streams the verdicts this way, so it allocates nothing.
        /// Whether the phone has been idle on a charger and Wi-Fi for `idleWindowAfter`.
        func inIdleWindow(_ state: DeviceState) -> Bool {
            guard let after = parameters.idleWindowAfter else { return false }
            return state.isCharging && state.network == .wifi && !state.inUse && state.idleFor >= after
        }

        /// `appScore` is the application rule's score for a refresh request
        /// (`applicationScore`, cached per app by `decide`), ignored otherwise.
        func forEachVerdict(
            _ task: EligibleTask, _ state: DeviceState, level: Double, battery: BatteryScores? = nil,
            appScore: Double, _ visit: (Verdict) -> Bool
        ) {
            // Battery.
            let processing = task.kind == .processing
            let curve = processing ? parameters.processingBattery : parameters.refreshBattery
            if level <= curve.floor - 1 || (processing && parameters.processingNeedsPower && !state.isCharging) {
                guard visit(.mustNot) else { return }
            } else {
                let score = battery.map { processing ? $0.processing : $0.refresh } ?? batteryScore(curve, level: level, state)
                guard visit(.score(score, weight: parameters.batteryWeight)) else { return }
            }
            // Low Power Mode.
            guard visit(state.lowPowerMode && (level < parameters.lowPowerLevel || !state.isCharging) ? .mustNot : .canProceed) else { return }
            // Device activity.
            guard visit(task.kind == .processing && state.inUse ? .mustNot : .canProceed) else { return }
            // Application, unless the phone is in the idle window on power and Wi-Fi.
            if DuetPolicy.scoresAppUsage(task.kind) && !inIdleWindow(state) {
                guard visit(.score(appScore, weight: parameters.applicationWeight)) else { return }
            } else {
                guard visit(.canProceed) else { return }
            }
            // Network quality.
            guard
                visit(
                    state.network == .none || state.networkQuality < parameters.minNetworkQuality
                        ? .mustNot : .score(state.networkQuality / 100, weight: parameters.networkWeight))
            else { return }
            // Budgets.
            guard visit(!state.isCharging && energyLeftJ <= 0 ? .mustNot : .canProceed) else { return }
            guard visit(state.network == .cellular && dataLeft <= 0 ? .mustNot : .canProceed) else { return }
            // Overdue.
            if let maxWait = parameters.maxWait, state.now - task.eligibleSince >= maxWait {
                guard visit(.must) else { return }
            }
            // Processing due: the system tries to run it within two days if the app was used
            // in the past week (BGProcessingTaskRequest, docs/sources.md §2).
            if task.kind == .processing, let due = parameters.processingDueAfter, state.now - task.eligibleSince >= due,
                let since = state.usage.sinceLastUse(task.app, now: state.now), since <= parameters.processingUsedWithin
            {
                _ = visit(.must)
            }
        }

        /// `clamp(((L - B) / (100 - B))^k, 0, 1)`, times the bonus when plugged in.
        func batteryScore(_ curve: BatteryCurve, level: Double, _ state: DeviceState) -> Double {
            let base = max(0, min(1, (level - curve.floor) / (100 - curve.floor)))
            return pow(base, curve.exponent) * (state.isCharging ? parameters.pluggedInBonus : 1)
        }

        func admits(
            _ task: EligibleTask, _ state: DeviceState, level: Double, battery: BatteryScores? = nil,
            appScore: Double
        ) -> Bool {
            var tally = Tally(), refused = false
            forEachVerdict(task, state, level: level, battery: battery, appScore: appScore) { v in
                refused = !tally.add(v)
                return !refused
            }
            return !refused && tally.passes(threshold: parameters.threshold)
        }
    }

    var rules: Rules { Rules(parameters: parameters, energyLeftJ: energyLeftJ, dataLeft: dataLeft) }

    /// The application rule's score for a refresh of `app` at `now`: the square root of the
    /// chance that the person opens it within the lookahead (a bin above the certain
    /// probability counts as certain).
    func applicationScore(app: Int, now: SimInstant) -> Double {
        Self.applicationScore(
            predictor, app: app, now: now, lookahead: parameters.launchLookahead,
            certain: parameters.certainLaunchProbability)
    }

    /// `applicationScore(app:now:)`, static so that `decide` (mutating) passes the predictor
    /// alone rather than a copy of the whole policy.
    static func applicationScore(
        _ predictor: LaunchPredictor, app: Int, now: SimInstant, lookahead: SimDuration,
        certain: Double
    ) -> Double {
        var none = 1.0
        predictor.forEachProbability(app: app, now: now, lookahead: lookahead) { pr in
            none *= 1 - (pr > certain ? 1 : pr)
        }
        return (1 - none).squareRoot()
    }

    /// The level the battery policy uses: unchanged until it moves by `rescoreStep` or the
    /// charger comes or goes.
    mutating func scoredBatteryLevel(_ state: DeviceState) -> Double {
        let level = 100 * state.charge
        if let scored = scoredLevel, abs(level - scored) < parameters.rescoreStep, scoredPlugged == state.isCharging {
            return scored
        }
        scoredLevel = level
        scoredPlugged = state.isCharging
        return level
    }

    /// Budgets refill evenly over the day, up to one day's worth.
    mutating func refill(to now: SimInstant) {
        let days = (now - budgetsAt).seconds / 86_400
        budgetsAt = now
        energyLeftJ = min(parameters.energyBudgetPerDay, energyLeftJ + days * parameters.energyBudgetPerDay)
        dataLeft = min(parameters.dataBudgetPerDay, dataLeft + days * parameters.dataBudgetPerDay)
    }
}
