import ArgumentParser
import Experiments
import Foundation

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
        version: "0.1.0",
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

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a scenario: every policy in every replication; write runs.csv and summary.csv.",
        discussion: """
            Writes runs.csv (one row per policy and replication) and summary.csv (one row per policy: \
            mean and 95% confidence interval per metric) to the output folder, each file atomically, \
            then prints a comparison table. Same scenario and seed give byte-identical files, \
            whatever --jobs is.
            """
    )

    @OptionGroup var options: ScenarioOptions

    @Option(help: "The output folder (default: notebooks-data/<scenario name>).")
    var out: String?

    @Option(help: "Simulations to run in parallel (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "Also write events.csv: every app transition, task step and world event of every run.")
    var events = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
    }

    func run() async throws {
        let scenario = try options.load()
        let results = try await Experiment.runAll(scenario, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
                                                  events: events)
        let summaries = PolicySummary.summarise(results, policies: scenario.policies)
        let folder = URL(fileURLWithPath: out ?? "notebooks-data/\(scenario.name)")
        var files = [
            ("runs.csv", Experiment.runsCSV(scenario, results)),
            ("summary.csv", Experiment.summaryCSV(scenario, summaries)),
        ]
        if events { files.append(("events.csv", Experiment.eventsCSV(scenario, results))) }
        try OutputFiles.write(files, to: folder)
        guard !quiet else { return }
        print(ComparisonTable.render(scenario, summaries))
        print("Wrote \(files.map(\.0).joined(separator: ", ")) to \(folder.relativePath)")
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
