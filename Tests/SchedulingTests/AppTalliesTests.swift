import PhoneWorld
import SimEngine
import SimRandom
import Testing

@testable import Scheduling

/// A run's requests added up per app and identifier (apps.csv's rows).
@Suite("App tallies")
struct AppTalliesTests {
    static func record(
        _ id: Int, app: Int, _ identifier: String, kind: TaskKind = .refresh, started: Double?, ended: Double, _ outcome: TaskOutcome
    ) -> TaskRecord {
        let request = TaskRequest(
            id: TaskID(id), app: app, kind: kind, identifier: identifier, submitted: .start, earliestBegin: .start, work: .seconds(1), powerW: 1)
        return TaskRecord(
            request: request, started: started.map { SimInstant.start + SimDuration(seconds: $0) }, ended: .start + SimDuration(seconds: ended),
            outcome: outcome, energyJ: started == nil ? 0 : 2)
    }

    @Test func eachIdentifierIsAddedUpOnItsOwn() {
        var tallies = AppTallies(apps: 2)
        var a = Self.record(0, app: 1, "r", started: 3_600, ended: 3_610, .completed)
        a.success = true
        a.startedCharging = true
        a.startedOn = .wifi
        a.grant = .seconds(30)
        a.held.add(.seconds(100), to: .policy)
        a.policyHolds = [("allowance", 60), ("network", 40)]
        var b = Self.record(1, app: 1, "r", started: 7 * 3_600 + 5, ended: 7 * 3_600 + 40, .expired)
        b.expiration = .timeUp
        b.startedOn = .cellular
        b.startedCharging = false
        b.grant = .seconds(30)
        b.held.add(.seconds(50), to: .policy)
        b.policyHolds = [("network", 30), ("allowance", 20)]
        var c = Self.record(2, app: 1, "r", started: nil, ended: 10, .rejected)
        c.rejection = .unavailable
        tallies.add(a)
        tallies.add(b)
        tallies.add(c)
        tallies.add(Self.record(3, app: 0, "p", kind: .processing, started: nil, ended: 5, .neverRun))
        let rows = tallies.sorted
        #expect(rows.map(\.app) == [0, 1] && rows.map(\.identifier) == ["p", "r"], "by app, then kind and identifier")
        let r = rows[1]
        #expect(r.submitted == 3 && r.started == 2 && r.count(.completed) == 1 && r.count(.expired) == 1 && r.count(.rejected) == 1)
        #expect(r.expirations == [1, 0, 0, 0, 0] && r.rejections == [1, 0, 0, 0])
        #expect(r.startedCharging == 1 && r.startedOnWifi == 1 && r.startedOnCellular == 1)
        #expect(r.startsByHour[1] == 1 && r.startsByHour[7] == 1 && r.startsByHour.reduce(0, +) == 2)
        #expect(r.gaps.summary()?.count == 1 && r.gaps.summary()?.max == 6 * 3_600 + 5)
        #expect(r.runTime == .seconds(45) && r.grant == .seconds(60) && r.granted == 2)
        #expect(r.energyJ == 4 && r.held[.policy] == 150)
        // The rules' times add up over requests, longest first, and sum to the policy's.
        #expect(r.rulesByTime.map(\.reason) == ["allowance", "network"] && r.rulesByTime.map(\.seconds) == [80, 70])
    }

    /// Records of an app outside the tallies' apps are ignored rather than trapping.
    @Test func anAppOutOfRangeIsIgnored() {
        var tallies = AppTallies(apps: 1)
        tallies.add(Self.record(0, app: 3, "x", started: 1, ended: 2, .completed))
        #expect(tallies.rows.isEmpty)
    }
}

/// The gaps between starts that come in end order, in memory that stops growing.
@Suite("Start gaps")
struct StartGapsTests {
    /// Starts every 10 to 70 minutes, each arriving when its request ends (up to an hour later).
    static func arrivals(_ n: Int) -> (starts: [SimInstant], arriving: [SimInstant]) {
        var t = SimInstant.start, starts: [SimInstant] = [], ends: [(SimInstant, SimInstant)] = []
        for k in 0..<n {
            t = t + .seconds(Int64(600 + (k * 7_919) % 3_600))
            starts.append(t)
            ends.append((t + .seconds(Int64((k * 104_729) % 3_600)), t))
        }
        return (starts, ends.sorted { $0.0 < $1.0 }.map(\.1))
    }

    static func exactGaps(_ starts: [SimInstant]) -> [Double] {
        zip(starts.dropFirst(), starts).map { ($0 - $1).seconds }.sorted()
    }

    @Test func upToTheLimitTheGapsAreExact() throws {
        let (starts, arriving) = Self.arrivals(2_000)
        #expect(arriving != starts, "out of order")
        var g = StartGaps(exactLimit: 4_096)
        for s in arriving { g.add(s) }
        let summary = try #require(g.summary()), exact = Self.exactGaps(starts)
        #expect(summary.isExact && summary.count == exact.count && summary.max == exact.last)
        #expect(summary.quantile(0.5) == Statistics.quantile(sorted: exact, 0.5))
    }

    @Test func pastTheLimitTheyAreOrderedThenSketched() throws {
        let (starts, arriving) = Self.arrivals(50_000)
        var g = StartGaps(exactLimit: 2_048)
        for s in arriving { g.add(s) }
        #expect(g.late == 0 && g.starts.count < 2 * StartGaps.window, "held back: at most two windows")
        let summary = try #require(g.summary()), exact = Self.exactGaps(starts)
        #expect(!summary.isExact && summary.count == exact.count && summary.max == exact.last)
        for p in [0.1, 0.5, 0.9] {
            let e = Statistics.quantile(sorted: exact, p)
            #expect(abs(summary.quantile(p) - e) <= QuantileSketch.relativeError * e)
        }
        // A start older than what is sketched is left out, and counted.
        g.add(.start + .seconds(1))
        #expect(g.late == 1 && g.summary()?.count == exact.count)
    }

    @Test func fewerThanTwoStartsHaveNoGaps() {
        var g = StartGaps()
        #expect(g.summary() == nil)
        g.add(.start)
        #expect(g.summary() == nil)
    }
}
