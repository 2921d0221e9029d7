import PhoneWorld
import SimEngine
import Testing

@testable import Policies
@testable import Scheduling

/// AOSP's own unit tests of App Standby, JobScheduler's quotas and Doze, ported by name: each
/// test here is named after the AOSP test it reproduces (class, then method), sets up what
/// that test sets up, and expects what it asserts, on `android`'s parts (docs/sources.md §9
/// names the files).
@Suite("android against AOSP's own tests")
struct AOSPTests {
    static let minute = SimDuration.minutes(1), hour = SimDuration.hours(1)

    // MARK: AppStandbyControllerTests (services/tests/servicestests)

    /// One app that the person used at `uses`, the screen on over `screenOn`, at `now`.
    static func standby(uses: [SimInstant], screenOn: [Range<SimInstant>], at now: SimInstant) -> DeviceState {
        var s = DeviceState(now: now, charge: 0.8, isCharging: false)
        var u = UsageHistory(apps: 1)
        var events: [(SimInstant, Int)] = uses.map { ($0, 0) }
        for r in screenOn {
            events.append((r.lowerBound, 1))
            events.append((r.upperBound, 2))
        }
        for (t, kind) in events.sorted(by: { ($0.0, $0.1) < ($1.0, $1.1) }) where t <= now {
            switch kind {
            case 0:
                u.opened(0, at: t)
                u.left(0, at: t)
            case 1: u.screen(true, at: t)
            default: u.screen(false, at: t)
            }
        }
        s.usage = u
        return s
    }

    static let workingSetThreshold = hour * 12, frequentThreshold = hour * 24, rareThreshold = hour * 48

    /// AppStandbyControllerTests.testBuckets: with the screen on throughout, an app used at 0
    /// is ACTIVE until 12 h, WORKING_SET until 24 h, FREQUENT until 48 h, then RARE; used again,
    /// ACTIVE, and RARE 48 h later.
    @Test func AppStandbyControllerTests_testBuckets() {
        let p = AndroidPolicy()
        let ms = SimDuration.milliseconds(1)
        func bucket(_ t: SimDuration, uses: [SimInstant] = [.start]) -> AndroidPolicy.Bucket {
            let now = SimInstant.after(t)
            return p.bucket(0, Self.standby(uses: uses, screenOn: [.start..<now + .days(10)], at: now))
        }
        #expect(p.bucket(0, Self.standby(uses: [], screenOn: [], at: .start)) == .never)
        #expect(bucket(Self.workingSetThreshold - ms) == .active)
        #expect(bucket(Self.workingSetThreshold + ms) == .workingSet)
        #expect(bucket(Self.frequentThreshold - ms) == .workingSet)
        #expect(bucket(Self.frequentThreshold + ms) == .frequent)
        #expect(bucket(Self.rareThreshold + ms) == .rare)
        let again = SimInstant.after(Self.rareThreshold + ms)
        #expect(bucket(Self.rareThreshold + ms, uses: [.start, again]) == .active)
        #expect(bucket(Self.rareThreshold * 2 + ms * 2, uses: [.start, again]) == .rare)
    }

    /// AppStandbyControllerTests.testScreenTimeAndBuckets: with the screen off, an app used at
    /// 0 reaches WORKING_SET but not RARE at 48 h, for want of screen-on time; with the screen
    /// on from then, it is RARE once 2 h of it have passed.
    @Test func AppStandbyControllerTests_testScreenTimeAndBuckets() {
        let p = AndroidPolicy()
        let ms = SimDuration.milliseconds(1)
        func bucket(_ t: SimDuration, screenOnFrom: SimInstant? = nil) -> AndroidPolicy.Bucket {
            let now = SimInstant.after(t)
            return p.bucket(0, Self.standby(uses: [.start], screenOn: screenOnFrom.map { [$0..<now + .days(1)] } ?? [], at: now))
        }
        #expect(bucket(Self.workingSetThreshold - ms) == .active)
        #expect(bucket(Self.workingSetThreshold + ms) == .workingSet)
        #expect(bucket(Self.rareThreshold + ms) != .rare, "the screen was not on")
        let on = SimInstant.after(Self.rareThreshold + ms)
        #expect(bucket(Self.rareThreshold + Self.hour * 2 + ms, screenOnFrom: on) == .rare)
        #expect(bucket(Self.rareThreshold + Self.hour + ms * 2, screenOnFrom: on) == .frequent, "an hour of screen: FREQUENT")
    }

    // MARK: QuotaControllerTest (services/tests/mockingservicestests)

    /// The tests' clock: a day after its start, so sessions in the past have positive times.
    static let now = SimInstant.after(.days(1))

    /// QuotaControllerTest.testIsWithinQuotaLocked_NeverApp: an app in NEVER is never within quota.
    @Test func QuotaControllerTest_testIsWithinQuotaLocked_NeverApp() {
        #expect(!AndroidPolicy().isWithinQuota(0, .never, charging: false, at: Self.now))
        #expect(!AndroidPolicy().isWithinQuota(0, .never, charging: true, at: Self.now))
    }

    /// QuotaControllerTest.testIsWithinQuotaLocked_Charging: while charging, a RARE app is
    /// within quota whatever it ran.
    @Test func QuotaControllerTest_testIsWithinQuotaLocked_Charging() {
        var p = AndroidPolicy()
        p.quota = [QuotaTracker()]
        for k in 0..<10 { p.quota[0].save(.init(Self.now - Self.hour * Int64(k + 1), Self.now - Self.hour * Int64(k + 1) + Self.minute * 5, jobs: 5)) }
        #expect(!p.isWithinQuota(0, .rare, charging: false, at: Self.now), "50 minutes of jobs today")
        #expect(p.isWithinQuota(0, .rare, charging: true, at: Self.now))
    }

    /// QuotaControllerTest.testIsWithinQuotaLocked_TimingSession: with session caps of 3, 4, 5
    /// and 6, seven sessions of 30 s a minute apart put RARE out of quota at the third, FREQUENT
    /// at the fourth, WORKING_SET at the fifth and ACTIVE at the sixth.
    @Test func QuotaControllerTest_testIsWithinQuotaLocked_TimingSession() {
        var p = AndroidPolicy()
        p.parameters.quotas[AndroidPolicy.Bucket.rare.rawValue].maxSessions = 3
        p.parameters.quotas[AndroidPolicy.Bucket.frequent.rawValue].maxSessions = 4
        p.parameters.quotas[AndroidPolicy.Bucket.workingSet.rawValue].maxSessions = 5
        p.parameters.quotas[AndroidPolicy.Bucket.active.rawValue].maxSessions = 6
        p.quota = [QuotaTracker()]
        for i in 0..<7 {
            let start = Self.now - Self.minute * Int64(10 - i)
            p.quota[0].save(.init(start, start + .seconds(30), jobs: 2))
            #expect(p.isWithinQuota(0, .rare, charging: false, at: Self.now) == (i < 2), "rare with \(i + 1) sessions")
            #expect(p.isWithinQuota(0, .frequent, charging: false, at: Self.now) == (i < 3), "frequent with \(i + 1) sessions")
            #expect(p.isWithinQuota(0, .workingSet, charging: false, at: Self.now) == (i < 4), "working set with \(i + 1) sessions")
            #expect(p.isWithinQuota(0, .active, charging: false, at: Self.now) == (i < 5), "active with \(i + 1) sessions")
        }
    }

    /// When quota comes back for `bucket` with `sessions`; `nil` while within quota.
    static func alarm(_ sessions: [QuotaTracker.Session], _ bucket: AndroidPolicy.Bucket, _ p: AndroidPolicy.Parameters = .init()) -> SimInstant? {
        var q = QuotaTracker()
        for s in sessions { q.save(s) }
        return q.check(p.quotas[bucket.rawValue], at: now, p.common)?.back
    }

    /// QuotaControllerTest.testMaybeScheduleStartAlarmLocked_Active: ACTIVE's window is its
    /// allowed time, so only the 4 h a day limits it: 3 h 55 min of sessions and a job running
    /// 5 more minutes use it up; quota comes back 30 s after the first session's start leaves
    /// the day.
    @Test func QuotaControllerTest_testMaybeScheduleStartAlarmLocked_Active() {
        let c = AndroidPolicy.Parameters().common
        let limits = AndroidPolicy.Parameters().quotas[AndroidPolicy.Bucket.active.rawValue]
        var q = QuotaTracker()
        #expect(q.check(limits, at: Self.now, c) == nil, "no sessions")
        for (ago, length) in [(18, Self.hour), (12, Self.hour), (7, Self.hour)] {
            q.save(.init(Self.now - Self.hour * Int64(ago), Self.now - Self.hour * Int64(ago) + length, jobs: 1))
        }
        #expect(q.check(limits, at: Self.now, c) == nil, "out of the window, under the day's limit")
        q.save(.init(Self.now - Self.hour * 2, Self.now - Self.hour * 2 + Self.minute * 55, jobs: 1))
        #expect(q.check(limits, at: Self.now, c) == nil)
        q.jobStarted(at: Self.now, charging: false, c)
        let later = Self.now + Self.minute * 5
        #expect(q.timeUntilConsumed(limits, at: later, c) <= .zero || q.check(limits, at: later, c) != nil)
        #expect(q.check(limits, at: later, c)?.back == Self.now - Self.hour * 18 + .days(1) + .seconds(30))
    }

    /// QuotaControllerTest.testMaybeScheduleStartAlarmLocked_WorkingSet: 14 minutes in the 2 h
    /// window; counting back from the latest, the quota comes back one minute before the end
    /// of the oldest session, 2 h and 30 s later.
    @Test func QuotaControllerTest_testMaybeScheduleStartAlarmLocked_WorkingSet() {
        let now = Self.now, m = Self.minute, h = Self.hour
        var sessions = [QuotaTracker.Session(now - h * 10, now - h * 10 + m * 5, jobs: 1)]
        #expect(Self.alarm(sessions, .workingSet) == nil, "out of the window")
        let end = now - (h * 2 - m * 5)
        sessions.append(.init(now - h * 2, end, jobs: 1))
        #expect(Self.alarm(sessions, .workingSet) == nil, "in the window, in quota")
        sessions += [.init(now - h, now - h + m, jobs: 1), .init(now - m * 50, now - m * 47, jobs: 1)]
        #expect(Self.alarm(sessions, .workingSet) == nil, "9 minutes: in quota")
        sessions.append(.init(now - m * 30, now - m * 25, jobs: 1))
        #expect(Self.alarm(sessions, .workingSet) == end - m + h * 2 + .seconds(30))
    }

    /// QuotaControllerTest.testMaybeScheduleStartAlarmLocked_Frequent: 10 minutes in the 8 h
    /// window; quota comes back 8 h and 30 s after the oldest session's start.
    @Test func QuotaControllerTest_testMaybeScheduleStartAlarmLocked_Frequent() {
        let now = Self.now, m = Self.minute, h = Self.hour
        var sessions = [QuotaTracker.Session(now - h * 10, now - h * 10 + m * 5, jobs: 1)]
        #expect(Self.alarm(sessions, .frequent) == nil)
        let start = now - h * 6
        sessions.append(.init(start, start + m * 5, jobs: 1))
        #expect(Self.alarm(sessions, .frequent) == nil)
        sessions += [.init(now - h * 3, now - h * 3 + m, jobs: 1), .init(now - h, now - h + m * 3, jobs: 1)]
        #expect(Self.alarm(sessions, .frequent) == nil)
        sessions.append(.init(now - h, now - h + m, jobs: 1))
        #expect(Self.alarm(sessions, .frequent) == start + h * 8 + .seconds(30))
    }

    /// QuotaControllerTest.testMaybeScheduleStartAlarmLocked_Rare (session caps lifted to 50):
    /// 11 minutes in the 24 h window; counting back, the oldest session's first minute is over
    /// the allowed time, so quota comes back a minute after its start, a day and 30 s later.
    @Test func QuotaControllerTest_testMaybeScheduleStartAlarmLocked_Rare() {
        let now = Self.now, m = Self.minute, h = Self.hour
        var p = AndroidPolicy.Parameters()
        p.quotas[AndroidPolicy.Bucket.rare.rawValue].maxSessions = 50
        var sessions = [QuotaTracker.Session(now - h * 25, now - h * 25 + m * 5, jobs: 1)]
        #expect(Self.alarm(sessions, .rare, p) == nil)
        let start = now - h * 6
        sessions.append(.init(start, start + m * 5, jobs: 1))
        #expect(Self.alarm(sessions, .rare, p) == nil)
        sessions += [.init(now - h * 3, now - h * 3 + m, jobs: 1), .init(now - h, now - h + m * 3, jobs: 1)]
        #expect(Self.alarm(sessions, .rare, p) == nil)
        sessions.append(.init(now - h, now - h + m * 2, jobs: 1))
        #expect(Self.alarm(sessions, .rare, p) == start + m + h * 24 + .seconds(30))
    }

    // MARK: DeviceIdleControllerTest (services/tests/mockingservicestests)

    /// The machine off the charger with the screen off since 0, no job running.
    static func inactive(_ t: DozeMachine.Timing = .init()) -> DozeMachine {
        var d = DozeMachine(t)
        d.becomeInactive(at: .start)
        return d
    }

    /// Steps until deep Doze changes, and returns its new state.
    static func stepDeep(_ d: inout DozeMachine) -> DozeMachine.Deep {
        let was = d.deep
        while d.deep == was, d.step() {}
        return d.deep
    }

    /// DeviceIdleControllerTest.testStepIdleStateLocked_ValidStates_WithLocationManager_WithProviders:
    /// INACTIVE, IDLE_PENDING, SENSING, LOCATING, IDLE, then IDLE_MAINTENANCE and IDLE in turn;
    /// with AOSP's timeouts.
    @Test func DeviceIdleControllerTest_testStepIdleStateLocked_ValidStates_WithLocationManager_WithProviders() {
        var t = DozeMachine.Timing()
        t.light = false
        var d = Self.inactive(t)
        #expect(d.deep == .inactive && d.allowsJobs)
        // The states in turn, each with when it began: IDLE for an hour, then two; a window
        // with nothing to run ends after its 30 s.
        let expected: [(DozeMachine.Deep, SimInstant)] = [
            (.idlePending, at(0, 30)), (.sensing, at(1)), (.locating, at(1, 4)), (.idle, at(1, 4, 30)),
            (.maintenance, at(2, 4, 30)), (.idle, at(2, 5)), (.maintenance, at(4, 5)), (.idle, at(4, 5, 30)),
        ]
        var seen: [(DozeMachine.Deep, SimInstant)] = []
        for _ in expected {
            let when = d.nextChange!
            d.step()
            seen.append((d.deep, when))
        }
        #expect(seen.map(\.0) == expected.map(\.0))
        #expect(seen.map(\.1) == expected.map(\.1))
        #expect(!d.allowsJobs && d.deepEnds == at(8, 5, 30), "the third IDLE lasts 4 h")
    }

    /// DeviceIdleControllerTest.testStepIdleStateLocked_ValidStates_NoLocationManager: with no
    /// location provider, SENSING goes straight to IDLE.
    @Test func DeviceIdleControllerTest_testStepIdleStateLocked_ValidStates_NoLocationManager() {
        var t = DozeMachine.Timing()
        t.locating = .zero
        var d = Self.inactive(t)
        #expect([Self.stepDeep(&d), Self.stepDeep(&d), Self.stepDeep(&d)] == [.idlePending, .sensing, .idle])
        #expect([Self.stepDeep(&d), Self.stepDeep(&d), Self.stepDeep(&d)] == [.maintenance, .idle, .maintenance])
    }

    /// Steps until light Doze changes, and returns its new state.
    static func stepLight(_ d: inout DozeMachine) -> DozeMachine.Light {
        let was = d.light
        while d.light == was, d.step() {}
        return d.light
    }

    /// DeviceIdleControllerTest.testLightStepIdleStateLocked_ValidStates_NoActiveOps_NetworkConnected:
    /// no active ops, INACTIVE goes straight to IDLE, then IDLE and IDLE_MAINTENANCE alternate.
    @Test func DeviceIdleControllerTest_testLightStepIdleStateLocked_ValidStates_NoActiveOps_NetworkConnected() {
        var d = Self.inactive()
        #expect(d.light == .inactive)
        #expect((0..<4).map { _ in Self.stepLight(&d) } == [.idle, .maintenance, .idle, .maintenance])
    }

    /// DeviceIdleControllerTest.testLightStepIdleStateLocked_ValidStates_ActiveOps_NetworkConnected:
    /// after its timeout INACTIVE goes to IDLE whatever is running.
    @Test func DeviceIdleControllerTest_testLightStepIdleStateLocked_ValidStates_ActiveOps_NetworkConnected() {
        var d = Self.inactive()
        d.jobs(running: true, at: .start)
        #expect((0..<4).map { _ in Self.stepLight(&d) } == [.idle, .maintenance, .idle, .maintenance])
        #expect(!d.allowsJobs || d.light == .maintenance)
    }

    /// DeviceIdleControllerTest.testLightStepIdleStateIdlingTimeIncreases: with a maintenance
    /// budget of exactly a minute, light IDLE lasts 5, then 10, then 20 minutes (the longest
    /// set to 20), each window a minute (the alarms fire at their times: work runs throughout).
    @Test func DeviceIdleControllerTest_testLightStepIdleStateIdlingTimeIncreases() {
        var t = DozeMachine.Timing()
        t.lightMinBudget = .minutes(1)
        t.lightMaxBudget = .minutes(1)
        t.lightFirstIdle = .minutes(5)
        t.lightMaxIdle = .minutes(20)
        t.deep = false
        var d = Self.inactive(t)
        d.jobs(running: true, at: .start)
        #expect(d.lightEnds == .after(t.lightInactive))
        var idling = SimDuration.minutes(5)
        #expect(Self.stepLight(&d) == .idle && d.lightEnds! - d.deepWindowStart >= .zero)
        var idleStart = SimInstant.after(t.lightInactive)
        #expect(d.lightEnds == idleStart + idling)
        for _ in 0..<2 {
            #expect(Self.stepLight(&d) == .maintenance)
            let maintenanceStart = idleStart + idling
            #expect(d.lightEnds == maintenanceStart + .minutes(1))
            idling = idling * 2
            #expect(Self.stepLight(&d) == .idle)
            idleStart = maintenanceStart + .minutes(1)
            #expect(d.lightEnds == idleStart + idling)
        }
    }

    /// DeviceIdleControllerTest.testExitMaintenanceEarlyIfNeededLocked_deep_noActiveOps: with
    /// nothing running, only IDLE_MAINTENANCE ends early (once its 30 s have passed); every
    /// other deep state keeps its timeout.
    @Test func DeviceIdleControllerTest_testExitMaintenanceEarlyIfNeededLocked_deep_noActiveOps() {
        var t = DozeMachine.Timing()
        t.light = false
        var d = Self.inactive(t)
        while d.deep != .maintenance {
            #expect(d.nextChange == d.deepEnds, "\(d.deep) keeps its timeout")
            d.step()
        }
        #expect(d.nextChange == d.deepWindowStart + .seconds(30), "IDLE_MAINTENANCE ends early")
        #expect(d.deepEnds == d.deepWindowStart + .minutes(5))
        // With a job running it lasts until the job ends.
        d.jobs(running: true, at: d.deepWindowStart)
        #expect(d.nextChange == d.deepEnds)
        d.jobs(running: false, at: d.deepWindowStart + .minutes(2))
        #expect(d.nextChange == d.deepWindowStart + .minutes(2))
    }
}
