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

    /// Timers order exactly like scheduled events: the same random mix of events, timer
    /// settings and cancellations, done once with timers and once with `schedule`/`cancel`
    /// (a timer's old event cancelled, the new one scheduled), fires the same events at the
    /// same times, ties included (times are whole seconds from a small range).
    @Test func timersOrderExactlyLikeScheduledEvents() {
        var rng = SplitMixForTests(seed: 7)
        var withTimers = Simulator<Ping>()
        var plain = Simulator<Ping>()
        let timers = (0..<4).map { _ in withTimers.makeTimer() }
        var handles: [EventHandle?] = Array(repeating: nil, count: 4)
        var fired: [(SimInstant, Ping)] = [], expected: [(SimInstant, Ping)] = []
        var label = 100
        for _ in 0..<5_000 {
            let priority = EventPriority(rawValue: UInt8.random(in: 0...2, using: &rng) * 64)
            let at = withTimers.now + .seconds(Int64.random(in: 0...5, using: &rng))
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<3:
                label += 1
                withTimers.schedule(.ping(label), at: at, priority: priority)
                plain.schedule(.ping(label), at: at, priority: priority)
            case 3..<6:
                let k = Int.random(in: 0..<4, using: &rng)
                label += 1
                withTimers.setTimer(timers[k], .ping(label), at: at, priority: priority)
                if let h = handles[k] { plain.cancel(h) }
                handles[k] = plain.schedule(.ping(label), at: at, priority: priority)
            case 6:
                let k = Int.random(in: 0..<4, using: &rng)
                let wasArmed = withTimers.cancelTimer(timers[k])
                #expect(wasArmed == (handles[k].map { plain.cancel($0) } ?? false))
                handles[k] = nil
            default:
                if let e = withTimers.step() { fired.append((withTimers.now, e)) }
                if let e = plain.step() { expected.append((plain.now, e)) }
                // A fired timer is disarmed; its handle in the plain run is spent.
                for k in 0..<4 where withTimers.timerTime(timers[k]) == nil { handles[k] = nil }
            }
        }
        while let e = withTimers.step() { fired.append((withTimers.now, e)) }
        while let e = plain.step() { expected.append((plain.now, e)) }
        #expect(fired.count == expected.count)
        #expect(zip(fired, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 })
        #expect(fired.count > 1_000)
    }
}
