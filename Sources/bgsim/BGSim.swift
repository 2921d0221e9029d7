import ArgumentParser
import Experiments
import Foundation
import Scheduling
import SimEngine

/// Exit codes: distinct, documented in `--help`, and tested.
enum Exit {
    static let success: Int32 = 0
    /// The input was fine but the run failed (for example, an output could not be written).
    static let runtimeFailure: Int32 = 1
    /// Bad input or usage: a scenario file, a `--set` value, an option.
    static let badInput: Int32 = 2
}

struct BGSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bgsim",
        abstract: "Simulate how a phone decides when apps' background work runs, and compare scheduling policies.",
        discussion: """
            Examples:
              bgsim run models/scenarios/default.yaml
              bgsim run models/scenarios/default.yaml --replications 30 --seed 7
              bgsim run models/scenarios/default.yaml --out /tmp/study --jobs 2
              bgsim run models/scenarios/default.yaml --set battery.capacity_wh=17.11
              bgsim validate models/scenarios/default.yaml --set apps.0.refresh_every=30m

            Exit codes: 0 success, 1 runtime failure, 2 bad input or usage.
            """,
        version: Manifest.toolVersion,
        subcommands: [Run.self, Validate.self]
    )
}

/// The options that pick and adjust a scenario, shared by `run` and `validate`.
struct ScenarioOptions: ParsableArguments {
    @Argument(help: "The scenario file (YAML), such as models/scenarios/default.yaml.")
    var scenario: String

    @Option(name: .customLong("set"), help: ArgumentHelp(
        "Override a scenario value by its key path (repeatable), such as battery.capacity_wh=17.11 or apps[0].refresh_every=30m.",
        valueName: "key.path=value"))
    var overrides: [String] = []

    @Option(help: "The master random seed (overrides the scenario's 'seed').")
    var seed: String?

    @Option(help: "Replications per policy (overrides the scenario's 'replications').")
    var replications: String?

    func validate() throws {
        for text in overrides where Override(parsing: text) == nil {
            throw ValidationError("--set '\(text)': expected key.path=value, such as battery.capacity_wh=17.11")
        }
    }

    /// `--seed` and `--replications` are overrides of the scenario's own keys, so they are
    /// checked by the same rules and named the same way in errors.
    func load() throws(ScenarioError) -> Scenario {
        var all = overrides.compactMap(Override.init(parsing:))
        if let seed { all.append(Override(path: KeyPath([.key("seed")]), value: seed, origin: "--seed \(seed)")) }
        if let replications {
            all.append(Override(path: KeyPath([.key("replications")]), value: replications, origin: "--replications \(replications)"))
        }
        return try Scenario.load(file: scenario, overrides: all)
    }
}

/// The command line being run, for the manifest (a task local, so in-process tests that run
/// several commands each see their own).
enum Invocation {
    @TaskLocal static var arguments: [String] = CommandLine.arguments
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a scenario: every policy in every replication; write the result files.",
        discussion: """
            Writes to the output folder, each file atomically: runs.csv (one row per policy and \
            replication), summary.csv (per policy and metric: n, mean, sd, 95% t-interval), \
            comparisons.csv (each policy minus the baseline, paired by replication, with paired-t \
            intervals), tasks.csv (one row per task; --no-tasks leaves it out), timeline.csv and \
            events.csv when asked for, and manifest.json last (scenario hash, seeds, version, command \
            line, each file's SHA-256): a folder without a matching manifest is incomplete. Then \
            prints a comparison table. Same scenario and seed give byte-identical CSV files, \
            whatever --jobs is. Columns: notebooks-data/README.md.
            """
    )

    @OptionGroup var options: ScenarioOptions

    @Option(help: "The output folder (default: notebooks-data/<scenario name>).")
    var out: String?

    @Option(help: "Simulations to run in parallel (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "Also write events.csv: every app transition, task step and world event of every run (grows with the run).")
    var events = false

    @Option(help: ArgumentHelp("Also write timeline.csv: battery, charger, network, screen and running tasks sampled this often.",
                               valueName: "interval"))
    var timeline: String?

    @Flag(help: "Do not write tasks.csv (one row per task): only summaries, for long runs.")
    var noTasks = false

    @Option(help: ArgumentHelp("Add replications until every policy's 95% interval of each precision metric is within this relative half-width of its mean, such as 0.05.",
                               valueName: "fraction"))
    var precision: Double?

    @Option(name: .customLong("precision-metric"), help: ArgumentHelp(
        "A runs.csv metric --precision checks (repeatable; default: \(PrecisionGoal.defaultMetrics.joined(separator: ", "))).",
        valueName: "column"))
    var precisionMetrics: [String] = []

    @Option(help: "The most replications per policy --precision may run.")
    var maxReplications: Int = 1000

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        if let precision, !(precision > 0 && precision < 1) {
            throw ValidationError("--precision must be a fraction between 0 and 1, such as 0.05; got \(precision)")
        }
        if !precisionMetrics.isEmpty && precision == nil { throw ValidationError("--precision-metric needs --precision") }
        for m in precisionMetrics where !RunMetrics.columns.contains(where: { $0.name == m }) {
            throw ValidationError("--precision-metric '\(m)' is not a runs.csv metric; for example background_energy_j, completed_pct, latency_p90_s")
        }
        if maxReplications < 2 { throw ValidationError("--max-replications must be at least 2, got \(maxReplications)") }
        if let timeline, Self.interval(timeline) == nil {
            throw ValidationError("--timeline '\(timeline)': expected a positive duration such as 5m or 30s")
        }
    }

    static func interval(_ text: String) -> SimDuration? {
        guard let d = Scenario.duration(text), d > .zero else { return nil }
        return d
    }

    func run() async throws {
        let scenario = try options.load()
        let folder = URL(fileURLWithPath: out ?? "notebooks-data/\(scenario.name)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw RuntimeFailure("cannot create output folder \(folder.path): \(error.localizedDescription)")
        }
        OutputFiles.removeLeftovers(in: folder)
        let record = RecordOptions(events: events, tasks: !noTasks, timelineEvery: timeline.flatMap(Self.interval),
                                   spool: Spool(folder: folder))
        let goal = precision.map {
            PrecisionGoal(target: $0, metrics: precisionMetrics.isEmpty ? PrecisionGoal.defaultMetrics : precisionMetrics,
                          maxReplications: maxReplications)
        }
        let study = try await Experiment.study(scenario, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
                                               record: record, precision: goal)
        let written = try Experiment.write(study, of: scenario, record: record, to: folder, commandLine: Invocation.arguments)
        let summaries = PolicySummary.summarise(study.runs, policies: scenario.policies)
        guard !quiet else { return }
        print(ComparisonTable.render(scenario, summaries, replications: study.replications))
        if let p = study.precision {
            let worst = p.worst.isFinite ? String(format: "%.3f", p.worst) : "unbounded"
            print(p.reached
                  ? "Precision \(p.target) reached with \(study.replications) replications (worst relative half-width \(worst))."
                  : "Precision \(p.target) NOT reached within \(p.maxReplications) replications (worst relative half-width \(worst)).")
        }
        print("Wrote \(written.joined(separator: ", ")) to \(folder.relativePath)")
    }
}

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a scenario file (with any overrides) without running it."
    )

    @OptionGroup var options: ScenarioOptions

    func run() async throws {
        let s = try options.load()
        let policies = s.policies.map(\.name).joined(separator: ", ")
        print("\(s.file): ok: scenario '\(s.name)', \(s.setup.duration), \(s.setup.apps.count) apps, "
              + "policies \(policies), \(s.replications) replications from seed \(s.seed)")
    }
}

@main
enum Main {
    static func main() async {
        exit(await run(Array(CommandLine.arguments.dropFirst())))
    }

    /// Parses and runs one command line; returns the exit code.
    static func run(_ arguments: [String]) async -> Int32 {
        await Invocation.$arguments.withValue(["bgsim"] + arguments) { await dispatch(arguments) }
    }

    static func dispatch(_ arguments: [String]) async -> Int32 {
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
        } catch {
            // Help and version requests arrive as errors that exit successfully.
            let code = BGSim.exitCode(for: error)
            if code == .success {
                print(BGSim.fullMessage(for: error))
                return Exit.success
            }
            if code == .validationFailure {
                printError(BGSim.fullMessage(for: error))
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
