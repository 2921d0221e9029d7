import Foundation
import Policies
import Scheduling
import Testing

/// The built `bgsim` binary, which SwiftPM places beside the test bundle (or `BGSIM_BINARY`).
func bgsimBinary() -> String {
    ProcessInfo.processInfo.environment["BGSIM_BINARY"]
        ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("bgsim").path
}

/// Runs bgsim; `under` a wrapper command such as `["taskset", "-c", "0"]` if given.
func bgsim(
    _ arguments: [String], in folder: URL? = nil, environment: [String: String] = [:],
    under wrapper: [String] = []
) throws -> (status: Int32, stdout: String, stderr: String) {
    try shell(wrapper + [bgsimBinary()] + arguments, in: folder, environment: environment)
}

/// Runs a command (found on PATH) and returns its status and output.
func shell(_ command: [String], in folder: URL? = nil, environment: [String: String] = [:]) throws
    -> (status: Int32, stdout: String, stderr: String)
{
    let p = Process()
    p.executableURL = URL(fileURLWithPath: command[0].hasPrefix("/") ? command[0] : "/usr/bin/env")
    p.arguments = command[0].hasPrefix("/") ? Array(command.dropFirst()) : command
    if let folder { p.currentDirectoryURL = folder }
    if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let defaultScenario = repo.appendingPathComponent("models/scenarios/default.yaml").path

/// A fresh empty folder, removed after the test.
func scratch() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

func files(in dir: URL) -> [String] {
    ((try? FileManager.default.subpathsOfDirectory(atPath: dir.path)) ?? []).sorted()
}

@Suite("bgsim command line")
struct CLITests {
    @Test func helpShowsSubcommandsExamplesAndExitCodes() throws {
        let r = try bgsim(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("USAGE: bgsim <subcommand>"))
        #expect(r.stdout.contains("run "))
        #expect(r.stdout.contains("validate "))
        #expect(r.stdout.contains("sweep ") && r.stdout.contains("merge "))
        #expect(r.stdout.contains("  bgsim run models/scenarios/default.yaml --replications 30 --seed 7\n"))
        #expect(r.stdout.contains("  bgsim run models/scenarios/default.yaml --set charger.preset=wired-5w\n"))
        #expect(
            r.stdout.contains(
                "Exit codes: 0 success, 1 runtime failure, 2 bad input or usage (a scenario,\na sweep, an option, a folder that is not a results folder), 3 incomplete or\ninconsistent shards (merge)."
            ))
        #expect(r.stdout.contains("report ") && r.stdout.contains("  bgsim report results/default --format md\n"))
        let run = try bgsim(["run", "--help"])
        #expect(run.status == 0)
        for option in ["--set <key.path=value>", "--seed <seed>", "--replications <replications>", "--out <out>", "--jobs <jobs>"] {
            #expect(run.stdout.contains(option), "run --help lacks \(option)")
        }
    }

    /// Without --jobs, as many simulations run at once as the process has CPUs to run on:
    /// one under `taskset -c 0`, whatever the machine has. The first progress line says so.
    @Test func defaultJobsAreTheCPUsTheProcessMayUse() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let arguments = ["run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--no-tasks"]
        // The first line is the first unit's, or the last's when the run took under a second.
        let first = { (text: String) in text.split(separator: "\n").first.map(String.init) ?? "" }
        let pinned = try bgsim(arguments, in: dir, under: ["taskset", "-c", "0"])
        #expect(pinned.status == 0 && first(pinned.stderr).hasPrefix("progress: ") && first(pinned.stderr).contains(" units ("))
        #expect(first(pinned.stderr).contains("), 1 at a time, "), "\(pinned.stderr)")
        let asked = try bgsim(arguments + ["--jobs", "3"], in: dir, under: ["taskset", "-c", "0"])
        #expect(asked.status == 0 && first(asked.stderr).contains("), 3 at a time, "), "\(asked.stderr)")
        // Only the first line names it.
        #expect(asked.stderr.components(separatedBy: "at a time").count == 2)
    }

    /// Every example in `bgsim --help` works as written, from the repository's folder, and
    /// none is wrapped. Outputs go to a scratch folder (the examples' /tmp and /scratch paths,
    /// and --out where an example has none); runs and sweeps are cut to one hour and one
    /// replication by options added after the example's own (the last of an option counts).
    @Test func everyExampleInTheHelpRunsAsWritten() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let help = try bgsim(["--help"]).stdout
        let block = try #require(help.components(separatedBy: "Examples:\n").dropFirst().first?.components(separatedBy: "\n\n").first)
        let lines = block.split(separator: "\n").map(String.init)
        #expect(lines.count == 14 && lines.allSatisfy { $0.hasPrefix("  bgsim ") }, "an example is wrapped: \(lines)")
        var firstRun: String?
        for (i, line) in lines.enumerated() {
            var words = line.split(separator: " ").dropFirst().map { word -> String in
                let w = String(word)
                return w.hasPrefix("/tmp/") || w.hasPrefix("/scratch/")
                    ? dir.appendingPathComponent(w.dropFirst().replacingOccurrences(of: "/", with: "_")).path : w
            }
            let command = words[0]
            if command == "report", let firstRun { words[1] = firstRun }
            if command == "run" || command == "sweep" {
                words += ["--set", "duration=1h", "--replications", "1", "--quiet"]
                if !words.contains("--out") && !words.contains("--emit-slurm") {
                    words += ["--out", dir.appendingPathComponent("out-\(i)").path]
                }
                if command == "run" && firstRun == nil { firstRun = words[words.lastIndex(of: "--out")! + 1] }
            }
            // The shard example's siblings, for the merge example after it.
            let shards = words.contains("--shard") ? ["1/4", "2/4", "3/4", "4/4"] : [nil]
            for k in shards {
                var these = words
                if let k, let at = these.firstIndex(of: "--shard") {
                    these[at + 1] = k
                    these[these.lastIndex(of: "--out")! + 1] = dir.appendingPathComponent("tmp_s" + k.prefix(1)).path
                }
                let r = try bgsim(these, in: repo)
                #expect(r.status == 0, "example \(line) (as \(these.joined(separator: " "))): \(r.stderr)")
            }
        }
        for file in ["tmp_study/runs.csv", "tmp_sweep/runs.csv", "scratch_sweep/submit.sh"] {
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(file).path), "no \(file)")
        }
        let reported = try #require(firstRun)
        for file in ["report.md", "report.html"] {
            #expect(FileManager.default.fileExists(atPath: "\(reported)/\(file)"), "no \(file) in \(reported)")
        }
    }

    @Test func runWritesEveryFileAndATable() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(["run", defaultScenario, "--replications", "3", "--set", "duration=2d"], in: dir)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        // stderr is not a terminal here: plain progress lines, the last one complete.
        let progress = r.stderr.split(separator: "\n")
        #expect(!progress.isEmpty && progress.allSatisfy { $0.hasPrefix("progress: ") }, "\(r.stderr)")
        #expect(progress.last?.hasPrefix("progress: 18/18 units (100%), ") == true)
        #expect(progress.count <= 12, "a line per tenth of the work, not per unit")
        // Without --out, results/<name>; the --set override names the variant everywhere.
        let out = "results/default_duration-2d"
        #expect(
            files(in: dir) == ["results", out]
                + ["apps.csv", "comparisons.csv", "manifest.json", "runs.csv", "summary.csv", "tasks.csv"].map { "\(out)/\($0)" })
        let runs = try String(contentsOf: dir.appendingPathComponent("\(out)/runs.csv"), encoding: .utf8)
        let rows = runs.split(separator: "\n").dropFirst()
        #expect(rows.count == 18 && rows.allSatisfy { $0.hasPrefix("default_duration-2d,") }, "the scenario column names the variant")
        let manifest = try String(contentsOf: dir.appendingPathComponent("\(out)/manifest.json"), encoding: .utf8)
        #expect(manifest.contains("\"scenario\": \"default_duration-2d\""), "\(manifest.prefix(400))")
        #expect(r.stdout.contains("default_duration-2d: 2 days simulated, 3 replications, seed 42; mean ± 95% CI half-width, * best (bounds not starred)"))
        let header = try #require(r.stdout.split(separator: "\n").dropFirst().first)
        for column in ["policy", "completed %", "latency p50", "latency p90", "background J", "staleness", "fresh %"] {
            #expect(header.contains(column), "the table lacks \(column)")
        }
        for policy in ["eager", "charge-only", "coalesce", "ios", "android", "oracle"] {
            #expect(r.stdout.contains("\n\(policy) "), "the table lacks \(policy)")
        }
        let oracle = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("oracle ") })
        #expect(!oracle.contains("*"), "a bound is never starred")
        #expect(r.stdout.contains(" * "), "some best value is starred")
        #expect(r.stdout.contains("Wrote runs.csv, summary.csv, comparisons.csv, apps.csv, tasks.csv, manifest.json to \(out)"))
    }

    @Test func precisionAddsReplicationsAndSaysWhetherItWasReached() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(
            [
                "run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--set", "policies=[eager, charge-only]",
                "--precision", "0.05", "--precision-metric", "phone_energy_j", "--max-replications", "30", "--no-tasks",
            ], in: dir)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let line = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("Precision 0.05") })
        #expect(line.contains("reached with") || line.contains("NOT reached within 30"))
        let out = "results/default_duration-1d_policies-eager-charge-only"
        let manifest = try String(contentsOf: dir.appendingPathComponent("\(out)/manifest.json"), encoding: .utf8)
        #expect(manifest.contains("\"target_relative_half_width\": 0.05"))
        #expect(manifest.contains("\"metrics\": [\"phone_energy_j\"]"))
        #expect(files(in: dir).contains("\(out)/runs.csv") && !files(in: dir).contains("\(out)/tasks.csv"))
    }

    @Test func eventsIsOptInAndByteIdenticalAcrossJobCounts() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let common = ["run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--events", "--timeline", "15m"]
        let r = try bgsim(common + ["--out", "a", "--jobs", "1"], in: dir)
        #expect(
            r.status == 0
                && r.stdout.contains("Wrote runs.csv, summary.csv, comparisons.csv, apps.csv, tasks.csv, timeline.csv, events.csv, manifest.json to a"))
        #expect(try bgsim(common + ["--out", "b", "--jobs", "3", "--quiet"], in: dir).status == 0)
        for name in ["events.csv", "timeline.csv", "tasks.csv", "apps.csv"] {
            let a = try Data(contentsOf: dir.appendingPathComponent("a/\(name)"))
            #expect(a.count > 1000)
            #expect(a == (try Data(contentsOf: dir.appendingPathComponent("b/\(name)"))), "\(name) differs between --jobs 1 and 3")
        }
        // 1 day at 15 minutes: 97 samples (0 to 24 h) per run, 12 runs.
        let timeline = try String(contentsOf: dir.appendingPathComponent("a/timeline.csv"), encoding: .utf8)
        #expect(timeline.split(separator: "\n").count == 1 + 97 * 12)
    }

    @Test func sameSeedTwiceIsByteIdenticalAnotherSeedIsNot() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let common = ["run", defaultScenario, "--replications", "4", "--set", "duration=3d", "--quiet"]
        #expect(try bgsim(common + ["--out", "a", "--jobs", "1"], in: dir).status == 0)
        #expect(try bgsim(common + ["--out", "b", "--jobs", "2"], in: dir).status == 0)
        #expect(try bgsim(common + ["--out", "c", "--seed", "43"], in: dir).status == 0)
        for name in ["runs.csv", "summary.csv", "comparisons.csv", "tasks.csv"] {
            let a = try Data(contentsOf: dir.appendingPathComponent("a/\(name)"))
            let b = try Data(contentsOf: dir.appendingPathComponent("b/\(name)"))
            let c = try Data(contentsOf: dir.appendingPathComponent("c/\(name)"))
            #expect(a == b, "\(name) differs between --jobs 1 and --jobs 2")
            #expect(a != c, "\(name) is the same for seeds 42 and 43")
        }
    }

    /// A folder written again with other options holds only the new study's files: no
    /// tasks.csv, events.csv or report of the earlier one beside them, and files that are not
    /// bgsim's are kept. A shard written into it leaves no result files either. A folder that
    /// held no bgsim study keeps everything (only the files the study writes are replaced).
    @Test func aFolderWrittenAgainKeepsNothingOfTheEarlierStudy() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let common = ["run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--quiet", "--out", "r"]
        #expect(try bgsim(common + ["--events", "--timeline", "1h"], in: dir).status == 0)
        #expect(try bgsim(["report", "r", "--format", "md", "--quiet"], in: dir).status == 0)
        try Data("mine".utf8).write(to: dir.appendingPathComponent("r/notes.txt"))
        let r = dir.appendingPathComponent("r")
        #expect(
            files(in: r) == [
                "apps.csv", "comparisons.csv", "events.csv", "manifest.json", "notes.txt", "report.html", "report.md",
                "runs.csv", "summary.csv", "tasks.csv", "timeline.csv",
            ])
        let again = try bgsim(common + ["--seed", "9", "--no-tasks"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(files(in: r) == ["apps.csv", "comparisons.csv", "manifest.json", "notes.txt", "runs.csv", "summary.csv"])
        let shard = try bgsim(common + ["--shard", "1/2"], in: dir)
        #expect(shard.status == 0, "\(shard.stderr)")
        #expect(files(in: r).filter { !$0.hasPrefix("units") } == ["manifest.json", "notes.txt"])
        // A folder that held no bgsim study (no manifest of bgsim's) loses none of its files.
        let other = dir.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        for name in ["report.html", "tasks.csv", "manifest.json"] { try Data("theirs".utf8).write(to: other.appendingPathComponent(name)) }
        #expect(
            try bgsim(
                ["run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--quiet", "--no-tasks", "--out", "other"],
                in: dir
            ).status == 0)
        #expect(try Data(contentsOf: other.appendingPathComponent("report.html")) == Data("theirs".utf8))
        #expect(try Data(contentsOf: other.appendingPathComponent("tasks.csv")) == Data("theirs".utf8))
    }

    /// Shards that do not fit together exit 3 and merge says why: shards run with other
    /// output options are named with them (not their units called missing), and shards of
    /// different splits (1/2 with 2/3, which overlap and leave gaps) are said to be, before
    /// the units are listed. Nothing is written.
    @Test(arguments: [
        (
            ["1/2", "--events"], ["2/2", "--no-tasks"],
            "error: {b} was run with --no-tasks and {a} with --events: every shard of a study must "
                + "write the same files; run {b}'s shard again with {a}'s options\n"
        ),
        (
            ["1/2", "--no-tasks"], ["2/3", "--no-tasks"],
            "error: the shards do not make one complete study:\nthe shards were split "
                + "differently ({a} is 1/2, {b} is 2/3): run every shard with the same N in --shard K/N\n"
        ),
    ])
    func shardsThatDoNotFitTogetherSayWhy(first: [String], second: [String], message: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = try Self.sweepFile(in: dir)
        #expect(try bgsim(["sweep", sweep, "--quiet", "--out", "a", "--shard"] + first, in: dir).status == 0)
        #expect(try bgsim(["sweep", sweep, "--quiet", "--out", "b", "--shard"] + second, in: dir).status == 0)
        let r = try bgsim(["merge", "a", "b", "--out", "m"], in: dir)
        #expect(r.status == 3)
        let expected = message.replacingOccurrences(of: "{a}", with: dir.appendingPathComponent("a").path)
            .replacingOccurrences(of: "{b}", with: dir.appendingPathComponent("b").path)
        #expect(r.stderr.hasPrefix(expected), "\(r.stderr)")
        #expect(!files(in: dir).contains { $0.hasPrefix("m/") })
    }

    /// A shard whose unit files went missing after it finished is named with the file, and
    /// running the shard again mends it.
    @Test func aShardWithAMissingUnitRecordNamesTheFile() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = try Self.sweepFile(in: dir)
        let shard = ["sweep", sweep, "--shard", "1/1", "--out", "s", "--quiet", "--no-tasks"]
        #expect(try bgsim(shard, in: dir).status == 0)
        let record = dir.appendingPathComponent("s/units/p000001-0-r000002.unit.txt")
        try FileManager.default.removeItem(at: record)
        let r = try bgsim(["merge", "s", "--out", "m"], in: dir)
        #expect(r.status == 3)
        #expect(
            r.stderr.hasSuffix("(p000001-0-r000002) is listed in its manifest but \(record.path) is missing; run that shard again to redo it\n"),
            "\(r.stderr)")
        #expect(try bgsim(shard, in: dir).status == 0)
        #expect(try bgsim(["merge", "s", "--out", "m", "--quiet"], in: dir).status == 0)
    }

    /// A shard folder used again for another sweep (here one with fewer points) holds and
    /// lists only the new sweep's units: it merges into that sweep's files.
    @Test func aShardFolderUsedAgainHoldsOnlyTheNewStudysUnits() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let three = try Self.sweepFile(in: dir)
        let two = dir.appendingPathComponent("two.yaml")
        try String(contentsOfFile: three, encoding: .utf8).replacingOccurrences(of: "points: 3", with: "points: 2")
            .write(to: two, atomically: true, encoding: .utf8)
        #expect(try bgsim(["sweep", three, "--shard", "1/1", "--out", "s", "--quiet", "--no-tasks"], in: dir).status == 0)
        #expect(try bgsim(["sweep", two.path, "--shard", "1/1", "--out", "s", "--quiet", "--no-tasks"], in: dir).status == 0)
        // 2 points x 2 policies x 3 replications, each a record and its apps.csv rows.
        #expect(files(in: dir.appendingPathComponent("s/units")).count == 24, "\(files(in: dir.appendingPathComponent("s/units")))")
        let merged = try bgsim(["merge", "s", "--out", "m", "--quiet"], in: dir)
        #expect(merged.status == 0, "\(merged.stderr)")
        // Another slice of the same sweep run into the folder keeps the finished units: run
        // again, the first slice finds them all.
        #expect(try bgsim(["sweep", two.path, "--shard", "1/2", "--out", "s", "--quiet", "--no-tasks"], in: dir).status == 0)
        #expect(files(in: dir.appendingPathComponent("s/units")).count == 24)
        let again = try bgsim(["sweep", two.path, "--shard", "1/1", "--out", "s", "--no-tasks"], in: dir)
        #expect(again.stdout.contains(": 0 units run, 12 already finished"), "\(again.stdout)")
        #expect(try bgsim(["sweep", two.path, "--out", "whole", "--quiet", "--no-tasks"], in: dir).status == 0)
        for name in ["runs.csv", "summary.csv", "comparisons.csv", "manifest.json"] {
            #expect(
                try Data(contentsOf: dir.appendingPathComponent("m/\(name)")) == Data(contentsOf: dir.appendingPathComponent("whole/\(name)")),
                "\(name) differs from the unsharded sweep")
        }
    }

    /// Each bad input exits 2 with one message naming the file and key path, and writes nothing.
    @Test(arguments: [
        (
            "missing.yaml", [String](),
            "error: missing.yaml: no such scenario file; bundled scenarios, taken by name: default, discharge, fleet, reference, replay ('bgsim examples' lists them)\n"
        ),
        (
            "syntax.yaml", [],
            "error: syntax.yaml:4:9: duration: (after this key) invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping at line 3)\n"
        ),
        (
            "unknown.yaml", [],
            "error: unknown.yaml:12: phone.battery.capcity_wh: unknown key 'capcity_wh'; did you mean 'capacity_wh'? Known keys: model, capacity_wh, initial_charge_pct, idle_drain_pct_per_hour, boot_charge_pct, kibam_c, kibam_k_per_s\n"
        ),
        ("negative.yaml", [], "error: negative.yaml:12:18: phone.battery.capacity_wh: expected a capacity in watt-hours from more than 0 to 1000000, got -5\n"),
        (
            "good.yaml", ["--set", "phone.battery.capacity_wh=-1"],
            "error: good.yaml: --set phone.battery.capacity_wh=-1: phone.battery.capacity_wh: expected a capacity in watt-hours from more than 0 to 1000000, got -1\n"
        ),
        ("badtrace.yaml", [], "error: bad.csv:3: column 'network': expected one of wifi, cellular, none, got 'lan'\n"),
        (
            "good.yaml", ["--replications", "0"],
            "error: good.yaml: --replications 0: replications: expected a whole number of replications from 1 to 1000000, got '0'\n"
        ),
        ("good.yaml", ["--seed", "many"], "error: good.yaml: --seed many: seed: expected a seed (a whole number from 0 to 2^64-1), got 'many'\n"),
    ])
    func badInputExitsTwoWithOneMessageAndNoFiles(file: String, extra: [String], message: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let world = "models: \(repo.path)/models\ncharging: nightly\nnetwork: home-office\npeople: median\n"
        let good = "duration: 2d\napps:\n  - name: news\npolicies: [eager]\n" + world
        let inputs = [
            "syntax.yaml": "duration: 2d\napps: [\n  {name: a\npolicies: [eager]\n",
            "unknown.yaml": good + "phone:\n  profile: iphone-15\n  battery:\n    capcity_wh: 10\n",
            "negative.yaml": good + "phone:\n  profile: iphone-15\n  battery:\n    capacity_wh: -5\n",
            "good.yaml": good + "phone: iphone-15\n",
            "badtrace.yaml": (good + "phone: iphone-15\n").replacingOccurrences(
                of: "network: home-office", with: "network: {profile: home-office, trace: bad.csv}"),
            "bad.csv": "time,network,down_mbps,up_mbps\n0,wifi,50,10\n3600,lan,1,1\n",
        ]
        for (name, text) in inputs { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
        let before = files(in: dir)
        let r = try bgsim(["run", file, "--out", "out"] + extra, in: dir)
        #expect(r.status == 2)
        #expect(r.stderr == message)
        #expect(r.stdout.isEmpty)
        #expect(files(in: dir) == before, "a failed run wrote files")
    }

    @Test(arguments: [
        (["run"], "error: Missing expected argument '<scenario>'"),
        (["run", "x.yaml", "--jobs", "0"], "error: --jobs must be at least 1, got 0"),
        (["run", "x.yaml", "--set", "nope"], "error: --set 'nope': expected key.path=value, such as phone.battery.capacity_wh=17.11"),
        (["frobnicate"], "error: Unexpected argument 'frobnicate'"),
        (["run", "x.yaml", "--precision", "2"], "error: --precision must be a fraction between 0 and 1, such as 0.05; got 2.0"),
        (["run", "x.yaml", "--precision", "0.1", "--precision-metric", "speed"], "error: --precision-metric 'speed' is not a runs.csv metric"),
        (["run", "x.yaml", "--precision-metric", "completed_pct"], "error: --precision-metric needs --precision"),
        (["run", "x.yaml", "--timeline", "0s"], "error: --timeline '0s': expected a duration of at least 1s, such as 5m or 30s"),
        (["run", "x.yaml", "--timeline", "1us"], "error: --timeline '1us': expected a duration of at least 1s, such as 5m or 30s"),
        (["run", "x.yaml", "--jobs", "-3"], "error: --jobs must be at least 1, got -3"),
        (["run", "x.yaml", "--out", ""], "error: --out '': expected a folder for the results"),
        (["run", "x.yaml", "--out", "/"], "error: --out /: the root folder; expected a folder for the results"),
        (["merge", "s1", "./s2/", "--out", "s2"], "error: --out s2 is the shard folder ./s2/; merge into another folder"),
        (["sensitivity", "check", "--samples", "1"], "error: --samples 1: expected 2 to 65536"),
        (["sensitivity", "check", "--levels", "3"], "error: --levels 3: expected an even number from 2 to 20"),
    ])
    func usageErrorsExitTwo(arguments: [String], firstLine: String) throws {
        let r = try bgsim(arguments)
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix(firstLine), "\(r.stderr)")
        // One line: the usage block no longer follows the error; --help shows it.
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }

    /// `bgsim sensitivity check` writes the points, outputs and estimates of its Ishigami check,
    /// and fails (exit 1) when the estimates are further from the known indices than asked.
    @Test func theSensitivityCheckWritesItsFilesAndFailsOutsideItsTolerance() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(["sensitivity", "check", "--out", "c"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("Ishigami, 40960 evaluations: Sobol' first and total indices (known)\n"), "\(r.stdout)")
        #expect(r.stdout.contains("  x3: 0.000 (0.000)"), "\(r.stdout)")
        for (name, rows) in [("sobol.csv", 40_961), ("morris.csv", 201), ("indices.csv", 7)] {
            let text = try String(contentsOf: dir.appendingPathComponent("c/\(name)"), encoding: .utf8)
            #expect(text.split(separator: "\n").count == rows, "\(name)")
        }
        let tight = try bgsim(["sensitivity", "check", "--samples", "64", "--tolerance", "0.0001", "--out", "t"], in: dir)
        #expect(tight.status == 1 && tight.stderr.hasPrefix("error: the largest error of a Sobol' index, "), "\(tight.stderr)")
        #expect(try bgsim(["sensitivity", "--help"]).stdout.contains("check"))
    }

    /// A negative number given to an option reaches the option's own check (the parser took
    /// `-1` for an option and said "Missing value").
    @Test func aNegativeNumberIsCheckedLikeAnyOther() throws {
        let r = try bgsim(["run", defaultScenario, "--replications", "-1"])
        #expect(r.status == 2)
        #expect(r.stderr == "error: \(defaultScenario): --replications -1: replications: expected a whole number of replications from 1 to 1000000, got '-1'\n")
        let seed = try bgsim(["run", defaultScenario, "--seed", "-1"])
        #expect(seed.status == 2 && seed.stderr.hasSuffix("seed: expected a seed (a whole number from 0 to 2^64-1), got '-1'\n"))
    }

    @Test func anOutputThatCannotBeWrittenExitsOne() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("not a folder".utf8).write(to: dir.appendingPathComponent("blocker"))
        let r = try bgsim(["run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--out", "blocker/out"], in: dir)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("error: cannot create output folder "))
        #expect(r.stderr.contains("blocker/out"))
        // The reason names the file in the way (Foundation's own error gave only
        // "NSCocoaErrorDomain error 512"), whether it is a parent or the folder itself.
        let blocker = dir.appendingPathComponent("blocker").standardizedFileURL.path
        #expect(r.stderr.contains(": \(blocker) is a file, not a folder\n"), "\(r.stderr)")
        // Naming a file as the folder itself is bad usage, refused before anything runs.
        let itself = try bgsim(["run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--out", "blocker"], in: dir)
        #expect(itself.status == 2 && itself.stderr == "error: --out blocker: a file, not a folder (see --help)\n", "\(itself.stderr)")
        let slurm = try bgsim(["sweep", repo.appendingPathComponent("models/sweeps/refresh-setting.yaml").path, "--emit-slurm", "blocker"], in: dir)
        #expect(slurm.status == 1 && slurm.stderr.contains(": \(blocker) is a file, not a folder\n"), "\(slurm.stderr)")
    }

    @Test func validateChecksWithoutRunning() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(["validate", defaultScenario], in: dir)
        #expect(r.status == 0)
        #expect(
            r.stdout
                == "\(defaultScenario): ok: scenario 'default', 7d, 13 apps, policies eager, charge-only, coalesce, ios, android, oracle, 10 replications from seed 42\n"
        )
        #expect(files(in: dir).isEmpty)
        let bad = try bgsim(["validate", defaultScenario, "--set", "policies=[]"], in: dir)
        #expect(bad.status == 2)
        #expect(
            bad.stderr
                == "error: \(defaultScenario): --set policies=[]: policies: expected at least one policy ("
                + PolicyRegistry.builtIn.map { $0.policyName }.joined(separator: ", ") + ")\n"
        )
    }

    /// validate reads a sweep at every point, as `sweep` would, and runs nothing; a sweep given
    /// to `run` and a scenario given to `sweep` are named as such, with the right command.
    @Test func validateChecksSweepsAndAWrongCommandIsNamed() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = try Self.sweepFile(in: dir)
        let ok = try bgsim(["validate", sweep, "--replications", "2"], in: dir)
        #expect(
            ok.status == 0
                && ok.stdout == "\(sweep): ok: sweep 'sweep', sobol design over people.sessions_per_day: "
                    + "3 points x 2 policies x 2 replications = 12 units, base scenario \(defaultScenario)\n",
            "\(ok.stderr)")
        let one = try bgsim(["validate", sweep, "--replications", "1", "--set", "policies=[eager]"], in: dir)
        #expect(one.status == 0 && one.stdout.contains(": 3 points x 1 policy x 1 replication = 3 units, "), "\(one.stdout)")
        #expect(files(in: dir) == ["sweep.yaml"], "nothing written")
        let bad = try bgsim(["validate", sweep, "--set", "people.sessions_per_day=-3"], in: dir)
        #expect(bad.status == 2 && bad.stderr.contains("people.sessions_per_day: expected a mean number of sessions per day"), "\(bad.stderr)")
        let run = try bgsim(["run", sweep], in: dir)
        #expect(
            run.status == 2
                && run.stderr == "error: \(sweep):1: scenario: this is a sweep, not a scenario "
                    + "(it names a base scenario and axes); run it with: bgsim sweep \(sweep)\n",
            "\(run.stderr)")
        let wrong = try bgsim(["sweep", defaultScenario], in: dir)
        #expect(
            wrong.status == 2
                && wrong.stderr == "error: \(defaultScenario): scenario: this is a scenario, not a sweep "
                    + "(a sweep names its base scenario under 'scenario'); run it with: bgsim run \(defaultScenario)\n",
            "\(wrong.stderr)")
        #expect(files(in: dir) == ["sweep.yaml"], "nothing written")
    }

    /// `validate --points` lists a sweep's design as the result files will name it: each
    /// listed row is the start of that point's rows in runs.csv, and the sweep runs exactly
    /// the listed points; nothing is written. A scenario has no design: exit 2, named.
    @Test func validatePointsListsTheDesignTheSweepRuns() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("design.yaml")
        try """
        scenario: \(defaultScenario)
        set: {duration: 1h}
        replications: 1
        policies: [eager]
        design: lhs
        points: 5
        axes:
          - {path: people.sessions_per_day, from: 20, to: 100, log: true}
          - {path: charging, values: [nightly, top-up, erratic]}
        """.write(to: url, atomically: true, encoding: .utf8)
        let listed = try bgsim(["validate", url.path, "--points"], in: dir)
        #expect(listed.status == 0 && listed.stderr.isEmpty, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "scenario,point,people.sessions_per_day,charging", "\(listed.stdout)")
        #expect(lines.count == 1 + 5 + 1 && lines.last == "", "a header, five points and a final line break: \(listed.stdout)")
        #expect(files(in: dir) == ["design.yaml"], "nothing written")
        let ran = try bgsim(["sweep", url.path, "--out", "out", "--no-tasks", "--quiet"], in: dir)
        #expect(ran.status == 0, "\(ran.stderr)")
        let runs = try String(contentsOf: dir.appendingPathComponent("out/runs.csv"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        #expect(runs[0].hasPrefix(lines[0] + ",policy,replication,"), "\(runs[0])")
        #expect(runs.count == 1 + 5)
        for (k, row) in runs.dropFirst().enumerated() {
            #expect(row.hasPrefix(lines[1 + k] + ",eager,0,"), "point \(k): listed \(lines[1 + k]), ran \(row)")
        }
        // Five distinct sessions-per-day values, one in each fifth of the log range (a Latin
        // hypercube), so the listing is the design, not five copies of one point.
        let rates = lines[1...5].map { Double($0.split(separator: ",")[2])! }
        #expect(Set(rates.map { Int(5 * log(Double($0) / 20) / log(5)) }) == [0, 1, 2, 3, 4], "\(rates)")
        let scenario = try bgsim(["validate", defaultScenario, "--points"], in: dir)
        #expect(
            scenario.status == 2 && scenario.stdout.isEmpty
                && scenario.stderr == "error: \(defaultScenario) is a scenario, not a sweep: --points lists the points of a sweep's design\n",
            "\(scenario.stderr)")
    }

    /// A sweep of one point, one replication, says so in the singular, as does its report.
    @Test func aOnePointSweepIsCountedInTheSingular() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let single = dir.appendingPathComponent("single.yaml")
        try
            "scenario: \(defaultScenario)\nset: {duration: 1h}\nreplications: 1\npolicies: [eager, ios]\ndesign: grid\naxes:\n  - {path: people.sessions_per_day, values: [40]}\n"
            .write(to: single, atomically: true, encoding: .utf8)
        let ran = try bgsim(["sweep", single.path, "--out", "single", "--no-tasks"], in: dir)
        #expect(ran.status == 0 && ran.stdout.contains("Sweep 'single': 1 point x 2 policies x 1 replication ("), "\(ran.stdout)")
        #expect(try bgsim(["report", "single", "--format", "md", "--quiet"], in: dir).status == 0)
        let md = try String(contentsOf: dir.appendingPathComponent("single/report.md"), encoding: .utf8)
        #expect(md.contains("Sweep over `people.sessions_per_day`, 1 point; 1 replication, seed 42.\n"), "\(md.prefix(300))")
        let html = try String(contentsOf: dir.appendingPathComponent("single/report.html"), encoding: .utf8)
        #expect(html.contains("sweep over people.sessions_per_day (1 point) · 1 replication · "))
    }

    static func sweepFile(in dir: URL) throws -> String {
        let url = dir.appendingPathComponent("sweep.yaml")
        try """
        scenario: \(defaultScenario)
        set: {duration: 1d}
        replications: 3
        policies: [eager, ios]
        design: sobol
        points: 3
        axes:
          - {path: people.sessions_per_day, from: 20, to: 100, integer: true}
        """.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test func sweepShardsMergeIntoTheUnshardedFilesAndIncompleteShardsExitThree() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = try Self.sweepFile(in: dir)
        let whole = try bgsim(["sweep", sweep, "--out", "whole"], in: dir)
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.stdout.contains("Sweep 'sweep': 3 points x 2 policies x 3 replications (18 units run, 0 already finished)."))
        for k in 1...4 {
            let r = try bgsim(["sweep", sweep, "--shard", "\(k)/4", "--out", "s\(k)"], in: dir)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("Shard \(k)/4 of 'sweep'"))
        }
        let merged = try bgsim(["merge", "s1", "s2", "s3", "s4", "--out", "merged"], in: dir)
        #expect(merged.status == 0, "\(merged.stderr)")
        for name in ["runs.csv", "summary.csv", "comparisons.csv", "tasks.csv", "manifest.json"] {
            #expect(
                try Data(contentsOf: dir.appendingPathComponent("whole/\(name)")) == Data(contentsOf: dir.appendingPathComponent("merged/\(name)")), "\(name)")
        }
        let missing = try bgsim(["merge", "s1", "s2", "s4", "--out", "bad"], in: dir)
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("units missing") && missing.stderr.contains("missing: point "), "\(missing.stderr)")
        #expect(missing.stderr.contains("shards not given: 3/4\n"), "\(missing.stderr)")
        try FileManager.default.copyItem(at: dir.appendingPathComponent("s2"), to: dir.appendingPathComponent("s2-again"))
        let duplicate = try bgsim(["merge", "s1", "s2", "s3", "s4", "s2-again", "--out", "bad"], in: dir)
        #expect(duplicate.status == 3 && duplicate.stderr.contains("in more than one shard"))
        #expect(
            duplicate.stderr.contains("shard 2/4 given more than once: ") && duplicate.stderr.contains("/s2 and /")
                && duplicate.stderr.contains("/s2-again\n"), "\(duplicate.stderr)")
        let twice = try bgsim(["merge", "s1", "s2", "s3", "s4", "s2", "--out", "bad"], in: dir)
        #expect(
            twice.status == 3 && twice.stderr.hasPrefix("error: /") && twice.stderr.hasSuffix("/s2 is named more than once\n"),
            "\(twice.stderr)")
        let notShard = try bgsim(["merge", "whole", "--out", "bad"], in: dir)
        #expect(notShard.status == 3 && notShard.stderr.contains("not a shard's manifest"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad/runs.csv").path))
    }

    /// Shards that named the study's file by other paths (run from other folders) are one
    /// study, and merge, run from yet another folder, finds the file by the absolute path a
    /// shard noted: the CSVs equal the unsharded sweep's. Without the file, or with it
    /// changed, merge says what it tried and exits 3.
    @Test func shardsRunFromOtherFoldersMergeFromAnywhere() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try Self.sweepFile(in: dir)
        for sub in ["a", "elsewhere"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let whole = try bgsim(["sweep", "sweep.yaml", "--out", "whole"], in: dir)
        #expect(whole.status == 0, "\(whole.stderr)")
        let s1 = try bgsim(["sweep", "sweep.yaml", "--shard", "1/2", "--out", "s1"], in: dir)
        let s2 = try bgsim(["sweep", "../sweep.yaml", "--shard", "2/2", "--out", "../s2"], in: dir.appendingPathComponent("a"))
        #expect(s1.status == 0 && s2.status == 0, "\(s1.stderr)\(s2.stderr)")
        let elsewhere = dir.appendingPathComponent("elsewhere")
        let merged = try bgsim(["merge", "../s1", "../s2", "--out", "../merged"], in: elsewhere)
        #expect(merged.status == 0, "\(merged.stderr)")
        for name in ["runs.csv", "summary.csv", "comparisons.csv", "tasks.csv"] {
            #expect(
                try Data(contentsOf: dir.appendingPathComponent("whole/\(name)")) == Data(contentsOf: dir.appendingPathComponent("merged/\(name)")), "\(name)")
        }

        let file = dir.appendingPathComponent("sweep.yaml")
        try FileManager.default.moveItem(at: file, to: dir.appendingPathComponent("sweep.moved"))
        let lost = try bgsim(["merge", "../s1", "../s2", "--out", "../bad"], in: elsewhere)
        #expect(
            lost.status == 3 && lost.stderr.hasPrefix("error: cannot read again the study the shards ran: sweep.yaml: not found from /")
                && lost.stderr.contains("; ../sweep.yaml: not found from /") && lost.stderr.contains("/sweep.yaml: not found from /")
                && lost.stderr.hasSuffix(". Merge where the shards ran, with the study's files as they were\n"), "\(lost.stderr)")
        try String(contentsOf: dir.appendingPathComponent("sweep.moved"), encoding: .utf8)
            .replacingOccurrences(of: "replications: 3", with: "replications: 4").write(to: file, atomically: true, encoding: .utf8)
        let changed = try bgsim(["merge", "s1", "s2", "--out", "bad"], in: dir)
        #expect(
            changed.status == 3 && changed.stderr.contains("sweep.yaml (with []) no longer describes it: its plan_sha256 differs"),
            "\(changed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad").path))
    }

    @Test func badSweepInputExitsTwoNamingTheFile() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = try Self.sweepFile(in: dir)
        let r = try bgsim(["sweep", sweep, "--set", "people.sessions_per_day=-1"], in: dir)
        #expect(r.status == 2 && r.stderr.contains("people.sessions_per_day"), "\(r.stderr)")
        let bad = dir.appendingPathComponent("bad.yaml")
        try "scenario: \(defaultScenario)\ndesign: cube\naxes: []\n".write(to: bad, atomically: true, encoding: .utf8)
        let d = try bgsim(["sweep", bad.path], in: dir)
        #expect(d.status == 2 && d.stderr.contains(bad.path) && d.stderr.contains("design"), "\(d.stderr)")
        let shard = try bgsim(["sweep", sweep, "--shard", "5/4"], in: dir)
        #expect(shard.status == 2 && shard.stderr.contains("--shard '5/4': expected K/N with 1 <= K <= N"))
        let precision = try bgsim(["run", defaultScenario, "--shard", "1/2", "--precision", "0.1"], in: dir)
        #expect(precision.status == 2 && precision.stderr.contains("cannot be split with --shard"))
        let sweepPrecision = try bgsim(["sweep", sweep, "--shard", "1/2", "--precision", "0.1"], in: dir)
        #expect(sweepPrecision.status == 2 && sweepPrecision.stderr.contains("cannot be split with --shard"), "\(sweepPrecision.stderr)")
        let slurmPrecision = try bgsim(["sweep", sweep, "--emit-slurm", "slurm", "--precision", "0.1"], in: dir)
        #expect(slurmPrecision.status == 2 && slurmPrecision.stderr.contains("cannot be split with --emit-slurm"), "\(slurmPrecision.stderr)")
        let badTarget = try bgsim(["sweep", sweep, "--precision", "2"], in: dir)
        #expect(badTarget.status == 2 && badTarget.stderr.hasPrefix("error: --precision must be a fraction between 0 and 1"))
        #expect(files(in: dir) == ["bad.yaml", "sweep.yaml"], "a refused sweep wrote files")
    }

    /// `sweep --precision` adds replications in rounds until every point's every policy meets
    /// the goal, and the files are those of the same sweep run with that many replications.
    @Test func aSweepWithPrecisionMeetsTheGoalAtEveryPointAndEqualsAPlainSweep() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = try Self.sweepFile(in: dir)
        let r = try bgsim(
            [
                "sweep", sweep, "--replications", "2", "--precision", "0.1", "--precision-metric", "phone_energy_j",
                "--max-replications", "40", "--no-tasks", "--out", "p", "--jobs", "2",
            ], in: dir)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let line = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("Precision 0.1") })
        #expect(line.hasPrefix("Precision 0.1 reached with"), "\(line)")
        let summary = try String(contentsOf: dir.appendingPathComponent("p/summary.csv"), encoding: .utf8)
        let header = summary.split(separator: "\n")[0].split(separator: ",").map(String.init)
        let col = { (name: String) in header.firstIndex(of: name)! }
        let rows = summary.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let energy = rows.filter { $0[col("metric")] == "phone_energy_j" }
        #expect(energy.count == 3 * 2, "every point and policy")
        let n = Set(energy.map { $0[col("n")] })
        try #require(n.count == 1, "one replication count for every point: \(n)")
        let replications = try #require(Int(n.first!))
        #expect(replications > 2, "2 replications were not enough for 10%; the goal must have added some")
        for row in energy {
            let mean = Double(row[col("mean")])!, half = Double(row[col("ci95_half_width")])!
            #expect(half / abs(mean) <= 0.1 / 1.1, "point \(row[col("point")]), \(row[col("policy")]): \(half / mean)")
        }
        #expect(r.stdout.contains("3 points x 2 policies x \(replications) replications"))
        // Progress counts the whole study: a round adds its units to the total, and says so.
        let progress = r.stderr.split(separator: "\n").map(String.init)
        #expect(progress.allSatisfy { $0.hasPrefix("progress: ") }, "\(r.stderr)")
        let counts = progress.map { line in line.dropFirst(10).prefix { $0 != " " }.split(separator: "/").map { Int($0)! } }
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0[0] <= $1[0] && $0[1] <= $1[1] }, "counts go back: \(progress)")
        #expect(counts.last == [3 * 2 * replications, 3 * 2 * replications], "\(progress)")
        #expect(progress.contains { $0.contains(", round 2 of --precision, ") }, "\(progress)")
        #expect(progress.contains { $0.hasPrefix("progress: 12/12 units (100%), ") }, "the first round's 2 replications are 12 units: \(progress)")
        let manifest = try String(contentsOf: dir.appendingPathComponent("p/manifest.json"), encoding: .utf8)
        #expect(manifest.contains("\"target_relative_half_width\": 0.1"))
        let plain = try bgsim(["sweep", sweep, "--replications", "\(replications)", "--no-tasks", "--out", "q", "--jobs", "3", "--quiet"], in: dir)
        #expect(plain.status == 0, "stderr: \(plain.stderr)")
        for name in ["runs.csv", "summary.csv", "comparisons.csv"] {
            #expect(
                try Data(contentsOf: dir.appendingPathComponent("p/\(name)")) == Data(contentsOf: dir.appendingPathComponent("q/\(name)")),
                "\(name) differs from the sweep with \(replications) replications")
        }
    }

    @Test func emitSlurmWritesAJobArrayAMergeJobAndASubmitScript() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = try Self.sweepFile(in: dir)
        let r = try bgsim(["sweep", sweep, "--emit-slurm", "cluster", "--shards", "3", "--slurm-option=--time=00:10:00", "--no-tasks"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let job = try String(contentsOf: dir.appendingPathComponent("cluster/sweep.sbatch"), encoding: .utf8)
        #expect(job.contains("#SBATCH --array=1-3\n") && job.contains("#SBATCH --time=00:10:00\n"))
        #expect(job.contains(" sweep \(sweep) --no-tasks --shard \"${SLURM_ARRAY_TASK_ID}/3\" --out "))
        let merge = try String(contentsOf: dir.appendingPathComponent("cluster/merge.sbatch"), encoding: .utf8)
        #expect(merge.contains("merge ") && merge.contains("/cluster/shard-1 ") && merge.contains("/cluster/shard-3 --out "))
        let submit = try String(contentsOf: dir.appendingPathComponent("cluster/submit.sh"), encoding: .utf8)
        #expect(submit.contains("--dependency=afterok:") && submit.contains(" --kill-on-invalid-dep=yes "))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("results").path), "nothing was run")
        // More shards than units (3 points x 2 policies x 3 replications = 18 here): one
        // shard per unit, said so, and no array task left with nothing to run.
        let many = try bgsim(["sweep", sweep, "--emit-slurm", "many", "--shards", "40"], in: dir)
        #expect(many.status == 0 && many.stdout.contains("18 units in 18 shards (one per unit: 40 were asked for)"), "\(many.stdout)")
        let manyJob = try String(contentsOf: dir.appendingPathComponent("many/sweep.sbatch"), encoding: .utf8)
        #expect(manyJob.contains("#SBATCH --array=1-18\n") && manyJob.contains("/18\" --out "))
        let manyMerge = try String(contentsOf: dir.appendingPathComponent("many/merge.sbatch"), encoding: .utf8)
        #expect(manyMerge.contains("/many/shard-18 --out ") && !manyMerge.contains("/many/shard-19"))
        // --max-running limits the shards running at once (the array's %limit).
        let limited = try bgsim(["sweep", sweep, "--emit-slurm", "limited", "--shards", "6", "--max-running", "2"], in: dir)
        #expect(limited.status == 0, "\(limited.stderr)")
        let limitedJob = try String(contentsOf: dir.appendingPathComponent("limited/sweep.sbatch"), encoding: .utf8)
        #expect(limitedJob.contains("#SBATCH --array=1-6%2\n"), "\(limitedJob)")
    }

    /// An sbatch option the scripts write themselves, given again through --slurm-option, would
    /// be lost without a word (the later #SBATCH line wins): refused, naming what to use
    /// instead, as are a --slurm-option that is not an option and the Slurm options without
    /// --emit-slurm. Nothing is written.
    @Test func slurmOptionsTheScriptsWriteThemselvesAreRefused() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = try Self.sweepFile(in: dir)
        let refused: [([String], String)] = [
            (["--slurm-option=--array=1-3%1"], "--slurm-option '--array=1-3%1': bgsim writes the job array itself: use --shards, and --max-running"),
            (["--slurm-option=-a1-3"], "--slurm-option '-a1-3': bgsim writes the job array itself"),
            (["--slurm-option=--cpus-per-task=4"], "--slurm-option '--cpus-per-task=4': bgsim asks for --jobs CPUs per shard: use --jobs"),
            (["--slurm-option=-c4"], "--slurm-option '-c4': bgsim asks for --jobs CPUs per shard"),
            (["--slurm-option=--output=/tmp/x.log"], "--slurm-option '--output=/tmp/x.log': the jobs' logs go to the --emit-slurm folder's logs/"),
            (["--slurm-option=--job-name=x"], "--slurm-option '--job-name=x': bgsim names the jobs"),
            (["--slurm-option=--dependency=afterok:1"], "--slurm-option '--dependency=afterok:1': submit.sh makes the merge wait"),
            (["--slurm-option=partition=short"], "--slurm-option 'partition=short': expected an sbatch option, such as --partition=short"),
            (["--max-running", "0"], "--max-running must be at least 1, got 0"),
        ]
        for (options, message) in refused {
            let r = try bgsim(["sweep", sweep, "--emit-slurm", "cluster"] + options, in: dir)
            #expect(r.status == 2 && r.stderr.hasPrefix("error: " + message), "\(options): \(r.stderr)")
        }
        let noEmit = try bgsim(["sweep", sweep, "--max-running", "2"], in: dir)
        #expect(
            noEmit.status == 2 && noEmit.stderr.hasPrefix("error: --max-running is for the scripts --emit-slurm writes; add --emit-slurm FOLDER"),
            "\(noEmit.stderr)")
        let noEmitRun = try bgsim(["run", defaultScenario, "--slurm-option=--partition=short"], in: dir)
        #expect(
            noEmitRun.status == 2 && noEmitRun.stderr.hasPrefix("error: --slurm-option is for the scripts --emit-slurm writes"),
            "\(noEmitRun.stderr)")
        #expect(files(in: dir) == ["sweep.yaml"], "nothing written")
        // Options the scripts do not write pass, the --array prefix included only as itself.
        let ok = try bgsim(
            [
                "sweep", sweep, "--emit-slurm", "cluster", "--slurm-option=--partition=short",
                "--slurm-option=--arrayish=1", "--slurm-option=-p", "--slurm-option=--error=err.log",
            ], in: dir)
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    /// `run --emit-slurm` writes the same three scripts for a run's shards (`run.sbatch`).
    /// Run by hand as Slurm would run them (each array task with its SLURM_ARRAY_TASK_ID,
    /// then the merge), they give the files of the run done in one piece, byte for byte.
    @Test func runEmitSlurmScriptsGiveTheRunsFiles() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let options = ["--replications", "3", "--set", "duration=1d", "--set", "policies=[eager, ios]", "--seed", "7", "--no-tasks"]
        let r = try bgsim(["run", defaultScenario, "--emit-slurm", "cluster", "--shards", "4"] + options, in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.contains("Wrote run.sbatch, merge.sbatch, submit.sh to \(dir.appendingPathComponent("cluster").path): 6 units in 4 shards."),
            "\(r.stdout)")
        let job = try String(contentsOf: dir.appendingPathComponent("cluster/run.sbatch"), encoding: .utf8)
        #expect(job.contains("#SBATCH --array=1-4\n") && job.contains(" run \(defaultScenario) --set duration=1d "))
        let submit = try String(contentsOf: dir.appendingPathComponent("cluster/submit.sh"), encoding: .utf8)
        #expect(submit.contains("/cluster/run.sbatch"))
        #expect(!files(in: dir).contains("results"), "nothing was run")
        for k in 1...4 {
            let task = try shell(["bash", dir.appendingPathComponent("cluster/run.sbatch").path], in: dir, environment: ["SLURM_ARRAY_TASK_ID": "\(k)"])
            #expect(task.status == 0, "array task \(k): \(task.stderr)")
        }
        let merge = try shell(["bash", dir.appendingPathComponent("cluster/merge.sbatch").path], in: dir)
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(try bgsim(["run", defaultScenario, "--out", "whole", "--quiet", "--jobs", "2"] + options, in: dir).status == 0)
        for name in ["runs.csv", "summary.csv", "comparisons.csv", "manifest.json"] {
            #expect(
                try Data(contentsOf: dir.appendingPathComponent("cluster/result/\(name)")) == Data(contentsOf: dir.appendingPathComponent("whole/\(name)")),
                "\(name) differs from the run done in one piece")
        }
        let both = try bgsim(["run", defaultScenario, "--emit-slurm", "x", "--precision", "0.1"], in: dir)
        #expect(both.status == 2 && both.stderr.contains("cannot be split with --emit-slurm"), "\(both.stderr)")
    }
}
