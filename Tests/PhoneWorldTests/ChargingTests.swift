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
}
