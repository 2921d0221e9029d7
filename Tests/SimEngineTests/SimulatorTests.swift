import Foundation
import Testing
@testable import SimEngine

@Suite("Simulator")
struct SimulatorTests {
    enum Ping: Equatable { case ping(Int) }

    @Test func stepSetsTheClockBeforeHandingOutTheEvent() {
        var sim = Simulator<Ping>()
        sim.schedule(.ping(1), at: .after(.seconds(5)))
        sim.schedule(.ping(2), after: .seconds(2))
        #expect(sim.peek()?.event == .ping(2))
        #expect(sim.step() == .ping(2))
        #expect(sim.now == .after(.seconds(2)))
        #expect(sim.step() == .ping(1))
        #expect(sim.now == .after(.seconds(5)))
        #expect(sim.step() == nil)
        #expect(sim.now == .after(.seconds(5)))
    }

    @Test func runUntilIsHalfOpenAndMovesTheClockToTheEnd() {
        var sim = Simulator<Ping>()
        for s in [1, 3, 5, 7] { sim.schedule(.ping(s), at: .after(.seconds(Int64(s)))) }
        var seen: [Int] = []
        sim.run(until: .after(.seconds(5))) { _, e in if case .ping(let s) = e { seen.append(s) } }
        #expect(seen == [1, 3])
        #expect(sim.now == .after(.seconds(5)))
        #expect(sim.pendingCount == 2)
        sim.run(until: .after(.seconds(10))) { _, e in if case .ping(let s) = e { seen.append(s) } }
        #expect(seen == [1, 3, 5, 7])
        #expect(sim.now == .after(.seconds(10)))
    }

    @Test func handlersCanScheduleAndCancel() {
        var sim = Simulator<Ping>()
        sim.schedule(.ping(0), at: .start)
        var fired: [SimInstant] = []
        var victim: EventHandle?
        sim.run(until: .after(.seconds(60))) { sim, event in
            guard case .ping(let n) = event else { return }
            fired.append(sim.now)
            if n == 0 { victim = sim.schedule(.ping(99), after: .seconds(30)) }
            if n == 2, let v = victim { let cancelled = sim.cancel(v); #expect(cancelled) }
            if n < 5 { sim.schedule(.ping(n + 1), after: .seconds(10)) }
        }
        #expect(fired == (0...5).map { .after(.seconds(Int64($0) * 10)) })
    }

    @Test func eventsScheduledForNowFireAfterThoseAlreadyDueNow() {
        var sim = Simulator<Ping>()
        sim.schedule(.ping(1), at: .start)
        sim.schedule(.ping(2), at: .start)
        var seen: [Int] = []
        sim.run(until: .after(.seconds(1))) { sim, e in
            guard case .ping(let n) = e else { return }
            seen.append(n)
            if n == 1 { sim.schedule(.ping(3), after: .zero) }
        }
        #expect(seen == [1, 2, 3])
    }

    @Test func schedulingInThePastTrapsWithAMessageNamingBothTimes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var sim = Simulator<Int>()
            sim.schedule(1, at: .after(.seconds(10)))
            _ = sim.step()
            sim.schedule(2, at: .after(.seconds(4)))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("cannot schedule an event at t=4s: it is before now (t=10s)"))
    }
}
