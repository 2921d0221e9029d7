import ArgumentParser
import Experiments
import Foundation
import Reports
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario: every policy in every replication; write the result files.",
        discussion: """
            Writes to the output folder, each file atomically: runs.csv (one row per policy and \
            replication), summary.csv (per policy and metric: n, mean, sd, 95% t-interval), \
            comparisons.csv (each policy minus the baseline, paired by replication, with paired-t \
            intervals), apps.csv (per app and task identifier: runs, outcomes, energy, what held \
            it), tasks.csv (one row per task; --no-tasks leaves it out, and a fleet writes it only \
            with --tasks), timeline.csv and \
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
            plan, file: try options.file(), overrides: options.overrides, seed: options.seed,
            replications: options.replications, output: output)
        {
            return
        }
        try precision.check(plan)
        let outcome = try await perform(plan, output: output, overrides: overrides, precision: precision.goal)
        guard !output.quiet, output.shard == nil else { return }
        print(
            ComparisonTable.render(
                scenario, PolicySummary.summarise(outcome.runs[0], policies: scenario.policies),
                replications: outcome.replications, outcome: outcome))
        if let line = PrecisionOptions.report(outcome) { print(line) }
        print("Wrote \(outcome.written.joined(separator: ", ")) to \(output.folder(default: plan.name).relativePath)")
    }
}

/// Runs a plan as the output options say, with progress on stderr; shared by `run` and `sweep`.
func perform(_ plan: StudyPlan, output: OutputOptions, overrides: [Override], precision: PrecisionGoal? = nil) async throws -> StudyOutcome {
    let folder = output.folder(default: plan.name)
    let reporter = output.progress()
    let progress: @Sendable (Int, Int, Int) -> Void = { done, total, skipped in
        Interruption.progress(finished: done + skipped, of: total + skipped)
        reporter?.update(done: done, total: total, skipped: skipped)
    }
    let options = StudyOptions(
        jobs: output.jobCount, record: output.record(plan), precision: precision,
        shard: output.shard.flatMap { Shard(parsing: $0) }, overrides: overrides, progress: progress,
        writing: reporter?.stepReporter)
    try output.checkDefaultFolder(plan, command: Experiment.command(plan, options: options))
    // Ctrl-C or a SIGTERM says what is kept and how to go on (see `Interruption`).
    Interruption.arm(unitsFolder: folder.relativePath, inRounds: precision != nil)
    let outcome = try await Experiment.perform(plan, options: options, to: folder)
    Interruption.disarm()
    reporter?.finish()
    if let shard = options.shard, !output.quiet {
        print(
            "Shard \(shard) of '\(plan.name)': \(outcome.ran) units run, \(outcome.skipped) already finished; "
                + "wrote \(folder.relativePath)/manifest.json. Join the shards with: \(ProgramName.current) merge <shard folders> --out <folder>")
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

    @Argument(help: "The sweep file (YAML), such as models/sweeps/refresh-setting.yaml, or a bundled one's name ('bgsim examples').")
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
        let sweep = try BundledExamples.resolve(self.sweep, prefer: .sweep)
        try await Self.run(
            sweep, overrides: overrides, seed: seed, replications: replications, output: output, precision: precision, slurm: slurm)
    }

    /// Runs the sweep in `file` as `bgsim sweep` does (or writes its Slurm scripts); shared with
    /// `bgsim sensitivity`, whose study is a sweep. Returns the outcome of a whole study.
    @discardableResult
    static func run(
        _ file: String, overrides: [String], seed: String?, replications: String?, output: OutputOptions,
        precision: PrecisionOptions, slurm: SlurmOptions
    ) async throws -> (StudyPlan, StudyOutcome)? {
        let all = ScenarioOptions.overrides(overrides, seed: seed, replications: replications)
        let reading = output.progress()
        let plan = try StudyPlan(
            sweep: Experiments.Sweep.load(file: file), overrides: all, jobs: output.jobCount,
            progress: reading.map { r in { r.reading($0, of: $1) } })
        reading?.finish()
        try output.checkTimeline(plan)
        if try slurm.emit(plan, file: file, overrides: overrides, seed: seed, replications: replications, output: output) { return nil }
        try precision.check(plan)
        let outcome = try await perform(plan, output: output, overrides: all, precision: precision.goal)
        guard !output.quiet, output.shard == nil else { return nil }
        print(
            "Sweep '\(plan.name)': \(Self.shape(plan, replications: outcome.replications)) "
                + "(\(outcome.ran) units run\(outcome.simulated < outcome.ran ? " in \(outcome.simulated) simulations" : ""), "
                + "\(outcome.skipped) already finished).")
        if let table = ComparisonTable.sweepPairs(plan, runs: outcome.runs) { print(table, terminator: "") }
        if let line = PrecisionOptions.report(outcome) { print(line) }
        print("Wrote \(outcome.written.joined(separator: ", ")) to \(output.folder(default: plan.name).relativePath)")
        return (plan, outcome)
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
        let target = URL(literalPath: out).standardizedFileURL.resolvingSymlinksInPath().path
        if let shard = shards.first(where: { URL(literalPath: $0).standardizedFileURL.resolvingSymlinksInPath().path == target }) {
            throw ValidationError("--out \(out) is the shard folder \(shard); merge into another folder")
        }
    }

    func run() async throws {
        let folder = URL(literalPath: out)
        let reading = quiet ? nil : ProgressReporter(jobs: 1)
        let outcome = try Experiment.merge(
            shards.map { URL(literalPath: $0) }, to: folder,
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

    @Option(help: "The day the timeline shows (from 0; default: a typical day, one whose night is on the charger).")
    var day: Int?

    @Option(
        help:
            "For a sweep, the point the timeline and the resolved scenario show (from 0; runs.csv's 'point'; default: the point whose spread between policies is the median)."
    )
    var point: Int?

    @Flag(
        name: .customLong("no-verify"),
        help: "Report on files changed since bgsim wrote them: skip the check of each file against its SHA-256 in the manifest.")
    var noVerify = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard format == "html" || format == "md" else { throw ValidationError("--format '\(format)': expected html or md") }
        if replication < 0 { throw ValidationError("--replication must be at least 0, got \(replication)") }
        if let day, day < 0 { throw ValidationError("--day must be at least 0, got \(day)") }
        if let point, point < 0 { throw ValidationError("--point must be at least 0, got \(point)") }
    }

    func run() async throws {
        let set = try ResultSet.load(results, verify: !noVerify)
        guard replication < set.replications else {
            throw ReportError("--replication \(replication): the study in \(results) has replications 0 to \(set.replications - 1)")
        }
        let report = Report(set, options: ReportOptions(replication: replication, day: day, point: point))
        // Point 0's timeline is optional (the report says why it has none); another point was
        // asked for by name.
        if let point, point > 0, let problem = report.scenarioProblem { throw ReportError("--point \(point): \(problem)") }
        let html = URL(literalPath: out ?? (results as NSString).appendingPathComponent("report.html"))
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

/// Lists the bundled scenarios and sweeps, which `run`, `sweep` and `validate` take by name.
struct Examples: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "examples",
        abstract: "List the bundled scenarios and sweeps, which every command takes by name.",
        discussion: """
            'bgsim run default' runs the bundled default scenario from any folder; 'bgsim sweep \
            refresh-setting' the bundled sweep. To change one, copy its file (the path printed \
            here), edit it, give it its own 'name:' (results go to results/<name>), and run the \
            copy by its path. 'bgsim validate NAME --print' lists every key with its value and \
            default.
            """
    )

    func run() throws {
        let all = BundledExamples.all()
        guard let folder = BundledModels.folder, !all.isEmpty else {
            throw RuntimeFailure("no bundled models folder: set BGSIM_MODELS to bgsim's models/ folder, or install with 'make install'")
        }
        let width = all.map(\.name.count).max() ?? 0
        for (kind, command) in [(BundledExamples.Kind.scenario, "run"), (.sweep, "sweep")] {
            print("\(kind == .scenario ? "Scenarios" : "\nSweeps") (bgsim \(command) NAME):")
            for e in all where e.kind == kind {
                print("  \(e.name)\(String(repeating: " ", count: width - e.name.count))  \(e.summary)")
            }
        }
        print("\nFiles in \(folder)/scenarios and \(folder)/sweeps.")
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
                print("  \(p.name): \(p.kind.expected), default \(Self.describe(p.defaultValue)); \(p.help)\(Self.provenance(p))")
            }
        }
    }

    /// Where a parameter's default comes from: the sources' section that fixes it, or, for an
    /// assumption, the range it could plausibly take and why (docs/sources.md §12).
    static func provenance(_ p: PolicyParameterInfo) -> String {
        if let source = p.source { return source.hasPrefix("§") ? " [source: \(source)]" : " [\(source)]" }
        guard let r = p.plausible else { return "" }
        func end(_ x: Double) -> String {
            switch p.kind {
            case .duration: "\(SimDuration(seconds: x))"
            case .flag: x == 0 ? "false" : "true"
            default: describe(.number(x))
            }
        }
        return " [assumption: plausible \(end(r.low)) to \(end(r.high)); \(r.why)]"
    }

    /// `value` as a scenario file writes it; a distribution in its key's unit.
    static func describe(_ value: PolicyParameterValue, _ kind: PolicyParameterKind? = nil) -> String {
        func quantity(_ x: Double) -> String {
            kind == .distribution(.kilobytes) ? describe(.number(x / 1000)) : "\(SimDuration(seconds: x))"
        }
        return switch value {
        case .duration(let d): "\(d)"
        case .number(let x): x == x.rounded() && abs(x) < 1e15 ? "\(Int64(x))" : CSVWriter.number(x)
        case .integer(let n): "\(n)"
        case .flag(let b): "\(b)"
        case .off: "none"
        case .text(let t): t
        case .distribution(.fixed(let v)): quantity(v)
        case .distribution(.exponential(let m)): "{exponential: \(quantity(m))}"
        case .distribution(.uniform(let a, let b)): "{uniform: [\(quantity(a)), \(quantity(b))]}"
        case .distribution(.lognormal(let m, let sigma)): "{lognormal: {median: \(quantity(m)), sigma: \(describe(.number(sigma)))}}"
        case .names(let n): "[\(n.joined(separator: ", "))]"
        case .file(let path, _): path
        case .section(let keys): "{\(keys.sorted { $0.key < $1.key }.map { "\($0.key): \(describe($0.value))" }.joined(separator: ", "))}"
        case .list(let items): "[\(items.map { describe($0) }.joined(separator: ", "))]"
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

    @Flag(
        name: .customLong("print"),
        help: "Print every key the scenario's reading looked at, with its value, and '# default' beside those the file left out.")
    var printKeys = false

    func run() async throws {
        let file = try options.file(prefer: points ? .sweep : .scenario)
        if Experiments.Sweep.isSweep(file: file) {
            if printKeys { throw UsageError("\(options.scenario) is a sweep: --print writes a scenario; give its base scenario, with --set for a point") }
            let reading = ProgressReporter(jobs: 1)
            let plan = try StudyPlan(
                sweep: Experiments.Sweep.load(file: file), overrides: options.all,
                jobs: Cores.available(), progress: { reading.reading($0, of: $1) })
            reading.finish()
            if points {
                print(Experiment.designCSV(plan), terminator: "")
                return
            }
            print(
                "\(file): ok: sweep '\(plan.name)', \(plan.design ?? "grid") design over "
                    + "\(plan.parameters.joined(separator: ", ")): \(SweepCommand.shape(plan, replications: plan.replications)) "
                    + "= \(plan.unitCount) units, base scenario \(plan.first.file)")
            return
        }
        if printKeys {
            if points { throw UsageError("--print and --points: give one") }
            let ((s, _), keys) = try KeyListing.listing { () throws(ScenarioError) in try options.load() }
            print(Self.listing(s, keys), terminator: "")
            return
        }
        let s = try options.load().scenario
        if points {
            throw UsageError("\(options.scenario) is a scenario, not a sweep: --points lists the points of a sweep's design")
        }
        let policies = s.policies.map(\.name).joined(separator: ", ")
        Swift.print(
            "\(s.file): ok: scenario '\(s.name)', \(s.setup.duration), \(s.setup.apps.count) apps, "
                + "policies \(policies), \(s.replications) replications from seed \(s.seed)")
    }

    /// One line per key, `path: value`, in reading order; a default is marked, and so is a
    /// default the reader holds in a form no scenario file writes.
    static func listing(_ s: Scenario, _ keys: [KeyListing.Entry]) -> String {
        let given = keys.filter(\.given).count
        var out = "# \(s.file): scenario '\(s.name)', every key its reading looked at (\(given) given, \(keys.count - given) defaults)\n"
        let width = min(keys.map(\.path.count).max() ?? 0, 56)
        for k in keys {
            let pad = String(repeating: " ", count: max(0, width - k.path.count))
            let remarks = (k.given ? [] : ["default"]) + (k.note.map { [$0] } ?? [])
            out += "\(k.path):\(pad) \(k.value)\(remarks.isEmpty ? "" : "  # " + remarks.joined(separator: "; "))\n"
        }
        return out
    }
}
