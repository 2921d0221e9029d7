import SimEngine
import SimRandom
import Testing

@testable import PhoneWorld

@Suite("Nightly charging")
struct ChargingTests {
    @Test func withoutJitterEveryNightIsElevenToSeven() throws {
        var p = ChargingHabit()
        p.plugInJitter = .zero
        p.unplugJitter = .zero
        p.nightlyProbability = 1
        let sessions = p.sessions(until: .after(.days(3)), stream: try RandomStream(seed: 1))
        #expect(
            sessions == [
                ChargingSession(start: .start, end: .after(.hours(7))),  // plugged in the night before day 0
                ChargingSession(start: .after(.hours(23)), end: .after(.hours(31))),
                ChargingSession(start: .after(.hours(47)), end: .after(.hours(55))),
                ChargingSession(start: .after(.hours(71)), end: .after(.days(3))),  // clipped at the horizon
            ])
    }

    @Test func noNightsChargedMeansNoSessions() throws {
        var p = ChargingHabit()
        p.nightlyProbability = 0
        #expect(p.sessions(until: .after(.days(30)), stream: try RandomStream(seed: 1)).isEmpty)
    }

    @Test(arguments: 1...20)
    func sessionsAreOrderedDisjointAndInsideTheHorizon(seed: UInt64) throws {
        var p = ChargingHabit()
        p.plugInJitter = .hours(3)  // wide enough that raw draws would overlap
        p.unplugJitter = .hours(3)
        let horizon = SimInstant.after(.days(30))
        let sessions = p.sessions(until: horizon, stream: try RandomStream(seed: seed))
        #expect(sessions.count > 15)
        for s in sessions { #expect(s.start < s.end && s.start >= .start && s.end <= horizon) }
        for (a, b) in zip(sessions, sessions.dropFirst()) { #expect(a.end <= b.start) }
    }

    @Test func aNightsTimesDoNotDependOnEarlierNightsOutcomes() throws {
        // Three draws a night whether or not it charges: night 5 is the same whatever the
        // probability, as long as it charges in both.
        var always = ChargingHabit()
        always.nightlyProbability = 1
        var mostly = always
        mostly.nightlyProbability = 0.999_999
        let a = always.sessions(until: .after(.days(10)), stream: try RandomStream(seed: 5))
        let b = mostly.sessions(until: .after(.days(10)), stream: try RandomStream(seed: 5))
        #expect(a == b)
    }

    /// Sessions that overlap or touch are one: the phone never shows an unplug and a plug-in
    /// at the same instant (which ended processing that requires power).
    @Test func touchingAndOverlappingSessionsAreOne() {
        func h(_ n: Int64) -> SimInstant { .after(.hours(n)) }
        let merged = ChargingSession.merged([
            ChargingSession(start: h(3), end: h(4)), ChargingSession(start: h(0), end: h(1)),
            ChargingSession(start: h(1), end: h(2)), ChargingSession(start: h(1) + .minutes(30), end: h(1) + .minutes(40)),
        ])
        #expect(merged == [ChargingSession(start: h(0), end: h(2)), ChargingSession(start: h(3), end: h(4))])
    }

    /// Top-ups are a Poisson process of plug-ins wherever the phone is off the charger: at 24 a
    /// day over a 12-hour window (2 an hour), from a moment off the charger the next plug-in
    /// comes after 30 minutes on average, however long each top-up lasts. (Queued one after
    /// another, 24 top-ups of an hour kept the phone on the charger almost all day, and the
    /// wait was under two minutes.)
    @Test func topUpsArriveAsTheirRateSaysWhileUnplugged() throws {
        var p = ChargingHabit()
        p.nightlyProbability = 0
        p.topUpsPerDay = 24
        p.topUpFrom = .hours(8)
        p.topUpUntil = .hours(20)
        p.topUpMean = .hours(1)
        let days: Int64 = 400
        let sessions = p.sessions(until: .after(.days(days)), stream: try RandomStream(seed: 3))
        for (a, b) in zip(sessions, sessions.dropFirst()) { #expect(a.end < b.start, "merged: \(a) \(b)") }
        // Waits from every minute off the charger inside the window to the next plug-in that
        // day; a plug-in is a session's start.
        var waits: [Double] = []
        var k = 0
        for day in 0..<days {
            let midnight = SimInstant.after(.days(day))
            var t = midnight + .hours(8)
            while t < midnight + .hours(14) {
                while k < sessions.count && sessions[k].end <= t { k += 1 }
                if k < sessions.count, sessions[k].start > t, sessions[k].start < midnight + .hours(20) {
                    waits.append((sessions[k].start - t).seconds / 60)
                }
                t = t + .minutes(7)
            }
        }
        let mean = waits.reduce(0, +) / Double(waits.count)
        #expect(waits.count > 1000)
        #expect(abs(mean - 30) < 3, "mean wait \(mean) min over \(waits.count) moments")
    }
}
