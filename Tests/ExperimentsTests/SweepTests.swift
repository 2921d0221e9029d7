import Foundation
import Testing

@testable import Experiments
@testable import ResultFiles
@testable import ScenarioFiles

@Suite("Sweeps, shards and resume")
struct SweepTests {
    /// The folder this test process writes its sweep files to, removed when the process
    /// exits: a file per test, left behind, piled up in the temporary folder run after run.
    static let sweepFiles: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bgsim-sweep-files-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: SweepTests.sweepFiles) }
        return url
    }()

    /// Writes a sweep file to a temporary folder and returns its path.
    static func write(_ yaml: String) throws -> String {
        let url = sweepFiles.appendingPathComponent("\(UUID().uuidString).yaml")
        try yaml.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    static func design(_ kind: SweepDesign.Kind, points: Int = 0, _ axes: [SweepDesign.Axis]) -> SweepDesign {
        SweepDesign(kind: kind, axes: axes, points: points, seed: 7)
    }

    static func range(_ path: String, _ from: Double, _ to: Double, steps: Int? = nil) -> SweepDesign.Axis {
        var a = SweepDesign.Axis(path: ConfigKeyPath(parsing: path)!)
        a.from = from
        a.to = to
        a.steps = steps
        return a
    }

    static func list(_ path: String, _ values: [String]) -> SweepDesign.Axis {
        var a = SweepDesign.Axis(path: ConfigKeyPath(parsing: path)!)
        a.values = values
        return a
    }

    /// The base scenario's path, as validate and the manifests show it, loses its `..` steps
    /// when the shorter path is the same file, and keeps them when a symbolic link makes it
    /// another.
    @Test func theBaseScenarioPathIsTidiedOnlyWhenItNamesTheSameFile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-tidy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let fm = FileManager.default
        try fm.createDirectory(at: root.appendingPathComponent("models/sweeps"), withIntermediateDirectories: true)
        try fm.createDirectory(at: root.appendingPathComponent("models/scenarios"), withIntermediateDirectories: true)
        try fm.createDirectory(at: root.appendingPathComponent("elsewhere/deep"), withIntermediateDirectories: true)
        try "x".write(to: root.appendingPathComponent("models/scenarios/base.yaml"), atomically: true, encoding: .utf8)
        try "y".write(to: root.appendingPathComponent("elsewhere/base.yaml"), atomically: true, encoding: .utf8)
        // models/link -> elsewhere/deep: models/link/../base.yaml is elsewhere/base.yaml, not models/base.yaml.
        try fm.createSymbolicLink(
            atPath: root.appendingPathComponent("models/link").path, withDestinationPath: root.appendingPathComponent("elsewhere/deep").path)
        let r = root.path
        #expect(Sweep.tidy("\(r)/models/sweeps/../scenarios/base.yaml") == "\(r)/models/scenarios/base.yaml")
        #expect(Sweep.tidy("\(r)/models/./sweeps/../scenarios//base.yaml") == "\(r)/models/scenarios/base.yaml")
        #expect(Sweep.tidy("\(r)/models/link/../base.yaml") == "\(r)/models/link/../base.yaml")
        #expect(Sweep.tidy("\(r)/models/sweeps/../missing.yaml") == "\(r)/models/sweeps/../missing.yaml")
        #expect(Sweep.tidy("\(r)/models/scenarios/base.yaml") == "\(r)/models/scenarios/base.yaml")
        let sweep = try Sweep.load(file: repoRoot.appendingPathComponent("models/sweeps/refresh-setting.yaml").path)
        #expect(!sweep.scenarioFile.contains("..") && sweep.scenarioFile.hasSuffix("models/scenarios/default.yaml"))
    }

    /// A sweep that names a missing base scenario says so at the `scenario` key's line, with
    /// the path it tried, and that a relative path is read from the sweep file's folder.
    @Test func aMissingBaseScenarioIsNamedWhereTheSweepSaysIt() throws {
        let file = try Self.write("name: s\ndesign: grid\nscenario: nowhere/base.yaml\naxes:\n  - {path: seed, values: [1]}\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let folder = (file as NSString).deletingLastPathComponent
        #expect(throws: ScenarioError.self) { try Sweep.load(file: file) }
        do {
            _ = try Sweep.load(file: file)
        } catch {
            #expect(
                error.description == "\(file):3:11: scenario: no such scenario file: \(folder)/nowhere/base.yaml "
                    + "(a relative path is read from the sweep file's folder)")
        }
        let absolute = try Self.write("design: grid\nscenario: /nonexistent/base.yaml\naxes:\n  - {path: seed, values: [1]}\n")
        defer { try? FileManager.default.removeItem(atPath: absolute) }
        do {
            _ = try Sweep.load(file: absolute)
            Issue.record("a sweep naming a missing scenario loaded")
        } catch {
            #expect(error.description == "\(absolute):2:11: scenario: no such scenario file: /nonexistent/base.yaml")
        }
    }

    @Test func gridCombinesEveryValueWithTheFirstAxisSlowest() {
        let d = Self.design(.grid, [Self.list("a", ["x", "y"]), Self.range("b", 0, 10, steps: 3)])
        #expect(d.pointValues() == [["x", "0.0"], ["x", "5.0"], ["x", "10.0"], ["y", "0.0"], ["y", "5.0"], ["y", "10.0"]])
    }

    @Test func zipPairsTheIthValues() {
        let d = Self.design(.zip, [Self.list("a", ["x", "y", "z"]), Self.range("b", 1, 3, steps: 3)])
        #expect(d.pointValues() == [["x", "1.0"], ["y", "2.0"], ["z", "3.0"]])
    }

    @Test func randomDrawsStayInRangeAndRepeatForASeed() {
        let d = Self.design(.random, points: 200, [Self.range("a", 20, 100), Self.list("b", ["p", "q"])])
        let v = d.pointValues()
        #expect(v == d.pointValues(), "a pure function of the design")
        #expect(v.count == 200 && v.allSatisfy { Double($0[0])! >= 20 && Double($0[0])! <= 100 })
        #expect(Set(v.map { $0[1] }) == ["p", "q"])
        var other = d
        other.seed = 8
        #expect(other.pointValues() != v)
    }

    /// Each axis's range is cut into n strata and a Latin hypercube uses each exactly once.
    @Test func latinHypercubeUsesEveryStratumOnce() {
        let n = 50
        let d = Self.design(.lhs, points: n, [Self.range("a", 0, 1), Self.range("b", 100, 200)])
        let v = d.pointValues()
        #expect(v.count == n)
        #expect(Set(v.map { Int(Double($0[0])! * Double(n)) }) == Set(0..<n))
        #expect(Set(v.map { Int((Double($0[1])! - 100) / 100 * Double(n)) }) == Set(0..<n))
        #expect(v.map { $0[0] } != v.map { $0[0] }.sorted(), "strata paired at random, not in order")
    }

    /// GSL's Sobol sequence: the first 2^k points of a Sobol sequence put one point in each
    /// of the 2^k equal intervals of every axis. GSL starts after the origin, so its first
    /// 2^k - 1 points fill every interval but the first.
    @Test func sobolPointsAreEvenlySpread() {
        let d = Self.design(.sobol, points: 63, [Self.range("a", 0, 1), Self.range("b", 0, 1), Self.range("c", 0, 1)])
        let v = d.pointValues()
        for axis in 0..<3 {
            #expect(Set(v.map { Int(Double($0[axis])! * 64) }) == Set(1..<64), "axis \(axis)")
        }
    }

    @Test func integerAndDurationAxesAreWrittenAsScenarioValues() {
        var a = Self.range("people.sessions_per_day", 20, 100, steps: 3)
        a.integer = true
        var b = Self.range("apps[0].tasks[0].interval", 15 * 60e6, 2 * 3600e6, steps: 2)
        b.isDuration = true
        let d = Self.design(.grid, [a, b])
        #expect(d.pointValues().first == ["20", "900s"])
        #expect(d.pointValues().last == ["100", "7200s"])
    }

    @Test func badSweepFilesNameTheFileTheKeyPathAndWhatWasExpected() throws {
        func error(_ yaml: String) throws -> String {
            let f = try Self.write(yaml)
            do {
                _ = try StudyPlan(sweep: Sweep.load(file: f))
                return "no error"
            } catch {
                #expect(error.description.contains(f), "names the sweep file: \(error)")
                return error.description
            }
        }
        let base = "scenario: \(defaultScenario)\n"
        #expect(
            try error(base + "design: zip\naxes:\n  - {path: seed2, values: [1, 2]}\n  - {path: x, values: [1]}\n")
                .contains("a zip design needs axes of equal length"))
        #expect(
            try error(base + "design: lhs\naxes:\n  - {path: people.sessions_per_day, from: 1, to: 2}\n")
                .contains("points: missing; a lhs design needs the number of points"))
        #expect(try error(base + "axes:\n  - {path: policies, values: [[eager]]}\n").contains("'policies' cannot be swept"))
        #expect(try error(base + "axes:\n  - {path: people.sessions_per_day, from: 1, to: 2}\n").contains("needs 'steps'"))
        #expect(
            try error(base + "design: grid\nstep: 3\naxes:\n  - {path: people.sessions_per_day, values: [1]}\n")
                .contains("unknown key 'step'"))
        // A grid's total is capped before any point is made: 10,000 x 1,000 points took 1.7 GB
        // in 20 s when the points were made first; now it is refused at once, as is a sampled
        // design beyond the cap.
        let grid = try error(
            base + "axes:\n  - {path: people.sessions_per_day, from: 1, to: 100, steps: 10000}\n"
                + "  - {path: duration, from: 1h, to: 10d, steps: 1000}\n")
        #expect(grid.hasSuffix(":3:3: axes: a sweep has at most 100000 points; this grid design has 10000000 (10000 x 1000)"), "\(grid)")
        let huge = try error(
            base + "axes:\n" + String(repeating: "  - {path: people.sessions_per_day, from: 1, to: 100, steps: 100000}\n", count: 1)
                + (1...4).map { "  - {path: 'apps[\($0)].cpu_w', from: 0.1, to: 1, steps: 100000}\n" }.joined())
        #expect(huge.contains("this grid design has more than \(Int.max) (100000 x 100000 x 100000 x 100000 x 100000)"), "\(huge)")
        #expect(
            try error(base + "design: sobol\npoints: 100001\naxes:\n  - {path: people.sessions_per_day, from: 1, to: 2}\n")
                .contains("points: expected a number of points from 1 to 100000, got"))
        // Points x policies x replications is capped too, from the first point, before the
        // others are read.
        let units = try error(
            base + "replications: 1000\ndesign: sobol\npoints: 100000\naxes:\n  - {path: people.sessions_per_day, from: 1, to: 2}\n")
        #expect(units.contains("axes: 100000 points x 6 policies x 1000 replications is 600000000 runs; a study has at most 2000000"), "\(units)")
        // An indexed key path in a flow mapping is YAML's list; the error says to quote it.
        let unquoted = try error(base + "axes:\n  - {path: apps[0].cpu_w, values: [1, 2]}\n")
        #expect(
            unquoted.hasSuffix(
                ":3:16: axes: (after this key) invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping at line 3); "
                    + "inside {...} or [...] a key path with an index must be quoted: 'apps[0].cpu_w'"), "\(unquoted)")
        #expect(try error(base + "axes:\n  - {path: 'apps[0].cpu_w', values: [1, 2]}\n") == "no error")
        // A value the scenario rejects names the axis and the point it came from.
        let bad = try error(base + "axes:\n  - {path: people.sessions_per_day, values: [50, -5]}\n")
        #expect(bad.contains("axes[0] (people.sessions_per_day=-5) at point 1"), "\(bad)")
        // So does an error the point causes elsewhere: here the reminders app's geofence at
        // work, when the point's weekdays never go there (and the weekend names only home).
        let elsewhere = try error(
            base + """
                axes:
                  - {path: people.sessions_per_day, values: [10]}
                  - {path: network.weekday, values: [[{at: "00:00", network: wifi, down_mbps: 50, up_mbps: 10, place: work}], [{at: "00:00", network: wifi, down_mbps: 50, up_mbps: 10}]]}

                """)
        #expect(elsewhere.contains("reminders.yaml:15:18: "), "\(elsewhere)")
        #expect(elsewhere.contains(".yaml: point 1 (people.sessions_per_day=10, network.weekday=[{"), "\(elsewhere)")
        #expect(elsewhere.hasSuffix("apps[9].regions.places[1]: expected a place of the network model (home), got 'work'"), "\(elsewhere)")
    }

    /// Points are read on several threads: the plan, and the error when points are bad,
    /// are the same whatever the thread count (the first bad point in point order).
    @Test func aSweepIsPlannedTheSameOnAnyNumberOfThreads() throws {
        let base = "scenario: \(defaultScenario)\nset: {duration: 1d}\n"
        let good = try Self.write(
            base + "design: sobol\npoints: 40\naxes:\n  - {path: people.sessions_per_day, from: 10, to: 90}\n"
                + "  - {path: phone.battery.capacity_wh, from: 8, to: 20}\n")
        let one = try StudyPlan(sweep: Sweep.load(file: good), jobs: 1)
        for jobs in [2, 3, 8, 64] {
            let many = try StudyPlan(sweep: Sweep.load(file: good), jobs: jobs)
            #expect(many.fingerprint == one.fingerprint)
            #expect(many.points.map(\.values) == one.points.map(\.values))
            #expect(many.points.map(\.scenarioDigest) == one.points.map(\.scenarioDigest))
        }
        // Points 3 and 5 are bad in different ways; point 3 is named, on any thread count.
        let bad = try Self.write(base + "axes:\n  - {path: people.sessions_per_day, values: [10, 20, 30, -1, 50, x, 70]}\n")
        for jobs in [1, 2, 3, 8] {
            #expect(throws: ScenarioError.self) { try StudyPlan(sweep: Sweep.load(file: bad), jobs: jobs) }
            do {
                _ = try StudyPlan(sweep: Sweep.load(file: bad), jobs: jobs)
            } catch {
                #expect(error.description.contains("at point 3"), "\(jobs) threads: \(error)")
            }
        }
    }

    /// A large sweep is read in chunks of 256 points, each hashed into the plan's digest and its
    /// resolved JSON let go (about 10 kB a point for the reference scenario) before the next:
    /// the digest is still that of every point in order, the first bad point in point order is
    /// still the one named, and only point 0 keeps its JSON (the manifest's).
    @Test func aLargeSweepIsReadInChunksWithTheSameDigestAndErrors() throws {
        let values = (0..<300).map { String(10 + $0 % 80) }
        let base = "scenario: \(defaultScenario)\nset: {duration: 1d}\ndesign: zip\n"
        let good = try Self.write(base + "axes:\n  - {path: people.sessions_per_day, values: [\(values.joined(separator: ", "))]}\n")
        // The digest by its definition, from each point's scenario read on its own.
        var h = SHA256()
        var replications = 0
        var text = ""
        for v in values {
            let s = try Scenario.load(
                file: defaultScenario,
                overrides: [
                    Override(parsing: "duration=1d")!,
                    Override(parsing: "people.sessions_per_day=\(v)")!,
                ])
            if text.isEmpty { replications = s.replications; text = "bgsim plan\n\(replications)\n" }
            text += v + "\n" + s.resolvedJSON + "\n"
        }
        h.update(Data(text.utf8))
        let expected = h.hexDigest()
        for jobs in [1, 3] {
            let plan = try StudyPlan(sweep: Sweep.load(file: good), jobs: jobs)
            #expect(plan.points.count == 300 && plan.replications == replications)
            #expect(plan.fingerprint == expected, "\(jobs) threads")
            #expect(!plan.points[0].scenario.resolvedJSON.isEmpty)
            #expect(plan.points.dropFirst().allSatisfy { $0.scenario.resolvedJSON.isEmpty })
        }
        // Points 290 and 299, in the second chunk, are bad; 290 is named.
        var bad = values
        bad[290] = "-1"
        bad[299] = "x"
        let file = try Self.write(base + "axes:\n  - {path: people.sessions_per_day, values: [\(bad.joined(separator: ", "))]}\n")
        for jobs in [1, 3] {
            let error = #expect(throws: ScenarioError.self) { try StudyPlan(sweep: Sweep.load(file: file), jobs: jobs) }
            #expect(error?.description.contains("at point 290") == true, "\(jobs) threads: \(String(describing: error))")
        }
    }

    /// A sweep keeps the apps it read last and reuses them for a point whose apps are the
    /// same tree (debug builds check each reuse against a fresh reading). A point whose axis
    /// changes an app gets its own apps, whichever thread reads it.
    @Test func pointsThatChangeAnAppGetTheirOwnApps() throws {
        let f = try Self.write(
            "scenario: \(defaultScenario)\nset: {duration: 1d}\ndesign: grid\naxes:\n"
                + "  - {path: people.sessions_per_day, values: [30, 60]}\n"
                + "  - {path: 'apps[0].tasks[0].interval', values: [20m, 40m, 20m]}\n")
        for jobs in [1, 3] {
            let plan = try StudyPlan(sweep: Sweep.load(file: f), jobs: jobs)
            #expect(plan.points.count == 6)
            for p in plan.points {
                let interval = p.values[plan.parameters.firstIndex(of: "apps[0].tasks[0].interval")!]
                #expect(p.scenario.setup.apps[0].tasks[0].interval == ConfigReader.parseDuration(interval), "\(p.values)")
                #expect(p.scenario.setup.apps.dropFirst() == plan.points[0].scenario.setup.apps.dropFirst())
            }
        }
    }

    static let smallSweep = """
        scenario: \(defaultScenario)
        set: {duration: 1d}
        replications: 3
        policies: [eager, charge-only, ios]
        design: grid
        axes:
          - {path: settings.background_app_refresh, values: [wifi, wifi-and-cellular]}
          - {path: people.sessions_per_day, values: [30, 70]}
        """

    static func files(_ folder: URL) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !name.hasPrefix(".") && name != "units" {
            out[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return out
    }

    static func temporary() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-sweep-\(UUID().uuidString)")
    }

    /// Property: however the units are split into shards (and however many threads each
    /// shard uses), the merged files equal the unsharded run's byte for byte, manifest
    /// included.
    @Test func anyShardSplitMergedEqualsTheUnshardedRun() async throws {
        let plan = try StudyPlan(sweep: Sweep.load(file: try Self.write(Self.smallSweep)))
        let record = RecordOptions(events: true, tasks: true, timelineEvery: .hours(2))
        let whole = Self.temporary()
        defer { try? FileManager.default.removeItem(at: whole) }
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record), to: whole)
        let expected = try Self.files(whole)
        #expect(
            expected.keys.sorted() == ["apps.csv", "comparisons.csv", "events.csv", "manifest.json", "runs.csv", "summary.csv", "tasks.csv", "timeline.csv"])
        #expect(plan.unitCount == 36)
        for n in [1, 2, 5, 36, 40] {
            var shards: [URL] = []
            for k in 1...n {
                let f = Self.temporary()
                shards.append(f)
                _ = try await Experiment.perform(
                    plan,
                    options: StudyOptions(
                        jobs: k % 3 + 1, record: record,
                        shard: Shard(index: k, count: n)), to: f)
            }
            let merged = Self.temporary()
            _ = try Experiment.merge(shards.reversed(), to: merged)
            let got = try Self.files(merged)
            #expect(got.keys.sorted() == expected.keys.sorted(), "\(n) shards")
            for (name, data) in expected { #expect(got[name] == data, "\(name) from \(n) shards") }
            for f in shards + [merged] { try? FileManager.default.removeItem(at: f) }
        }
    }

    /// The steps after the units run report as they go: each result file, a point or a unit
    /// at a time, from 1 to its whole in order; and before a merge writes, the units it checks.
    @Test func writingAndMergeCheckingReportEveryStepToItsEnd() async throws {
        final class Steps: @unchecked Sendable {
            let lock = NSLock()
            var seen: [(what: String, done: Int, total: Int)] = []
            func note(_ what: String, _ done: Int, _ total: Int) { lock.withLock { seen.append((what, done, total)) } }
            /// Each step's name in order, with its counts, which must run 1...total.
            func runs() -> [String] {
                var out: [String] = []
                var k = 0
                while k < seen.count {
                    let what = seen[k].what, total = seen[k].total
                    let done = seen[k...].prefix { $0.what == what }.map(\.done)
                    if done != Array(1...max(total, 1)) || seen[k..<k + done.count].contains(where: { $0.total != total }) {
                        out.append("\(what): \(done) of \(total)")
                    } else {
                        out.append("\(what): \(total)")
                    }
                    k += done.count
                }
                return out
            }
        }
        let plan = try StudyPlan(sweep: Sweep.load(file: try Self.write(Self.smallSweep)))
        let record = RecordOptions(tasks: true)
        let written = [
            "points of runs.csv written: 4", "points of summary.csv written: 4", "points of comparisons.csv written: 4",
            "units of apps.csv written: 36", "units of tasks.csv written: 36",
        ]
        let whole = Self.temporary(), a = Self.temporary(), b = Self.temporary(), merged = Self.temporary()
        defer { for f in [whole, a, b, merged] { try? FileManager.default.removeItem(at: f) } }
        let study = Steps()
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record, writing: study.note), to: whole)
        #expect(study.runs() == written)
        for (k, f) in [a, b].enumerated() {
            _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record, shard: Shard(index: k + 1, count: 2)), to: f)
        }
        let merge = Steps()
        _ = try Experiment.merge([a, b], to: merged, steps: merge.note)
        #expect(merge.runs() == ["units checked: 36"] + written)
    }

    /// Missing and duplicate units are named; a damaged unit is caught by its digest.
    @Test func mergeNamesMissingAndDuplicateUnitsAndCatchesDamage() async throws {
        let plan = try StudyPlan(sweep: Sweep.load(file: try Self.write(Self.smallSweep)))
        let record = RecordOptions(tasks: true)
        let a = Self.temporary(), b = Self.temporary(), out = Self.temporary()
        defer { for f in [a, b, out] { try? FileManager.default.removeItem(at: f) } }
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record, shard: Shard(index: 1, count: 2)), to: a)
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record, shard: Shard(index: 2, count: 2)), to: b)
        func failure(_ folders: [URL]) -> String {
            do {
                _ = try Experiment.merge(folders, to: out)
                return "merged"
            } catch { return "\(error)" }
        }
        let missing = failure([a])
        #expect(missing.contains("the shards do not make one complete study:\nshards not given: 2/2\n18 of 36 units missing"))
        #expect(missing.contains("missing: point 0 (settings.background_app_refresh=wifi, people.sessions_per_day=30), eager, replication 1"))
        // A second copy of a shard (a rerun into another folder) holds the same units.
        let copy = Self.temporary()
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(at: a, to: copy)
        let duplicate = failure([a, b, copy])
        #expect(duplicate.contains("shard 1/2 given more than once: \(a.path) and \(copy.path)\n18 units in more than one shard"))
        #expect(duplicate.contains("duplicate: point 0"))
        // The same folder named twice is said to be that, not listed unit by unit.
        #expect(failure([a, b, a.appendingPathComponent(".")]) == "\(a.path) is named more than once")
        let tasks = b.appendingPathComponent("units/p000000-0-r000001.tasks.csv")
        try (try String(contentsOf: tasks, encoding: .utf8) + "extra\n").write(to: tasks, atomically: true, encoding: .utf8)
        #expect(failure([a, b]).contains("p000000-0-r000001.tasks.csv does not match its SHA-256"))
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("runs.csv").path), "nothing written")
    }

    /// A study finds the units that finished before it was stopped and runs only the rest;
    /// the files equal those of an uninterrupted run.
    /// The small sweep run whole into one folder, and a third of its units (as shard 1/3
    /// leaves them) into another.
    static func wholeAndAThird(record: RecordOptions) async throws -> (plan: StudyPlan, whole: URL, third: URL) {
        let plan = try StudyPlan(sweep: Sweep.load(file: try Self.write(Self.smallSweep)))
        let whole = Self.temporary(), third = Self.temporary()
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record), to: whole)
        let first = try await Experiment.perform(plan, options: StudyOptions(jobs: 1, record: record, shard: Shard(index: 1, count: 3)), to: third)
        #expect(first.ran == 12)
        return (plan, whole, third)
    }

    @Test func aRerunSkipsFinishedUnitsAndWritesTheSameFiles() async throws {
        let record = RecordOptions(tasks: true)
        // A third of the units finished (as a shard leaves them), then the full study.
        let (plan, whole, resumed) = try await Self.wholeAndAThird(record: record)
        defer { for f in [whole, resumed] { try? FileManager.default.removeItem(at: f) } }
        let rest = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record), to: resumed)
        #expect(rest.skipped == 12 && rest.ran == 24)
        #expect(try Self.files(resumed) == (try Self.files(whole)))
        // A unit recorded without tasks does not count as finished for a run that wants them.
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: RecordOptions(), shard: Shard(index: 1, count: 3)), to: resumed)
        let again = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record), to: resumed)
        #expect(again.skipped == 0)
    }

    /// Units are not synced to disk, so a machine that goes down can leave a unit's record or
    /// its rows cut short: such a unit is not finished, and runs again.
    @Test func aUnitCutShortByACrashRunsAgain() async throws {
        let record = RecordOptions(tasks: true)
        let (plan, whole, crashed) = try await Self.wholeAndAThird(record: record)
        defer { for f in [whole, crashed] { try? FileManager.default.removeItem(at: f) } }
        let units = crashed.appendingPathComponent("units")
        let store = UnitStore(folder: units)
        let present = store.present()
        try #require(present.count == 12)
        func cut(_ unit: UnitKey, _ file: String, by bytes: Int) throws {
            let url = store.file(unit, file)
            let data = try Data(contentsOf: url)
            try data.prefix(data.count - bytes).write(to: url)
        }
        try cut(present[0], "unit.txt", by: 1)  // the check line's newline
        try cut(present[1], "unit.txt", by: 80)  // into the check line
        try cut(present[2], "tasks.csv", by: 10)  // rows cut short
        try Data().write(to: store.file(present[3], "unit.txt"))
        #expect(throws: RuntimeFailure.self) { try store.values(present[2]) }
        let rest = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: record), to: crashed)
        #expect(rest.skipped == 8 && rest.ran == 28)
        #expect(try Self.files(crashed) == (try Self.files(whole)))
    }
}
