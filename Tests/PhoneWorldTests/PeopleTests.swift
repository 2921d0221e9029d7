import SimEngine
import SimRandom
import Testing

@testable import PhoneWorld

func streams(_ rep: UInt64, seed: UInt64 = 1) throws -> (RandomStream, RandomStream) {
    (
        try RandomStream(StreamID(masterSeed: seed, replication: rep, name: "people")),
        try RandomStream(StreamID(masterSeed: seed, replication: rep, name: "purges"))
    )
}

@Suite("People")
struct PeopleTests {
    /// 30 replications of 7 days: the per-replication means of sessions per day and of
    /// session length have 95% confidence intervals that cover the configured means.
    @Test(arguments: [50.0, 120.0])
    func thirtyWeeksReproduceTheConfiguredMeans(sessionsPerDay: Double) throws {
        var p = PeopleParameters()
        p.sessionsPerDay = sessionsPerDay
        var perDay: [Double] = []
        var meanLength: [Double] = []
        for rep in 0..<30 {
            let (people, purges) = try streams(UInt64(rep))
            let t = p.timeline(until: .after(.days(7)), appWeights: [1, 2], people: people, purges: purges)
            #expect(t.awake.count == 7)
            perDay.append(Double(t.sessionStarts.count) / 7)
            let ends = t.sessionStarts.dropFirst().map { t.launches[$0 - 1].end } + [t.launches.last!.end]
            let lengths = zip(t.sessionStarts, ends).map { ($0.1 - t.launches[$0.0].start).seconds }
            meanLength.append(Statistics.mean(lengths))
        }
        let sessions = ConfidenceInterval(perDay)
        let length = ConfidenceInterval(meanLength)
        #expect(abs(sessions.mean - sessionsPerDay) <= sessions.halfWidth, "\(sessions)")
        #expect(abs(length.mean - p.meanSessionLength.seconds) <= length.halfWidth, "\(length) vs \(p.meanSessionLength)")
        #expect(sessions.halfWidth < 0.05 * sessionsPerDay, "the interval is tight enough to mean something")
    }

    @Test func sessionsHappenWhileAwakeFollowTheHourlyShapeAndNeverOverlap() throws {
        var p = PeopleParameters()
        p.sessionsPerDay = 200
        p.hourlyWeights = (0..<24).map { $0 == 20 ? 10 : 1 }
        let (people, purges) = try streams(0)
        let t = p.timeline(until: .after(.days(14)), appWeights: [1], people: people, purges: purges)
        for (a, b) in zip(t.launches, t.launches.dropFirst()) { #expect(a.end <= b.start) }
        for i in t.sessionStarts {
            let s = t.launches[i].start
            #expect(t.awake.contains { $0.contains(s) } || t.launches[max(i - 1, 0)].end == s, "a session starts while awake or right after another")
        }
        let at20 = t.sessionStarts.filter { (t.launches[$0].start.microseconds / 3_600_000_000) % 24 == 20 }.count
        let at15 = t.sessionStarts.filter { (t.launches[$0].start.microseconds / 3_600_000_000) % 24 == 15 }.count
        #expect(at20 > 5 * at15, "hour 20 has ten times hour 15's weight: \(at20) vs \(at15)")
    }

    @Test func aboutNinetyPercentOfSessionsUseOneAppAndSwipesFollowTheirShare() throws {
        var p = PeopleParameters()
        p.sessionsPerDay = 200
        p.swipeAwayShare = 0.25
        let (people, purges) = try streams(3)
        let t = p.timeline(until: .after(.days(30)), appWeights: [1, 1, 1], people: people, purges: purges)
        let counts = zip(t.sessionStarts, t.sessionStarts.dropFirst() + [t.launches.count]).map { $1 - $0 }
        let single = Double(counts.filter { $0 == 1 }.count) / Double(counts.count)
        #expect(abs(single - 0.9) < 0.02, "\(single)")
        let swiped = Double(t.launches.filter(\.swipedAway).count) / Double(t.launches.count)
        #expect(abs(swiped - 0.25) < 0.02, "\(swiped)")
        // Apps weighted 1, 1, 1 against other apps' 4: 3/7 of launches are scenario apps.
        let ours = Double(t.launches.filter { $0.app != nil }.count) / Double(t.launches.count)
        #expect(abs(ours - 3.0 / 7) < 0.02, "\(ours)")
    }

    @Test func weekendsWakeLaterAndBedtimeAfterMidnightIsTheNextDay() throws {
        var p = PeopleParameters()
        p.sleepJitter = .zero
        p.bedtime = .minutes(30)
        let (people, purges) = try streams(0)
        let t = p.timeline(until: .after(.days(7)), appWeights: [], people: people, purges: purges)
        #expect(t.awake[0] == SimInstant.after(.hours(7))...SimInstant.after(.days(1) + .minutes(30)))
        #expect(t.awake[5].lowerBound == .after(.days(5) + .hours(8) + .minutes(30)), "day 5 is a Saturday")
    }

    /// Purges follow use: each comes with a launch, as the app opens, one launch in five by
    /// the median person's chance, so none comes while the person sleeps.
    @Test func callsDoNotOverlapAndPurgesFollowLaunches() throws {
        var p = PeopleParameters()
        p.callsPerDay = 20
        p.callMean = .minutes(30)
        p.purgePerLaunch = 0.2
        let (people, purges) = try streams(1)
        let t = p.timeline(until: .after(.days(20)), appWeights: [1], people: people, purges: purges)
        for (a, b) in zip(t.calls, t.calls.dropFirst()) { #expect(a.end <= b.start) }
        #expect(abs(Double(t.purges.count) / Double(t.launches.count) - 0.2) < 0.03)
        let starts = Set(t.launches.map(\.start))
        #expect(t.purges.allSatisfy { starts.contains($0.time - .milliseconds(1)) })
        #expect(t.purges.allSatisfy { purge in t.awake.contains { $0.contains(purge.time) } })
        #expect(t.purges.allSatisfy { (0..<1).contains($0.pick) })
    }

    @Test func nobodyMeansNothingHappens() throws {
        let (people, purges) = try streams(0)
        let t = PeopleParameters.absent.timeline(until: .after(.days(7)), appWeights: [1], people: people, purges: purges)
        #expect(t.launches.isEmpty && t.calls.isEmpty && t.purges.isEmpty)
    }
}

@Suite("Network environments")
struct NetworkTests {
    let home = NetworkState(kind: .wifi, downMbps: 100, upMbps: 20)
    let lteState = NetworkState(kind: .cellular, downMbps: 20, upMbps: 5)

    var environment: NetworkEnvironment {
        var e = NetworkEnvironment()
        e.weekday = [.init(start: .zero, state: home), .init(start: .hours(8), state: lteState), .init(start: .hours(9), state: home)]
        e.weekend = [.init(start: .zero, state: home)]
        return e
    }

    @Test func withoutJitterTheScheduleIsExact() throws {
        let c = environment.changes(until: .after(.days(7)), stream: try RandomStream(seed: 1))
        var expected = [NetworkChange(time: .start, state: home)]
        for day in Int64(0)..<5 {
            expected.append(NetworkChange(time: .after(.days(day) + .hours(8)), state: lteState))
            expected.append(NetworkChange(time: .after(.days(day) + .hours(9)), state: home))
        }
        #expect(c == expected, "weekends stay home; equal neighbours merge")
    }

    @Test(arguments: 1...10)
    func deadSpotsOnlyCutCellularAndJitterKeepsOrder(seed: UInt64) throws {
        var e = environment
        e.jitter = .minutes(20)
        e.deadSpotsPerHour = 6
        e.deadSpotMean = .minutes(3)
        let c = e.changes(until: .after(.days(7)), stream: try RandomStream(seed: seed))
        #expect(c.first?.time == .start)
        for (a, b) in zip(c, c.dropFirst()) {
            #expect(a.time < b.time)
            #expect(a.state != b.state)
            if b.state == .disconnected { #expect(a.state == lteState, "a dead spot interrupts cellular only") }
        }
        #expect(c.contains { $0.state == .disconnected })
    }
    /// Drawn a day at a time, the changes are those of every day's raw changes normalized at
    /// once (the rule a run drew by before it drew as it went).
    @Test(arguments: 1...5)
    func dayByDayIsTheWholeNormalizedAtOnce(seed: UInt64) throws {
        var e = environment
        e.jitter = .minutes(40)
        e.deadSpotsPerHour = 6
        e.weekend = [.init(start: .zero, state: home), .init(start: .hours(12), state: lteState)]
        let horizon = SimInstant.after(.days(30) + .hours(5))
        let stream = try RandomStream(seed: seed)
        let raw = (Int64(0)...30).flatMap { e.rawChanges(day: $0, stream: stream) }
        let once = NetworkEnvironment.normalized(raw, until: horizon)
        #expect(e.changes(until: horizon, stream: try RandomStream(seed: seed)) == once)
        var days = NetworkDays(e, until: horizon, stream: try RandomStream(seed: seed)), window: [NetworkChange] = [], seen: [NetworkChange] = []
        while !days.isFinished {
            let kept = window.count
            days.drawDay(into: &window)
            #expect(window.count >= kept, "a day never takes back a change of the day before")
            seen += window[min(kept, window.count)...]
            window = Array(window.suffix(1))
        }
        #expect(seen == once)
    }
}
