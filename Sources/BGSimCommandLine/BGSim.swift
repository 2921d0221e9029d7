import ArgumentParser
import Experiments
import Foundation
import Reports
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine

/// Exit codes: distinct, documented in `--help`, and tested.
enum Exit {
    static let success: Int32 = 0
    /// The input was fine but the run failed (for example, an output could not be written).
    static let runtimeFailure: Int32 = 1
    /// Bad input or usage: a scenario file, a `--set` value, an option.
    static let badInput: Int32 = 2
    /// `merge`: the shards do not make one complete study (missing or duplicate units,
    /// shards of different studies, damaged unit files).
    static let incomplete: Int32 = 3
}

/// Every command names itself (`commandName`): otherwise argument-parser derives the name
/// from the type's, through `String(describing:)` and reflection, whose protocol-conformance
/// lookups cost about 5 M instructions at each start (callgrind), a quarter of parsing.
struct BGSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bgsim",
        abstract: "Simulate how a phone decides when apps' background work runs, and compare scheduling policies.",
        discussion: """
            Examples:
              bgsim run models/scenarios/default.yaml
              bgsim run models/scenarios/default.yaml --replications 30 --seed 7
              bgsim run models/scenarios/default.yaml --out /tmp/study --jobs 2
              bgsim run models/scenarios/default.yaml --set charger.preset=wired-5w
              bgsim validate models/scenarios/default.yaml --set people.sessions_per_day=80
              bgsim sweep models/sweeps/refresh-setting.yaml --jobs 2
              bgsim sweep models/sweeps/refresh-setting.yaml --shard 1/4 --out /tmp/s1
              bgsim merge /tmp/s1 /tmp/s2 /tmp/s3 /tmp/s4 --out /tmp/sweep
              bgsim sweep models/sweeps/refresh-setting.yaml --emit-slurm /scratch/sweep
              bgsim report results/default --format md

            Exit codes: 0 success, 1 runtime failure, 2 bad input or usage (a scenario,
            a sweep, an option, a folder that is not a results folder), 3 incomplete or
            inconsistent shards (merge).
            """,
        version: Manifest.toolVersion,
        subcommands: [Run.self, SweepCommand.self, Merge.self, ReportCommand.self, Validate.self, Policies.self]
    )
}

/// The options that pick and adjust a scenario, shared by `run` and `validate`.
struct ScenarioOptions: ParsableArguments {
    @Argument(help: "The scenario file (YAML), such as models/scenarios/default.yaml.")
    var scenario: String

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "Override a scenario value by its key path (repeatable), such as phone.battery.capacity_wh=17.11 or 'apps[0].tasks[0].interval=30m'.",
            valueName: "key.path=value"))
    var overrides: [String] = []

    @Option(help: "The master random seed (overrides the scenario's 'seed').")
    var seed: String?

    @Option(help: "Replications per policy (overrides the scenario's 'replications').")
    var replications: String?

    func validate() throws {
        for text in overrides where Override(parsing: text) == nil {
            throw ValidationError("--set '\(text)': expected key.path=value, such as phone.battery.capacity_wh=17.11")
        }
    }

    /// `--seed` and `--replications` are overrides of the scenario's own keys, so they are
    /// checked by the same rules and named the same way in errors.
    var all: [Override] { Self.overrides(overrides, seed: seed, replications: replications) }

    static func overrides(_ sets: [String], seed: String?, replications: String?) -> [Override] {
        var all = sets.compactMap(Override.init(parsing:))
        if let seed { all.append(Override(path: ConfigKeyPath([.key("seed")]), value: seed, origin: "--seed \(seed)")) }
        if let replications {
            all.append(Override(path: ConfigKeyPath([.key("replications")]), value: replications, origin: "--replications \(replications)"))
        }
        return all
    }

    /// The scenario, named for its `--set` overrides (`default_people-heavy`), and the
    /// overrides that give it.
    func load() throws(ScenarioError) -> (scenario: Scenario, overrides: [Override]) {
        try Scenario.loadVariant(file: scenario, overrides: all)
    }
}

/// Where results go and how the work is spread: shared by `run` and `sweep`.
struct OutputOptions: ParsableArguments {
    @Option(help: "The output folder (default: results/<name>, the name carrying any --set overrides).")
    var out: String?

    @Option(
        help:
            "Simulations to run in parallel (default: the cores this process may use: its CPU affinity, as taskset or Slurm set it, capped by a cgroup CPU quota)."
    )
    var jobs: Int?

    @Flag(help: "Also write events.csv: every app transition, task step and world event of every run (grows with the run).")
    var events = false

    @Option(
        help: ArgumentHelp(
            "Also write timeline.csv: battery, charger, network, screen and running tasks sampled this often.",
            valueName: "interval"))
    var timeline: String?

    @Flag(help: "Do not write tasks.csv (one row per task): only summaries, for long runs and big sweeps.")
    var noTasks = false

    @Option(
        help: ArgumentHelp(
            "Run only slice K of N (units whose index is K-1 modulo N) and write them with a shard manifest; join the shards with 'bgsim merge'.",
            valueName: "K/N"))
    var shard: String?

    @Flag(help: "Print nothing but errors (no progress, no table).")
    var quiet = false

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        if let jobs, jobs > 4096 { throw ValidationError("--jobs must be at most 4096, got \(jobs)") }
        if let timeline, Run.interval(timeline) == nil {
            throw ValidationError("--timeline '\(timeline)': expected a duration of at least 1s, such as 5m or 30s")
        }
        if let out { try Self.checkOut(out) }
        if let shard, Shard(parsing: shard) == nil {
            throw ValidationError("--shard '\(shard)': expected K/N with 1 <= K <= N, such as 2/8")
        }
    }

    var record: RecordOptions {
        RecordOptions(events: events, tasks: !noTasks, timelineEvery: timeline.flatMap(Run.interval))
    }

    /// Samples a run's timeline may have: a year at one a minute is half a million.
    static let maxTimelineRows: Int64 = 10_000_000

    /// Refuses a `--timeline` interval that would sample a run more than `maxTimelineRows` times.
    func checkTimeline(_ plan: StudyPlan) throws {
        guard let every = record.timelineEvery else { return }
        let longest = plan.points.map(\.scenario.setup.duration).max() ?? .zero
        let rows = longest.microseconds / every.microseconds
        guard rows <= Self.maxTimelineRows else {
            throw UsageError(
                "--timeline \(timeline ?? ""): \(rows) samples over a run of \(longest), more than \(Self.maxTimelineRows); sample less often")
        }
    }

    /// `--out` must name a folder bgsim may fill: not empty, not `/`, not an existing file, and
    /// not the current folder unless it is empty or already a bgsim study (its `manifest.json`).
    static func checkOut(_ out: String) throws {
        guard !out.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("--out '': expected a folder for the results")
        }
        let url = URL(fileURLWithPath: out).standardizedFileURL.resolvingSymlinksInPath()
        guard url.path != "/" else { throw ValidationError("--out \(out): the root folder; expected a folder for the results") }
        var isFolder: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
        if exists, !isFolder.boolValue { throw ValidationError("--out \(out): a file, not a folder") }
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL.resolvingSymlinksInPath()
        if url.path == here.path, exists {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
            if !entries.isEmpty, !entries.contains("manifest.json") {
                throw ValidationError(
                    "--out \(out): the current folder, which holds files that are not a bgsim study; name a folder for the results")
            }
        }
    }

    /// `--out`, else `results/<name>` in the current folder: never a tracked dataset of
    /// `notebooks-data/`, which only `make demo` and `make datasets` write.
    func folder(default name: String) -> URL { URL(fileURLWithPath: out ?? "results/\(name)") }

    var jobCount: Int { jobs ?? Cores.available() }

    func progress() -> ProgressReporter? { quiet ? nil : ProgressReporter(jobs: jobCount) }
}

/// `--precision` and its options, shared by `run` and `sweep`: replications are added in
/// rounds until every policy's interval (at every point of a sweep) is tight enough.
struct PrecisionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Add replications until the 95% interval of each precision metric, for every policy (and every point of a sweep), is within this relative half-width of its mean, such as 0.05.",
            valueName: "fraction"))
    var precision: Double?

    @Option(
        name: .customLong("precision-metric"),
        help: ArgumentHelp(
            "A runs.csv metric --precision checks (repeatable; default: \(PrecisionGoal.defaultMetrics.joined(separator: ", "))).",
            valueName: "column"))
    var precisionMetrics: [String] = []

    @Option(help: "The most replications per policy --precision may run.")
    var maxReplications: Int = 1000

    func validate() throws {
        if let precision, !(precision > 0 && precision < 1) {
            throw ValidationError("--precision must be a fraction between 0 and 1, such as 0.05; got \(precision)")
        }
        if !precisionMetrics.isEmpty && precision == nil { throw ValidationError("--precision-metric needs --precision") }
        for m in precisionMetrics where !RunMetrics.columns.contains(where: { $0.name == m }) {
            throw ValidationError("--precision-metric '\(m)' is not a runs.csv metric; for example background_energy_j, completed_pct, latency_p90_s")
        }
        if maxReplications < 2 { throw ValidationError("--max-replications must be at least 2, got \(maxReplications)") }
    }

    var goal: PrecisionGoal? {
        precision.map {
            PrecisionGoal(
                target: $0, metrics: precisionMetrics.isEmpty ? PrecisionGoal.defaultMetrics : precisionMetrics,
                maxReplications: maxReplications)
        }
    }

    /// The line that says whether the goal was reached, for a study run with one.
    static func report(_ outcome: StudyOutcome) -> String? {
        guard let p = outcome.precision else { return nil }
        let worst = p.worst.isFinite ? String(format: "%.3f", p.worst) : "unbounded"
        return p.reached
            ? "Precision \(p.target) reached with \(outcome.replications) replications (worst relative half-width \(worst))."
            : "Precision \(p.target) NOT reached within \(p.maxReplications) replications (worst relative half-width \(worst))."
    }
}

/// `--emit-slurm` and its options, shared by `run` and `sweep`: instead of running, write a
/// Slurm job array of the study's shards and a merge job.
struct SlurmOptions: ParsableArguments {
    @Option(
        name: .customLong("emit-slurm"),
        help: ArgumentHelp(
            "Do not run: write a Slurm job array (one task per shard) and a merge job into this folder, with submit.sh to submit both.",
            valueName: "folder"))
    var emitSlurm: String?

    @Option(help: "Shards for --emit-slurm (array tasks).")
    var shards: Int = 4

    @Option(
        name: .customLong("max-running"),
        help: ArgumentHelp(
            "With --emit-slurm: run at most this many shards at once (the job array's %limit).", valueName: "shards"))
    var maxRunning: Int?

    @Option(
        name: .customLong("slurm-option"),
        help: ArgumentHelp(
            "An #SBATCH option for the jobs (repeatable), written with =: --slurm-option=--partition=short --slurm-option=--time=01:00:00.", valueName: "option"
        ))
    var slurmOptions: [String] = []

    /// The sbatch options the scripts write themselves, by long and short name, with what to
    /// use instead. Given again through --slurm-option, one of the two would be lost without a
    /// word (the later #SBATCH line wins), so they are refused.
    static let written: [(long: String, short: String, instead: String)] = [
        ("--array", "-a", "bgsim writes the job array itself: use --shards, and --max-running to limit how many run at once"),
        ("--cpus-per-task", "-c", "bgsim asks for --jobs CPUs per shard: use --jobs"),
        ("--output", "-o", "the jobs' logs go to the --emit-slurm folder's logs/"),
        ("--job-name", "-J", "bgsim names the jobs after the study"),
        ("--dependency", "-d", "submit.sh makes the merge wait for the shards"),
    ]

    func validate() throws {
        if shards < 1 { throw ValidationError("--shards must be at least 1, got \(shards)") }
        if let maxRunning, maxRunning < 1 { throw ValidationError("--max-running must be at least 1, got \(maxRunning)") }
        if emitSlurm == nil && (maxRunning != nil || !slurmOptions.isEmpty) {
            throw ValidationError("\(maxRunning != nil ? "--max-running" : "--slurm-option") is for the scripts --emit-slurm writes; add --emit-slurm FOLDER")
        }
        for option in slurmOptions {
            guard option.hasPrefix("-"), option.count > 1 else {
                throw ValidationError("--slurm-option '\(option)': expected an sbatch option, such as --partition=short")
            }
            let name = option.hasPrefix("--") ? String(option.prefix { $0 != "=" }) : String(option.prefix(2))
            if let w = Self.written.first(where: { name == $0.long || name == $0.short }) {
                throw ValidationError("--slurm-option '\(option)': \(w.instead)")
            }
        }
    }

    /// The checks that need the command's other options too.
    func check(output: OutputOptions, precision: PrecisionOptions) throws {
        if emitSlurm != nil && output.shard != nil { throw ValidationError("--emit-slurm writes the shards' commands itself; leave out --shard") }
        if precision.precision != nil && (output.shard != nil || emitSlurm != nil) {
            throw ValidationError(
                "--precision decides the replications from the results, so it cannot be split with \(emitSlurm != nil ? "--emit-slurm" : "--shard")")
        }
    }

    /// With `--emit-slurm`, writes the scripts for `plan` (read from `file` with these
    /// command-line options) and returns true: the command then runs nothing.
    func emit(
        _ plan: StudyPlan, file: String, overrides: [String], seed: String?, replications: String?,
        output: OutputOptions
    ) throws -> Bool {
        guard let emitSlurm else { return false }
        let folder = URL(fileURLWithPath: emitSlurm)
        // A shard beyond the number of units would be an array task that runs nothing and
        // still waits in the queue for a node.
        let count = min(shards, plan.unitCount)
        let written = try SlurmScripts.write(
            plan: plan, studyFile: file, overrides: overrides, seed: seed, replications: replications,
            output: output, shards: count, maxRunning: maxRunning, options: slurmOptions, to: folder)
        if !output.quiet {
            let fewer = count < shards ? " (one per unit: \(shards) were asked for)" : ""
            print("Wrote \(written.joined(separator: ", ")) to \(folder.path): \(plan.unitCount) units in \(count) shards\(fewer).")
            print("Submit with: \(folder.appendingPathComponent("submit.sh").path)")
        }
        return true
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario: every policy in every replication; write the result files.",
        discussion: """
            Writes to the output folder, each file atomically: runs.csv (one row per policy and \
            replication), summary.csv (per policy and metric: n, mean, sd, 95% t-interval), \
            comparisons.csv (each policy minus the baseline, paired by replication, with paired-t \
            intervals), tasks.csv (one row per task; --no-tasks leaves it out), timeline.csv and \
            events.csv when asked for, and manifest.json last (scenario hash, seeds, version, the \
            command that reproduces the files, each file's SHA-256): a folder without a matching \
            manifest is incomplete. Each finished run is kept under units/ until the files are \
            written, so a run that was killed resumes where it stopped when started again. Then \
            prints a comparison table. Same scenario and seed give byte-identical files, whatever \
            --jobs or --shard. Columns: notebooks-data/README.md.
            """
    )

    @OptionGroup var options: ScenarioOptions
    @OptionGroup var output: OutputOptions

    @OptionGroup var precision: PrecisionOptions

    @OptionGroup var slurm: SlurmOptions

    func validate() throws {
        try slurm.check(output: output, precision: precision)
    }

    /// A timeline interval: at least a second (finer would be rows by the billion over days).
    static func interval(_ text: String) -> SimDuration? {
        guard let d = Scenario.duration(text), d >= .seconds(1) else { return nil }
        return d
    }

    func run() async throws {
        let (scenario, overrides) = try options.load()
        let plan = StudyPlan(scenario: scenario)
        try output.checkTimeline(plan)
        if try slurm.emit(
            plan, file: options.scenario, overrides: options.overrides, seed: options.seed,
            replications: options.replications, output: output)
        {
            return
        }
        let outcome = try await perform(plan, output: output, overrides: overrides, precision: precision.goal)
        guard !output.quiet, output.shard == nil else { return }
        print(
            ComparisonTable.render(
                scenario, PolicySummary.summarise(outcome.runs[0], policies: scenario.policies),
                replications: outcome.replications))
        if let line = PrecisionOptions.report(outcome) { print(line) }
        print("Wrote \(outcome.written.joined(separator: ", ")) to \(output.folder(default: plan.name).relativePath)")
    }
}

/// Runs a plan as the output options say, with progress on stderr; shared by `run` and `sweep`.
func perform(_ plan: StudyPlan, output: OutputOptions, overrides: [Override], precision: PrecisionGoal? = nil) async throws -> StudyOutcome {
    let folder = output.folder(default: plan.name)
    let reporter = output.progress()
    // Ctrl-C or a SIGTERM says what is kept and how to go on (see `Interruption`).
    Interruption.arm(unitsFolder: folder.relativePath, inRounds: precision != nil)
    let progress: @Sendable (Int, Int, Int) -> Void = { done, total, skipped in
        Interruption.progress(finished: done + skipped, of: total + skipped)
        reporter?.update(done: done, total: total, skipped: skipped)
    }
    let options = StudyOptions(
        jobs: output.jobCount, record: output.record, precision: precision,
        shard: output.shard.flatMap { Shard(parsing: $0) }, overrides: overrides, progress: progress,
        writing: reporter?.stepReporter)
    let outcome = try await Experiment.perform(plan, options: options, to: folder)
    Interruption.disarm()
    reporter?.finish()
    if let shard = options.shard, !output.quiet {
        print(
            "Shard \(shard) of '\(plan.name)': \(outcome.ran) units run, \(outcome.skipped) already finished; "
                + "wrote \(folder.relativePath)/manifest.json. Join the shards with: bgsim merge <shard folders> --out <folder>")
    }
    return outcome
}

struct SweepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Run a sweep: a base scenario at every point of a design over its key paths; write the result files.",
        discussion: """
            A sweep file names a base scenario, axes over its key paths (the paths --set takes) \
            and a design: grid, zip, random, lhs (Latin hypercube) or sobol (GSL's Sobol \
            sequence); see models/sweeps/. Every point runs every policy in every replication, \
            from the same seed (common random numbers across points). Writes the same files as \
            'run', with 'point' and one column per axis before 'policy'. Finished units are kept \
            under units/ until the files are written, so a sweep that was killed resumes when \
            started again. --shard K/N runs one slice; 'bgsim merge' joins the slices into files \
            byte-identical to an unsharded sweep. --emit-slurm writes a Slurm job array that \
            runs the shards and then the merge. --precision adds replications until every \
            policy meets the goal at every point.
            """
    )

    @Argument(help: "The sweep file (YAML), such as models/sweeps/refresh-setting.yaml.")
    var sweep: String

    @Option(name: .customLong("set"), help: ArgumentHelp("Override a value of every point's scenario (repeatable).", valueName: "key.path=value"))
    var overrides: [String] = []

    @Option(help: "The master random seed (overrides the sweep's and the scenario's 'seed').")
    var seed: String?

    @Option(help: "Replications per point and policy.")
    var replications: String?

    @OptionGroup var output: OutputOptions

    @OptionGroup var precision: PrecisionOptions

    @OptionGroup var slurm: SlurmOptions

    func validate() throws {
        for text in overrides where Override(parsing: text) == nil {
            throw ValidationError("--set '\(text)': expected key.path=value, such as phone.battery.capacity_wh=17.11")
        }
        try slurm.check(output: output, precision: precision)
    }

    func run() async throws {
        let all = ScenarioOptions.overrides(overrides, seed: seed, replications: replications)
        let reading = output.progress()
        let plan = try StudyPlan(
            sweep: Experiments.Sweep.load(file: sweep), overrides: all, jobs: output.jobCount,
            progress: reading.map { r in { r.reading($0, of: $1) } })
        reading?.finish()
        try output.checkTimeline(plan)
        if try slurm.emit(plan, file: sweep, overrides: overrides, seed: seed, replications: replications, output: output) { return }
        let outcome = try await perform(plan, output: output, overrides: all, precision: precision.goal)
        guard !output.quiet, output.shard == nil else { return }
        print(
            "Sweep '\(plan.name)': \(Self.shape(plan, replications: outcome.replications)) "
                + "(\(outcome.ran) units run, \(outcome.skipped) already finished).")
        if let line = PrecisionOptions.report(outcome) { print(line) }
        print("Wrote \(outcome.written.joined(separator: ", ")) to \(output.folder(default: plan.name).relativePath)")
    }
}

extension SweepCommand {
    /// "3 points x 2 policies x 5 replications", singular where a count is one.
    static func shape(_ plan: StudyPlan, replications: Int) -> String {
        func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
        return count(plan.points.count, "point", "points") + " x " + count(plan.policies.count, "policy", "policies")
            + " x " + count(replications, "replication", "replications")
    }
}

struct Merge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Join the shard folders of a run or sweep into its result files.",
        discussion: """
            Checks that the folders are shards of one study (same plan), that every unit is \
            present exactly once (missing or duplicate units are named), and that each unit's \
            files match its shard's manifest; then writes the result files, byte-identical to \
            the study run in one piece. Exit code 3 when the shards are incomplete or inconsistent.
            """
    )

    @Argument(help: "The shard folders (written with --shard K/N).")
    var shards: [String]

    @Option(help: "The output folder for the joined results.")
    var out: String

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if shards.isEmpty { throw ValidationError("give at least one shard folder") }
        try OutputOptions.checkOut(out)
        // Written into a shard's folder, the result's manifest would replace the shard's, and
        // the shard could not be merged again.
        let target = URL(fileURLWithPath: out).standardizedFileURL.resolvingSymlinksInPath().path
        if let shard = shards.first(where: { URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path == target }) {
            throw ValidationError("--out \(out) is the shard folder \(shard); merge into another folder")
        }
    }

    func run() async throws {
        let folder = URL(fileURLWithPath: out)
        let reading = quiet ? nil : ProgressReporter(jobs: 1)
        let outcome = try Experiment.merge(
            shards.map { URL(fileURLWithPath: $0) }, to: folder,
            progress: reading.map { r in { r.reading($0, of: $1) } },
            steps: reading?.stepReporter)
        reading?.finish()
        if !quiet { print("Merged \(shards.count) shards: wrote \(outcome.written.joined(separator: ", ")) to \(folder.relativePath)") }
    }
}

struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write an HTML report (and optionally a Markdown summary) of a run's or sweep's results.",
        discussion: """
            One self-contained HTML file (inline SVG and CSS, no scripts, no requests): the \
            comparison table with 95% confidence intervals and the best value per column marked; \
            bars with interval whiskers for energy, latency and staleness; the start-latency \
            distribution per policy (from tasks.csv, when written); energy against staleness with \
            the Pareto front; for sweeps, each metric against each swept parameter per policy \
            with interval bands; one phone's day under every policy (re-simulated from the \
            manifest's scenario, so no --events is needed; for a sweep at the point --point \
            names); and the resolved scenario.
            """
    )

    @Argument(help: "A results folder written by 'bgsim run', 'bgsim sweep' or 'bgsim merge'.")
    var results: String

    @Option(help: "The HTML file to write (default: RESULTS/report.html). The Markdown summary goes beside it.")
    var out: String?

    @Option(help: ArgumentHelp("html, or md to write a Markdown summary (report.md) too.", valueName: "format"))
    var format = "html"

    @Option(help: "The replication the timeline shows (from 0).")
    var replication = 0

    @Option(help: "The day the timeline shows (from 0).")
    var day = 0

    @Option(help: "For a sweep, the point the timeline and the resolved scenario show (from 0; runs.csv's 'point').")
    var point = 0

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard format == "html" || format == "md" else { throw ValidationError("--format '\(format)': expected html or md") }
        if replication < 0 { throw ValidationError("--replication must be at least 0, got \(replication)") }
        if day < 0 { throw ValidationError("--day must be at least 0, got \(day)") }
        if point < 0 { throw ValidationError("--point must be at least 0, got \(point)") }
    }

    func run() async throws {
        let set = try ResultSet.load(results)
        guard replication < set.replications else {
            throw ReportError("--replication \(replication): the study in \(results) has replications 0 to \(set.replications - 1)")
        }
        let report = Report(set, options: ReportOptions(replication: replication, day: day, point: point))
        // Point 0's timeline is optional (the report says why it has none); another point was
        // asked for by name.
        if point > 0, let problem = report.scenarioProblem { throw ReportError("--point \(point): \(problem)") }
        let html = URL(fileURLWithPath: out ?? (results as NSString).appendingPathComponent("report.html"))
        let folder = html.deletingLastPathComponent()
        var files: [(name: String, content: OutputContent)] = [(html.lastPathComponent, .text(try report.html()))]
        if format == "md" {
            files.append((html.deletingPathExtension().lastPathComponent + ".md", .text(report.markdown())))
        }
        try OutputFiles.write(files, to: folder)
        if !quiet {
            for file in files { print("Wrote \(folder.appendingPathComponent(file.name).relativePath)") }
        }
    }
}

/// Lists the policies scenario files may name, built-in and registered, with their parameters
/// as they declare them.
struct Policies: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policies",
        abstract: "List the policies scenarios may name, with every parameter.",
        discussion: """
            Built-in policies come first, then those registered by a package of your own \
            (BGSimCommandLine.main(policies:)). Each parameter is listed with what it accepts, \
            its default and its meaning, from the policy's own declaration: the keys of a policy \
            entry in a scenario, {name: coalesce, max_delay: 30m}, and of --set \
            'policies[coalesce].max_delay=30m'. A name with a dot is a key of a nested mapping: \
            quota_rare.max_jobs is written quota_rare: {max_jobs: 5}.
            """
    )

    func run() throws {
        for (i, name) in PolicyRegistry.names.enumerated() {
            guard let type = PolicyRegistry.type(named: name) else { continue }
            let origin = PolicyRegistry.builtIn.contains { $0 == type } ? "" : " (registered)"
            print("\(i == 0 ? "" : "\n")\(name)\(origin): \(type.summary)\(type.isClairvoyant ? " (a bound: sees the future)" : "")")
            for p in type.parameterInfo {
                print("  \(p.name): \(p.kind.expected), default \(Self.describe(p.defaultValue)); \(p.help)")
            }
        }
    }

    static func describe(_ value: PolicyParameterValue) -> String {
        switch value {
        case .duration(let d): "\(d)"
        case .number(let x): x == x.rounded() && abs(x) < 1e15 ? "\(Int64(x))" : CSVWriter.number(x)
        case .integer(let n): "\(n)"
        case .flag(let b): "\(b)"
        case .off: "none"
        }
    }
}

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a scenario or sweep file (with any overrides) without running it.",
        discussion: """
            A sweep is checked at every point of its design, as 'bgsim sweep' would read it. \
            With --points, a sweep's design is printed as CSV instead (scenario, point and one column \
            per axis, as in runs.csv), to see the points, or their coverage, before running them.
            """
    )

    @OptionGroup var options: ScenarioOptions

    @Flag(help: "Print a sweep's design points as CSV (scenario, point, one column per axis) on standard output.")
    var points = false

    func run() async throws {
        if Experiments.Sweep.isSweep(file: options.scenario) {
            let reading = ProgressReporter(jobs: 1)
            let plan = try StudyPlan(
                sweep: Experiments.Sweep.load(file: options.scenario), overrides: options.all,
                jobs: Cores.available(), progress: { reading.reading($0, of: $1) })
            reading.finish()
            if points {
                print(Experiment.designCSV(plan), terminator: "")
                return
            }
            print(
                "\(options.scenario): ok: sweep '\(plan.name)', \(plan.design ?? "grid") design over "
                    + "\(plan.parameters.joined(separator: ", ")): \(SweepCommand.shape(plan, replications: plan.replications)) "
                    + "= \(plan.unitCount) units, base scenario \(plan.first.file)")
            return
        }
        let s = try options.load().scenario
        if points {
            throw UsageError("\(options.scenario) is a scenario, not a sweep: --points lists the points of a sweep's design")
        }
        let policies = s.policies.map(\.name).joined(separator: ", ")
        print(
            "\(s.file): ok: scenario '\(s.name)', \(s.setup.duration), \(s.setup.apps.count) apps, "
                + "policies \(policies), \(s.replications) replications from seed \(s.seed)")
    }
}

/// The `bgsim` command line, as a library: a package of a user's own policies gets an
/// executable that is bgsim plus those policies with a `main.swift` of one line,
///
/// ```swift
/// import BGSimCommandLine
/// BGSimCommandLine.main(policies: [QuietHoursPolicy.self])
/// ```
///
/// and every command (`run`, `sweep`, `--shard`, `--emit-slurm`, `merge`, `validate`,
/// `report`) then takes those policies by name, as it takes the built-in ones.
public enum BGSimCommandLine {
    /// Registers `policies`, runs the command line of this process, and exits with its code
    /// (0 success, 1 runtime failure, 2 bad input or usage, 3 incomplete shards).
    ///
    /// Synchronous: the main thread waits for the command on a semaphore. An `async` main parks
    /// the main thread in `dispatch_main`, whose `sigsuspend` on a read-only mask crashes
    /// valgrind 3.19 (Debian 12's), and with it `make instructions`.
    public static func main(policies: [any RegisteredPolicy.Type] = []) -> Never {
        PolicyRegistry.register(policies)
        // A process started from a thread that blocks signals (a Swift concurrency thread's
        // Process) inherits that mask; dispatch_main's sigsuspend used to lift it. The main
        // thread takes SIGINT and SIGTERM (Interruption) while the work runs on threads that
        // block them.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
        let arguments = Array(CommandLine.arguments.dropFirst())
        let finished = ExitCode()
        Task.detached {
            finished.code = await Main.run(arguments)
            finished.done.signal()
        }
        finished.done.wait()
        #if BGSIM_EVENT_COSTS
        FileHandle.standardError.write(Data(EventCosts.report().utf8))
        #endif
        exit(finished.code)
    }

    /// The command's exit code, written before `done` is signalled and read after it.
    private final class ExitCode: @unchecked Sendable {
        var code: Int32 = 0
        let done = DispatchSemaphore(value: 0)
    }
}

enum Main {

    /// Parses and runs one command line; returns the exit code.
    static func run(_ arguments: [String]) async -> Int32 {
        await dispatch(arguments)
    }

    /// `--replications -1` as `--replications=-1`: the parser takes a word starting with `-`
    /// for an option, and said "Missing value"; joined, the option's own check says what is
    /// wrong with the number.
    static func joiningNegativeValues(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a.hasPrefix("--"), !a.contains("="), i + 1 < arguments.count, arguments[i + 1].count > 1,
                arguments[i + 1].hasPrefix("-"), Double(arguments[i + 1]) != nil
            {
                out.append(a + "=" + arguments[i + 1])
                i += 2
            } else {
                out.append(a)
                i += 1
            }
        }
        return out
    }

    static func dispatch(_ arguments: [String]) async -> Int32 {
        let arguments = joiningNegativeValues(arguments)
        do {
            var command = try BGSim.parseAsRoot(arguments)
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
            return Exit.success
        } catch let error as ScenarioError {
            printError("error: \(error)")
            return Exit.badInput
        } catch let error as RuntimeFailure {
            printError("error: \(error)")
            return Exit.runtimeFailure
        } catch let error as ReportError {
            printError("error: \(error)")
            return Exit.badInput
        } catch let error as UsageError {
            printError("error: \(error)")
            return Exit.badInput
        } catch let error as MergeError {
            printError("error: \(error)")
            return Exit.incomplete
        } catch {
            // Help and version requests arrive as errors that exit successfully.
            let code = BGSim.exitCode(for: error)
            if code == .success {
                print(BGSim.fullMessage(for: error))
                return Exit.success
            }
            if code == .validationFailure {
                // One line: the error, and where the usage is (the usage block followed it).
                let message = BGSim.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
                printError("error: \(message) (see --help)")
                return Exit.badInput
            }
            printError("error: \(error)")
            return Exit.runtimeFailure
        }
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
