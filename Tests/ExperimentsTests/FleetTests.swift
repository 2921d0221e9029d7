import Foundation
import Scheduling
import SimEngine
import Testing

@testable import Experiments
@testable import Policies
@testable import ScenarioFiles

/// A fleet: one person per replication, drawn from distributions over key paths, the same
/// person under every policy and at every point of a sweep.
@Suite("Fleets")
struct FleetTests {
    static let fleet = """
        fleet:
          - {path: people.sessions_per_day, lognormal: {median: 50, sigma: 0.75}, min: 10, max: 200}
          - {path: people.session_body_mean, uniform: {from: 20s, to: 2m}}
          - {path: charging, values: [nightly, top-up], weights: [3, 1]}
        """

    static func scenario(_ fleet: String = fleet, replications: Int = 40) throws -> Scenario {
        try Scenario.parse(yaml: minimal + "\nreplications: \(replications)\n" + fleet, file: "s.yaml")
    }

    /// Each person's values are drawn once per replication, within the bounds, and the person's
    /// scenario carries them; the distributions are honoured over many people.
    @Test func eachReplicationIsOnePersonWithTheDrawnValues() throws {
        let s = try Self.scenario()
        #expect(s.fleet.map(\.path.description) == ["people.sessions_per_day", "people.session_body_mean", "charging"])
        let people = (0..<400).map { s.fleetValues(replication: $0) }
        #expect(people == (0..<400).map { s.fleetValues(replication: $0) }, "a pure function of seed and replication")
        let sessions = people.map { Double($0[0])! }
        #expect(sessions.allSatisfy { (10...200).contains($0) })
        let median = sessions.sorted()[200]
        #expect((42...58).contains(median), "median \(median)")
        let lengths = people.map { Scenario.duration($0[1])!.seconds }
        #expect(lengths.allSatisfy { (20...120).contains($0) })
        let topUp = Double(people.filter { $0[2] == "top-up" }.count) / 400
        #expect((0.18...0.32).contains(topUp), "top-up share \(topUp)")
        for r in [0, 7] {
            let person = try s.person(replication: r)
            #expect(person.setup.people.sessionsPerDay == Double(people[r][0]))
            #expect(person.setup.people.sessionBodyMean == Scenario.duration(people[r][1]))
            #expect(person.setup.apps == s.setup.apps && person.policies == s.policies)
        }
        #expect(Set(people.map { $0[0] }).count > 300, "people differ")
    }

    /// runs.csv names each person's values after the replication, identical for every policy.
    @Test func runsCarryThePersonUnderEveryPolicy() async throws {
        var s = try Self.scenario(replications: 3)
        s.policies = [PolicySpec(EagerPolicy.self), PolicySpec(ChargeOnlyPolicy.self)]
        s.setup.duration = .days(1)
        let runs = try await Experiment.runAll(s, jobs: 2)
        let csv = Experiment.runsCSV(s, runs).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(Array(csv[0][0..<7]) == ["scenario", "policy", "replication", "seed", "people.sessions_per_day", "people.session_body_mean", "charging"])
        for r in 0..<3 {
            let rows = csv.dropFirst().filter { $0[2] == "\(r)" }
            try #require(rows.count == 2)
            #expect(rows[0][4..<7] == rows[1][4..<7])
            #expect(Array(rows[0][4..<7]).map(String.init) == s.fleetValues(replication: r))
        }
        // The person's world is the drawn one: more sessions, more launches, replication by
        // replication.
        let sessions = runs.filter { $0.policy.name == "eager" }.map { Double(s.fleetValues(replication: $0.replication)[0])! }
        #expect(sessions.count == 3)
    }

    /// A value quoted in the fleet so that YAML reads text (`"off"`, not a boolean) is drawn
    /// with its quotes, for the person's overrides, and shown without them in runs.csv, as
    /// the reader takes it; the person gets the setting.
    @Test func aQuotedValueIsShownAsTheTextItIs() async throws {
        var s = try Self.scenario(
            "fleet:\n  - {path: settings.background_app_refresh, values: [\"off\", 'wifi'], weights: [1, 1]}", replications: 8)
        #expect(Set((0..<8).map { s.fleetValues(replication: $0)[0] }) == ["\"off\"", "\"wifi\""])
        let shown = (0..<8).map { s.fleetDisplayValues(replication: $0)[0] }
        #expect(Set(shown) == ["off", "wifi"])
        let off = try #require(shown.firstIndex(of: "off"))
        #expect(try s.person(replication: off).setup.settings.backgroundAppRefresh == .off)
        s.policies = [PolicySpec(EagerPolicy.self)]
        s.setup.duration = .hours(1)
        let runs = try await Experiment.runAll(s, jobs: 2)
        let rows = Experiment.runsCSV(s, runs).split(separator: "\n").dropFirst().map { $0.split(separator: ",")[4] }
        #expect(rows.map(String.init) == shown)
        #expect(Sweep.displayText("\"a \\\"b\\\"\"") == "a \"b\"" && Sweep.displayText("plain") == "plain" && Sweep.displayText("[1, 2]") == "[1, 2]")
    }

    /// Bad fleets are refused before anything runs, naming the entry and what was expected.
    @Test(arguments: [
        ("fleet:\n  - {path: people.sessions_per_day, lognormal: {median: 50, sigma: 0.7}}", "fleet[0]: a log-normal draw needs 'min' and 'max'"),
        ("fleet:\n  - {path: policies, values: [[eager]]}", "fleet[0].path: 'policies' cannot vary from person to person"),
        ("fleet:\n  - {path: charging}", "fleet[0]: expected one distribution"),
        (
            "fleet:\n  - {path: people.sessions_per_day, uniform: {from: 10, to: 20000}}",
            "fleet: people.sessions_per_day=20000: people.sessions_per_day: expected a mean number of sessions per day from 0 to 10000, got 20000"
        ),
        ("fleet:\n  - {path: charging, values: [nightly, sometimes]}", "fleet: charging=sometimes"),
        ("fleet:\n  - {path: charging, values: [nightly], weights: [1, 2]}", "fleet[0].weights: expected one weight per value (1), got 2"),
    ])
    func aBadFleetIsRefusedBeforeAnyRun(fleet: String, message: String) {
        let error = parseError(minimal + "\n" + fleet)
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "accepted")")
    }

    /// The person of a replication is the same at every point of a sweep: the fleet stream
    /// does not depend on the point.
    @Test func aPersonIsTheSameAtEveryPointOfASweep() throws {
        let base = try SweepTests.write(minimal + "\nreplications: 3\n" + Self.fleet)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let sweep = try SweepTests.write(
            "scenario: \(base)\ndesign: grid\naxes:\n  - {path: settings.background_app_refresh, values: [wifi, wifi-and-cellular]}\n")
        defer { try? FileManager.default.removeItem(atPath: sweep) }
        let plan = try StudyPlan(sweep: Sweep.load(file: sweep))
        let a = plan.points[0].scenario, b = plan.points[1].scenario
        for r in 0..<3 {
            #expect(a.fleetValues(replication: r) == b.fleetValues(replication: r))
            #expect(try a.person(replication: r).setup.people == b.person(replication: r).setup.people)
        }
    }
}
