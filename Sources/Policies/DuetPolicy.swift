import Foundation
import PhoneWorld
import PolicyAPI
import SimEngine

/// A model of iOS's Duet Activity Scheduler (dasd), docs/sources.md §4: a set of rules each
/// answer for a request, and a weighted score decides what the answers leave open.
///
/// For each eligible request, every rule gives a verdict (`Rule`, in this order):
/// - **Battery**: on battery at or below `criticalBattery` (20%), or at or below the class's
///   floor B - 1 (19% for maintenance, 9% for utility): absolutely must not; processing on
///   battery: absolutely must not (iPhone); else `clamp(((L - B) / (100 - B))^k, 0, 1)`, times
///   1.2 when plugged in (L rescored only when it moved 5 points or the charger came or went),
///   with B and k of the request's class (refresh: utility, B 10, k 0.4; processing:
///   maintenance, B 20, k 0.5), weight 1.
/// - **Low Power Mode**: on, and L < 30 or unplugged: absolutely must not.
/// - **Device activity**: processing while the phone is in use, or within
///   `processingIdleAfter` (5 min) of its use: absolutely must not.
/// - **App usage**: an app's background launches follow its use. Never used: must not. A
///   refresh (or legacy fetch) in the `learningPeriod` after the app's first use, or of an app
///   not opened for `pauseAfter`: must not; otherwise the app earns `refreshesPerLaunch` refresh
///   launches a day per launch a day of its own (at least `minRefreshesPerDay`, at most
///   `maxRefreshesPerDay`): more in a day, or sooner than `allowanceSpread` of a day over that
///   number after its last refresh, must not (counted over `misbehaviourFactor` days, and
///   spaced by that factor, if its last task overran). A processing request of an app not
///   opened since its last processing launch: must not.
/// - **Rate limit**: a launch within `minLaunchSpacing` of the app's last: must not.
/// - **Application** (refresh and fetch): `sqrt(1 - prod(1 - p))` over the predicted launch
///   probabilities of the app in the next 7.5 minutes, each p above 0.25 counting as 1, from
///   an online predictor learned from the person's history (`LaunchPredictor`), weight 50;
///   unless the phone has been idle on a charger and Wi-Fi for `idleWindowAfter` (30 min),
///   when it gives way for the app's first refresh in that window: the overnight preference
///   decides when an allowance is spent, and leaves the rest for predicted use.
/// - **Network quality**: no connection, or quality below `minNetworkQuality`: must not; else
///   quality / 100, weight 8.4.
/// - **Energy budget**, **data budget**: work on battery, or on cellular, spends a budget
///   refilled evenly over the day; empty: must not.
/// - **Overdue** (off unless `maxWait` is set): waiting longer than that: must.
/// - **Processing due**: a processing request eligible for `processingDueAfter` (1 day) whose
///   app was used within `processingUsedWithin` (7 days): must.
///
/// Combination by rank (dasd's numbers): any absolutely must not holds the request; else any
/// must starts it; else any must not holds it; else the weighted mean of the scores must reach
/// `threshold` (a score of zero or less holds it). A held request is named by the rule that
/// held it (a short mean by the scored rule with the largest weighted shortfall). Thermal and
/// memory pressure are not modelled, so their rules are left out rather than given a made-up
/// constant score.
///
/// Every number is a parameter; defaults come from docs/sources.md §4 where it has one and are
/// marked as assumptions where it does not.
struct DuetPolicy: RegisteredPolicy {
    /// The model's numbers. Setting them starts the model afresh (a scenario's values are set
    /// on a policy made with `init()`).
    var parameters: Parameters { didSet { self = DuetPolicy(parameters) } }
    var predictor: LaunchPredictor
    /// The battery level last scored, and whether plugged in then.
    var scoredLevel: Double?
    var batteryScores: BatteryScores?
    var scoredPlugged = false
    var energyLeftJ: Double
    var dataLeft: Double
    var budgetsAt = SimInstant.start
    /// Per app, its last background launches by this policy, and whether its last task overran.
    var launches: [Launches] = []
    /// Requests started on battery, and on cellular, whose cost is charged when they end.
    var onBattery = TaskIDBits()
    var onCellular = TaskIDBits()
    /// The application rule's score per app, for the prediction bins `appScoresKey` names and
    /// the app's launches the predictor had learned (`AppScore`). It changes at a bin boundary
    /// (a launch counts in its bin from the next day on), not at each decision: a division per
    /// bin and a square root per refresh request per decision were a twentieth of a run. The
    /// app's learned launches are in the key all the same, so the cache does not depend on
    /// that reasoning; another app's launch leaves it.
    var appScores: [AppScore] = []
    var appScoresKey: AppScoresKey?
    /// The bins of `appScoresKey`, worked out when it changes (`LaunchPredictor.Place`); and
    /// the instants for which its bins stay the same (two bin starts per decision were 1% of a
    /// run).
    var scoredPlaces: [LaunchPredictor.Place] = []
    var bins: (first: SimInstant, last: SimInstant, for: Range<SimInstant>)?
    /// Counts the changes of `appScoresKey`.
    var scoresEpoch = 0
    /// Per app and kind, what the rules answered for a request, kept across decisions while
    /// what they read stays the same (`Kept`); per app, what its use earns, kept until its
    /// `until` or until the app's record changes (`UseKey`): an allowance worked out for each
    /// app at each decision was a twentieth of a run, and the rules' walk for each request at
    /// each decision most of one (`decide`).
    var decisionCount = 0
    var cachedUse: [(key: UseKey, use: AppUse, version: Int)] = []
    var cachedOutcome: [Kept] = []
    /// Per app and kind, the kept outcome's quick test in one plain value (`Fast`): the test
    /// read its inputs from the kept outcome, its app's allowance and launches, about 150
    /// instructions for each request at each decision (callgrind).
    var fast: [Fast] = []
    /// What the rules read of the phone, and counts of its changes, which a kept outcome
    /// names: the person's use apart, which only processing reads (the phone's use changes at
    /// most of the decisions that see a screen turn on or off).
    var phoneInputs: PhoneInputs?
    var phoneEpoch = 0
    /// Of the phone's inputs, what decides whether the battery refuses a request; an outcome
    /// held by a rule of the app's own reads only these (`Outcome.readsPhone`).
    var powerInputs: PowerInputs?
    var powerEpoch = 0
    /// The holds array of the last decision, its buffer kept for the next (`decide`).
    var holdsBuffer: [PolicyHold] = []
    var activity: (inUse: Bool, lastInUse: SimInstant)?
    var activityEpoch = 0
    /// The counts of changes at the last decision (`Epochs.moved`).
    var lastEpochs: Epochs?

    /// The model with `parameters`, no history and full budgets.
    init(_ parameters: Parameters) {
        self.parameters = parameters
        self.predictor = LaunchPredictor(prior: parameters.defaultLaunchProbability)
        energyLeftJ = parameters.energyBudgetPerDay
        dataLeft = parameters.dataBudgetPerDay
    }

    /// The model with the default numbers.
    init() { self.init(Parameters()) }

    /// `ios`.
    static let policyName = "ios"
    /// The rules that hold requests (all but the two that start them), numbered by
    /// `Rule.number`.
    static let holdReasons = Rule.holding.map(\.rawValue)
    /// For `bgsim policies`.
    static let summary = "the Duet Activity Scheduler: rules' verdicts and a weighted score decide each request"

    /// Decides every eligible request by the rules and starts those that pass, naming the rule
    /// that held each other one; asks again at the next periodic rescoring (`rescoreEvery`), or
    /// sooner when a rule that held a request may let it go.
    mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        // Most decisions come with no launch since the last: the call alone was 1% of a run.
        if predictor.hasNew(state.usage) { predictor.learn(state.usage) }
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
        if !(bins?.for.contains(state.now) ?? false) {
            let first = predictor.binStart(of: state.now), last = predictor.binStart(of: state.now + parameters.launchLookahead)
            let width = predictor.binWidth, lookahead = parameters.launchLookahead
            bins = (first, last, max(first, last - lookahead)..<min(first + width, last + width - lookahead))
        }
        let key = AppScoresKey(firstBin: bins!.first, lastBin: bins!.last, firstDay: predictor.firstDay, appsLearned: predictor.apps)
        if key != appScoresKey {
            appScoresKey = key
            scoresEpoch &+= 1
            predictor.places(from: key.firstBin, to: key.lastBin, into: &scoredPlaces)
        }
        // The holds' buffer of the last decision, which the phone has let go of by now: a
        // decision holds a dozen requests, and a new buffer each time was a malloc and a free.
        var chosen: [TaskID] = [], holds = holdsBuffer
        holdsBuffer = []
        holds.removeAll(keepingCapacity: true)
        var wake = parameters.rescoreEvery.map { Self.nextRescore(after: state.now, every: $0) } ?? .distantFuture
        // Ask again when the phone, on a charger and Wi-Fi, has been idle long enough; no
        // outcome is kept past then.
        var idleWindowOpens = SimInstant.distantFuture
        if let after = parameters.idleWindowAfter, state.isCharging, state.network == .wifi, !state.inUse,
            state.idleFor < after
        {
            idleWindowOpens = state.lastInUse + after
            wake = min(wake, idleWindowOpens)
        }
        let phone = PhoneInputs(
            level: level, charging: state.isCharging, critical: 100 * state.charge <= parameters.criticalBattery,
            network: state.network, quality: state.networkQuality, idleWindow: rules.idleWindowOpened(state), dataLeft: dataLeft > 0)
        if phone != phoneInputs {
            phoneInputs = phone
            phoneEpoch &+= 1
        }
        let power = PowerInputs(
            charging: state.isCharging, critical: phone.critical, belowRefreshFloor: level <= parameters.refreshBattery.floor - 1,
            belowProcessingFloor: level <= parameters.processingBattery.floor - 1)
        if power != powerInputs {
            powerInputs = power
            powerEpoch &+= 1
        }
        if activity?.inUse != state.inUse || activity?.lastInUse != state.lastInUse {
            activity = (state.inUse, state.lastInUse)
            activityEpoch &+= 1
        }
        // An empty energy budget on battery names a wake that moves with every refill.
        let keep = state.isCharging || energyLeftJ > 0
        // Requests of one app and kind are decided once per decision: those as young or
        // younger get the same answer (the rules read only the app, its kind and how long a
        // request has waited), unless a must started it (a younger one may not be due yet).
        // Each app's allowance is worked out once too. A decision shows dozens of requests
        // (processing waits for use).
        decisionCount &+= 1
        let stamp = decisionCount
        // Which counts of changes moved since the last decision: an outcome used then that
        // reads none of those that moved, with its app's counts and the time as they were, is
        // kept without gathering and comparing them all (`Quick`).
        let epochs = Epochs(phone: phoneEpoch, power: powerEpoch, activity: activityEpoch, scores: scoresEpoch)
        let moved = epochs.moved(since: lastEpochs)
        lastEpochs = epochs
        // What moved, in the bits of `Fast.reads`: an outcome used at the last decision that
        // reads none of it is kept. None is kept while an empty energy budget holds work on
        // battery.
        var mask = Fast.never
        if !keep { mask = .max }
        if moved.power { mask |= Fast.power }
        if moved.phone { mask |= Fast.phone }
        if moved.activity { mask |= Fast.activity }
        if moved.scores { mask |= Fast.scores }
        for task in eligible {
            if launches.count <= task.app {
                let more = task.app + 1 - launches.count
                launches += Array(repeating: Launches(), count: more)
                cachedUse += Array(
                    repeating: (UseKey(launches: -1, lastLeft: nil, inForeground: false), AppUse(perDay: 0, neverUsed: true), 0), count: more)
                cachedOutcome += Array(repeating: Kept(), count: 3 * more)
                fast += Array(repeating: Fast(), count: 3 * more)
            }
            let slot = Self.slot(task)
            // A hold of this decision, for a request as young or younger; or one of the last,
            // which nothing it read has changed since: its app's use, allowance and launches,
            // what moved, and the time.
            let f = fast[slot]
            if f.hold >= 0 {
                if f.stamp == stamp {
                    if task.eligibleSince >= f.eligibleSince {
                        holds.append(PolicyHold(task.id, Int(f.hold)))
                        continue
                    }
                } else if f.stamp == stamp &- 1, f.reads & mask == 0, f.eligibleSince == task.eligibleSince, state.now < f.until,
                    f.usage == state.usage.apps[task.app].changes, f.app == cachedUse[task.app].version &+ launches[task.app].version
                {
                    fast[slot].stamp = stamp
                    assert(
                        Int(f.hold) == cachedOutcome[slot].outcome.holdReason && !cachedOutcome[slot].outcome.start
                            && cachedOutcome[slot].outcome.decidesAs(
                                afresh(task, state, level: level, battery: battery, idleWindowOpens: idleWindowOpens)),
                        "an outcome kept from the last decision differs from a fresh one")
                    holds.append(PolicyHold(task.id, Int(f.hold)))
                    wake = min(wake, f.wake)
                    continue
                }
            }
            if f.stamp == stamp, !cachedOutcome[slot].outcome.byMust,
                cachedOutcome[slot].outcome.start || task.eligibleSince >= cachedOutcome[slot].eligibleSince
            {
                let cached = cachedOutcome[slot].outcome
                if cached.start {
                    chosen.append(task.id)
                    if !state.isCharging { onBattery.insert(task.id.rawValue) }
                    if state.network == .cellular { onCellular.insert(task.id.rawValue) }
                } else {
                    holds.append(PolicyHold(task.id, cached.holdReason))
                }
                continue
            }
            let outcome = decideAgain(task, state, slot: slot, level: level, battery: battery, idleWindowOpens: idleWindowOpens, keep: keep)
            // The app's counts before a start moves its launches: a kept start is never used
            // again, and the app's other outcomes are decided again at the next decision.
            fast[slot] = Fast(
                stamp: stamp, eligibleSince: task.eligibleSince, until: min(outcome.until, cachedUse[task.app].use.until),
                wake: outcome.wake ?? .distantFuture, usage: state.usage.apps[task.app].changes,
                app: cachedUse[task.app].version &+ launches[task.app].version, hold: outcome.start ? -1 : Int32(outcome.holdReason),
                reads: keep ? Fast.reads(outcome, task.kind) : Fast.never)
            if outcome.start {
                chosen.append(task.id)
                launches[task.app].version &+= 1
                launches[task.app].last = state.now
                if task.kind.isRefreshLike {
                    let keep = state.now - SimDuration(seconds: 86_400 * max(1, parameters.misbehaviourFactor) * Self.keptSpan(parameters))
                    launches[task.app].recentRefreshes.removeAll { $0 <= keep }
                    launches[task.app].recentRefreshes.append(state.now)
                }
                if task.kind == .processing { launches[task.app].lastProcessing = state.now }
                if !state.isCharging { onBattery.insert(task.id.rawValue) }
                if state.network == .cellular { onCellular.insert(task.id.rawValue) }
            } else {
                if holds.isEmpty { holds.reserveCapacity(eligible.count) }
                holds.append(PolicyHold(task.id, outcome.holdReason))
                if let at = outcome.wake { wake = min(wake, at) }
            }
        }
        holdsBuffer = holds
        if chosen.count == eligible.count { return PolicyDecision(start: .all) }
        return PolicyDecision(
            start: chosen.isEmpty ? .none : .some(chosen), reconsiderAt: wake == .distantFuture ? nil : wake,
            holds: holds)
    }

    /// `task`'s outcome when the counts that moved since the last decision may touch its kept
    /// one (`decide(_:eligible:)`). What a kept outcome read is unchanged when no count of its
    /// changes moved: the phone's, the app's score's, the person's use of the apps, the app's
    /// allowance and launches. Most requests are decided so; the others compare the values. A
    /// kept outcome that read nothing of the score is compared without it, and one that read
    /// its side of `burstScore` alone by that side (most holds are by the allowance or the rate
    /// limit, and a new bin moves most apps' scores).
    mutating func decideAgain(
        _ task: EligibleTask, _ state: DeviceState, slot: Int, level: Double, battery: BatteryScores, idleWindowOpens: SimInstant,
        keep: Bool
    ) -> Outcome {
        var compared = Quick(
            phone: phoneEpoch, power: powerEpoch, activity: task.kind == .processing ? activityEpoch : 0, scores: 0,
            usage: state.usage.apps[task.app].changes, use: cachedUse[task.app].version, launches: launches[task.app].version)
        if let kept = cachedOutcome[slot].quick, !cachedOutcome[slot].outcome.readsPhone { compared.phone = kept.phone }
        if task.kind.isRefreshLike, let kept = cachedOutcome[slot].quick {
            let readsScore = cachedOutcome[slot].outcome.readsScore, readsBurst = cachedOutcome[slot].outcome.readsBurst
            if !readsScore && !readsBurst {
                compared.scores = kept.scores
            } else {
                let score = appScore(of: task.app, now: state.now)
                compared.scores = !readsScore && sameBurstSide(cachedOutcome[slot].inputs!.appScore, score.score) ? kept.scores : score.version
            }
        }
        if keep, cachedOutcome[slot].quick == compared, cachedOutcome[slot].eligibleSince == task.eligibleSince,
            state.now < cachedOutcome[slot].outcome.until, state.now < cachedUse[task.app].use.until
        {
            assert(
                cachedOutcome[slot].outcome.decidesAs(afresh(task, state, level: level, battery: battery, idleWindowOpens: idleWindowOpens)),
                "a kept outcome differs from a fresh one")
            return cachedOutcome[slot].outcome
        }
        return outcome(of: task, state, level: level, battery: battery, idleWindowOpens: idleWindowOpens, keep: keep)
    }

    /// `task`'s outcome from the values the rules read: kept if they equal a kept outcome's,
    /// else the rules' (`decide(_:eligible:)` tried the counts of their changes first).
    mutating func outcome(
        of task: EligibleTask, _ state: DeviceState, level: Double, battery: BatteryScores, idleWindowOpens: SimInstant, keep: Bool
    ) -> Outcome {
        let slot = Self.slot(task)
        let (appScore, scoreVersion) = task.kind.isRefreshLike ? self.appScore(of: task.app, now: state.now) : (0, 0)
        let key = UseKey(
            launches: state.usage.apps[task.app].launches.count, lastLeft: state.usage.apps[task.app].lastLeft,
            inForeground: state.usage.apps[task.app].inForeground)
        if cachedUse[task.app].key != key || state.now >= cachedUse[task.app].use.until {
            cachedUse[task.app] = (key, Self.allowance(state.usage, app: task.app, now: state.now, parameters), cachedUse[task.app].version &+ 1)
            // Valid at this instant at least: the other requests of this decision.
            cachedUse[task.app].use.until = max(cachedUse[task.app].use.until, state.now + .microseconds(1))
        }
        assert(
            cachedUse[task.app].use.earnsTheSame(as: Self.allowance(state.usage, app: task.app, now: state.now, parameters)),
            "a kept allowance differs from a fresh one")
        let use = cachedUse[task.app].use
        let inputs = Inputs(
            phone: phoneEpoch, power: powerEpoch, activity: task.kind == .processing ? activityEpoch : 0, appScore: appScore,
            perDay: use.perDay, learningUntil: use.learningUntil, neverUsed: use.neverUsed, usage: key, launches: launches[task.app].version)
        func fresh() -> Outcome {
            var outcome = rules.decide(task, state, level: level, battery: battery, appScore: appScore, use: use, launches: launches[task.app])
            outcome.until = min(outcome.until, idleWindowOpens)
            return outcome
        }
        let quick = Quick(
            phone: phoneEpoch, power: powerEpoch, activity: inputs.activity, scores: scoreVersion, usage: state.usage.apps[task.app].changes,
            use: cachedUse[task.app].version, launches: inputs.launches)
        // A kept outcome that did not count the score's value is compared without it.
        var compared = inputs
        if let kept = cachedOutcome[slot].inputs, !cachedOutcome[slot].outcome.readsPhone { compared.phone = kept.phone }
        if let kept = cachedOutcome[slot].inputs, !cachedOutcome[slot].outcome.readsScore,
            !cachedOutcome[slot].outcome.readsBurst || sameBurstSide(kept.appScore, appScore)
        {
            compared.appScore = kept.appScore
        }
        if keep, cachedOutcome[slot].inputs == compared, cachedOutcome[slot].eligibleSince == task.eligibleSince,
            state.now < cachedOutcome[slot].outcome.until
        {
            assert(cachedOutcome[slot].outcome.decidesAs(fresh()), "a kept outcome differs from a fresh one")
            cachedOutcome[slot].quick = quick
            cachedOutcome[slot].inputs = inputs
            return cachedOutcome[slot].outcome
        }
        let outcome = fresh()
        cachedOutcome[slot] = Kept(
            eligibleSince: task.eligibleSince, outcome: outcome, inputs: keep ? inputs : nil, quick: keep ? quick : nil)
        return outcome
    }

    /// The slot in `cachedOutcome` and `fast` of a request's app and kind.
    @inline(__always)
    static func slot(_ task: EligibleTask) -> Int { 3 * task.app + (task.kind == .refresh ? 0 : task.kind == .processing ? 1 : 2) }

    /// `task`'s outcome worked out from nothing kept (debug builds check kept ones with it).
    func afresh(_ task: EligibleTask, _ state: DeviceState, level: Double, battery: BatteryScores, idleWindowOpens: SimInstant) -> Outcome {
        let appScore = task.kind.isRefreshLike ? applicationScore(app: task.app, now: state.now) : 0
        var outcome = rules.decide(
            task, state, level: level, battery: battery, appScore: appScore,
            use: Self.allowance(state.usage, app: task.app, now: state.now, parameters), launches: launches[task.app])
        outcome.until = min(outcome.until, idleWindowOpens)
        return outcome
    }

    /// The longest span an allowance is counted over (`Rules.allowanceSpan` of the smallest
    /// allowance an app in use earns): the refreshes kept per app cover it.
    static func keptSpan(_ p: Parameters) -> Double { p.minRefreshesPerDay > 0 ? Rules.allowanceSpan(p.minRefreshesPerDay) : 7 }

    /// The first instant after `now` on the grid of `every` from midnight: the next periodic
    /// rescoring (with the default period, the next prediction bin).
    static func nextRescore(after now: SimInstant, every: SimDuration) -> SimInstant {
        now - SimDuration(microseconds: now.timeOfDay.microseconds % every.microseconds) + every
    }

    /// Charges a task started on battery or cellular to the energy or data budget, and notes
    /// whether its app overran it.
    mutating func taskEnded(_ record: TaskRecord) {
        let i = record.request.id.rawValue
        refill(to: max(budgetsAt, record.ended))
        if onBattery.remove(i) { energyLeftJ -= record.energyJ }
        if onCellular.remove(i), record.started != nil { dataLeft -= record.request.upBytes + record.request.downBytes }
        let app = record.request.app
        if record.started != nil, record.request.kind.isScheduled, app < launches.count, launches[app].overran != record.overran {
            launches[app].overran = record.overran
            launches[app].version &+= 1
        }
    }

    /// Every rule's verdict for `task`, in the order of `Rule` (none cut short).
    func verdicts(_ task: EligibleTask, _ state: DeviceState, level: Double) -> [RuleVerdict] {
        var out: [RuleVerdict] = []
        var wake: SimInstant?, until = SimInstant.distantFuture, readsBurst = false
        let appScore = task.kind.isRefreshLike ? applicationScore(app: task.app, now: state.now) : 0
        rules.forEachVerdict(
            task, state, level: level, appScore: appScore, use: Self.allowance(state.usage, app: task.app, now: state.now, parameters),
            launches: task.app < launches.count ? launches[task.app] : Launches(), wake: &wake, until: &until, readsBurst: &readsBurst
        ) {
            out.append(RuleVerdict($0, $1))
            return true
        }
        return out
    }

    var rules: Rules { Rules(parameters: parameters, energyLeftJ: energyLeftJ, dataLeft: dataLeft) }

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
