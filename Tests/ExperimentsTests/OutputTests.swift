import Foundation
import PhoneWorld
import SimEngine
import SimRandom
import Testing

@testable import Experiments
@testable import Policies
@testable import ResultFiles
@testable import ScenarioFiles
@testable import Scheduling

@Suite("Runs, statistics and CSV")
struct OutputTests {
    func scenario(seed: UInt64 = 42, replications: Int = 4) throws -> Scenario {
        try Scenario.load(
            file: defaultScenario,
            overrides: [
                Override(parsing: "seed=\(seed)")!, Override(parsing: "replications=\(replications)")!,
                Override(parsing: "duration=3d")!,
            ])
    }

    /// One writer per output folder: a second lock on it fails, naming it, until the first
    /// is released (flock locks conflict between open files, even within one process).
    @Test func anOutputFolderHasOneWriterAtATime() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = try FolderLock(dir)
        #expect(throws: RuntimeFailure.self) { try FolderLock(dir) }
        do {
            _ = try FolderLock(dir)
        } catch {
            #expect(error.description.hasPrefix("\(dir.path) is in use: another bgsim is writing there"))
        }
        first.release()
        let again = try FolderLock(dir)
        again.release()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "no lock file is left")
    }

    /// JSON strings (manifests, and the resolved scenario whose SHA-256 fingerprints a study):
    /// quotes, backslashes and control characters escaped, everything else (accents, emoji)
    /// as it is, whether or not the text needs escaping at all.
    @Test func jsonStringsEscapeExactlyWhatRFC8259Requires() throws {
        #expect(JSON.string("news-2") == "\"news-2\"")
        #expect(JSON.string("") == "\"\"")
        #expect(JSON.string("café ☕️ 7°C") == "\"café ☕️ 7°C\"")
        #expect(JSON.string("say \"hi\"\\ now") == "\"say \\\"hi\\\"\\\\ now\"")
        #expect(JSON.string("a\nb\tc\rd\u{1}é\u{7f}") == "\"a\\nb\\tc\\rd\\u0001é\u{7f}\"")
        let tree = try ConfigNode.parse(yaml: "name: \"x\\\"y\"\nlist: [1, café]\nmap: {k: ~}\n", file: "t.yaml")
        #expect(tree.canonicalJSON == #"{"name":"x\"y","list":["1","café"],"map":{"k":"~"}}"#)
    }

    @Test func sameSeedGivesByteIdenticalFilesWhateverTheThreadCount() async throws {
        let s = try scenario()
        let one = try await Experiment.runAll(s, jobs: 1)
        let three = try await Experiment.runAll(s, jobs: 3)
        #expect(Experiment.runsCSV(s, one) == Experiment.runsCSV(s, three))
        let summaries = PolicySummary.summarise(one, policies: s.policies)
        #expect(Experiment.summaryCSV(s, summaries) == Experiment.summaryCSV(s, PolicySummary.summarise(three, policies: s.policies)))
    }

    @Test func anotherSeedGivesOtherNumbers() async throws {
        let a = try await Experiment.runAll(try scenario(seed: 1), jobs: 2)
        let b = try await Experiment.runAll(try scenario(seed: 2), jobs: 2)
        // Bit for bit: with a nan among them (time_to_empty_s), != would hold for equal runs too.
        #expect(a.map { $0.values.map(\.bitPattern) } != b.map { $0.values.map(\.bitPattern) })
    }

    @Test func aReplicationIsTheSameAloneOrAmongOthers() async throws {
        // Seeds depend on the replication number, not on how many run or in what order.
        let many = try await Experiment.runAll(try scenario(replications: 5), jobs: 2)
        let alone = try Experiment.run(try scenario(replications: 5), policy: PolicySpec(EagerPolicy.self), replication: 3)
        // Compared bit for bit: an absent value (time_to_empty_s of a phone that never ran out) is nan.
        let one = many.first { $0.policy == PolicySpec(EagerPolicy.self) && $0.replication == 3 }!.values
        #expect(one.map(\.bitPattern) == alone.columnValues.map(\.bitPattern))
    }

    @Test func runsCSVHasOneRowPerPolicyAndReplicationInAStableOrder() async throws {
        let s = try scenario(replications: 3)
        let csv = Experiment.runsCSV(s, try await Experiment.runAll(s, jobs: 2))
        let lines = csv.split(separator: "\n")
        try #require(lines.count == 1 + s.policies.count * 3)
        #expect(lines[0].hasPrefix("scenario,policy,replication,seed,tasks_submitted,tasks_completed,"))
        #expect(lines[0].split(separator: ",").count == 4 + RunMetrics.columns.count)
        #expect(
            lines[1...].map { $0.split(separator: ",")[1...2].joined(separator: ",") }
                == s.policies.flatMap { p in (0..<3).map { "\(p.name),\($0)" } })
    }

    @Test func summaryIsTheMeanAndStudentTIntervalOfTheRuns() async throws {
        let s = try scenario(replications: 6)
        let runs = try await Experiment.runAll(s, jobs: 2)
        let summaries = PolicySummary.summarise(runs, policies: s.policies)
        let c = RunMetrics.columns.firstIndex { $0.name == "battery_energy_j" }!
        let values = runs.filter { $0.policy == PolicySpec(EagerPolicy.self) }.map { $0.values[c] }
        let mean = values.reduce(0, +) / 6
        let sd = (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / 5).squareRoot()
        let half = 2.5706 * sd / 6.0.squareRoot()  // t(0.975, 5) = 2.5706
        let ci = summaries[0].intervals[c]
        #expect(abs(ci.mean - mean) < 1e-9 * mean)
        #expect(abs(ci.halfWidth - half) < 1e-4 * half)
        #expect(summaries[0].replications == 6)
    }

    @Test func intervalsMatchAHandComputation() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sd = sqrt(32 / 7) = 2.13809, t(0.975, 7) = 2.36462
        // (tables), half-width 2.36462 * 2.13809 / sqrt(8) = 1.78749.
        let ci = ConfidenceInterval([2, 4, 4, 4, 5, 5, 7, 9])
        #expect(ci.mean == 5)
        #expect(abs(ci.standardDeviation - 2.13809) < 1e-5)
        #expect(abs(ci.halfWidth - 1.78749) < 1e-5)
        #expect(abs(Statistics.tTwoSidedP(2.2622, degreesOfFreedom: 9) - 0.05) < 1e-4, "t(0.975, 9) = 2.2622 from tables")
    }

    @Test func pairedDifferencesMatchAHandComputationOnTheRuns() async throws {
        let s = try scenario(replications: 6)
        let runs = try await Experiment.runAll(s, jobs: 2)
        let comparisons = PairedComparison.compare(runs, policies: s.policies, baseline: s.policies[0])
        #expect(comparisons.count == (s.policies.count - 1) * RunMetrics.columns.count)
        let c = RunMetrics.columns.firstIndex { $0.name == "background_energy_j" }!
        let other = s.policies[1]
        let x = runs.filter { $0.policy == other }.map { $0.values[c] }
        let b = runs.filter { $0.policy == s.policies[0] }.map { $0.values[c] }
        let d = zip(x, b).map { $0 - $1 }
        let mean = d.reduce(0, +) / 6
        let sd = (d.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / 5).squareRoot()
        let half = 2.5706 * sd / 6.0.squareRoot()  // t(0.975, 5) = 2.5706
        let row = try #require(comparisons.first { $0.policy == other && $0.metric == c })
        #expect(abs(row.difference.mean - mean) < 1e-9 * abs(mean))
        #expect(abs(row.difference.halfWidth - half) < 1e-4 * half)
        #expect(abs(row.baselineMean - b.reduce(0, +) / 6) < 1e-9 * abs(row.baselineMean))
        // The p-value of t = mean / (sd / sqrt 6) with 5 degrees of freedom, two-sided.
        let t = mean / (sd / 6.0.squareRoot())
        #expect(abs(row.pValue - Statistics.tTwoSidedP(t, degreesOfFreedom: 5)) < 1e-12)
        #expect((row.pValue < 0.05) == (row.difference.lower > 0 || row.difference.upper < 0), "p < 0.05 iff the interval excludes 0")
        // Pairing narrows the interval: the policies' own intervals are wider than the difference's.
        let separate = ConfidenceInterval(x).halfWidth + ConfidenceInterval(b).halfWidth
        #expect(row.difference.halfWidth < separate)
    }

    /// A metric equal up to the last digits of its sums is not different, however steady the
    /// noise; a difference of a part in a million is kept.
    @Test func differencesAtRoundingLevelAreZero() {
        let a = PolicySpec(EagerPolicy.self), b = PolicySpec(ChargeOnlyPolicy.self)
        let n = RunMetrics.columns.count
        var runs: [RunValues] = []
        for r in 0..<5 {
            let base = 168_220.8 + Double(r) * 1_000
            runs.append(RunValues(policy: a, replication: r, values: Array(repeating: base, count: n)))
            var mine = Array(repeating: base * (1 + 1e-12 * Double(r + 1)), count: n)
            mine[1] = base * (1 + 1e-6 * Double(r + 1))
            runs.append(RunValues(policy: b, replication: r, values: mine))
        }
        let rows = PairedComparison.compare(runs, policies: [a, b], baseline: a)
        #expect(rows[0].difference.mean == 0 && rows[0].difference.halfWidth == 0 && rows[0].pValue == 1)
        #expect(rows[1].difference.mean > 0 && rows[1].pValue < 0.05)
        #expect(PairedComparison.difference(1, 1 + 2e-9) == 1 - (1 + 2e-9), "two parts in a billion are kept")
        #expect(PairedComparison.difference(0, 1e-300) != 0, "values near zero are compared as they are")
    }

    @Test func precisionAddsReplicationsUntilTheGoalAndDependsOnlyOnTheResults() async throws {
        let s = try scenario(replications: 2)
        let goal = PrecisionGoal(target: 0.05, metrics: ["background_energy_j"], maxReplications: 40)
        let one = try await Experiment.study(s, jobs: 1, precision: goal)
        let four = try await Experiment.study(s, jobs: 4, precision: goal)
        #expect(one.replications == four.replications && one.replications > 2)
        #expect(Experiment.runsCSV(s, one.runs) == Experiment.runsCSV(s, four.runs))
        let p = try #require(one.precision)
        let c = RunMetrics.columns.firstIndex { $0.name == "background_energy_j" }!
        let worst = PolicySummary.summarise(one.runs, policies: s.policies).map { $0.intervals[c].halfWidth / abs($0.intervals[c].mean) }.max()!
        #expect(abs(p.worst - worst) < 1e-12)
        #expect(p.reached == (worst <= 0.05 / 1.05))
        #expect(p.reached || one.replications == 40)
        #expect(one.runs.count == s.policies.count * one.replications)
    }

    // In the last three, a line break, a comma and a quote are parts of larger characters
    // (grapheme clusters): a scan by character missed them and wrote a broken row.
    @Test(arguments: [
        ("plain", "plain"), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("two\nlines", "\"two\nlines\""),
        ("café ☕️", "café ☕️"), ("crlf\r\nend", "\"crlf\r\nend\""), ("a,\u{301}b", "\"a,\u{301}b\""), ("\"\u{301}", "\"\"\"\u{301}\""),
    ])
    func csvQuotesPerRFC4180(field: String, written: String) {
        #expect(CSVWriter.escape(field) == written)
    }

    @Test func numbersAreLocaleFreeAndMissingValuesEmpty() {
        #expect(CSVWriter.number(0.1) == "0.1")
        #expect(CSVWriter.number(1234.5) == "1234.5")
        #expect(CSVWriter.number(3, count: true) == "3")
        #expect(CSVWriter.number(.nan) == "")
    }

    /// Seconds are written from integer microseconds without formatting a double; the text
    /// must be what Swift writes for the double (microseconds / 10^6): every count up to
    /// 0.3 s (all fraction patterns, the switch to an exponent below 10^-4 s), every
    /// quarter of an hour for a year, and random counts up to 10^15 µs and past it.
    @Test func secondsAreWrittenAsSwiftWritesTheDouble() {
        func both(_ k: Int64) -> (String, String) {
            let line = CSVBytes()
            line.seconds(microseconds: k)
            return (line.text, (Double(k) / 1e6).description)
        }
        var mismatches: [Int64] = []
        var random = try! RandomStream(seed: 101)  // seeded: a failure repeats
        var counts: [Int64] = Array(-5...300_000)
        counts += Array(stride(from: Int64(0), through: 31_536_000_000_000, by: 250_000_000))
        counts += (0..<50_000).map { _ in Int64.random(in: 0..<1_000_000_000_000_000, using: &random) }
        counts += [999_999_999_999_999, 1_000_000_000_000_000, 1_000_000_000_000_001, 123_456_789_012_345_678]
        for k in counts {
            let (fast, swift) = both(k)
            if fast != swift { mismatches.append(k) }
        }
        #expect(mismatches.count == 0, "first: \(mismatches.prefix(5).map { "\($0): \(both($0))" })")
    }

    /// Whole numbers are written as digits and ".0" without formatting; the same text as
    /// Swift's, up to and past the limit of that shortcut, signed, and zero of either sign.
    @Test func wholeNumbersAreWrittenAsSwiftWritesThem() {
        var random = try! RandomStream(seed: 102)  // seeded: a failure repeats
        var values: [Double] = [0, -0.0, 1, -1, 51_200, 1e14, 1e15 - 1, 1e15, 1e15 + 2, 1e16, 9_007_199_254_740_992, -1e15 + 1]
        values += (0..<20_000).map { _ in Double(Int64.random(in: -1_000_000_000_000_000...1_000_000_000_000_000, using: &random)) }
        let mismatches = values.filter { CSVWriter.number($0) != $0.description }
        #expect(mismatches.count == 0, "first: \(mismatches.prefix(5))")
    }

    /// Any other double is written as `description` writes it, without making the String:
    /// random bit patterns (every exponent, subnormals, both signs) and values like those a
    /// run writes (energies in joules, percentages).
    @Test func fractionalNumbersAreWrittenAsDescriptionWritesThem() {
        var random = try! RandomStream(seed: 103)  // seeded: a failure repeats
        var values: [Double] = [0.1, -0.1, 1e-7, Double.leastNonzeroMagnitude, -2.2250738585072014e-308, 1.7976931348623157e308, 0.5, 123.456]
        values += (0..<50_000).map { _ in Double(bitPattern: random.next()) }.filter(\.isFinite)
        values += (0..<50_000).map { _ in Double.random(in: 0..<500, using: &random) }
        let mismatches = values.filter { CSVWriter.number($0) != $0.description }
        #expect(mismatches.count == 0, "first: \(mismatches.prefix(5))")
        let line = CSVBytes()
        for x in values.prefix(1_000) { line.number(x) }
        line.endRecord()
        #expect(line.text == values.prefix(1_000).map(\.description).joined(separator: ",") + "\n")
    }

    /// A record built field by field: the unit's first fields written once, text quoted
    /// where needed, missing values empty, lists joined by ';' in one field.
    @Test func recordsAreBuiltFieldByField() {
        let first = CSVBytes()
        first.field("ios")
        first.integer(3)
        let line = CSVBytes()
        line.fields(first.bytes)
        line.field("a,b")
        line.empty()
        line.integer(-42)
        line.number(0.1)
        line.list(["gate", "say \"x\""])
        line.list(["wifi_only", "low_power_mode"])
        line.list([])
        line.seconds(microseconds: 86_400_000_001)
        line.endRecord()
        line.integer(0)
        line.integer(Int64.min + 1)
        line.endRecord()
        #expect(line.text == "ios,3,\"a,b\",,-42,0.1,\"gate;say \"\"x\"\"\",wifi_only;low_power_mode,,86400.000001\n0,-9223372036854775807\n")
        // The buffer grows past its first capacity, keeping what it holds.
        let long = String(repeating: "é,", count: 5_000)
        line.field(long)
        #expect(line.text.hasSuffix("\n\"" + long + "\""))
        #expect(line.count == line.bytes.count)
    }

    /// Every kind of logged event has the text the log wrote before it kept events as data
    /// (the strings here are that text), and a row of events.csv is that text quoted like any
    /// field: written in pieces, quoted afterwards when a task identifier needs it.
    @Test func everyLoggedEventHasItsTextAndIsWrittenLikeAField() {
        let t = SimInstant.start + .seconds(90)
        func request(_ identifier: String) -> TaskRequest {
            TaskRequest(
                id: TaskID(7), app: 1, kind: .processing, identifier: identifier, submitted: t,
                earliestBegin: t + SimDuration(microseconds: 1_500_001), work: .seconds(1), powerW: 1)
        }
        let plain = request("sync"), awkward = request("sync, \"nightly\"")
        var log = EventLog()
        log.phoneShutDown(at: t)
        log.phoneBooted(at: t, offFor: SimDuration(microseconds: 3_600_500_000))
        for e: WorldEvent in [
            .plugIn, .unplug, .network(NetworkState(kind: .wifi, downMbps: 100, upMbps: 20.5)),
            .launch(app: 1), .launch(app: nil), .leave(app: 0, swipedAway: true), .leave(app: 0, swipedAway: false),
            .callStarted, .callEnded, .purge(app: 1), .purge(app: nil),
            .lowPowerPrompt(accepted: true), .lowPowerPrompt(accepted: false),
            .lowPowerMode(on: true), .lowPowerMode(on: false),
        ] {
            log.worldEvent(e, at: t)
        }
        log.lifecycle(LifecycleTransition(app: 1, from: .notRunning, to: .background, cause: .backgroundWork), at: t)
        log.lifecycle(LifecycleTransition(app: 1, from: .background, to: .suspended, cause: .workDone), at: t)
        log.taskEvent(.submitted(plain, replaced: TaskID(3)), at: t)
        log.taskEvent(.submitted(awkward, replaced: nil), at: t)
        log.taskEvent(.started(plain, timeRemaining: SimDuration(microseconds: 29_999_999)), at: t)
        log.taskEvent(.started(plain, timeRemaining: nil), at: t)
        log.taskEvent(.transfer(TaskID(7), app: 1, .cellular), at: t)
        log.taskEvent(.workDoneNotCompleted(TaskID(7), app: 1), at: t)
        log.taskEvent(.expiration(TaskID(7), app: 1, .timeUp), at: t)
        log.taskEvent(.registrationFailed(app: 1, identifier: "refresh"), at: t)
        log.taskEvent(.lost(TaskID(7), app: 1, energyJ: 12.345678901234567), at: t)
        var completed = TaskRecord(request: plain, started: t, ended: t + .seconds(2), outcome: .completed, energyJ: 1)
        completed.success = true
        log.taskEvent(.ended(completed), at: t)
        completed.success = false
        log.taskEvent(.ended(completed), at: t)
        var rejected = TaskRecord(request: awkward, started: nil, ended: t, outcome: .rejected, energyJ: 0)
        rejected.rejection = .tooManyPendingTaskRequests
        log.taskEvent(.ended(rejected), at: t)
        log.taskEvent(.ended(TaskRecord(request: plain, started: t, ended: t, outcome: .expired, energyJ: 0)), at: t)

        let expected: [[String]] = [
            ["shutdown", ""], ["boot", "off_s=3600.5"],
            ["plug_in", ""], ["unplug", ""], ["network", "network=wifi down_mbps=100.0 up_mbps=20.5"],
            ["launch", ""], ["launch", ""], ["leave", "swiped_away=true"], ["leave", ""],
            ["call_start", ""], ["call_end", ""], ["purge", ""], ["purge", "nothing_suspended=true"],
            ["low_power_prompt", "accepted=true"], ["low_power_prompt", "accepted=false"],
            ["low_power_on", ""], ["low_power_off", ""],
            ["not_running->background", "cause=background_work delegate=willFinishLaunching,didFinishLaunching"],
            ["background->suspended", "cause=work_done"],
            ["submitted", "kind=processing identifier=sync earliest_begin_s=91.500001 replaces=3"],
            ["submitted", "kind=processing identifier=sync, \"nightly\" earliest_begin_s=91.500001"],
            ["started", "kind=processing identifier=sync time_remaining_s=29.999999"],
            ["started", "kind=processing identifier=sync"],
            ["transfer", "network=cellular"], ["work_done_not_completed", ""], ["expiration_handler", "reason=time_up"],
            ["registration_failed", "identifier=refresh error=notPermitted"], ["result_lost", "energy_j=12.345678901234567"],
            ["completed", "kind=processing identifier=sync success=true"],
            ["completed", "kind=processing identifier=sync success=false"],
            ["rejected", "kind=processing identifier=sync, \"nightly\" error=tooManyPendingTaskRequests"],
            ["expired", "kind=processing identifier=sync"],
        ]
        #expect(log.events.map { [$0.event, $0.detail] } == expected)
        #expect(
            log.events.map(\.app) == [nil, nil, nil, nil, nil, 1, nil, 0, 0, nil, nil, 1, nil, nil, nil, nil, nil]
                + [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])

        let names = ["mail", "news"]
        let rows = CSVBytes()
        for e in log.events { EventRows.write(e, appNames: names, to: rows) }
        let lines = log.events.map { e in
            CSVWriter.line([
                CSVWriter.number(Double(e.time.microseconds) / 1e6), e.subject.rawValue, e.app.map { names[$0] } ?? "",
                e.task.map { String($0.rawValue) } ?? "", e.event, e.detail,
            ])
        }
        #expect(rows.text == lines.joined())
        #expect(rows.text.contains(",submitted,\"kind=processing identifier=sync, \"\"nightly\"\" earliest_begin_s=91.500001\"\n"))
    }

    /// A unit's row file starts each record with the unit's first fields, keyed on how many
    /// there are: one empty first field keeps its comma, and no first fields add nothing.
    @Test(arguments: [
        ([String](), "7\n8\n"),
        ([""], ",7\n,8\n"),
        (["", ""], ",,7\n,,8\n"),
        (["ios", "3"], "ios,3,7\nios,3,8\n"),
        (["a,b"], "\"a,b\",7\n\"a,b\",8\n"),
    ])
    func rowFilesStartEachRecordWithTheUnitsFields(prefix: [String], expected: String) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-part-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try PartWriter(url, prefix: prefix)
        for value in 7...8 {
            writer.append {
                $0.integer(value); $0.endRecord()
            }
        }
        try writer.close()
        #expect(try String(contentsOf: url, encoding: .utf8) == expected)
    }
}

@Suite("Atomic output files")
struct OutputFilesTests {
    func tempFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-test-\(UUID().uuidString)")
    }

    @Test func writesAllFilesAndLeavesNoTemporaries() throws {
        let dir = tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try OutputFiles.write([("a.csv", .text("x\n1\n")), ("b.csv", .text("y\n2\n"))], to: dir)
        #expect(try String(contentsOf: dir.appendingPathComponent("a.csv"), encoding: .utf8) == "x\n1\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["a.csv", "b.csv"])
    }

    @Test func replacesOldFilesWhole() throws {
        let dir = tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try OutputFiles.write([("a.csv", .text(String(repeating: "old\n", count: 1000)))], to: dir)
        try OutputFiles.write([("a.csv", .text("new\n"))], to: dir)
        #expect(try String(contentsOf: dir.appendingPathComponent("a.csv"), encoding: .utf8) == "new\n")
    }

    @Test func partsAreJoinedInOrderAndTheMarkerComesLastWithEachFilesDigest() throws {
        let dir = tempFolder(), units = tempFolder()
        defer { for d in [dir, units] { try? FileManager.default.removeItem(at: d) } }
        for d in [dir, units] { try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true) }
        // Parts stay where they are (unit stores, shards): merging a shard must not consume it.
        let parts = (0..<3).map { units.appendingPathComponent("t.csv.\($0)") }
        for (i, url) in parts.enumerated() { try Data("row\(i)\n".utf8).write(to: url) }
        try OutputFiles.write([("t.csv", .parts(header: "h\n", [parts[2], parts[0], parts[1]])), ("a.csv", .text("abc"))], to: dir) { files in
            ("marker.json", files.map { "\($0.name) \($0.bytes) \($0.sha256)" }.joined(separator: "\n"))
        }
        #expect(try String(contentsOf: dir.appendingPathComponent("t.csv"), encoding: .utf8) == "h\nrow2\nrow0\nrow1\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["a.csv", "marker.json", "t.csv"])
        #expect(parts.allSatisfy { FileManager.default.fileExists(atPath: $0.path) })
        let marker = try String(contentsOf: dir.appendingPathComponent("marker.json"), encoding: .utf8)
        #expect(marker == "t.csv 17 \(SHA256.hex("h\nrow2\nrow0\nrow1\n"))\na.csv 3 \(SHA256.hex("abc"))")
    }

    /// A file written in pieces (a study's result files, a point at a time) goes to disk a
    /// megabyte at a time: 3,000 pieces of 1,001 bytes cross two flushes and end in a short
    /// one. The file, its size and digest are those of the whole text, and a file of no pieces
    /// is its header.
    @Test func piecesAreWrittenInOrderAcrossFlushes() throws {
        let dir = tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        @Sendable func field(_ i: Int) -> String { String(i % 10) + String(repeating: "x", count: 999) }
        let whole = "h\n" + (0..<3000).map { field($0) + "\n" }.joined()
        try OutputFiles.write(
            [
                (
                    "p.csv",
                    .pieces(
                        header: "h\n", count: 3000,
                        write: { i, out in
                            out.field(field(i)); out.endRecord()
                        })
                ),
                ("e.csv", .pieces(header: "h\n", count: 0, write: { _, _ in Issue.record("no piece to write") })),
            ],
            to: dir
        ) { files in
            ("marker.json", files.map { "\($0.name) \($0.bytes) \($0.sha256)" }.joined(separator: "\n"))
        }
        #expect(whole.utf8.count > 2 << 20)
        #expect(try String(contentsOf: dir.appendingPathComponent("p.csv"), encoding: .utf8) == whole)
        #expect(try String(contentsOf: dir.appendingPathComponent("e.csv"), encoding: .utf8) == "h\n")
        let marker = try String(contentsOf: dir.appendingPathComponent("marker.json"), encoding: .utf8)
        #expect(marker == "p.csv \(whole.utf8.count) \(SHA256.hex(whole))\ne.csv 2 \(SHA256.hex("h\n"))")
    }

    @Test func leftoversOfDeadProcessesAreRemovedOthersKept() throws {
        let dir = tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // pid 2^22 + 1 is above Linux's pid_max limit, so no such process exists.
        let names = [".runs.csv.tmp-4194305", ".runs.csv.tmp-\(getpid())", ".keep", "runs.csv"]
        for n in names { try Data().write(to: dir.appendingPathComponent(n)) }
        // A folder a killed process left (older versions wrote each unit into one).
        try FileManager.default.createDirectory(at: dir.appendingPathComponent(".p000001-0-r000002.tmp-4194305"), withIntermediateDirectories: true)
        OutputFiles.removeLeftovers(in: dir)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == [".keep", ".runs.csv.tmp-\(getpid())", "runs.csv"])
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func sha256MatchesTheStandardsVectors(text: String, digest: String) {
        #expect(SHA256.hex(text) == digest)
        for hardware in [false, true] {
            var h = SHA256(hardware: hardware)
            h.update(Array(text.utf8))
            #expect(h.hexDigest() == digest, "hardware: \(hardware)")
        }
    }

    @Test(arguments: [false, true])
    func sha256OfAMillionAInPiecesMatchesTheStandard(hardware: Bool) {
        var h = SHA256(hardware: hardware)
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { h.update(chunk) }
        #expect(h.hexDigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// The processor's SHA instructions give the Swift rounds' digest for every length up to
    /// five blocks and for long inputs, fed whole or in random pieces.
    @Test func sha256InHardwareEqualsTheSwiftRounds() {
        var random = try! RandomStream(seed: 104)  // seeded: a failure repeats
        for length in Array(0...320) + [4096, 100_003] {
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            var swift = SHA256(hardware: false), hardware = SHA256(hardware: true)
            swift.update(data)
            var i = 0
            while i < length {
                let n = min(length - i, Int.random(in: 1...200, using: &random))
                hardware.update(Array(data[i..<(i + n)]))
                i += n
            }
            #expect(hardware.hexDigest() == swift.hexDigest(), "length \(length)")
        }
    }

    /// The instructions are used where the processor reports them (Linux: the `sha_ni` flag).
    @Test func sha256UsesTheHardwareWhereThereIsSome() throws {
        #if os(Linux) && arch(x86_64)
        let cpu = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpu.split(separator: "\n").first { $0.hasPrefix("flags") }.map { $0.split(separator: " ").map(String.init) } ?? []
        #expect(SHA256.usesHardware == (flags.contains("sha_ni") && flags.contains("sse4_1") && flags.contains("ssse3")))
        #else
        #expect(!SHA256.usesHardware)
        #endif
    }

    @Test func aFolderThatCannotBeMadeIsARuntimeFailure() throws {
        let file = tempFolder()
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: RuntimeFailure.self) {
            try OutputFiles.write([("a.csv", .text("x"))], to: file.appendingPathComponent("sub"))
        }
    }
}
