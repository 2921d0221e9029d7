import ArgumentParser
import Experiments
import Foundation
import Reports
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine

/// The options that pick and adjust a scenario, shared by `run` and `validate`.
struct ScenarioOptions: ParsableArguments {
    @Argument(help: "The scenario file (YAML), such as models/scenarios/default.yaml, or a bundled one's name ('bgsim examples').")
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
        try Scenario.loadVariant(file: try file(), overrides: all)
    }

    /// The file named, or the bundled example of that name.
    func file(prefer kind: BundledExamples.Kind = .scenario) throws(ScenarioError) -> String {
        try BundledExamples.resolve(scenario, prefer: kind)
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

    @Flag(help: "Do not write tasks.csv (one row per task): only summaries and apps.csv, for long runs and big sweeps.")
    var noTasks = false

    @Flag(help: "Write tasks.csv for a fleet too (by default a fleet writes apps.csv, per app and identifier, and not tasks.csv, which runs to gigabytes).")
    var tasks = false

    @Option(
        help: ArgumentHelp(
            "Run only slice K of N (units whose index is K-1 modulo N) and write them with a shard manifest; join the shards with 'bgsim merge'.",
            valueName: "K/N"))
    var shard: String?

    @Flag(help: "Print nothing but errors (no progress, no table).")
    var quiet = false

    @Flag(help: "Replace the default folder's results of this command even though its scenario has changed since they were written.")
    var replace = false

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        if let jobs, jobs > 4096 { throw ValidationError("--jobs must be at most 4096, got \(jobs)") }
        if let timeline, Run.interval(timeline) == nil {
            throw ValidationError("--timeline '\(timeline)': expected a duration of at least 1s, such as 5m or 30s")
        }
        if tasks && noTasks { throw ValidationError("--tasks and --no-tasks: give one of them") }
        if let out { try Self.checkOut(out) }
        if let shard, Shard(parsing: shard) == nil {
            throw ValidationError("--shard '\(shard)': expected K/N with 1 <= K <= N, such as 2/8")
        }
    }

    /// What the study records: tasks.csv unless `--no-tasks`, or for a fleet unless `--tasks`.
    func record(_ plan: StudyPlan) -> RecordOptions {
        let fleet = !plan.points[0].scenario.fleet.isEmpty
        return RecordOptions(events: events, tasks: tasks || (!noTasks && !fleet), timelineEvery: timeline.flatMap(Run.interval))
    }

    /// Samples a run's timeline may have: a year at one a minute is half a million.
    static let maxTimelineRows: Int64 = 10_000_000

    /// Refuses a `--timeline` interval that would sample a run more than `maxTimelineRows` times.
    func checkTimeline(_ plan: StudyPlan) throws {
        guard let every = record(plan).timelineEvery else { return }
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
        let url = URL(literalPath: out).standardizedFileURL.resolvingSymlinksInPath()
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
    func folder(default name: String) -> URL { URL(literalPath: out ?? "results/\(name)") }

    /// Refuses to write over the default folder's results of another file: a copied scenario
    /// that kept its original's `name` would replace the original's results. `--out` says
    /// where on purpose, and the same file run again replaces its own results.
    ///
    /// The same command again over a scenario that changed since (the file, or a profile it
    /// names, was edited: its plan's digest differs) would replace results nobody asked to
    /// lose: refused unless `--replace`; `--out` keeps both.
    func checkDefaultFolder(_ plan: StudyPlan, command: [String]) throws {
        guard out == nil else { return }
        let folder = folder(default: plan.name)
        let manifest = folder.appendingPathComponent("manifest.json")
        guard let data = FileManager.default.contents(atPath: manifest.path),
            let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let before = (json["sweep_file"] ?? json["scenario_file"]) as? String
        else { return }
        func same(_ a: String, _ b: String) -> Bool {
            URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath().path
                == URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath().path
        }
        guard !same(before, plan.file) else {
            guard !replace, let previous = json["command_line"] as? [String], previous.dropFirst() == command.dropFirst(),
                let digest = json["plan_sha256"] as? String, digest != plan.fingerprint
            else { return }
            throw UsageError(
                "\(folder.relativePath) holds the results of this command from before \(plan.file) (or a profile it names) changed: "
                    + "its plan_sha256 differs. Keep both with --out <folder>, or replace them with --replace")
        }
        throw UsageError(
            "\(folder.relativePath) holds the results of \(before), not \(plan.file): both are named '\(plan.name)'. "
                + "Give \(plan.file) its own 'name:', or choose the folder with --out")
    }

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

    /// `--max-replications` that would take `plan` past the most units a study may have.
    func check(_ plan: StudyPlan) throws {
        guard precision != nil else { return }
        let units = plan.points.count * plan.policies.count * maxReplications
        if units > Scenario.maxUnits {
            throw ValidationError(
                "--max-replications \(maxReplications): up to \(units) runs (\(plan.points.count) points x \(plan.policies.count) policies); "
                    + "a study has at most \(Scenario.maxUnits)")
        }
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
        let folder = URL(literalPath: emitSlurm)
        // A shard beyond the number of units would be an array task that runs nothing and
        // still waits in the queue for a node.
        let count = min(shards, plan.unitCount)
        let written = try SlurmScripts.write(
            plan: plan, studyFile: file, overrides: overrides, seed: seed, replications: replications,
            output: output, shards: count, maxRunning: maxRunning, options: slurmOptions, to: folder)
        if !output.quiet {
            let fewer = count < shards ? " (one per unit: \(shards) were asked for)" : ""
            print("Wrote \(written.joined(separator: ", ")) to \(folder.path): \(plan.unitCount) units in \(count) shards\(fewer).")
            print("Submit with: \(Quoting.shell(folder.appendingPathComponent("submit.sh").path))")
        }
        return true
    }
}
