import PhoneWorld
import SimEngine
import Testing

@testable import Policies
@testable import Scheduling

/// iOS 26's BGContinuedProcessingTask, rule by rule (docs/sources.md §2): a tap in the
/// foreground submits it; it starts at once or queues (or fails); it goes on in the
/// background; a swipe cancels the queue; pressure ends the least progress first; the person
/// may cancel it; the GPU where the phone has one; wildcard identifiers.
@Suite("Continued processing, rule by rule (docs/sources.md §2)")
struct ContinuedProcessingTests {
    static let kind = MechanismRegistry.kind(ContinuedProcessing.self)

    /// An app whose every open taps once, 10 s in, for 5 minutes of fixed CPU work.
    static func exporter(_ name: String, _ values: [String: ParameterValue] = [:]) -> AppParameters {
        var a = AppParameters(name: name)
        a.cpuPowerW = 1
        a.launchDownBytes = 0
        a.mechanisms[ContinuedProcessing.name] =
            [
                "per_open_pct": .number(100), "tap_after": .duration(.seconds(10)), "cpu": .duration(.minutes(5)), "cpu_sigma": .number(0),
                "cancel_pct": .number(0),
            ]
            .merging(values) { $1 }
        return a
    }

    static func run(
        _ apps: [AppParameters], _ launches: [AppLaunch], purges: [Purge] = [], system: [String: ParameterValue] = [:]
    ) throws -> (run: RecordingSink, tasks: [TaskRecord]) {
        var s = quiet(hours: 3, apps: apps, launches: launches, purges: purges)
        s.system.mechanisms[ContinuedProcessing.name] = system
        let run = try simulate(s, EagerPolicy())
        return (run, run.records.filter { $0.request.kind == kind }.sorted { $0.request.id < $1.request.id })
    }

    @Test func aTapInTheForegroundStartsItAtOnceAndItGoesOnInTheBackground() throws {
        let (run, tasks) = try Self.run([Self.exporter("photos")], [use(0, at(1), at(1, 1))])
        try #require(tasks.count == 1)
        #expect(tasks[0].request.submitted == at(1, 0, 10) && tasks[0].started == at(1, 0, 10), "submitted and started at the tap")
        #expect(tasks[0].outcome == .completed && tasks[0].ended == at(1, 5, 10), "its 5 minutes of work ran on after the person left at 1:01")
        #expect(tasks[0].request.identifier == "com.example.export.0")
        #expect(tasks[0].energyJ > 299 && tasks[0].energyJ < 301, "5 minutes at 1 W: \(tasks[0].energyJ) J")
        let states = run.transitions(of: 0).map { ($0.0, $0.2) }
        #expect(states.contains { $0 == (at(1, 1), .background) } && states.contains { $0 == (at(1, 5, 10), .suspended) }, "\(states)")
    }

    @Test func noRequestWhenTheAppLeftBeforeTheTap() throws {
        let (_, tasks) = try Self.run([Self.exporter("photos", ["tap_after": .duration(.minutes(2))])], [use(0, at(1), at(1, 1))])
        #expect(tasks.isEmpty, "the person left before tapping: \(tasks.map(\.outcome))")
    }

    @Test func aRequestWithoutRoomQueuesAndStartsWhenTheFirstEnds() throws {
        let launches = [use(0, at(1), at(1, 1)), use(0, at(1, 2), at(1, 3))]
        let (_, tasks) = try Self.run([Self.exporter("photos")], launches)
        try #require(tasks.count == 2)
        #expect(tasks[1].request.submitted == at(1, 2, 10) && tasks[1].started == at(1, 5, 10), "queued until the first ended")
        #expect(tasks[1].outcome == .completed && tasks[1].ended == at(1, 10, 10))
        let (_, two) = try Self.run([Self.exporter("photos")], launches, system: ["max_running": .integer(2)])
        #expect(two[1].started == at(1, 2, 10), "with room for two it starts at once")
    }

    @Test func withStrategyFailARequestWithoutRoomIsRefused() throws {
        let launches = [use(0, at(1), at(1, 1)), use(0, at(1, 2), at(1, 3))]
        let (_, tasks) = try Self.run([Self.exporter("photos", ["queue": .flag(false)])], launches)
        try #require(tasks.count == 2)
        #expect(tasks[1].outcome == .rejected && tasks[1].rejection == MechanismRegistry.rejection(ContinuedProcessing.self) && tasks[1].started == nil)
        #expect(tasks[0].outcome == .completed)
    }

    @Test func aSwipeCancelsTheAppsQueuedRequests() throws {
        let apps = [Self.exporter("photos"), Self.exporter("video")]
        let launches = [use(0, at(1), at(1, 1)), use(1, at(1, 2), at(1, 3), swiped: true)]
        let (_, tasks) = try Self.run(apps, launches)
        try #require(tasks.count == 2)
        #expect(tasks[1].outcome == .cancelled && tasks[1].started == nil && tasks[1].ended == at(1, 3), "video's queued request cancelled by the swipe")
        #expect(tasks[0].outcome == .completed, "photos' running task goes on")
    }

    @Test func underPressureTheTaskShowingNoProgressEndsFirst() throws {
        let apps = [Self.exporter("photos"), Self.exporter("video", ["stall_pct": .number(100)])]
        let launches = [use(0, at(1), at(1, 1)), use(1, at(1, 1), at(1, 2))]
        let system: [String: ParameterValue] = ["max_running": .integer(2)]
        let (_, tasks) = try Self.run(apps, launches, purges: [Purge(time: at(1, 3))], system: system)
        try #require(tasks.count == 2)
        #expect(tasks[1].outcome == .killed && tasks[1].ended == at(1, 3), "video reports no progress: ended by the pressure")
        #expect(tasks[0].outcome == .completed, "photos, 60% through, goes on")
        // Without a stalled task, the least progress (video's, 36%) is above 10%: nothing ends.
        let (_, calm) = try Self.run([Self.exporter("photos"), Self.exporter("video")], launches, purges: [Purge(time: at(1, 3))], system: system)
        #expect(calm.allSatisfy { $0.outcome == .completed })
        let (_, strict) = try Self.run(
            [Self.exporter("photos"), Self.exporter("video")], launches, purges: [Purge(time: at(1, 3))],
            system: system.merging(["pressure_progress_pct": .number(50)]) { $1 })
        #expect(strict[1].outcome == .killed && strict[0].outcome == .completed, "below 50%, the least progress ends")
    }

    @Test func thePersonCancelsItFromTheLiveActivity() throws {
        let (_, tasks) = try Self.run([Self.exporter("photos", ["cancel_pct": .number(100)])], [use(0, at(1), at(1, 1))])
        try #require(tasks.count == 1)
        let ended = tasks[0].ended - (try #require(tasks[0].started))
        #expect(
            tasks[0].outcome == .expired && tasks[0].expiration == MechanismRegistry.expirationReason(ContinuedProcessing.self),
            "its expiration handler ended it")
        #expect(ended > .zero && ended < .minutes(5), "cancelled \(ended) into its 5 minutes")
    }

    @Test func theGPUAddsItsPowerWhereThePhoneHasOneAndIsRefusedWhereNot() throws {
        let launches = [use(0, at(1), at(1, 1))]
        let (_, plain) = try Self.run([Self.exporter("photos")], launches)
        let (_, gpu) = try Self.run([Self.exporter("photos", ["gpu": .flag(true)])], launches, system: ["gpu_supported": .flag(true), "gpu_w": .number(2)])
        #expect(abs(gpu[0].energyJ - plain[0].energyJ - 600) < 1, "2 W more for 300 s: \(gpu[0].energyJ) against \(plain[0].energyJ)")
        let (_, refused) = try Self.run([Self.exporter("photos", ["gpu": .flag(true)])], launches)
        #expect(refused[0].outcome == .rejected && refused[0].rejection == .notPermitted, "no background GPU on this phone")
    }

    @Test func wildcardIdentifiersPermitTheRequests() throws {
        func outcome(_ permitted: [String]) throws -> TaskOutcome? {
            var a = Self.exporter("photos")
            a.permittedIdentifiers = permitted
            return try Self.run([a], [use(0, at(1), at(1, 1))]).tasks.first?.outcome
        }
        #expect(try outcome(["com.example.export.*"]) == .completed)
        #expect(try outcome(["com.example.export.0"]) == .completed, "listed exactly")
        #expect(try outcome(["com.example.other.*"]) == .rejected)
        #expect(BGTaskScheduler.allows(["com.example.export.*"], "com.example.export.7"))
        #expect(!BGTaskScheduler.allows(["com.example.export.*"], "com.example.export."), "the wildcard stands for something")
        #expect(!BGTaskScheduler.allows(["com.example.export.*"], "com.example.exporter.1"))
    }

    @Test func anAppWithoutTheSectionPaysNothing() throws {
        var s = quiet(hours: 3, apps: [app("news")], launches: [use(0, at(1), at(1, 1))])
        s.system.mechanisms[ContinuedProcessing.name] = ["max_running": .integer(3)]
        let streams = try WorldStreams(setup: s, masterSeed: 1, replication: 0)
        #expect(!streams.names.contains { $0.hasSuffix(".continued") })
        let sim = PhoneSimulation(setup: s, policy: EagerPolicy(), sink: RecordingSink(summary: RunMetrics(apps: s.apps)), streams: streams)
        #expect(sim.mechanisms.allSatisfy { $0 == nil }, "no instance without an app's section")
    }
}
