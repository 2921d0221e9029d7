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
