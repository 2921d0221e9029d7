import PhoneWorld
import SimEngine
import Testing

@testable import Policies
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
