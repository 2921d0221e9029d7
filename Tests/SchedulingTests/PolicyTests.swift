import PhoneWorld
import SimEngine
import Testing

@testable import Scheduling

/// A day on one connection with a people trace and no charger, as `quiet` but with the
/// network chosen.
func world(
    hours: Int64 = 24, apps: [AppParameters], launches: [AppLaunch] = [],
    network segments: [(SimDuration, NetworkState)], charging: [ChargingSession] = []
) -> PhoneSetup {
    var s = quiet(hours: hours, apps: apps, launches: launches, charging: charging)
    s.network = network(segments)
    s.network.wifiRadio = wifiRadio
    s.network.cellularRadio = lteRadio
    return s
}

/// An app whose single refresh task is submitted on entering the background, `earliest`
/// later, fetching `downKB`, with fixed CPU time.
func fetcher(_ name: String, earliest: SimDuration = .minutes(15), downKB: Double = 10, launchKB: Double = 0) -> AppParameters {
    var a = app(name, earliest: earliest, work: .seconds(1), downKB: downKB, fixed: true, submitOn: [.background])
    a.launchDownBytes = launchKB * 1000
    return a
}

func starts(_ run: RecordingSink) -> [SimInstant] { run.starts.map(\.0) }

@Suite("coalesce: tail-aware batching")
struct CoalesceTests {
    /// Three apps left at 1:00, 1:05 and 1:10 on LTE: their refreshes become eligible at
    /// 1:15, 1:20 and 1:25. Eager starts each alone (three promotions, the LTE tail is 10 s);
    /// coalesce waits for the third and starts all three at 1:25 on one promotion.
    @Test func aBatchOfThreeSharesOnePromotion() throws {
        let apps = (0..<3).map { fetcher("a\($0)") }
        let launches = (0..<3).map { i in use(i, at(1, 5 * Int64(i)), at(1, 5 * Int64(i), 30)) }
        let s = world(apps: apps, launches: launches, network: [(.zero, lteState)])
        let eager = try simulate(s, EagerPolicy())
        #expect(starts(eager) == [at(1, 15, 30), at(1, 20, 30), at(1, 25, 30)])
        #expect(eager.totals!.taskPromotions == 3)
        let batched = try simulate(s, CoalescePolicy())
        #expect(starts(batched) == [at(1, 25, 30), at(1, 25, 30), at(1, 25, 30)])
        #expect(batched.totals!.taskPromotions == 1)
        #expect(batched.summary.backgroundEnergyJ < eager.summary.backgroundEnergyJ)
        #expect(batched.totals!.components.radioTailJ < eager.totals!.components.radioTailJ)
    }

    /// Two requests never make a batch of three: both start when the older has waited
    /// `max_delay`.
    @Test func theOldestRequestWaitsAtMostMaxDelay() throws {
        let apps = (0..<2).map { fetcher("a\($0)") }
        let launches = (0..<2).map { i in use(i, at(1, 5 * Int64(i)), at(1, 5 * Int64(i), 30)) }
        let s = world(apps: apps, launches: launches, network: [(.zero, lteState)])
        var p = CoalescePolicy.Parameters()
        p.maxDelay = .minutes(10)
        let run = try simulate(s, CoalescePolicy(p))
        #expect(starts(run) == [at(1, 25, 30), at(1, 25, 30)])
        #expect(run.record(0)!.latency == .minutes(10))
    }

    /// A request waiting for a batch rides the radio the moment a foreground fetch wakes it.
    @Test func waitingWorkRidesAnAwakeRadio() throws {
        let apps = [fetcher("a0"), fetcher("a1", launchKB: 100)]
        let s = world(
            apps: apps, launches: [use(0, at(1), at(1, 0, 30)), use(1, at(1, 20), at(1, 21))],
            network: [(.zero, lteState)])
        let run = try simulate(s, CoalescePolicy())
        #expect(starts(run).first == at(1, 20))
        var off = CoalescePolicy.Parameters()
        off.rideAwakeRadio = false
        #expect(starts(try simulate(s, CoalescePolicy(off))).first == at(1, 35, 30))
    }

    /// On Wi-Fi the tail is a quarter of a second: nothing is held unless asked.
    @Test func wifiWorkIsNotHeldUnlessAsked() throws {
        let s = world(apps: [fetcher("a0")], launches: [use(0, at(1), at(1, 0, 30))], network: [(.zero, wifiState)])
        #expect(starts(try simulate(s, CoalescePolicy())) == [at(1, 15, 30)])
        var hold = CoalescePolicy.Parameters()
        hold.holdOnWiFi = true
        #expect(starts(try simulate(s, CoalescePolicy(hold))) == [at(1, 35, 30)])
    }
}

@Suite("ios: the Duet Activity Scheduler model (docs/sources.md §4)")
struct DuetTests {
    func refresh(app: Int = 0) -> EligibleTask {
        EligibleTask(id: TaskID(0), app: app, kind: .refresh, submitted: .start, earliestBegin: .start)
    }
    func processing() -> EligibleTask {
        EligibleTask(id: TaskID(1), app: 0, kind: .processing, submitted: .start, earliestBegin: .start)
    }
    func state(_ level: Double, plugged: Bool = false, at time: SimInstant = at(3, 1)) -> DeviceState {
        var s = DeviceState(now: time, charge: level / 100, isCharging: plugged)
        s.networkQuality = 80
        s.usage = UsageHistory(apps: 1)
        return s
    }

    /// Legacy background fetch is scored by the application rule, as a refresh is: a rarely
    /// used app's fetch waits like its refresh (it ran hourly day and night, as under eager).
    @Test func legacyFetchIsScoredByAppUsageAsARefreshIs() {
        let p = DuetPolicy()
        let fetch = EligibleTask(id: TaskID(2), app: 0, kind: .fetch, submitted: .start, earliestBegin: .start)
        let s = state(80)
        #expect(p.verdicts(fetch, s, level: 80)[3] == p.verdicts(refresh(), s, level: 80)[3])
        #expect(p.verdicts(fetch, s, level: 80)[3] == .score((1 - 0.9975 * 0.9975).squareRoot(), weight: 50))
        var q = p
        #expect(q.decide(s, eligible: [fetch]).start == .none, "no use of the app predicted: the fetch waits")
    }

    /// A processing request eligible for two days must proceed if its app was used in the
    /// past week (BGProcessingTaskRequest: "within the next two days as long as the user has
    /// used your app within the past week"); not otherwise, and never on battery.
    @Test func processingIsDueAfterTwoDaysIfTheAppWasUsedThatWeek() {
        let p = DuetPolicy()
        var s = state(80, plugged: true, at: at(49))
        #expect(!p.verdicts(processing(), s, level: 80).contains(.must), "never used: not due")
        s.usage.opened(0, at: at(10))
        s.usage.left(0, at: at(10, 5))
        #expect(p.verdicts(processing(), s, level: 80).last == .must)
        s.now = at(47)
        #expect(!p.verdicts(processing(), s, level: 80).contains(.must), "not yet two days")
        s.now = at(49)
        s.isCharging = false
        #expect(p.verdicts(processing(), s, level: 80).first == .mustNot, "unplugged: must not wins")
        s.now = at(10 + 7 * 24 + 1)
        s.isCharging = true
        #expect(!p.verdicts(processing(), s, level: 80).contains(.must), "last used over a week ago")
    }

    @Test func batteryScoreFollowsTheFormulaWithThePluggedInBonus() {
        let p = DuetPolicy()
        // Refresh is utility work: B = 10, k = 0.4; ((55 - 10) / 90)^0.4 = 0.5^0.4.
        #expect(p.verdicts(refresh(), state(55), level: 55).first == .score(0.757858283255199, weight: 1))
        #expect(p.verdicts(refresh(), state(55, plugged: true), level: 55).first == .score(0.757858283255199 * 1.2, weight: 1))
        // Processing is maintenance work: B = 20, k = 0.5; ((60 - 20) / 80)^0.5.
        #expect(p.verdicts(processing(), state(60, plugged: true), level: 60).first == .score(0.5.squareRoot() * 1.2, weight: 1))
    }

    @Test func constrainedLevelsAndUnpluggedProcessingMustNotProceed() {
        let p = DuetPolicy()
        #expect(p.verdicts(refresh(), state(9), level: 9).first == .mustNot)
        #expect(p.verdicts(refresh(), state(10), level: 10).first == .score(0, weight: 1))
        #expect(p.verdicts(processing(), state(19, plugged: true), level: 19).first == .mustNot)
        #expect(p.verdicts(processing(), state(80), level: 80).first == .mustNot, "processing while unplugged (iPhone)")
        // A zero score is a must-not too.
        #expect(!DuetPolicy.combine(p.verdicts(refresh(), state(10), level: 10), threshold: 0))
    }

    @Test func lowPowerModeAndUseStopWork() {
        let p = DuetPolicy()
        var lpm = state(50)
        lpm.lowPowerMode = true
        #expect(p.verdicts(refresh(), lpm, level: 50)[1] == .mustNot, "Low Power Mode, unplugged")
        lpm.isCharging = true
        #expect(p.verdicts(refresh(), lpm, level: 50)[1] == .canProceed, "plugged in at 50%")
        #expect(p.verdicts(refresh(), lpm, level: 25)[1] == .mustNot, "plugged in below 30%")
        var busy = state(80, plugged: true)
        busy.inUse = true
        #expect(p.verdicts(processing(), busy, level: 80)[2] == .mustNot)
        #expect(p.verdicts(refresh(), busy, level: 80)[2] == .canProceed)
    }

    @Test func applicationScoreComesFromTheLaunchPredictor() {
        var p = DuetPolicy()
        var s = state(80, at: at(3, 1))
        // No history: the default probability in each of the two bins the next 7.5 min overlap.
        p.predictor.learn(s.usage)
        #expect(p.verdicts(refresh(), s, level: 80)[3] == .score((1 - 0.9975 * 0.9975).squareRoot(), weight: 50))
        // Opened at 3:05 on days 0 to 2: on day 3 the 3:00 bin has p = (3 + 0.0025) / (3 + 1),
        // above 0.25, so it counts as 1.
        for d in 0..<3 { s.usage.opened(0, at: at(24 * Int64(d) + 3, 5)); s.usage.left(0, at: at(24 * Int64(d) + 3, 6)) }
        s.now = at(72 + 3, 1)
        p.predictor.learn(s.usage)
        #expect(p.predictor.probability(app: 0, binStart: at(75)) == 3.0025 / 4)
        #expect(p.verdicts(refresh(), s, level: 80)[3] == .score(1, weight: 50))
        #expect(p.verdicts(processing(), s, level: 80)[3] == .canProceed, "the application policy is for refresh only")
    }

    @Test func networkQualityAndTheWeightedMean() {
        let p = DuetPolicy()
        var s = state(100)
        s.networkQuality = 40
        #expect(p.verdicts(refresh(), s, level: 100)[4] == .mustNot, "below the minimum quality")
        s.network = .none
        s.networkQuality = 0
        #expect(p.verdicts(refresh(), s, level: 100)[4] == .mustNot)
        // Mean of 1 (weight 1), 0.5 (weight 8.4) and 0.1 (weight 50): 10.2 / 59.4 = 0.1717.
        let v: [DuetPolicy.Verdict] = [.score(1, weight: 1), .score(0.5, weight: 8.4), .score(0.1, weight: 50)]
        #expect(DuetPolicy.combine(v, threshold: 0.17))
        #expect(!DuetPolicy.combine(v, threshold: 0.18))
        #expect(DuetPolicy.combine(v + [.must], threshold: 0.9), "must proceed overrides the threshold")
        #expect(!DuetPolicy.combine(v + [.must, .mustNot], threshold: 0), "must not wins over must")
    }

    /// The person opens news at 8:00 every day. With no history on day 0 its refresh scores
    /// too low; from day 1 on, the refresh runs at 7:52:30, the first bin boundary from which
    /// the next 7.5 minutes cover a predicted launch, and at no other time of day.
    @Test func refreshesClusterJustBeforePredictedLaunches() throws {
        var news = app("news", every: .hours(1), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
        news.launchDownBytes = 0
        let launches = (0..<4).map { d in use(0, at(24 * Int64(d) + 8), at(24 * Int64(d) + 8, 2)) }
        let charging = (0..<4).map { d in ChargingSession(start: at(24 * Int64(d) + 23), end: at(24 * Int64(d) + 23, 30)) }
        let s = world(hours: 96, apps: [news], launches: launches, network: [(.zero, wifiState)], charging: charging)
        // The predictor alone: the idle window on the charger (its own test) is off.
        var predictorOnly = DuetPolicy.Parameters()
        predictorOnly.idleWindowAfter = nil
        let run = try simulate(s, DuetPolicy(predictorOnly))
        #expect(starts(run) == [at(24 + 7, 52, 30), at(48 + 7, 52, 30), at(72 + 7, 52, 30)])
        // The refresh computes for 1 s, so each launch sees content 449 s old.
        #expect(run.summary.stalenessS.suffix(3) == [449, 449, 449])
        // Eager runs it every hour, and buys less freshness per joule: with a daily habit the
        // predictor pays off (the default people model has none; see the README).
        let eager = try simulate(s, EagerPolicy())
        #expect(eager.starts.count > 80)
        func stalenessTimesEnergy(_ r: RecordingSink) -> Double {
            r.summary.stalenessS.reduce(0, +) / Double(r.summary.stalenessS.count) * r.summary.backgroundEnergyJ
        }
        #expect(stalenessTimesEnergy(run) < stalenessTimesEnergy(eager) / 10)
    }

    /// On a charger and Wi-Fi with the phone idle for half an hour, refresh runs whatever the
    /// app's predicted use (the window practitioners report iOS grants time in): an app
    /// never opened is refreshed through the night and not at all by day.
    @Test func theIdleWindowOnPowerAndWiFiLetsRefreshRun() throws {
        var news = app("news", every: .hours(1), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
        news.launchDownBytes = 0
        let charging = (0..<2).map { d in ChargingSession(start: at(24 * Int64(d) + 23), end: at(24 * Int64(d) + 31)) }
        let s = world(hours: 48, apps: [news], launches: [], network: [(.zero, wifiState)], charging: charging)
        let run = try simulate(s, DuetPolicy())
        let night = starts(run).filter { $0.timeOfDay >= .hours(23) || $0.timeOfDay < .hours(7) }
        #expect(starts(run) == [at(23)] + (0..<7).map { at(24 + Int64($0)) } + [at(47)])
        #expect(night.count == starts(run).count)
        #expect(starts(run).first == at(23), "idle since the start: at the plug-in")
        var off = DuetPolicy.Parameters()
        off.idleWindowAfter = nil
        #expect(starts(try simulate(s, DuetPolicy(off))).isEmpty, "without the window the app's unpredicted use holds it")
    }

    /// One app's requests are spaced by the rate limit; an energy budget spent on battery
    /// stops work until it refills.
    @Test func rateLimitAndEnergyBudget() {
        var params = DuetPolicy.Parameters()
        params.threshold = 0
        params.minLaunchSpacing = .minutes(10)
        params.energyBudgetPerDay = 864  // 10 mJ/s
        var p = DuetPolicy(params)
        var s = state(80, at: at(1))
        #expect(p.decide(s, eligible: [refresh()]) == PolicyDecision(start: .all))
        // The first task ends at 1:01 having used 1000 J on battery: the budget is 136 J short.
        var r = TaskRecord(
            request: TaskRequest(
                id: TaskID(0), app: 0, kind: .refresh, identifier: "x", submitted: .start,
                earliestBegin: .start, work: .seconds(1), powerW: 1),
            started: at(1), ended: at(1, 1), outcome: .completed, energyJ: 1000)
        r.success = true
        p.taskEnded(r)
        s.now = at(1, 5)
        var second = refresh()
        second.id = TaskID(2)
        let wait = p.decide(s, eligible: [second])
        #expect(wait.start == .none)
        #expect(wait.reconsiderAt == at(1, 7, 30), "the next bin boundary comes before the rate limit (1:10)")
        s.now = at(1, 11)
        #expect(p.decide(s, eligible: [second]).start == .none, "budget empty")
        // At 10 mJ/s the deficit is repaid 13,600 s after the task ended there: at 4:47:40.
        s.now = at(4, 47)
        #expect(p.decide(s, eligible: [second]).start == .none)
        s.now = at(4, 48)
        #expect(p.decide(s, eligible: [second]).start == .all)
    }
}

/// Runs `DuetPolicy` and, at every decision, a copy of it with its application scores
/// forgotten: the cached scores must decide exactly as freshly computed ones.
struct CacheCheckedDuet: SchedulingPolicy {
    var policy = DuetPolicy()
    var decisions = 0, refreshesShown = 0, mismatches = 0
    var name: String { policy.name }
    mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        var fresh = policy
        fresh.appScoresKey = nil
        let expected = fresh.decide(state, eligible: eligible)
        let got = policy.decide(state, eligible: eligible)
        decisions += 1
        refreshesShown += eligible.filter { $0.kind == .refresh }.count
        if got != expected { mismatches += 1 }
        return got
    }
    mutating func taskEnded(_ record: TaskRecord) { policy.taskEnded(record) }
}

extension DuetTests {
    /// The cached application scores decide as fresh ones in a world where everything a
    /// decision reads moves: refresh and processing requests, the person, Wi-Fi, LTE and no
    /// connection through the day, daytime top-ups, and budgets small enough to run out.
    @Test func cachedApplicationScoresDecideAsFreshOnesInAChangingWorld() throws {
        var s = setup(
            days: 4,
            apps: [
                app("a", every: .minutes(20), downKB: 200), app("b", every: .hours(1), downKB: 50),
                app("c", every: .hours(2), work: .seconds(30), kind: .processing),
            ])
        s.people = PeopleParameters()
        s.charging.topUpsPerDay = 2
        s.network = network([
            (.zero, wifiState), (.hours(8), lteState), (.hours(12), .disconnected),
            (.hours(13), lteState), (.hours(18), wifiState),
        ])
        var policy = CacheCheckedDuet()
        policy.policy.parameters.energyBudgetPerDay = 20
        policy.policy.parameters.dataBudgetPerDay = 2e6
        let streams = try WorldStreams(setup: s, masterSeed: 11, replication: 0)
        var sim = PhoneSimulation(setup: s, policy: policy, sink: RecordingSink(summary: RunMetrics(apps: s.apps)), streams: streams)
        let run = sim.run()
        #expect(sim.policy.decisions > 100)
        #expect(sim.policy.mismatches == 0)
        #expect(sim.policy.refreshesShown > sim.policy.decisions)
        #expect(run.records.contains { $0.started != nil && $0.request.kind == .processing })
        #expect(run.records.contains { $0.started != nil && $0.request.kind == .refresh })
    }

    @Test func cachedApplicationScoresDecideAsFreshOnes() throws {
        // A person who opens the apps, so the launch predictor learns and its bins matter.
        var s = setup(days: 4, apps: [app("a", every: .minutes(20)), app("b", every: .hours(1)), app("c", every: .minutes(45))])
        s.people = PeopleParameters()
        s.network = network([(.zero, wifiState)])
        let streams = try WorldStreams(setup: s, masterSeed: 7, replication: 0)
        var sim = PhoneSimulation(
            setup: s, policy: CacheCheckedDuet(), sink: RecordingSink(summary: RunMetrics(apps: s.apps)),
            streams: streams)
        let run = sim.run()
        #expect(sim.policy.decisions > 100 && sim.policy.refreshesShown > sim.policy.decisions)
        #expect(sim.policy.mismatches == 0)
        #expect(run.records.contains { $0.started != nil })
    }
}

@Suite("android: Doze, standby buckets and quotas (docs/sources.md §9)")
struct AndroidTests {
    func state(_ now: SimInstant, lastUse: SimInstant = .start) -> DeviceState {
        var s = DeviceState(now: now, charge: 0.8, isCharging: false)
        s.lastInUse = lastUse
        s.usage = UsageHistory(apps: 1)
        return s
    }

    @Test func dozeAlternatesIdlePeriodsAndMaintenanceWindows() {
        let p = AndroidPolicy()
        #expect(p.dozeState(state(at(0, 29))) == .awake, "inactive for 30 min first")
        #expect(p.dozeState(state(at(0, 31))) == .dozing(until: at(1, 30)), "then idle for 60 min")
        #expect(p.dozeState(state(at(1, 32))) == .awake, "5 min window")
        #expect(p.dozeState(state(at(1, 36))) == .dozing(until: at(3, 35)), "idle 120 min")
        #expect(p.dozeState(state(at(3, 44))) == .awake, "10 min window")
        #expect(p.dozeState(state(at(3, 46))) == .dozing(until: at(7, 45)), "idle 240 min")
        #expect(p.dozeState(state(at(7, 46))) == .awake, "10 min window from 7:45")
        #expect(p.dozeState(state(at(7, 56))) == .dozing(until: at(13, 55)), "idle 480 min, capped at 6 h")
        #expect(p.dozeState(state(at(14))) == .awake, "windows stay at 10 min: 13:55 to 14:05")
        #expect(p.dozeState(state(at(14, 6))) == .dozing(until: at(20, 5)))
        var plugged = state(at(5))
        plugged.isCharging = true
        #expect(p.dozeState(plugged) == .awake)
        var later = state(at(5))
        later.powerChangedAt = at(4, 50)
        #expect(p.dozeState(later) == .awake, "unplugged 10 min ago")
    }

    /// Left at 0:30, the phone dozes from 1:00. A refresh eligible at 1:15 waits for the first
    /// maintenance window at 2:00; eager starts it at once.
    @Test func jobsWaitForTheNextMaintenanceWindow() throws {
        let s = world(
            apps: [fetcher("a0", earliest: .minutes(45))], launches: [use(0, at(0, 29), at(0, 30))],
            network: [(.zero, wifiState)])
        #expect(starts(try simulate(s, EagerPolicy())) == [at(1, 15)])
        let android = try simulate(s, AndroidPolicy())
        #expect(starts(android) == [at(2)], "30 min inactive after 0:30, 60 min idle; \(starts(android))")
    }

    @Test func bucketsFollowRecencyOfUse() {
        let p = AndroidPolicy()
        var s = state(at(30))
        #expect(p.bucket(0, s) == .rare, "never used")
        s.usage.opened(0, at: at(29))
        #expect(p.bucket(0, s) == .active)
        s.usage.left(0, at: at(29, 30))
        #expect(p.bucket(0, s) == .active)
        s.now = at(32)
        #expect(p.bucket(0, s) == .workingSet)
        s.now = at(29, 30) + .hours(13)
        #expect(p.bucket(0, s) == .frequent)
        s.now = at(29, 30) + .hours(25)
        #expect(p.bucket(0, s) == .rare)
    }

    /// A never-used app is rare; with its cap at two jobs a day the third request waits a day.
    /// While charging there is no quota.
    @Test func quotasCapJobsPerWindowExceptWhileCharging() throws {
        var p = AndroidPolicy.Parameters()
        p.doze = false
        p.quotas[AndroidPolicy.Bucket.rare.rawValue].maxJobs = 2
        let hourly = app("a0", every: .hours(1), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
        let s = world(hours: 6, apps: [hourly], network: [(.zero, wifiState)])
        let run = try simulate(s, AndroidPolicy(p))
        #expect(run.starts.count == 2)
        #expect(try simulate(s, EagerPolicy()).starts.count == 6)
        let plugged = world(
            hours: 6, apps: [hourly], network: [(.zero, wifiState)],
            charging: [ChargingSession(start: .start, end: at(6))])
        #expect(try simulate(plugged, AndroidPolicy(p)).starts.count == 6)
    }

    @Test func batteryNotLowHasHysteresis() {
        var p = AndroidPolicy()
        var s = state(at(0, 1))
        s.usage.opened(0, at: at(0))
        let task = EligibleTask(id: TaskID(0), app: 0, kind: .refresh, submitted: .start, earliestBegin: .start)
        s.charge = 0.15
        #expect(p.decide(s, eligible: [task]).start == .none, "low at 15%")
        s.charge = 0.19
        #expect(p.decide(s, eligible: [task]).start == .none, "still low until above 20%")
        s.charge = 0.21
        #expect(p.decide(s, eligible: [task]).start == .all)
    }
}

@Suite("oracle: a clairvoyant bound")
struct OracleTests {
    /// LTE until 2:00, then Wi-Fi; the app is next opened at 5:00. Eager fetches on LTE at
    /// 0:45; the oracle on Wi-Fi, as late as it can: 30 s before the next use.
    @Test func waitsForTheCheapestNetworkBeforeTheNextUse() throws {
        let s = world(
            apps: [fetcher("a0")], launches: [use(0, at(0, 29), at(0, 30)), use(0, at(5), at(5, 1))],
            network: [(.zero, lteState), (.hours(2), wifiState)])
        #expect(starts(try simulate(s, EagerPolicy())) == [at(0, 45), at(5, 16)])
        let oracle = try simulate(s, OraclePolicy())
        #expect(starts(oracle) == [at(4, 59, 30), at(23, 59, 30)], "the second request's window runs to the horizon")
        #expect(oracle.summary.backgroundEnergyJ < (try simulate(s, EagerPolicy())).summary.backgroundEnergyJ)
    }

    /// Opened again at 1:30, before any Wi-Fi: the fetch must happen on LTE, as late as the
    /// finish margin allows, unless another app's foreground fetch wakes the radio first.
    @Test func onCellularItGathersAtTheDeadlineOrRidesAForegroundFetch() throws {
        let launches = [use(0, at(0, 29), at(0, 30)), use(0, at(1, 30), at(1, 31))]
        let s = world(
            apps: [fetcher("a0"), fetcher("a1", launchKB: 100)], launches: launches,
            network: [(.zero, lteState), (.hours(2), wifiState)])
        #expect(starts(try simulate(s, OraclePolicy())) == [at(1, 29, 30), at(23, 59, 30)])
        let ride = world(
            apps: [fetcher("a0"), fetcher("a1", launchKB: 100)], launches: launches + [use(1, at(1, 10), at(1, 11))],
            network: [(.zero, lteState), (.hours(2), wifiState)])
        #expect(starts(try simulate(ride, OraclePolicy())).first == at(1, 10))
    }

    @Test func onlyAClairvoyantPolicyIsShownTheFuture() {
        #expect(OraclePolicy.isClairvoyant)
        #expect(!EagerPolicy.isClairvoyant && !DuetPolicy.isClairvoyant && !AndroidPolicy.isClairvoyant)
    }
}
