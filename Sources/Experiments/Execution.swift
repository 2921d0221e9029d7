import Foundation
import Scheduling

/// Finished units of a study, each in its own folder (`units/p000003-1-r000007/`): `unit.txt`
/// (the unit's fingerprint, then its runs.csv values) and its rows of `tasks.csv`,
/// `timeline.csv` and `events.csv`.
///
/// A unit is written into a hidden folder and renamed into place when complete, so a unit
/// folder is whole or absent: a study killed at any moment and run again finds every unit
/// that finished, checks its fingerprint (same scenario, policy, replication and recording),
/// and runs only the rest. Shards of a study are unit stores that `merge` joins.
public struct UnitStore: Sendable {
    public let folder: URL
    public init(folder: URL) { self.folder = folder }

    func url(_ u: UnitKey) -> URL { folder.appendingPathComponent(u.folderName) }

    /// Whether `u` finished here with `fingerprint` and holds the rows `record` needs.
    func isDone(_ u: UnitKey, fingerprint: String, record: RecordOptions) -> Bool {
        let dir = url(u)
        guard let text = try? String(contentsOf: dir.appendingPathComponent("unit.txt"), encoding: .utf8),
              text.hasPrefix(fingerprint + "\n") else { return false }
        let needed = (record.tasks ? ["tasks.csv"] : []) + (record.timelineEvery != nil ? ["timeline.csv"] : [])
            + (record.events ? ["events.csv"] : [])
        return needed.allSatisfy { FileManager.default.fileExists(atPath: dir.appendingPathComponent($0).path) }
    }

    /// The unit's runs.csv values, as written.
    func values(_ u: UnitKey) throws(RuntimeFailure) -> [Double] {
        let file = url(u).appendingPathComponent("unit.txt")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else {
            throw RuntimeFailure("cannot read \(file.path)")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 2 else { throw RuntimeFailure("\(file.path): expected a fingerprint and a line of values") }
        let fields = lines[1].split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == RunMetrics.columns.count else {
            throw RuntimeFailure("\(file.path): expected \(RunMetrics.columns.count) values, found \(fields.count)")
        }
        // Written by CSVWriter.number: shortest round-trip text, so this gives the same doubles.
        return fields.map { $0.isEmpty ? .nan : Double($0) ?? .nan }
    }

    /// The units present (whole) in the store.
    func present() -> [UnitKey] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.compactMap(UnitKey.init(folderName:)).sorted()
    }

    /// Runs one unit and puts it in place.
    func run(_ u: UnitKey, of plan: StudyPlan, record: RecordOptions) throws {
        let fm = FileManager.default
        let final = url(u)
        let tmp = folder.appendingPathComponent(".\(u.folderName).tmp-\(getpid())")
        try? fm.removeItem(at: tmp)
        try OutputFiles.createFolder(tmp)
        let prefix = Experiment.pointFields(plan, u.point).prefix(1) + [plan.policies[u.policy].name, String(u.replication)]
        let result = try Experiment.run(plan.points[u.point].scenario, policy: plan.policies[u.policy], replication: u.replication,
                                        record: record, rows: RowDestination(folder: tmp, prefix: Array(prefix)))
        let values = zip(RunMetrics.columns, result.values).map { CSVWriter.number($1, count: $0.isCount) }
        let text = plan.fingerprint(of: u, record: record) + "\n" + values.joined(separator: ",") + "\n"
        guard fm.createFile(atPath: tmp.appendingPathComponent("unit.txt").path, contents: Data(text.utf8)) else {
            throw RuntimeFailure("cannot write \(tmp.path)/unit.txt: \(String(cString: strerror(errno)))")
        }
        if fm.fileExists(atPath: final.path) { try? fm.removeItem(at: final) }
        try OutputFiles.move(tmp, final)
    }
}

/// How a study is run and what it writes.
public struct StudyOptions: Sendable {
    public var jobs: Int
    public var record: RecordOptions
    public var precision: PrecisionGoal?
    /// Run only this slice of the units and write them with a shard manifest.
    public var shard: Shard?
    /// The overrides given on the command line (`--set`, `--seed`, `--replications`), which
    /// `merge` needs to rebuild the plan.
    public var overrides: [Override]
    /// Called after each unit with (units done, units to run, units found finished).
    public var progress: (@Sendable (_ done: Int, _ total: Int, _ skipped: Int) -> Void)?

    public init(jobs: Int, record: RecordOptions = RecordOptions(), precision: PrecisionGoal? = nil, shard: Shard? = nil,
                overrides: [Override] = [], progress: (@Sendable (Int, Int, Int) -> Void)? = nil) {
        self.jobs = jobs
        self.record = record
        self.precision = precision
        self.shard = shard
        self.overrides = overrides
        self.progress = progress
    }
}

/// What a study did.
public struct StudyOutcome: Sendable {
    /// Per point, the runs in (policy, replication) order; empty for a shard.
    public var runs: [[RunValues]]
    public var replications: Int
    public var precision: PrecisionOutcome?
    /// The files written, in order.
    public var written: [String]
    public var ran: Int
    public var skipped: Int
}

extension Experiment {
    /// Runs a plan into `folder`: each unit into the unit store (`folder/units`), skipping
    /// units already finished there, then writes the result files (or, for a shard, the
    /// shard's manifest) and removes the store. Results depend only on the plan, never on
    /// the thread count, the shard split or how often the study was interrupted.
    public static func perform(_ plan: StudyPlan, options: StudyOptions, to folder: URL) async throws -> StudyOutcome {
        let store = UnitStore(folder: folder.appendingPathComponent("units"))
        try OutputFiles.createFolder(store.folder, "output folder ")
        let lock = try FolderLock(folder)
        defer { lock.release() }
        OutputFiles.removeLeftovers(in: folder)
        OutputFiles.removeLeftovers(in: store.folder)
        var ran = 0, skipped = 0
        func runUnits(_ reps: Range<Int>) async throws {
            var mine: [UnitKey] = []
            for p in plan.points.indices {
                for k in plan.policies.indices {
                    for r in reps {
                        let u = UnitKey(point: p, policy: k, replication: r)
                        if let shard = options.shard, !shard.contains(plan.index(of: u)) { continue }
                        mine.append(u)
                    }
                }
            }
            let todo = mine.filter { !store.isDone($0, fingerprint: plan.fingerprint(of: $0, record: options.record), record: options.record) }
            skipped += mine.count - todo.count
            ran += todo.count
            try await execute(plan, units: todo, jobs: options.jobs, record: options.record, store: store) { done in
                options.progress?(done, todo.count, mine.count - todo.count)
            }
        }
        if let shard = options.shard {
            try await runUnits(0..<plan.replications)
            let written = try writeShardManifest(plan, shard: shard, options: options, store: store, to: folder)
            return StudyOutcome(runs: [], replications: plan.replications, precision: nil, written: written, ran: ran, skipped: skipped)
        }
        var n = options.precision?.initial(plan.replications) ?? plan.replications
        try await runUnits(0..<n)
        var runs = try readRuns(plan, replications: n) { _ in store }
        var outcome: PrecisionOutcome?
        if let goal = options.precision {
            while true {
                let (o, next) = goal.check(runs, policies: plan.policies, replications: n)
                outcome = o
                guard let next else { break }
                try await runUnits(n..<next)
                n = next
                runs = try readRuns(plan, replications: n) { _ in store }
            }
        }
        let written = try writeResults(plan, runs: runs, replications: n, precision: outcome, options: options,
                                       storeOf: { _ in store }, to: folder)
        try? FileManager.default.removeItem(at: store.folder)
        return StudyOutcome(runs: runs, replications: n, precision: outcome, written: written, ran: ran, skipped: skipped)
    }

    /// Runs `units` on up to `jobs` threads, each into the store as it finishes.
    static func execute(_ plan: StudyPlan, units: [UnitKey], jobs: Int, record: RecordOptions, store: UnitStore,
                        progress: (Int) -> Void) async throws {
        guard !units.isEmpty else { return }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0, done = 0
            func launch() {
                let u = units[next]
                next += 1
                group.addTask { try store.run(u, of: plan, record: record) }
            }
            while next < min(max(jobs, 1), units.count) { launch() }
            while try await group.next() != nil {
                done += 1
                progress(done)
                if next < units.count { launch() }
            }
        }
    }

    /// Every unit's values for replications 0..<replications, per point in (policy,
    /// replication) order.
    static func readRuns(_ plan: StudyPlan, replications: Int,
                         storeOf: (UnitKey) -> UnitStore) throws(RuntimeFailure) -> [[RunValues]] {
        var out: [[RunValues]] = []
        for p in plan.points.indices {
            var group: [RunValues] = []
            for k in plan.policies.indices {
                for r in 0..<replications {
                    let u = UnitKey(point: p, policy: k, replication: r)
                    group.append(RunValues(policy: plan.policies[k], replication: r, values: try storeOf(u).values(u)))
                }
            }
            out.append(group)
        }
        return out
    }

    /// The command that reproduces a study's results, for the manifest: options that do not
    /// change them (`--jobs`, `--out`, `--quiet`, `--shard`) are left out, so a result has
    /// one manifest however it was run.
    static func command(_ plan: StudyPlan, options: StudyOptions) -> [String] {
        var c = ["bgsim", plan.isSweep ? "sweep" : "run", plan.file]
        for o in options.overrides { c += ["--set", "\(o.path)=\(o.value)"] }
        if !options.record.tasks { c.append("--no-tasks") }
        if options.record.events { c.append("--events") }
        if let t = options.record.timelineEvery { c += ["--timeline", "\(t.microseconds)us"] }
        if let p = options.precision {
            c += ["--precision", CSVWriter.number(p.target)]
            for m in p.metrics { c += ["--precision-metric", m] }
            c += ["--max-replications", String(p.maxReplications)]
        }
        return c
    }

    /// Writes a study's result files from its units (each atomically, `manifest.json` last)
    /// and returns their names in the order written.
    static func writeResults(_ plan: StudyPlan, runs: [[RunValues]], replications: Int, precision: PrecisionOutcome?,
                             options: StudyOptions, storeOf: (UnitKey) -> UnitStore, to folder: URL) throws(RuntimeFailure) -> [String] {
        let policies = plan.policies
        let summaries = runs.map { PolicySummary.summarise($0, policies: policies) }
        let comparisons = plan.points.indices.map { p in
            let baseline = policies.first { $0.label == plan.points[p].scenario.metrics.baseline }!
            return PairedComparison.compare(runs[p], policies: policies, baseline: baseline)
        }
        var files: [(name: String, content: OutputContent)] = [
            ("runs.csv", .text(runsCSV(plan, runs))),
            ("summary.csv", .text(summaryCSV(plan, summaries))),
            ("comparisons.csv", .text(comparisonsCSV(plan, comparisons))),
        ]
        var units: [UnitKey] = []
        for p in plan.points.indices {
            for k in policies.indices { for r in 0..<replications { units.append(UnitKey(point: p, policy: k, replication: r)) } }
        }
        func parts(_ name: String, _ header: [String]) -> (String, OutputContent) {
            let head = plan.isSweep ? ["point"] + header : header
            return (name, .parts(header: CSVWriter.line(head), units.map { storeOf($0).url($0).appendingPathComponent(name) }))
        }
        if options.record.tasks { files.append(parts("tasks.csv", TaskRows.header)) }
        if options.record.timelineEvery != nil { files.append(parts("timeline.csv", TimelineRows.header)) }
        if options.record.events { files.append(parts("events.csv", EventRows.header)) }
        let manifest = Manifest(plan: plan, commandLine: command(plan, options: options), replications: replications,
                                precision: precision)
        try OutputFiles.write(files, to: folder) { written in ("manifest.json", manifest.json(files: written)) }
        return files.map(\.name) + ["manifest.json"]
    }
}
