import Testing

@testable import SimEngine

@Suite("Simulated time")
struct TimeTests {
    @Test func unitConstructorsAgree() {
        #expect(SimDuration.seconds(1).microseconds == 1_000_000)
        #expect(SimDuration.minutes(15) == .seconds(900))
        #expect(SimDuration.hours(2) == .minutes(120))
        #expect(SimDuration.days(1) == .hours(24))
        #expect(SimDuration.milliseconds(250) == .microseconds(250_000))
    }

    @Test func realSecondsRoundToTheNearestMicrosecond() {
        #expect(SimDuration(seconds: 1.5) == .milliseconds(1500))
        #expect(SimDuration(seconds: 0.0000014).microseconds == 1)
        #expect(SimDuration(seconds: 0.0000016).microseconds == 2)
        #expect(SimDuration(seconds: 2.5).seconds == 2.5)
    }

    @Test func instantArithmetic() {
        let t = SimInstant.after(.hours(26))
        #expect(t.day == 1)
        #expect(t.timeOfDay == .hours(2))
        #expect(t - SimInstant.start == .hours(26))
        #expect(t + .hours(22) == .after(.days(2)))
        #expect(SimInstant(microseconds: -1).day == -1)
        #expect(SimInstant(microseconds: -1).timeOfDay == .days(1) - .microseconds(1))
    }

    @Test(arguments: [
        (SimDuration.zero, "0s"), (.seconds(30), "30s"), (.minutes(90), "1h30m"),
        (.days(1) + .seconds(5), "1d5s"), (.milliseconds(1250), "1s250ms"), (-.minutes(2), "-2m"),
    ])
    func durationsPrintCompactly(_ d: SimDuration, _ text: String) {
        #expect(d.description == text)
    }
}
