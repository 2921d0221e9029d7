import PhoneWorld
@testable import Scheduling
import SimEngine
import SimRandom
import Testing

@Suite("World model in the simulation: radios, network, people, settings")
struct WorldTests {
    @Test func aTaskFetchOnLTEPaysPromotionAndTransferAndTheTailIsBookedApart() throws {
        // One app, one fetch of 10 KB a day, nothing else using the radio.
        var s = setup(days: 1, apps: [app("a", every: .days(1), earliest: .zero, work: .seconds(1), power: 0.4, downKB: 10)])
        s.network = network([(.zero, lteState)])
        s.charging.nightlyProbability = 0
        let run = try simulate(s, EagerPolicy())
        let r = try #require(run.records.first { $0.outcome == .completed })
        let radio = 0.26 * 1.21 + 0.004 * (1.2 + 0.05197 * 20)
        #expect(abs(r.radioEnergyJ - radio) < 1e-9)
        #expect(r.ended - r.started! == .microseconds(264_000) + r.request.work, "fetch, then the CPU work")
        #expect(abs(r.energyJ - (radio + 0.4 * (r.ended - r.started!).seconds)) < 1e-9)
        let c = try #require(run.totals?.components)
        #expect(abs(c.radioTailJ - 10.1 * 1.06) < 1e-9)
        #expect(abs(c.totalJ - run.energy.consumedJ) < 1e-9 * run.energy.consumedJ)
    }

    @Test func aFetchFinishingExactlyAtTheBudgetStillExpires() throws {
        // 375 MB at 100 Mbit/s on Wi-Fi (no promotion) takes exactly 30 s: the fetch and the
        // budget end at the same microsecond, and the task must end once, expired.
        var s = setup(days: 1, apps: [app("big", every: .hours(6), earliest: .zero, work: .seconds(1), downKB: 375_000)])
        s.network = network([(.zero, wifiState)])
        let run = try simulate(s, EagerPolicy())
        let started = run.records.filter { $0.started != nil }
        #expect(started.count >= 3)
        for r in started {
            #expect(r.outcome == .expired)
            #expect(r.ended - r.started! == .seconds(30))
            #expect(abs(r.radioEnergyJ - 30 * 0.403) < 1e-9)
        }
    }

    @Test func withoutAConnectionAFetchWaitsAndExpiresAtTheBudget() throws {
        // No connection from 00:00 to 12:00, then Wi-Fi: morning tasks expire, afternoon ones complete.
        var s = setup(days: 1, apps: [app("a", every: .hours(1), earliest: .zero, work: .seconds(1), downKB: 50)])
        s.network = network([(.zero, .disconnected), (.hours(12), wifiState)])
        let run = try simulate(s, EagerPolicy())
        for r in run.records where r.started != nil {
            if r.ended < .after(.hours(12)) {
                #expect(r.outcome == .expired)
                #expect(r.ended - r.started! == .seconds(30))
                #expect(r.radioEnergyJ == 0)
            } else if r.started! >= .after(.hours(12)) {
                #expect(r.outcome == .completed)
            }
        }
        #expect(run.records.contains { $0.outcome == .expired } && run.records.contains { $0.outcome == .completed })
    }

    @Test func backgroundAppRefreshOffRunsNothingAndAnAppSwitchOffRunsNothingOfThatApp() throws {
        var s = setup(days: 2, apps: [app("a", every: .minutes(30)), app("b", every: .minutes(30))])
        s.settings.backgroundAppRefresh = .off
        #expect(try simulate(s, EagerPolicy()).records.allSatisfy { $0.started == nil })
        s.settings.backgroundAppRefresh = .wifiAndCellular
        s.apps[1].backgroundRefresh = false
        let run = try simulate(s, EagerPolicy())
        #expect(run.records.filter { $0.request.app == 1 }.allSatisfy { $0.started == nil })
        #expect(run.records.filter { $0.request.app == 0 && $0.started != nil }.count > 50)
    }

    @Test func wifiOnlyStartsWorkOnlyOnWifi() throws {
        var s = setup(days: 2, apps: [app("a", every: .minutes(20), earliest: .zero)])
        s.network = network([(.zero, lteState), (.hours(20), wifiState), (.hours(21), lteState)])
        s.settings.backgroundAppRefresh = .wifi
        let run = try simulate(s, EagerPolicy())
        let starts = run.records.compactMap(\.started)
        #expect(starts.count >= 6)
        for t in starts { #expect((t.microseconds / 3_600_000_000) % 24 == 20, "started at \(t), off Wi-Fi") }
    }

    @Test func lowPowerModeOnStopsAllRefresh() throws {
        var s = setup(days: 2, apps: [app("a", every: .minutes(30))])
        s.settings.lowPowerMode = .on
        #expect(try simulate(s, EagerPolicy()).records.allSatisfy { $0.started == nil })
    }

    @Test func lowPowerModeIsOfferedAtTwentyAndTenPercentAndTurnsOffAtEightyWhileCharging() throws {
        // A 1 Wh phone at 25% draining 0.5 W: 5% (0.05 Wh) takes 6 minutes.
        var s = setup(days: 1, apps: [])
        s.battery.capacityWh = 1
        s.battery.initialCharge = 0.25
        s.battery.idleDrainPerHour = 0.5
        s.charging.plugIn = .hours(2)
        s.charging.unplug = .hours(7)
        s.charger.optimized = false
        s.people.lowPowerAcceptShare = 0  // declines both prompts
        var run = try simulate(s, EagerPolicy())
        let prompts = run.world.filter { if case .lowPowerPrompt = $0.1 { true } else { false } }
        // Empty at 30 min, boots on the 02:00 charger, full by the 07:00 unplug, 20% again at 08:36.
        #expect(prompts.map(\.0) == [.after(.minutes(6)), .after(.minutes(18)), .after(.minutes(516)), .after(.minutes(528))],
                "at exactly 20% and 10%, and again after the next charge")
        s.people.lowPowerAcceptShare = 1
        run = try simulate(s, EagerPolicy())
        let modes = run.world.compactMap { if case .lowPowerMode(let on) = $0.1 { ($0.0, on) } else { nil } }
        #expect(modes.map(\.1) == [true, false, true], "accepted at 20%, so no prompt at 10%; off while charging")
        #expect(modes[0].0 == .after(.minutes(6)) && modes[2].0 == .after(.minutes(516)))
        let chargeAtOff = run.charges.last { $0.0 == modes[1].0 }!.1
        #expect(abs(chargeAtOff - 0.8) < 1e-6, "off at 80% while charging")
        // Low Power Mode time counts while the phone is on: until the shutdown at 30 min, from
        // the boot to 80%, and from 08:36 to the second shutdown at 09:00.
        let boot = try #require(run.boots.first)
        #expect(run.shutdowns == [.after(.minutes(30)), .after(.hours(9))])
        #expect(run.totals!.lowPower == .minutes(24) + (modes[1].0 - boot) + .minutes(24))
    }

    @Test func theScreenAndForegroundCPUCostWhatTheSessionsLast() throws {
        var s = setup(days: 3, apps: [app("a")])
        s.people = PeopleParameters()
        s.people.callsPerDay = 2
        let run = try simulate(s, EagerPolicy())
        let t = try #require(run.totals)
        #expect(t.screenOn > .hours(1))
        #expect(abs(t.components.screenJ - 0.58 * t.screenOn.seconds) < 1e-6 * t.components.screenJ)
        #expect(abs(t.components.cpuForegroundJ - 0.6 * t.screenOn.seconds) < 1e-6 * t.components.cpuForegroundJ)
        #expect(t.components.callJ > 0)
        #expect(t.sessions > 100 && t.launches >= t.sessions)
    }

    @Test func commonRandomNumbersGiveEveryPolicyTheSameWorld() throws {
        var s = setup(days: 3, apps: [app("a"), app("b", every: .minutes(45), downKB: 100)], nights: 0.7, jitter: .hours(1))
        s.people = PeopleParameters()
        s.network = network([(.zero, wifiState), (.hours(8), lteState), (.hours(18), wifiState)])
        s.network.deadSpotsPerHour = 2
        s.network.jitter = .minutes(20)
        let eager = try simulate(s, EagerPolicy(), seed: 5)
        let lazy = try simulate(s, ChargeOnlyPolicy(), seed: 5)
        let exogenous = { (run: RecordingSink) in
            run.world.filter {
                switch $0.1 {
                case .network, .launch, .leave, .callStarted, .callEnded, .plugIn, .unplug: true
                default: false
                }
            }.map { "\($0.0.microseconds) \($0.1)" }
        }
        #expect(exogenous(eager) == exogenous(lazy))
        #expect(exogenous(eager).count > 300)
    }

    @Test func aNetworkTraceIsReplayedExactly() throws {
        var s = setup(days: 1, apps: [app("a", downKB: 10)])
        s.network = network([(.zero, wifiState)])
        let trace = [NetworkChange(time: .start, state: wifiState),
                     NetworkChange(time: .after(.microseconds(3_600_000_001)), state: lteState),
                     NetworkChange(time: .after(.hours(2)), state: .disconnected),
                     NetworkChange(time: .after(.hours(2) + .seconds(1)), state: wifiState)]
        s.networkTrace = trace
        let run = try simulate(s, EagerPolicy())
        let seen = run.world.compactMap { if case .network(let n) = $0.1 { NetworkChange(time: $0.0, state: n) } else { nil } }
        #expect(seen == trace)
    }
}
