import Foundation
import PhoneWorld
import SimEngine
import Testing

@testable import Experiments
@testable import Reports
@testable import ScenarioFiles
@testable import Scheduling

/// A mechanism is a file in Sources/Mechanisms and a line in
/// `MechanismRegistry.builtIn`: these fail when a step is forgotten or a declaration is wrong,
/// and show that scenario files, `--set`, sweeps and `validate --print` read what it declares.
@Suite("Declared mechanisms")
struct MechanismTests {
    /// Every `Mechanism` declared in the mechanisms' folder is registered, under a name scenario
    /// files can write, with kinds, streams and keys named once.
    @Test func everyMechanismInTheFolderIsRegisteredAndNamedOnce() throws {
        let folder = repoRoot.appendingPathComponent("Sources/Mechanisms")
        var declared: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            declared += text.matches(of: /(?m)^(?:package |public )?(?:final )?class (\w+)\s*:[^{\n]*\bMechanism\b/).map { String($0.1) }
        }
        let listed = MechanismRegistry.builtIn.map { String(describing: $0) }
        #expect(Set(declared) == Set(listed), "declared \(declared.sorted()), listed in MechanismRegistry.builtIn \(listed.sorted())")
        let token = /[a-z][a-z0-9_]*/
        let kinds = TaskKind.allCases.map(\.rawValue)
        #expect(Set(kinds).count == kinds.count, "a kind named twice: \(kinds)")
        for type in MechanismRegistry.builtIn {
            let (name, summary, kindNames) = (type.name, type.summary, type.kinds.map(\.name))
            let (keys, systemKeys, streams) = (type.parameters, type.systemParameters, type.streams)
            #expect(name.wholeMatch(of: token) != nil, "\(name) is not a key scenario files can write")
            for kind in kindNames { #expect(kind.wholeMatch(of: token) != nil, "kind \(kind)") }
            #expect(Set(keys.map(\.name)).count == keys.count && Set(systemKeys.map(\.name)).count == systemKeys.count, "\(name) declares a key twice")
            #expect(Set(streams).count == streams.count, "\(name) declares a stream twice")
            #expect(!summary.isEmpty && keys.allSatisfy { !$0.help.isEmpty })
        }
        let names = MechanismRegistry.builtIn.map { $0.name } + [RegisteredTasks.name]
        #expect(Set(names).count == names.count, "a section named twice: \(names)")
    }

    /// The run calls a mechanism only for the hooks it declares: one that declares a list
    /// declares exactly those its file implements (one missing would never be called; one too
    /// many is a call for nothing). One that declares none is called for all (the
    /// add-mechanism script's toy).
    @Test func everyMechanismDeclaresTheHooksItImplements() throws {
        let folder = repoRoot.appendingPathComponent("Sources/Mechanisms")
        for type in MechanismRegistry.builtIn {
            let file = try FileManager.default.contentsOfDirectory(atPath: folder.path).first { f in
                let text = (try? String(contentsOf: folder.appendingPathComponent(f), encoding: .utf8)) ?? ""
                return text.contains("class \(String(describing: type)):")
            }
            let text = try String(contentsOf: folder.appendingPathComponent(try #require(file)), encoding: .utf8)
            var implemented: MechanismHooks = []
            for (name, hook) in MechanismHooks.named where text.contains("package func \(name)<") { implemented.insert(hook) }
            let declared = MechanismHooks.named.filter { type.hooks.contains($0.1) }.map(\.0)
            #expect(
                type.hooks == .all || type.hooks == implemented,
                "\(type) implements \(MechanismHooks.named.filter { implemented.contains($0.1) }.map(\.0)), declares \(declared)")
        }
        #expect(MechanismHooks.named.count == MechanismHooks.all.rawValue.nonzeroBitCount, "every hook is named once")
    }

    /// No two random sources share a stream, whatever mechanisms the apps use: the default
    /// scenario's apps, and one app that uses every mechanism at once, each declared one
    /// included. (`WorldStreams` also asserts it in every debug run.)
    @Test func everyStreamNameIsUnique() throws {
        var scenario = try Scenario.load(file: defaultScenario)
        var all = AppParameters(name: "everything")
        var extensionTask = AppTask(identifier: "everything.ext", kind: .refresh, submitOn: [.extension])
        extensionTask.interval = .hours(1)
        all.tasks = [extensionTask]
        for type in MechanismRegistry.builtIn where !type.isList { all.mechanisms[type.name] = [:] }
        for type in MechanismRegistry.builtIn where type.isList { all.mechanismLists[type.name] = [[:], [:]] }
        all.mechanisms[Regions.name] = ["places": .names(["home"])]
        scenario.setup.apps.append(all)
        scenario.setup.people.history = .days(1)
        let streams = try WorldStreams(setup: scenario.setup, masterSeed: 1, replication: 0)
        let names = streams.names
        #expect(Set(names).count == names.count, "\(names.filter { n in names.filter { $0 == n }.count > 1 })")
        let own = names.filter { $0 == "app.everything" || $0.hasPrefix("app.everything.") }
        let declared = MechanismRegistry.builtIn.reduce(0) { $0 + $1.streams.count }
        #expect(own.count == 1 + declared, "one stream per source of the app: \(own)")
        #expect(names.contains("grants") && names.contains("interruptions") && names.contains("history"))
    }

    /// A section in an app profile and in `system`, read as declared: given keys, defaults for
    /// the rest; `--set` reaches them; unknown keys and bad values say what is expected.
    @Test func scenarioFilesAndSetReadTheDeclaredKeys() throws {
        let yaml =
            minimalWith("  - news", "  - {profile: news, continued_processing: {per_open_pct: 20, identifier: com.news.export}}")
            + "\nsystem: {continued_processing: {max_running: 2}}\n"
        let s = try Scenario.parse(yaml: yaml, file: "s.yaml", overrides: [Override(parsing: "apps[0].continued_processing.cpu=10m")!])
        let section = try #require(s.setup.apps[0].mechanisms[ContinuedProcessing.name])
        #expect(section["per_open_pct"] == .number(20) && section["identifier"] == .text("com.news.export"))
        #expect(section["cpu"] == .duration(.minutes(10)), "--set reached the section")
        #expect(section["queue"] == .flag(true), "an absent key takes its declared default")
        #expect(s.setup.system.mechanisms[ContinuedProcessing.name]?["max_running"] == .integer(2))
        #expect(try Scenario.parse(yaml: minimal, file: "s.yaml").setup.apps[0].mechanisms.isEmpty, "no section, no mechanism")
        func message(_ text: String) -> String {
            do {
                _ = try Scenario.parse(yaml: text, file: "s.yaml")
                return ""
            } catch { return "\(error)" }
        }
        let unknown = message(minimalWith("  - news", "  - {profile: news, continued_processing: {per_opn_pct: 20}}"))
        #expect(
            unknown.contains("apps[0].continued_processing.per_opn_pct: unknown key 'per_opn_pct'; did you mean 'per_open_pct'?")
                && unknown.contains("per_open_pct"), "\(unknown)")
        let bad = message(minimalWith("  - news", "  - {profile: news, continued_processing: {per_open_pct: 120}}"))
        #expect(bad.contains("apps[0].continued_processing.per_open_pct") && bad.contains("from 0 to 100"), "\(bad)")
        let badSystem = message(minimal + "\nsystem: {continued_processing: {max_running: 0}}\n")
        #expect(badSystem.contains("system.continued_processing.max_running"), "\(badSystem)")
        let wildcard = try Scenario.parse(
            yaml: minimalWith("  - news", "  - {profile: news, permitted_identifiers: [com.example.news.refresh, com.news.export.*]}"), file: "s.yaml")
        #expect(wildcard.setup.apps[0].permittedIdentifiers == ["com.example.news.refresh", "com.news.export.*"])
    }

    /// A section that is a list (`background_work`) has the declared keys in each entry: read,
    /// set, refused and listed entry by entry.
    @Test func aListSectionReadsEachEntryAsDeclared() throws {
        let app = "{profile: news, background_work: [{cpu: 5s}, {begin: in_use, probability_pct: 40}]}"
        let s = try Scenario.parse(
            yaml: minimalWith("  - news", "  - \(app)"), file: "s.yaml", overrides: [Override(parsing: "apps[0].background_work[1].up_kb=7")!])
        let entries = try #require(s.setup.apps[0].mechanismLists[FiniteLengthWork.name])
        try #require(entries.count == 2)
        #expect(s.setup.apps[0].mechanisms[FiniteLengthWork.name] == nil)
        #expect(entries[0]["cpu"] == .distribution(.fixed(5)) && entries[0]["begin"] == .text("leave"), "a default fills an absent key")
        #expect(entries[1]["begin"] == .text("in_use") && entries[1]["probability_pct"] == .number(40))
        #expect(entries[1]["up_kb"] == .distribution(.fixed(7_000)), "--set reached the second entry")
        do {
            _ = try Scenario.parse(yaml: minimalWith("  - news", "  - {profile: news, background_work: [{}, {begin: later}]}"), file: "s.yaml")
            Issue.record("an unknown begin was accepted")
        } catch {
            #expect("\(error)".contains("apps[0].background_work[1].begin") && "\(error)".contains("one of leave, in_use"), "\(error)")
        }
        let (_, keys) = try KeyListing.listing { () throws(ScenarioError) in try Scenario.parse(yaml: minimalWith("  - news", "  - \(app)"), file: "s.yaml") }
        let listed = Dictionary(keys.map { ($0.path, $0) }) { a, _ in a }
        #expect(listed["apps[0].background_work[1].begin"]?.value == "in_use" && listed["apps[0].background_work[0].down_kb"]?.given == false)
    }

    /// BGTaskScheduler's `tasks` entries are read from their declaration (`RegisteredTasks`):
    /// its defaults are `AppTask`'s, `submit_on` left out is the kind's usual triggers, and the
    /// rules across keys still hold.
    @Test func registeredTasksAreReadFromTheirDeclaration() throws {
        let app = "{name: a, tasks: [{id: a.p, kind: processing}, {id: a.r, kind: refresh, submit_on: [extension], cpu_share_pct: 20}]}"
        let s = try Scenario.parse(yaml: minimalWith("  - news", "  - \(app)"), file: "s.yaml", overrides: [Override(parsing: "apps[0].tasks[0].interval=2h")!])
        let (p, r) = (s.setup.apps[0].tasks[0], s.setup.apps[0].tasks[1])
        var expected = AppTask(identifier: "a.p", kind: .processing)
        expected.interval = .hours(2)
        #expect(p == expected, "every default is AppTask's; --set reached the entry")
        #expect(r.submitOn == [.extension] && r.cpuShare == 0.2)
        for p in RegisteredTasks.parameters where !p.isRequired { #expect(!p.help.isEmpty, "\(p.name)") }
        // Each key's default, set on an entry, is the entry's default: the key paths agree.
        for s in RegisteredTasks.settings {
            var t = RegisteredTasks.defaults
            s.apply(s.value(in: t), to: &t)
            #expect(t == RegisteredTasks.defaults, "\(s.name)")
        }
        do {
            _ = try Scenario.parse(yaml: minimalWith("  - news", "  - {name: a, tasks: [{id: a.r, kind: refresh, requires_network: true}]}"), file: "s.yaml")
            Issue.record("a refresh with a requirement was accepted")
        } catch {
            #expect("\(error)".contains("apps[0].tasks[0].requires_network: only processing tasks have requirements"), "\(error)")
        }
    }

    /// `validate --print` lists every declared key of a section with its default.
    @Test func theKeyListingShowsEveryDeclaredKey() throws {
        let yaml = minimalWith("  - news", "  - {profile: news, continued_processing: {per_open_pct: 20}}")
        let (_, keys) = try KeyListing.listing { () throws(ScenarioError) in try Scenario.parse(yaml: yaml, file: "s.yaml") }
        let listed = Dictionary(keys.map { ($0.path, $0) }) { a, _ in a }
        for p in ContinuedProcessing.parameters {
            #expect(listed["apps[0].continued_processing.\(p.name)"] != nil, "\(p.name) is not listed")
        }
        #expect(listed["apps[0].continued_processing.per_open_pct"]?.given == true)
        #expect(listed["apps[0].continued_processing.tap_after"]?.value == "20s")
        #expect(listed["apps[0].continued_processing.queue"]?.value == "true")
    }

    /// What a file gave as a list of names or a distribution written as a mapping is listed in
    /// the file's words, not skipped.
    @Test func theKeyListingShowsGivenListsAndDistributions() throws {
        let app = "{profile: news, regions: {places: [home, work], cpu: {exponential: 2s}, up_kb: {uniform: [1, 3]}}}"
        let yaml = minimalWith("  - news", "  - \(app)")
        let (_, keys) = try KeyListing.listing { () throws(ScenarioError) in try Scenario.parse(yaml: yaml, file: "s.yaml") }
        let listed = Dictionary(keys.map { ($0.path, $0) }) { a, _ in a }
        #expect(listed["apps[0].regions.places"]?.value == "[home, work]" && listed["apps[0].regions.places"]?.given == true)
        #expect(listed["apps[0].regions.cpu.exponential"]?.value == "2s")
        #expect(listed["apps[0].regions.up_kb.uniform"]?.value == "[1, 3]")
        #expect(listed["apps[0].tasks[0].submit_on"]?.value.hasPrefix("[") == true, "news's submit_on")
        #expect(KeyListing.flow(ConfigNode(value: .sequence([ConfigNode(value: .scalar("a,b", plain: false))]))) == "[\"a,b\"]")
    }

    /// A sweep's axis may be a mechanism's key, and the study runs its tasks into every output.
    @Test func aSweepVariesAKeyAndItsTasksReachTheOutputs() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-mechanism-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let scenario = minimalWith("  - news", "  - {profile: news, continued_processing: {per_open_pct: 50}}")
        try scenario.write(to: dir.appendingPathComponent("s.yaml"), atomically: true, encoding: .utf8)
        let sweep = "scenario: s.yaml\nreplications: 2\ndesign: grid\naxes:\n  - {path: 'apps[0].continued_processing.per_open_pct', values: [0, 100]}\n"
        try sweep.write(to: dir.appendingPathComponent("w.yaml"), atomically: true, encoding: .utf8)
        let plan = try StudyPlan(sweep: Experiments.Sweep.load(file: dir.appendingPathComponent("w.yaml").path))
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: RecordOptions(tasks: true)), to: dir.appendingPathComponent("out"))
        let runs = try String(contentsOf: dir.appendingPathComponent("out/runs.csv"), encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        let column = try #require(runs[0].firstIndex(of: "runs_continued_processing"))
        let started = runs.dropFirst().map { (point: $0[1], runs: Int($0[column])!) }
        #expect(started.filter { $0.point == "0" }.allSatisfy { $0.runs == 0 }, "none at 0%")
        #expect(started.filter { $0.point == "1" }.allSatisfy { $0.runs > 0 }, "some at 100%: \(started)")
        let tasks = try String(contentsOf: dir.appendingPathComponent("out/tasks.csv"), encoding: .utf8)
        #expect(tasks.contains(",continued_processing,"))
        #expect(Palette.free.contains(Timeline.fill(MechanismRegistry.kind(ContinuedProcessing.self))), "the one-day view colours a declared kind")
    }
}
