import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling

/// Finished units of a study, side by side in one folder (`units/`): for the unit
/// `p000003-1-r000007`, its record `p000003-1-r000007.unit.txt` (a `UnitRecord`: the unit's
/// fingerprint, its runs.csv values, its row files' sizes) and its rows, such as
/// `p000003-1-r000007.tasks.csv`, `.timeline.csv` and `.events.csv`.
///
/// A unit's rows are written first and its record last, so a unit is finished when its
/// record is there and whole: a study killed at any moment and run again finds every unit
/// that finished, checks its fingerprint (same scenario, policy, replication and recording),
/// and runs only the rest. Shards of a study are unit stores that `merge` joins. No folder per
/// unit: making, renaming and removing one cost more than a short simulation on ext4.
package struct UnitStore: Sendable {
    /// The folder holding the units' records and rows (`<out>/units`).
    package let folder: URL
    /// `folder`'s path, made once: a unit's files are named some ten times per unit, and
    /// `URL.appendingPathComponent` each time was a twentieth of a sweep of short runs (perf).
    let folderPath: String
    /// The store in `folder` (made when the first unit is kept).
    package init(folder: URL) {
        self.folder = folder
        folderPath = folder.path
    }

    /// One of a unit's files: `unit.txt` (its record) or a row file, by its name in a study.
    func path(_ u: UnitKey, _ name: String) -> String { folderPath + "/" + u.folderName + "." + name }
    func file(_ u: UnitKey, _ name: String) -> URL { URL(fileURLWithPath: path(u, name)) }

    /// The row files a unit may hold beside its record.
    static let rowFiles = ["apps.csv", "tasks.csv", "timeline.csv", "events.csv"]

    /// Whether `u` finished here with `fingerprint` and holds the rows `record` needs, whole.
    func isDone(_ u: UnitKey, fingerprint: String, record: RecordOptions) -> Bool {
        guard let unit = try? UnitRecord.read(u, in: self), unit.fingerprint == fingerprint else { return false }
        let needed =
            (record.apps ? ["apps.csv"] : []) + (record.tasks ? ["tasks.csv"] : []) + (record.timelineEvery != nil ? ["timeline.csv"] : [])
            + (record.events ? ["events.csv"] : [])
        return needed.allSatisfy { unit.files[$0] != nil }
    }

    /// The unit's runs.csv values, as written.
    func values(_ u: UnitKey) throws(RuntimeFailure) -> [Double] {
        try UnitRecord.read(u, in: self).values
    }

    /// The units with a record in the store (whole or not: `isDone` checks).
    func present() -> [UnitKey] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.compactMap { $0.hasSuffix(".unit.txt") ? UnitKey(folderName: String($0.dropLast(9))) : nil }.sorted()
    }

    /// Runs one simulation and records it as each of `units` (a unit and those that reuse it,
    /// `StudyPlan.source(of:)`; all of one policy and replication): each unit's old record goes
    /// first, so that rows being rewritten are never taken for a finished unit's.
    func run(_ units: [UnitKey], of plan: StudyPlan, record: RecordOptions) throws {
        let u = units[0]
        for v in units {
            unlink(path(v, "unit.txt"))
            for name in Self.rowFiles { unlink(path(v, name)) }
        }
        func prefix(_ v: UnitKey) -> [String] {
            Array(Experiment.pointFields(plan, v.point).prefix(1) + [plan.policies[v.policy].name, String(v.replication)])
        }
        var rows = RowDestination(prefix: prefix(u)) { file(u, $0) }
        rows.copies = units.dropFirst().map { v in (prefix(v), { file(v, $0) }) }
        let result: RunResult
        do {
            result = try Experiment.run(
                // The point's own spec: a sweep axis may set a policy's parameters (same label).
                plan.points[u.point].scenario, policy: plan.points[u.point].scenario.policies[u.policy], replication: u.replication,
                record: record, rows: rows)
        } catch {
            // A failure the input caused at run time (an event storm) leaves none of the
            // units' rows behind, and names the point of a sweep.
            for v in units { for name in Self.rowFiles { unlink(path(v, name)) } }
            if let e = error as? ScenarioError, plan.points.count > 1 {
                throw ScenarioError(.invalid, file: e.file, message: "point \(u.point): " + e.message)
            }
            throw error
        }
        let values = zip(RunMetrics.columns, result.values).map { CSVWriter.number($1, count: $0.isCount) }
        for v in units { try UnitRecord.write(fingerprint: plan.fingerprint(of: v, record: record), values: values, of: v, in: self) }
    }
}

/// A finished unit's record: its fingerprint, its runs.csv values, the size of each of its
/// row files, and a SHA-256 of those lines.
///
/// Units are not synced to disk: a sync per unit cost 2.4 ms on ext4 (5,000 one-second units:
/// 18 s against 6 s on tmpfs), more than a short simulation, and `kill -9` loses nothing
/// written. A machine that goes down may lose the last units written, or keep a record or a
/// row file cut short; the check line and the sizes tell such a unit from a whole one, and it
/// runs again.
struct UnitRecord {
    var fingerprint: String
    var values: [Double]
    /// Row file name (`tasks.csv`) -> bytes, as written.
    var files: [String: Int]

    static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    static func write(fingerprint: String, values: [String], of u: UnitKey, in store: UnitStore) throws(RuntimeFailure) {
        let sizes = UnitStore.rowFiles.compactMap { name in size(store.path(u, name)).map { "\(name)=\($0)" } }
        let body = fingerprint + "\n" + values.joined(separator: ",") + "\n" + "files " + sizes.joined(separator: " ") + "\n"
        let text = body + "check " + SHA256.hex(body) + "\n"
        let path = store.path(u, "unit.txt")
        // A plain write: FileManager.createFile writes through a temporary file and syncs it.
        let fd = try OutputFiles.openForWriting(path)
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw RuntimeFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
    }

    /// Reads and checks a unit's record: the check line matches, and every row file it lists
    /// has the size it had when the unit finished.
    static func read(_ u: UnitKey, in store: UnitStore) throws(RuntimeFailure) -> UnitRecord {
        let file = store.path(u, "unit.txt")
        // Not through a link: a record is a file this store wrote, and a link (to anything) is not.
        var info = stat()
        guard lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw RuntimeFailure("cannot read \(file) as a unit record")
        }
        // Split on bytes: splitting a String on a Character walks grapheme clusters, and cost
        // more than the rest of reading a record.
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Substring($0) }
        guard lines.count == 5, lines[4].isEmpty, lines[2].hasPrefix("files"), lines[3].hasPrefix("check "),
            SHA256.hex(String(decoding: text.utf8.dropLast(lines[3].utf8.count + 1), as: UTF8.self)) == lines[3].dropFirst(6)
        else {
            throw RuntimeFailure("\(file): not a whole unit record (a fingerprint, values, row files and a check line)")
        }
        let fields = lines[1].utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { Substring($0) }
        guard fields.count == RunMetrics.columns.count else {
            throw RuntimeFailure("\(file): expected \(RunMetrics.columns.count) values, found \(fields.count)")
        }
        var files: [String: Int] = [:]
        for entry in lines[2].split(separator: " ").dropFirst() {
            let parts = entry.split(separator: "=")
            guard parts.count == 2, UnitStore.rowFiles.contains(String(parts[0])), let size = Int(parts[1]) else {
                throw RuntimeFailure("\(file): bad row file entry '\(entry)'")
            }
            let rows = store.path(u, String(parts[0]))
            guard Self.size(rows) == size else { throw RuntimeFailure("\(rows): not the \(size) bytes its unit wrote") }
            files[String(parts[0])] = size
        }
        // Written by CSVWriter.number: shortest round-trip text, so this gives the same doubles.
        return UnitRecord(fingerprint: String(lines[0]), values: fields.map { $0.isEmpty ? .nan : Double($0) ?? .nan }, files: files)
    }
}

/// How a study is run and what it writes.
public struct StudyOptions: Sendable {
    /// Simulations run at once.
    package var jobs: Int
    /// What each run records besides its metrics.
    package var record: RecordOptions
    /// Replications are added until this goal is met, if set.
    package var precision: PrecisionGoal?
    /// Run only this slice of the units and write them with a shard manifest.
    package var shard: Shard?
    /// The overrides given on the command line (`--set`, `--seed`, `--replications`), which
    /// `merge` needs to rebuild the plan.
    package var overrides: [Override]
    /// Called after each unit with (units done, units to run, units found finished), counted
    /// over the whole study: with `--precision`, a later round adds its units to the totals.
    package var progress: (@Sendable (_ done: Int, _ total: Int, _ skipped: Int) -> Void)?
    /// Called as the result files are written, with what is being counted ("points of
    /// runs.csv written", "units of tasks.csv written"), how many so far and of how many.
    package var writing: (@Sendable (_ what: String, _ done: Int, _ total: Int) -> Void)?

    /// Options for running on `jobs` threads; the rest as named.
    public init(
        jobs: Int, record: RecordOptions = RecordOptions(), precision: PrecisionGoal? = nil, shard: Shard? = nil,
        overrides: [Override] = [], progress: (@Sendable (Int, Int, Int) -> Void)? = nil,
        writing: (@Sendable (String, Int, Int) -> Void)? = nil
    ) {
        self.jobs = jobs
        self.record = record
        self.precision = precision
        self.shard = shard
        self.overrides = overrides
        self.progress = progress
        self.writing = writing
    }
}

/// What a study did.
public struct StudyOutcome: Sendable {
    /// Per point, the runs in (policy, replication) order; empty for a shard.
    package var runs: [[RunValues]]
    /// Replications per policy run in the end.
    package var replications: Int
    /// What `--precision` achieved, if it was asked for.
    package var precision: PrecisionOutcome?
    /// The files written, in order.
    package var written: [String]
    /// Units run by this invocation.
    package var ran: Int
    /// Units found finished from an earlier invocation (resume).
    package var skipped: Int
    /// Simulations run by this invocation: `ran` less the units that took another's
    /// (`StudyPlan.source(of:)`).
    package var simulated = 0
    /// A run's per-app rows of summary.csv (none for a sweep or without apps.csv).
    var apps: [AppSummary] = []
    /// A morris sweep's conclusions (sensitivity.csv), or nil.
    package var conclusions: [Conclusion]?
}

extension Experiment {
    /// Runs a plan into `folder`: each unit into the unit store (`folder/units`), skipping
    /// units already finished there, then writes the result files (or, for a shard, the
    /// shard's manifest) and removes the store. Results depend only on the plan, never on
    /// the thread count, the shard split or how often the study was interrupted.
    public static func perform(_ plan: StudyPlan, options: StudyOptions, to folder: URL) async throws -> StudyOutcome {
        let store = UnitStore(folder: try OutputFiles.ownFolder(folder.appendingPathComponent("units"), "the finished units"))
        let lock = try FolderLock(folder)
        defer { lock.release() }
        OutputFiles.removeLeftovers(in: folder)
        var ran = 0, skipped = 0, simulated = 0
        func runUnits(_ reps: Range<Int>) async throws {
            let mine = plan.units(replications: reps, shard: options.shard)
            // Only units with a record can be finished: one listing of the store instead of a
            // failed open per unit (0.3 s for a fresh sweep of 20,000 units).
            let present = Set(store.present())
            let todo = mine.filter {
                !present.contains($0) || !store.isDone($0, fingerprint: plan.fingerprint(of: $0, record: options.record), record: options.record)
            }
            let ranBefore = ran
            skipped += mine.count - todo.count
            ran += todo.count
            // A unit whose inputs an earlier point's unit shares is written by that simulation.
            // (A group whose source finished before an interruption runs as its first unit.)
            var groups: [UnitKey: [UnitKey]] = [:]
            for u in todo { groups[plan.source(of: u), default: []].append(u) }
            let running = Set(todo)
            let sims = todo.compactMap { u in groups[u] } + groups.filter { !running.contains($0.key) }.sorted { $0.key < $1.key }.map(\.value)
            simulated += sims.count
            try await execute(plan, groups: sims, jobs: options.jobs, record: options.record, store: store) { [ran, skipped] done in
                options.progress?(ranBefore + done, ran, skipped)
            }
        }
        if let shard = options.shard {
            try await runUnits(0..<plan.replications)
            let written = try writeShardManifest(plan, shard: shard, options: options, store: store, to: folder)
            var outcome = StudyOutcome(runs: [], replications: plan.replications, precision: nil, written: written, ran: ran, skipped: skipped)
            outcome.simulated = simulated
            return outcome
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
        let (written, apps, conclusions) = try writeResults(
            plan, runs: runs, replications: n, precision: outcome, options: options,
            storeOf: { _ in store }, to: folder)
        try? FileManager.default.removeItem(at: store.folder)
        return StudyOutcome(
            runs: runs, replications: n, precision: outcome, written: written, ran: ran, skipped: skipped, simulated: simulated, apps: apps,
            conclusions: conclusions)
    }

    /// Runs `groups` (each one simulation, recorded as each of its units) on up to `jobs`
    /// threads, each into the store as it finishes; `progress` counts units.
    static func execute(
        _ plan: StudyPlan, groups: [[UnitKey]], jobs: Int, record: RecordOptions, store: UnitStore,
        progress: (Int) -> Void
    ) async throws {
        guard !groups.isEmpty else { return }
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0, done = 0
            func launch() {
                let units = groups[next]
                next += 1
                group.addTask {
                    try store.run(units, of: plan, record: record)
                    return units.count
                }
            }
            while next < min(max(jobs, 1), groups.count) { launch() }
            while let count = try await group.next() {
                done += count
                progress(done)
                if next < groups.count { launch() }
            }
        }
    }

    /// Every unit's values for replications 0..<replications, per point in (policy,
    /// replication) order.
    static func readRuns(
        _ plan: StudyPlan, replications: Int,
        storeOf: (UnitKey) -> UnitStore
    ) throws(RuntimeFailure) -> [[RunValues]] {
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
    package static func command(_ plan: StudyPlan, options: StudyOptions) -> [String] {
        var c = [Program.current.name, plan.isSweep ? "sweep" : "run", plan.file]
        for o in options.overrides { c += ["--set", "\(o.path)=\(o.value)"] }
        let fleet = !plan.points[0].scenario.fleet.isEmpty
        if !options.record.tasks && !fleet { c.append("--no-tasks") }
        if options.record.tasks && fleet { c.append("--tasks") }
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
    /// and returns their names in the order written, with a run's per-app summary rows.
    static func writeResults(
        _ plan: StudyPlan, runs: [[RunValues]], replications: Int, precision: PrecisionOutcome?,
        options: StudyOptions, storeOf: (UnitKey) -> UnitStore, to folder: URL
    ) throws(RuntimeFailure) -> (written: [String], apps: [AppSummary], conclusions: [Conclusion]?) {
        let policies = plan.policies
        // A run's summary has per-app rows, from its units' apps.csv rows (a sweep's would
        // multiply its summary by the apps; its apps.csv has them).
        var appSummaries: (@Sendable (Int) -> [AppSummary])?
        var appRows: [AppSummary] = []
        if options.record.apps, !plan.isSweep {
            let rows = try AppSummary.rows(policies: policies, replications: replications) { k, r in
                let u = UnitKey(point: 0, policy: k, replication: r)
                return storeOf(u).file(u, "apps.csv")
            }
            appSummaries = { _ in rows }
            appRows = rows
        }
        // Each point's summaries and comparisons are made as its rows are written.
        var files: [(name: String, content: OutputContent)] = [
            ("runs.csv", runsRows(plan, runs).content),
            (
                "summary.csv",
                summaryRows(plan, { PolicySummary.summarise(runs[$0], policies: policies) }, apps: appSummaries).content
            ),
            (
                "comparisons.csv",
                comparisonRows(plan) { p in
                    let baseline = policies.first { $0.label == plan.points[p].scenario.metrics.baseline }!
                    return PairedComparison.compare(runs[p], policies: policies, baseline: baseline)
                }.content
            ),
        ]
        // A morris sweep says which conclusions hold over its ranges (`bgsim sensitivity`).
        let conclusions = Conclusion.analyse(plan) { p in
            let baseline = policies.first { $0.label == plan.points[p].scenario.metrics.baseline }!
            return PairedComparison.compare(runs[p], policies: policies, baseline: baseline)
        }
        if let conclusions { files.append(("sensitivity.csv", .text(Conclusion.csv(plan, conclusions)))) }
        let units = plan.units(replications: 0..<replications)
        func parts(_ name: String, _ header: [String]) -> (String, OutputContent) {
            let head = plan.isSweep ? ["point"] + header : header
            return (name, .parts(header: CSVWriter.line(head), units.map { storeOf($0).file($0, name) }))
        }
        if options.record.apps { files.append(parts("apps.csv", AppRows.header)) }
        if options.record.tasks { files.append(parts("tasks.csv", TaskRows.header)) }
        if options.record.timelineEvery != nil { files.append(parts("timeline.csv", TimelineRows.header)) }
        if options.record.events { files.append(parts("events.csv", EventRows.header)) }
        let manifest = Manifest(
            plan: plan, commandLine: command(plan, options: options), replications: replications,
            precision: precision)
        // Rows are written a point at a time; the per-unit files are joined a unit at a time.
        let counted = Dictionary(
            uniqueKeysWithValues: files.map { file in
                (file.name, { if case .parts = file.content { "units" } else { "points" } }())
            })
        try OutputFiles.write(
            files, to: folder, replacing: OutputFiles.studyFiles,
            marker: { written in ("manifest.json", manifest.json(files: written)) },
            progress: options.writing.map { writing in
                { name, done, total in writing("\(counted[name] ?? "parts") of \(name) written", done, total) }
            })
        return (files.map(\.name) + ["manifest.json"], appRows, conclusions)
    }
}
