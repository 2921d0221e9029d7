import PhoneWorld
import SimEngine
import Testing

@testable import Policies
@testable import Scheduling

@Suite("Charging in the simulation")
struct ChargingSimulationTests {
    /// No apps, no idle drain, plugged in from midnight to 07:00 (the night before day 0).
    func plugged(initial: Double, optimized: Bool, limit: Double = 1) -> PhoneSetup {
        var s = setup(days: 1, apps: [])
        s.battery.capacityWh = 13
        s.battery.initialCharge = initial
        s.battery.idleDrainPerHour = 0
        s.charger.optimized = optimized
        s.charger.limit = limit
        return s
    }

    func firstTime(_ run: RecordingSink, atLeast level: Double) -> SimInstant? {
        run.charges.first { $0.1 >= level - 1e-9 }?.0
    }

    @Test func twentyToEightyPercentAtTwentyWattsTakesWhatTheCurveSays() throws {
        let run = try simulate(plugged(initial: 0.2, optimized: false), EagerPolicy())
        // Constant power below the knee: 60% of 13 Wh at 20 W x 0.65 delivered.
        let expected = 0.6 * 13 * 3600 / (20 * 0.65)
        let t = try #require(firstTime(run, atLeast: 0.8))
        #expect(abs(t.sinceStart.seconds - expected) < 1e-3, "\(t) vs \(expected) s")
        #expect(abs(expected - 2160) < 1e-9, "36 minutes")
        // Then the taper: each 1% step at the power of its start.
        var taper = 0.0
        for step in 0..<20 {
            let start = 0.8 + Double(step) * 0.01
            taper += 0.01 * 13 * 3600 / (13 * (0.03 + 0.97 * (1 - start) / 0.2))
        }
        let full = try #require(firstTime(run, atLeast: 1))
        #expect(abs((full - t).seconds - taper) < 0.01, "taper took \((full - t).seconds) s, expected \(taper) s")
    }

    @Test(arguments: [1.0, 0.9, 0.8])
    func neverAboveTheLimit(limit: Double) throws {
        let run = try simulate(plugged(initial: 0.5, optimized: false, limit: limit), EagerPolicy())
        let highest = run.charges.map(\.1).max()!
        #expect(highest <= limit + 1e-9)
        #expect(highest >= limit - 1e-9, "and it gets there in a 7-hour charge")
    }

    @Test func optimizedChargingHoldsAtEightyUntilAnHourBeforeTheUnplug() throws {
        let run = try simulate(plugged(initial: 0.5, optimized: true), EagerPolicy())
        let release = SimInstant.after(.hours(6))  // predicted unplug 07:00, lead 1 h
        let reached80 = try #require(firstTime(run, atLeast: 0.8))
        #expect(reached80 < .after(.hours(1)))
        for (time, charge) in run.charges where time >= reached80 && time <= release {
            #expect(abs(charge - 0.8) < 1e-9, "held at 80% at \(time), got \(charge)")
        }
        let full = try #require(firstTime(run, atLeast: 1))
        #expect(full > release && full < .after(.hours(7)), "finished by the unplug, at \(full)")
    }

    @Test func theChargerPowersTheLoadWhileHolding() throws {
        var s = plugged(initial: 0.8, optimized: true)
        s.battery.idleDrainPerHour = 0.01  // 0.13 W
        let run = try simulate(s, EagerPolicy())
        // While holding, the battery neither charges nor discharges.
        for (time, charge) in run.charges where time < .after(.hours(6)) {
            #expect(abs(charge - 0.8) < 1e-9, "at \(time)")
        }
        #expect(run.energy.fromBatteryJ < 1e-6 || run.charges.contains { $0.0 >= .after(.hours(7)) })
    }

    /// Two back-to-back sessions of a charging trace are one: a processing task that requires
    /// power and runs across the boundary completes, where an unplug and a plug-in at the
    /// same instant ended it ("power lost").
    @Test func backToBackTraceSessionsDoNotCutThePower() throws {
        var a = AppParameters(name: "backup")
        var t = task("backup.index", .processing, submitOn: [.background], cpu: 240, earliest: .zero)
        t.requiresExternalPower = true
        a.tasks = [t]
        a.launchDownBytes = 0
        let s = quiet(
            hours: 5, apps: [a], launches: [use(0, at(1, 57), at(1, 58))],
            charging: [ChargingSession(start: .start, end: at(2)), ChargingSession(start: at(2), end: at(5))])
        let run = try simulate(s, EagerPolicy())
        let record = try #require(run.records.first { $0.request.kind == .processing })
        #expect(record.started == at(1, 58), "idle from 1:58")
        #expect(!run.world.contains { if case .unplug = $0.1 { $0.0 == at(2) } else { false } }, "no unplug at the boundary")
        #expect(record.outcome == .completed && record.ended == at(2, 2))
    }

    /// The charger's sessions are scheduled one at a time: the queue at the start holds the
    /// same events for a week as for three years, and the run still plugs in and unplugs at
    /// each session's ends (the last one the horizon cuts goes on).
    @Test func chargerSessionsAreScheduledOneAtATime() throws {
        func started(days: Int64) throws -> (pending: Int, run: RecordingSink, sessions: [ChargingSession]) {
            var s = setup(days: days, apps: [], nights: 0.8, jitter: .minutes(30))
            s.charging.topUpsPerDay = 0.5
            let streams = try WorldStreams(setup: s, masterSeed: 3, replication: 0)
            var sim = PhoneSimulation(setup: s, policy: EagerPolicy(), sink: RecordingSink(summary: RunMetrics(apps: s.apps)), streams: streams)
            sim.startWorld()
            let pending = sim.sim.pendingCount
            return (pending, try simulate(s, EagerPolicy(), seed: 3), try sessions(s, seed: 3))
        }
        let week = try started(days: 7), years = try started(days: 1_095)
        #expect(years.sessions.count > 100 * week.sessions.count / 2)
        #expect(years.pending == week.pending)
        for (days, started) in [(7, week), (1_095, years)] {
            let horizon = SimInstant.after(.days(Int64(days)))
            let expected: [(SimInstant, Bool)] = started.sessions.flatMap { s in
                [(s.start, true)] + (s.end < horizon ? [(s.end, false)] : [])
            }
            let seen: [(SimInstant, Bool)] = started.run.world.compactMap { e in
                switch e.1 {
                case .plugIn: (e.0, true)
                case .unplug: (e.0, false)
                default: nil
                }
            }
            #expect(seen.map(\.0) == expected.map(\.0) && seen.map(\.1) == expected.map(\.1), "\(days) days")
        }
    }
}
