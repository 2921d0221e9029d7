import Foundation
import Testing

@testable import Experiments
@testable import ResultFiles
@testable import ScenarioFiles

/// Where a scenario finds its profiles, and how a variant made with `--set` is named.
@Suite("Profile search and variant names")
struct ProfileSearchTests {
    func study() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-study-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    func write(_ text: String, _ path: String, in dir: URL) throws {
        let url = dir.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    /// A copy of the default scenario outside models/ finds the bundled profiles.
    @Test func aCopiedScenarioFindsTheBundledProfiles() throws {
        let dir = try study()
        defer { try? FileManager.default.removeItem(at: dir) }
        let copy = dir.appendingPathComponent("mine.yaml")
        try FileManager.default.copyItem(atPath: defaultScenario, toPath: copy.path)
        let mine = try Scenario.load(file: copy.path)
        let bundled = try Scenario.load(file: defaultScenario)
        #expect(mine.setup == bundled.setup && mine.name == "default")
    }

    /// The scenario's own folder comes first, then its `models:` folder, then the bundled one.
    @Test func theOwnFolderComesBeforeModelsWhichComesBeforeTheBundledOnes() throws {
        let dir = try study()
        defer { try? FileManager.default.removeItem(at: dir) }
        let scenario = minimal.replacingOccurrences(of: "models: \(repoRoot.path)/models", with: "models: lib")
        try write(scenario, "s.yaml", in: dir)
        let bundled = try Scenario.load(file: dir.appendingPathComponent("s.yaml").path)
        #expect(bundled.setup.people.sessionsPerDay == 50, "median from the bundled models/")

        try write("sessions_per_day: 7\n", "lib/people/median.yaml", in: dir)
        let fromModels = try Scenario.load(file: dir.appendingPathComponent("s.yaml").path)
        #expect(fromModels.setup.people.sessionsPerDay == 7, "the models: folder's median, merged over nothing else")

        try write("sessions_per_day: 9\n", "people/median.yaml", in: dir)
        let own = try Scenario.load(file: dir.appendingPathComponent("s.yaml").path)
        #expect(own.setup.people.sessionsPerDay == 9, "the scenario's own folder first")
    }

    @Test func aMissingProfileSaysWhereItLookedAndNamesTheModelsKey() throws {
        let dir = try study()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(
            minimalWith("people: median", "people: nobody").replacingOccurrences(of: "models: \(repoRoot.path)/models", with: "models: lib"),
            "s.yaml", in: dir)
        let file = dir.appendingPathComponent("s.yaml").path
        #expect {
            try Scenario.load(file: file)
        } throws: { error in
            "\(error)" == "\(file):5:9: people: no people profile named 'nobody' (looked for \(dir.path)/people/nobody.yaml, "
                + "\(dir.path)/lib/people/nobody.yaml, \(repoRoot.path)/models/people/nobody.yaml); known: heavy, light, median; "
                + "a scenario's 'models' key names the folder that holds people/"
        }
    }

    @Test func aVariantIsNamedForWhatItChanges() {
        func o(_ text: String) -> Override { Override(parsing: text)! }
        #expect(Scenario.variantName("default", overrides: []) == nil)
        #expect(Scenario.variantName("default", overrides: [o("seed=7"), o("replications=2")]) == nil, "seed and replications keep the name")
        #expect(Scenario.variantName("default", overrides: [o("people=heavy")]) == "default_people-heavy")
        #expect(Scenario.variantName("default", overrides: [o("people=heavy"), o("name=mine")]) == nil, "an explicit name wins")
        #expect(
            Scenario.variantName("default", overrides: [o("policies=[eager, charge-only]"), o("apps[0].cpu_w=0.5")])
                == "default_policies-eager-charge-only_apps-0-.cpu_w-0.5")
        let weights = o("people.hourly_weights=[\(Array(repeating: "1.5", count: 24).joined(separator: ", "))]")
        let long = Scenario.variantName("default", overrides: [weights])!
        let other = Scenario.variantName("default", overrides: [o("people.hourly_weights=[\(Array(repeating: "1.5", count: 23).joined(separator: ", ")), 2]")])!
        #expect(long.count == 97 && long != other, "long names are cut and end in a hash of the overrides: \(long)")
    }

    /// The variant's name passes the name check and reaches the outputs through `name`.
    @Test func aVariantLoadsWithItsName() throws {
        let (s, all) = try Scenario.loadVariant(file: defaultScenario, overrides: [Override(parsing: "people=heavy")!, Override(parsing: "seed=3")!])
        #expect(s.name == "default_people-heavy" && s.seed == 3)
        #expect(all.last?.description == "--set name=default_people-heavy")
    }
}
