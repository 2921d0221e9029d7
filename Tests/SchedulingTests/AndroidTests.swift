import PhoneWorld
import SimEngine
import Testing

@testable import Policies
@testable import Scheduling

@Suite("android: Doze, standby buckets and quotas in a run (docs/sources.md §9)")
struct AndroidTests {
    /// Doze at the shortest timings its parameters accept (IDLE periods of a second, windows
    /// and every other step of a microsecond or nothing) changes state at most four times a
    /// simulated second, deep and light together, so a decision never walks more than that
    /// per second since the last; and it still cycles (it is not stuck in one state).
    @Test func dozeAtItsShortestTimingsTakesAFewStepsASecond() {
        var t = DozeMachine.Timing()
        let us = SimDuration.microseconds(1)
        (t.inactive, t.idlePending, t.sensing, t.locating, t.lightInactive) = (.zero, .zero, .zero, .zero, .zero)
        (t.firstIdle, t.maxIdle, t.lightFirstIdle, t.lightMaxIdle) = (.seconds(1), .seconds(1), .seconds(1), .seconds(1))
        (t.firstWindow, t.maxWindow, t.minDeepMaintenance) = (us, us, .zero)
        (t.lightMinBudget, t.lightMaxBudget, t.minLightMaintenance) = (.zero, us, .zero)
        var d = DozeMachine(t)
        d.becomeInactive(at: .start)
        var steps = 0, idle = 0
        let day = SimInstant.start + .days(1)
        while let next = d.nextChange, next <= day {
            d.step()
            steps += 1
            if d.deep == .idle { idle += 1 }
        }
        #expect(steps <= 4 * 86_400 + 16, "\(steps) steps in a day")
        #expect(idle >= 86_000, "deep Doze cycles: \(idle) IDLE periods")
    }

    /// Left at 0:28 and 0:30, two apps' refreshes are eligible at 1:14 and 1:40. Light Doze
    /// holds the first from 0:31 except in windows that end 5 s after they open with nothing to
    /// run (0:36, 0:46:05, 1:01:10, 1:16:15): it runs at 1:16:15. Deep Doze is IDLE from 1:34:30
    /// (30 min INACTIVE, 30 IDLE_PENDING, 4 SENSING, 30 s LOCATING) for an hour: the second runs
    /// in its first window, at 2:34:30. Eager runs both when eligible.
    @Test func lightDozeHoldsJobsWithinMinutesAndDeepDozeAfterAnHour() throws {
        let s = world(
            apps: [fetcher("a0", earliest: .minutes(46)), fetcher("a1", earliest: .minutes(70))],
            launches: [use(0, at(0, 27), at(0, 28)), use(1, at(0, 29), at(0, 30))], network: [(.zero, wifiState)])
        #expect(starts(try simulate(s, EagerPolicy())) == [at(1, 14), at(1, 40)])
        let run = try simulate(s, AndroidPolicy())
        #expect(starts(run) == [at(1, 16, 15), at(2, 34, 30)])
        #expect(run.record(0)?.policyReasons == ["light_doze"])
        #expect(run.records.first { $0.request.app == 1 }?.policyReasons == ["doze"])
        var off = AndroidPolicy.Parameters()
        off.doze.light = false
        #expect(starts(try simulate(s, AndroidPolicy(off))) == [at(1, 14), at(2, 34, 30)], "without light Doze the first runs at once")
    }

    /// An app installed and never opened is in NEVER: none of its jobs runs (AOSP); the same
    /// app opened once runs them.
    @Test func anAppNeverOpenedRunsNoJob() throws {
        var off = AndroidPolicy.Parameters()
        off.doze.deep = false
        off.doze.light = false
        let hourly = app("a0", every: .hours(1), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
        let never = try simulate(world(hours: 6, apps: [hourly], network: [(.zero, wifiState)]), AndroidPolicy(off))
        #expect(never.starts.isEmpty)
        #expect(never.records.contains { $0.policyReasons == ["never_opened"] })
        let opened = world(hours: 6, apps: [hourly], launches: [use(0, at(0, 1), at(0, 2))], network: [(.zero, wifiState)])
        #expect(try simulate(opened, AndroidPolicy(off)).starts.count >= 5)
    }

    /// An app in WORKING_SET (last used 13 h ago) runs a 15-minute job: it is stopped when the
    /// 10 minutes of the 2-hour window are used up (`time_limit`), and the next job starts once
    /// 30 s of that session have aged out of the window: 2 h and 30 s after the first began,
    /// not 2 h after it ended. With Android 16's defaults the window is 4 h.
    @Test func quotaStopsAJobAndComesBackThirtySecondsAfterTheOldestAgesOut() throws {
        var a = AppParameters(name: "sync")
        a.tasks = [task("sync.job", .processing, submitOn: [.background, .handler], cpu: 900, earliest: .hours(13), interval: .minutes(11))]
        a.launchDownBytes = 0
        a.expirationResponse = .zero  // it stops at once when told, so its session ends at 13:11
        var s = world(hours: 20, apps: [a], launches: [use(0, at(0), at(0, 1))], network: [(.zero, wifiState)])
        s.system.processingBudget = .minutes(30)
        var p = AndroidPolicy.Parameters()
        p.doze.deep = false
        p.doze.light = false
        let run = try simulate(s, AndroidPolicy(p))
        let first = at(13, 1)
        #expect(Array(starts(run).prefix(2)) == [first, first + .hours(2) + .seconds(30)])
        #expect(
            run.taskEvents.contains {
                if case .expiration(_, _, let reason) = $0.1 { reason == .timeLimit && $0.0 == first + .minutes(10) } else { false }
            }, "stopped at its quota")
        #expect(run.records.contains { $0.policyReasons.contains("quota_time") })
        var sixteen = p
        sixteen.quotas = AndroidPolicy.Parameters.android16Quotas
        #expect(Array(starts(try simulate(s, AndroidPolicy(sixteen))).prefix(2)) == [first, first + .hours(4) + .seconds(30)])
        #expect(AndroidPolicy.make(["android16_defaults": .flag(true)]).parameters.quotas == AndroidPolicy.Parameters.android16Quotas)
    }

    /// An app in RARE (unused for two days, with two hours of screen time since) runs at most 3
    /// sessions a day, where it ran every hour.
    @Test func aRareAppRunsThreeSessionsADay() throws {
        let hourly = app("a0", every: .hours(1), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
        // Used at 0:00, then three hours of other apps: RARE from 48 h.
        let s = world(
            hours: 96, apps: [hourly], launches: [use(0, at(0), at(0, 1)), use(nil, at(1), at(4))], network: [(.zero, wifiState)])
        var p = AndroidPolicy.Parameters()
        p.doze.deep = false
        p.doze.light = false
        let run = try simulate(s, AndroidPolicy(p))
        let rareDay = starts(run).filter { $0 >= at(48) && $0 < at(72) }
        #expect(rareDay.count == 3, "\(rareDay)")
        #expect(starts(try simulate(s, EagerPolicy())).filter { $0 >= at(48) && $0 < at(72) }.count == 24)
        #expect(run.records.contains { $0.policyReasons.contains("quota_sessions") })
    }

    /// No quota while charging: the rare app runs every hour on the charger.
    @Test func noQuotaWhileCharging() throws {
        let hourly = app("a0", every: .hours(1), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
        let s = world(
            hours: 96, apps: [hourly], launches: [use(0, at(0), at(0, 1)), use(nil, at(1), at(4))], network: [(.zero, wifiState)],
            charging: [ChargingSession(start: at(48), end: at(72))])
        let run = try simulate(s, AndroidPolicy())
        #expect(starts(run).filter { $0 >= at(48) && $0 < at(72) }.count == 24)
    }

    @Test func batteryNotLowHasHysteresis() {
        var p = AndroidPolicy()
        var s = DeviceState(now: at(0, 1), charge: 0.8, isCharging: false, inUse: true)
        s.usage = usage(opened: [at(0)])
        let task = EligibleTask(id: TaskID(0), app: 0, kind: .refresh, submitted: .start, earliestBegin: .start)
        s.charge = 0.15
        #expect(p.decide(s, eligible: [task]).start == .none, "low at 15%")
        s.charge = 0.19
        #expect(p.decide(s, eligible: [task]).start == .none, "still low until above 20%")
        s.charge = 0.21
        #expect(p.decide(s, eligible: [task]).start == .all)
    }
}
