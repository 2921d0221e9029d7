import ArgumentParser
import Experiments
import Foundation
import Reports
import ResultFiles
import ScenarioFiles

struct ForecastCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forecast",
        abstract: "Forecast how often an app's background tasks run on people's phones, and why not.",
        discussion: """
            Places the app profile (its BGTaskScheduler tasks: identifiers, kinds, intervals, \
            earliest begin, requirements, work, whether it calls setTaskCompleted; and how often \
            the person opens it, opens_per_day) among the apps of the bundled fleet of people \
            (models/scenarios/fleet.yaml), or of one named person (--person median), and runs it \
            under ios (or --policy android, repeatable). Prints a short answer per task \
            identifier and writes forecast.csv (per policy, variant, identifier and metric: mean, \
            median, p10, p90, the share of people at zero, and for each change of the built-in \
            sweep its paired difference from the fleet as it is), people.csv (each person's \
            drawn values, runs and what held them longest), forecast.md and forecast.html. \
            The sweep changes opens a day, the requested interval, Background App Refresh, the \
            charging habit and the connection, one at a time, on the first --sweep-people \
            people, and each --change of your own beside them. docs/forecast.md walks through it.
            """
    )

    @Argument(help: "The app profile (YAML), laid out as models/apps/*.yaml, such as Examples/forecast/news-app.yaml.")
    var app: String

    @Option(name: .customLong("policy"), help: "A policy to forecast under (repeatable; default: ios).")
    var policies: [String] = []

    @Option(help: "People of the fleet (or, with --person, runs of that person's days).")
    var people = 500

    @Option(help: "Forecast for one person of models/people/ (light, median, heavy) instead of the fleet.")
    var person: String?

    @Option(help: "People the built-in sweep runs each change on (0: no sweep).")
    var sweepPeople = 100

    @Flag(help: "Skip the answers' ranges over the assumptions (each assumption of ios varied over its plausible range).")
    var noRanges = false

    @Option(help: "People each point of the ranges' design runs on (the fleet's first).")
    var rangePeople = 20

    @Option(help: "Morris trajectories of the ranges' design: trajectories × (assumptions + 1) points.")
    var rangeTrajectories = 6

    @Option(help: "Base samples of the ranges' Sobol' design over the top assumptions: samples × (top + 2) points.")
    var rangeSamples = 64

    @Option(help: "The scenario to place the app in (default: the bundled models/scenarios/fleet.yaml).")
    var scenario: String?

    @Option(help: "Simulated days per person, such as 7d (default: the scenario's).")
    var duration: String?

    @Option(help: "The master random seed (default: the scenario's).")
    var seed: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("Override a value of the scenario by its key path (repeatable).", valueName: "key.path=value"))
    var overrides: [String] = []

    @Option(
        name: .customLong("change"),
        help: ArgumentHelp(
            "A what-if of your own for the paired sweep: NAME, then a scenario key path or the app's own as app.KEY, and its value (repeatable; several with one NAME make one change). Such as 'opens 5:app.opens_per_day=5'.",
            valueName: "NAME:KEY=VALUE"))
    var changes: [String] = []

    @Option(help: "The output folder (default: results/forecast-<app name>).")
    var out: String?

    @Option(help: "Simulations to run in parallel (default: the cores this process may use).")
    var jobs: Int?

    @Flag(help: "Print the answer and errors only: no progress, no list of files written.")
    var quiet = false

    /// The files a forecast writes before its manifest.
    static let files = ["forecast.csv", "people.csv", "forecast.md", "forecast.html"]

    func validate() throws {
        guard (1...100_000).contains(people) else { throw ValidationError("--people must be from 1 to 100000, got \(people)") }
        guard (0...people).contains(sweepPeople) else { throw ValidationError("--sweep-people must be from 0 to --people (\(people)), got \(sweepPeople)") }
        if let jobs, !(1...4096).contains(jobs) { throw ValidationError("--jobs must be from 1 to 4096, got \(jobs)") }
        guard (1...1000).contains(rangePeople) else { throw ValidationError("--range-people must be from 1 to 1000, got \(rangePeople)") }
        guard (2...100).contains(rangeTrajectories) else {
            throw ValidationError("--range-trajectories must be from 2 to 100, got \(rangeTrajectories)")
        }
        guard (2...1024).contains(rangeSamples) else { throw ValidationError("--range-samples must be from 2 to 1024, got \(rangeSamples)") }
        for text in overrides where Override(parsing: text) == nil {
            throw ValidationError("--set '\(text)': expected key.path=value, such as 'apps[0].tasks[0].interval=30m'")
        }
        for text in changes {
            guard let c = ForecastSetup.change(parsing: text) else {
                throw ValidationError("--change '\(text)': expected NAME:KEY=VALUE, such as 'opens 5:app.opens_per_day=5'")
            }
            guard c.name != "base", !c.name.hasPrefix("opens x"), !c.name.hasPrefix("interval x") else {
                throw ValidationError("--change '\(text)': the name '\(c.name)' is the forecast's own; name your change otherwise")
            }
            try Quoting.refuseControlCharacters(c.name, what: "--change's name")
        }
        guard sweepPeople > 0 || changes.isEmpty else { throw ValidationError("--change runs in the sweep: give --sweep-people above 0") }
        if let out { try OutputOptions.checkOut(out) }
    }

    func run() async throws {
        guard let base = scenario ?? BundledModels.folder.map({ $0 + "/scenarios/fleet.yaml" }) else {
            throw UsageError("cannot find the bundled models/ folder for its fleet; set BGSIM_MODELS or give --scenario")
        }
        var setup = try ForecastSetup.load(
            app: app, base: base, person: person, policies: policies.isEmpty ? ["ios"] : policies, replications: people,
            duration: duration, seed: seed, more: overrides.compactMap(Override.init(parsing:)))
        for c in changes.compactMap(ForecastSetup.change(parsing:)) {
            if let k = setup.changes.firstIndex(where: { $0.name == c.name }) {
                setup.changes[k].sets.append((c.path, c.value))
            } else {
                setup.changes.append((c.name, [(c.path, c.value)]))
            }
        }
        // The folder is locked as a run's is, from before the work to the manifest: a run or
        // another forecast writing there at the same time is refused, not mixed in.
        let folder = URL(literalPath: out ?? "results/forecast-\(setup.appParameters.name)")
        try OutputFiles.createFolder(folder, "output folder ")
        let lock = try FolderLock(folder)
        defer { lock.release() }
        let jobs = self.jobs ?? Cores.available()
        let reporter = quiet ? nil : ProgressReporter(jobs: jobs)
        var progress: (@Sendable (Int, Int) -> Void)?
        if let reporter { progress = { done, total in reporter.update(done: done, total: total, skipped: 0) } }
        var design = Forecast.RangeDesign()
        design.people = rangePeople
        design.trajectories = rangeTrajectories
        design.samples = rangeSamples
        let forecast = try await Forecast.run(
            setup, sweepPeople: sweepPeople, ranges: noRanges ? nil : design, jobs: jobs, progress: progress)
        reporter?.finish()
        let rows = forecast.rows()
        let page = ForecastPage(forecast, rows: rows)
        let files: [(name: String, content: OutputContent)] = [
            ("forecast.csv", .text(forecast.csv(rows))), ("people.csv", .text(forecast.peopleCSV())),
            ("forecast.md", .text(page.markdown)), ("forecast.html", .text(page.html)),
        ]
        // The command that reproduces the files: the options that do not change them left out.
        var words = [Program.current.name] + CommandLine.arguments.dropFirst()
        for (option, hasValue) in [("--out", true), ("--jobs", true), ("--quiet", false)] {
            while let k = words.firstIndex(where: { $0 == option || $0.hasPrefix(option + "=") }) {
                words.removeSubrange(k..<min(words.count, k + (hasValue && words[k] == option ? 2 : 1)))
            }
        }
        try OutputFiles.write(files, to: folder, replacing: OutputFiles.studyFiles + Self.files) { written in
            ("manifest.json", forecast.manifest(commandLine: words, sweepPeople: sweepPeople, files: written))
        }
        print(page.answer, terminator: "")
        guard !quiet else { return }
        print("Wrote \((Self.files + ["manifest.json"]).joined(separator: ", ")) to \(folder.relativePath)")
    }
}
