import Foundation
import ResultFiles
import Scheduling
import Testing

@testable import Experiments
@testable import Policies
@testable import Reports
@testable import ScenarioFiles

/// The fingerprint world (Tests/Fingerprint/world.yaml): five hard days in which every rule of
/// every built-in policy binds. What each policy holds requests for there is exactly what it
/// declares (`RegisteredPolicy.holdReasons`), each of ios's start rules changes the run when
/// switched off, and each run's digest is the one recorded in Tests/Fingerprint/fingerprints.txt:
/// a change of behaviour nobody meant fails here, whichever rule, stream or column it touched.
@Suite("Behaviour fingerprints")
struct FingerprintTests {
    static let folder = repoRoot.appendingPathComponent("Tests/Fingerprint")

    /// ios's rules that start requests, each with the run in the world that has it and the
    /// one that does not.
    static let knockOuts: [DuetPolicy.Rule: (with: String, without: String)] = [
        .overdue: ("ios-overdue", "ios"), .processingDue: ("ios", "ios-no-due"),
    ]

    /// The world's runs: per policy label, the digest of its rows of runs, tasks and events
    /// (in file order, without the label, so that two labels of one behaviour hash alike),
    /// the reasons its requests were held for, and the policy it runs.
    struct Runs {
        var digests: [String: String] = [:]
        var reasons: [String: Set<String>] = [:]
        var policyOf: [String: String] = [:]
    }

    static let runs = Task { try await Self.simulate() }

    static func simulate() async throws -> Runs {
        let file = folder.appendingPathComponent("world.yaml").path
        let scenario = try Scenario.parse(yaml: try String(contentsOfFile: file, encoding: .utf8), file: file)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-fingerprint-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try await Experiment.perform(
            StudyPlan(scenario: scenario), options: StudyOptions(jobs: 2, record: RecordOptions(events: true, tasks: true)), to: dir)
        var out = Runs()
        for spec in scenario.policies { out.policyOf[spec.label] = spec.rule.name }
        var hashes: [String: SHA256] = [:]
        for name in ["runs.csv", "tasks.csv", "events.csv"] {
            let table = try CSVTable.read(dir.appendingPathComponent(name))
            let policy = try #require(table.header.firstIndex(of: "policy"))
            let reasons = table.header.firstIndex(of: "policy_reasons")
            for row in table.rows {
                var fields = row
                fields.remove(at: policy)
                hashes[row[policy], default: SHA256()].update(Data((fields.joined(separator: ",") + "\n").utf8))
                if let reasons, !row[reasons].isEmpty {
                    out.reasons[row[policy], default: []].formUnion(row[reasons].split(separator: ";").map(String.init))
                }
            }
        }
        out.digests = hashes.mapValues {
            var h = $0
            return h.hexDigest()
        }
        return out
    }

    /// Every built-in policy runs in the world, and what it holds requests for there is what it
    /// declares: a declared reason that never binds is a gap in the world, one undeclared a
    /// reason nobody listed.
    @Test func everyDeclaredReasonBindsAndNoOther() async throws {
        let runs = try await Self.runs.value
        for type in PolicyRegistry.builtIn {
            let labels = runs.policyOf.filter { $0.value == type.policyName }.keys
            #expect(!labels.isEmpty, "\(type.policyName) is not in Tests/Fingerprint/world.yaml")
            let seen = labels.reduce(into: Set<String>()) { $0.formUnion(runs.reasons[$1] ?? []) }
            let declared = Set(type.holdReasons)
            #expect(
                declared.subtracting(seen).isEmpty,
                "\(type.policyName): never held for \(declared.subtracting(seen).sorted()) in the fingerprint world: make it bind there")
            #expect(
                seen.subtracting(declared).isEmpty,
                "\(type.policyName): held for \(seen.subtracting(declared).sorted()), which its holdReasons does not declare")
        }
    }

    /// Each of ios's start rules binds: the run without it differs.
    @Test func everyStartRuleChangesTheRun() async throws {
        let runs = try await Self.runs.value
        #expect(Set(Self.knockOuts.keys) == Set(DuetPolicy.Rule.allCases.filter(\.starts)), "a start rule without a knock-out variant")
        for (rule, pair) in Self.knockOuts {
            #expect(runs.policyOf[pair.with] == DuetPolicy.policyName && runs.policyOf[pair.without] == DuetPolicy.policyName)
            #expect(runs.digests[pair.with] != runs.digests[pair.without], "\(rule.rawValue) never binds: \(pair.with) runs as \(pair.without) does")
        }
    }

    /// Each run is the one recorded. A change that means to change behaviour re-records them
    /// (`make fingerprints`) and says in its commit which policies moved and why.
    @Test func everyRunIsAsRecorded() async throws {
        let runs = try await Self.runs.value
        let url = Self.folder.appendingPathComponent("fingerprints.txt")
        let text = runs.digests.keys.sorted().map { "\($0) \(runs.digests[$0]!)" }.joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["BGSIM_WRITE_FINGERPRINTS"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let recorded = try String(contentsOf: url, encoding: .utf8)
        var was: [String: String] = [:]
        for line in recorded.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 { was[String(parts[0])] = String(parts[1]) }
        }
        let moved = runs.digests.keys.filter { was[$0] != runs.digests[$0] }.sorted()
        #expect(
            moved.isEmpty && was.count == runs.digests.count,
            "the fingerprint world runs differently under \(moved) (recorded: \(was.keys.sorted())): if that was meant, run `make fingerprints` and say why in the commit"
        )
    }
}
