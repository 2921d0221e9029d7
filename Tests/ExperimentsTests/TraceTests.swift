import Foundation
import PhoneWorld
import Scheduling
import SimEngine
import Testing

@testable import Experiments
@testable import Policies
@testable import ResultFiles
@testable import ScenarioFiles

let replayScenario = repoRoot.appendingPathComponent("models/scenarios/replay.yaml").path

/// Keeps the world events a run reports.
struct WorldLog: MetricsSink {
    var events: [(SimInstant, WorldEvent)] = []
    mutating func worldEvent(_ event: WorldEvent, at time: SimInstant) { events.append((time, event)) }
}

func rows(_ name: String) throws -> [[String]] {
    try String(contentsOfFile: repoRoot.appendingPathComponent("models/traces/\(name)").path, encoding: .utf8)
        .split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst()
        .map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
}

func at(_ text: String) -> SimInstant {
    .after(.microseconds(TraceReader.exactMicroseconds(text) ?? ConfigReader.parseDuration(text)!.microseconds))
}

@Suite("Traces")
struct TraceTests {
    /// The example traces, replayed, give back exactly their rows as world events.
    @Test func replayReproducesEveryTracedEventExactly() throws {
        let s = try Scenario.load(file: replayScenario)
        let streams = try WorldStreams(setup: s.setup, masterSeed: s.seed, replication: 0)
        var sim = PhoneSimulation(setup: s.setup, policy: EagerPolicy(), sink: WorldLog(), streams: streams)
        let log = sim.run().events
        let apps = s.setup.apps.map(\.name)

        let network = try rows("network-example.csv").map { r in
            NetworkChange(
                time: at(r[0]),
                state: r[1] == "none"
                    ? .disconnected
                    : NetworkState(kind: NetworkKind(rawValue: r[1])!, downMbps: Double(r[2])!, upMbps: Double(r[3])!))
        }
        let seenNetwork = log.compactMap { e -> NetworkChange? in
            if case .network(let n) = e.1 { NetworkChange(time: e.0, state: n) } else { nil }
        }
        #expect(seenNetwork == network)
        #expect(network[2].time == .after(.microseconds(30_600_500_000)), "decimal seconds are exact")

        var expectedPeople: [String] = []
        for r in try rows("people-example.csv") {
            switch r[1] {
            case "launch":
                let app = apps.firstIndex(of: r[2])
                expectedPeople.append("\(at(r[0]).microseconds) \(WorldEvent.launch(app: app))")
                let end = at(r[0]) + (at(r[3]) - .start)
                expectedPeople.append("\(end.microseconds) \(WorldEvent.leave(app: app, swipedAway: r[4] == "swipe"))")
            case "call":
                expectedPeople.append("\(at(r[0]).microseconds) \(WorldEvent.callStarted)")
                expectedPeople.append("\((at(r[0]) + (at(r[3]) - .start)).microseconds) \(WorldEvent.callEnded)")
            case "purge":
                expectedPeople.append("\(at(r[0]).microseconds) \(WorldEvent.purge(app: apps.firstIndex(of: r[2])))")
            default: Issue.record("unexpected event \(r[1])")
            }
        }
        let seenPeople = log.filter {
            switch $0.1 {
            case .launch, .leave, .callStarted, .callEnded, .purge: true;
            default: false
            }
        }.map { "\($0.0.microseconds) \($0.1)" }
        #expect(seenPeople.sorted() == expectedPeople.sorted())
        #expect(seenPeople.contains("\(at("10h").microseconds) \(WorldEvent.purge(app: 1))"), "mail was suspended, so it is purged")

        let charging = try rows("charging-example.csv").flatMap { r in
            ["\(at(r[0]).microseconds) plugIn", "\(at(r[1]).microseconds) unplug"]
        }
        let seenCharging = log.compactMap { e -> String? in
            switch e.1 {
            case .plugIn: "\(e.0.microseconds) plugIn"
            case .unplug: "\(e.0.microseconds) unplug"
            default: nil
            }
        }
        #expect(seenCharging == charging)
    }

    @Test(arguments: [
        (
            "network", "time,network,down_mbps,up_mbps\n0,wifi,50,10\n3600,lan,1,1\n",
            "t.csv:3: column 'network': expected one of wifi, cellular, none, got 'lan'"
        ),
        (
            "network", "time,network,down_mbps,up_mbps\n60,wifi,50,10\n",
            "t.csv:2: column 'time': the first row must be at time 0"
        ),
        (
            "network", "time,network,down_mbps,up_mbps\n0,wifi,50,10\n# comment\n\n0,cellular,5,1\n",
            "t.csv:5: column 'time': times must increase (previous row: t=0s)"
        ),
        (
            "network", "time,network,down_mbps,up_mbps\n0,wifi,fast,10\n",
            "t.csv:2: column 'down_mbps': expected a throughput in Mbit/s from 0.001 to 1000000, got 'fast'"
        ),
        (
            "network", "time,network,down\n0,wifi,1\n",
            "t.csv:1: expected the header row 'time,network,down_mbps,up_mbps' (columns in any order), got 'time,network,down'"
        ),
        (
            "network", "time,network,down_mbps,up_mbps\n0,wifi,50\n",
            "t.csv:2: expected 4 fields (time,network,down_mbps,up_mbps), got 3"
        ),
        (
            "network", "time,network,down_mbps,up_mbps\n1.0000001,wifi,50,10\n",
            "t.csv:2: column 'time': expected a time such as 3600, 3600.5 or 1d7h30m, got '1.0000001'"
        ),
        (
            "charging", "plug_in,unplug\n1h,30m\n",
            "t.csv:2: column 'unplug': expected a time after plug_in"
        ),
        (
            "charging", "plug_in,unplug\n1h,3h\n2h,4h\n",
            "t.csv:3: column 'plug_in': sessions must be in time order and not overlap (the previous one ends at t=3h)"
        ),
        (
            "people", "time,event,app,duration,exit\n1h,purge,maps,,\n",
            "t.csv:2: column 'app': expected one of the scenario's apps (news), got 'maps'"
        ),
        (
            "people", "time,event,app,duration,exit\n1h,launch,news,1m,home\n1h30s,launch,news,1m,home\n",
            "t.csv:3: column 'time': this launch starts before the previous one ends (t=1h1m)"
        ),
        (
            "people", "time,event,app,duration,exit\n1h,launch,news,1m,away\n",
            "t.csv:2: column 'exit': expected home or swipe, got 'away'"
        ),
        (
            "people", "time,event,app,duration,exit\n1h,nap,,1m,\n",
            "t.csv:2: column 'event': expected launch, call or purge, got 'nap'"
        ),
        (
            "people", "time,event,app,duration,exit\n2h,call,,1m,\n1h,call,,1m,\n",
            "t.csv:3: column 'time': rows must be in time order (previous row: t=2h)"
        ),
        (
            "people", "time,event,app,duration,exit\n1h,launch,news,0,home\n",
            "t.csv:2: column 'duration': expected a duration > 0, got '0'"
        ),
    ])
    func aMalformedRowIsAnErrorNamingTheFileAndLine(kind: String, csv: String, message: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-trace-\(getpid())-\(kind)-\(abs(csv.hashValue))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try csv.write(to: dir.appendingPathComponent("t.csv"), atomically: true, encoding: .utf8)
        let profile = ["network": "home-office", "charging": "nightly", "people": "median"][kind]!
        let yaml = minimalWith("\(kind): \(profile)", "\(kind): {profile: \(profile), trace: t.csv}")
        let file = dir.appendingPathComponent("s.yaml").path
        #expect(parseError(yaml, file: file, overrides: [])?.description == dir.path + "/" + message)
    }

    @Test func aMissingTraceIsNamed() {
        let yaml = minimalWith("people: median", "people: {profile: median, trace: nowhere.csv}")
        #expect(parseError(yaml, file: "/tmp/s.yaml", overrides: [])?.description == "/tmp/nowhere.csv: no such trace file")
    }

    /// A launch of an app the scenario does not model is a launch of another app: a converted
    /// log names many.
    @Test func aLaunchOfAnUnknownAppIsAnotherApp() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-trace-other-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "time,event,app,duration,exit\n1h,launch,maps,1m,home\n2h,launch,news,1m,swipe\n".write(
            to: dir.appendingPathComponent("t.csv"), atomically: true, encoding: .utf8)
        let timeline = try TraceReader.people(file: "t.csv", relativeTo: dir.appendingPathComponent("s.yaml").path, apps: ["news"])
        #expect(timeline.launches.map(\.app) == [nil, 0] && timeline.sessionStarts == [0, 1])
    }

    /// Launches and calls the people model draws, written as a trace and replayed, are the
    /// same launches and calls, to the microsecond.
    @Test(arguments: [1, 2, 3])
    func aDrawnPersonWrittenAsATraceReplaysTheSame(replication: Int) throws {
        let s = try Scenario.parse(
            yaml: minimalWith("duration: 2d", "duration: 14d").replacingOccurrences(of: "apps:\n  - news", with: "apps: [news, mail, weather]"),
            file: "s.yaml")
        let streams = try WorldStreams(setup: s.setup, masterSeed: 42, replication: UInt64(replication))
        let drawn = WorldTimeline(setup: s.setup, streams: streams).people
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-roundtrip-\(getpid())-\(replication)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try drawn.peopleTrace(appNames: s.setup.apps.map(\.name)).write(to: dir.appendingPathComponent("p.csv"), atomically: true, encoding: .utf8)
        let replayed = try TraceReader.people(file: "p.csv", relativeTo: dir.appendingPathComponent("s.yaml").path, apps: s.setup.apps.map(\.name))
        #expect(drawn.launches.count > 300)
        #expect(replayed.launches == drawn.launches)
        #expect(replayed.calls == drawn.calls)
        #expect(replayed.purges.map(\.time) == drawn.purges.map(\.time))
    }
}
