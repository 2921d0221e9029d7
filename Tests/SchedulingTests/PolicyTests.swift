import PhoneWorld
@testable import Scheduling
import SimEngine
import Testing

@Suite("Policies: eager and charge-only")
struct PolicyTests {
    @Test func eagerStartsEveryRequestTheMomentItBecomesEligible() throws {
        let s = setup(days: 2, apps: [app("news"), app("mail", every: .minutes(30), earliest: .zero)])
        let run = try simulate(s, EagerPolicy())
        let started = run.records.filter { $0.started != nil }
        #expect(started.count > 100)
        for r in started { #expect(r.started == r.request.earliestBegin) }
        #expect(run.summary.latenciesS.allSatisfy { $0 == 0 })
        #expect(run.summary.count(.replaced) == 0, "nothing waits long enough to be replaced")
    }

    @Test func chargeOnlyStartsWorkOnlyWhileCharging() throws {
        let s = setup(days: 5, apps: [app("news"), app("weather", every: .hours(2), earliest: .hours(1))],
                      nights: 0.8, jitter: .minutes(40))
        let run = try simulate(s, ChargeOnlyPolicy(), seed: 9)
        let charging = try sessions(s, seed: 9)
        let started = run.records.compactMap(\.started)
        #expect(started.count > 20)
        for t in started {
            #expect(charging.contains { $0.start <= t && t < $0.end }, "started at \(t) without a charger")
        }
    }

    @Test func chargeOnlyStartsWaitingWorkAtTheMomentOfPlugIn() throws {
        let s = setup(days: 2, apps: [app("news")])
        let run = try simulate(s, ChargeOnlyPolicy())
        let plugIn = SimInstant.after(.hours(23))
        // The day's last request became eligible before 23:00 and waited for the charger.
        #expect(run.records.contains { $0.started == plugIn && $0.request.earliestBegin < plugIn })
    }

    @Test func withoutAChargerChargeOnlyRunsNothingAndEachLeaveReplacesTheWaitingRequest() throws {
        var s = setup(days: 2, apps: [app("news", submitOn: [.start, .background, .handler])], nights: 0)
        s.people = PeopleParameters()
        let run = try simulate(s, ChargeOnlyPolicy())
        let m = run.summary
        let leaves = run.transitions.filter { $0.1.to == .background && $0.1.cause == .leave }.count
        #expect(leaves > 10)
        #expect(m.count(.completed) == 0 && run.starts.isEmpty)
        #expect(m.submitted == 1 + leaves, "the request pending at the start, then one per leave")
        #expect(m.count(.neverRun) == 1, "only the newest request is still waiting at the end")
        #expect(m.count(.replaced) == leaves)
    }
}
