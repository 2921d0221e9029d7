import Foundation
import ResultFiles
import ScenarioFiles
import SimEngine

/// Shards that do not make one complete, consistent study: missing or duplicate units,
/// shards of different studies, a unit whose files do not match its shard's manifest.
package struct MergeError: Error, CustomStringConvertible {
    /// The whole message, one line per problem.
    package let description: String
    /// An error saying `description`.
    package init(_ description: String) { self.description = description }
}

extension Experiment {
    /// A shard's `manifest.json`: what the study is (enough for `merge` to rebuild its plan),
    /// which slice this is, and every unit's files with their SHA-256. Written last, so a
    /// shard folder without one is unfinished (run the same command again to finish it).
    static func writeShardManifest(
        _ plan: StudyPlan, shard: Shard, options: StudyOptions, store: UnitStore,
        to folder: URL
    ) throws(RuntimeFailure) -> [String] {
        // The manifest lists this study's units of the shard, all run or found finished by
        // now. Units another study left in the folder (other points, another plan) are not
        // this shard's: listed, merge would refuse them as not part of the study; they are
        // removed. Finished units of this study in other slices (another shard run into the
        // same folder, or another split) are work to keep: unlisted, merge ignores them, and
        // that shard run here again finds them.
        let mine = plan.units(replications: 0..<plan.replications, shard: shard)
        let kept = Set(mine)
        for u in store.present() where !kept.contains(u) {
            let ours =
                u.point < plan.points.count && u.policy < plan.policies.count && u.replication < plan.replications
                && store.isDone(u, fingerprint: plan.fingerprint(of: u, record: options.record), record: options.record)
            if !ours { for name in ["unit.txt"] + UnitStore.rowFiles { unlink(store.path(u, name)) } }
        }
        var units: [String] = []
        for u in mine {
            var files: [(name: String, bytes: Int, sha256: String)] = []
            for name in ["unit.txt"] + UnitStore.rowFiles {
                let url = store.file(u, name)
                guard FileManager.default.fileExists(atPath: url.path) else { continue }
                let (bytes, digest) = try digest(of: url)
                files.append((name, bytes, digest))
            }
            units.append("    {\"unit\": \(JSON.string(u.folderName)), \"files\": \(Manifest.fileList(files, indent: 2))}")
        }
        let manifest = Manifest(plan: plan, commandLine: command(plan, options: options), replications: plan.replications, precision: nil)
        var pairs = manifest.head(kind: "shard")
        let r = options.record
        pairs += [
            ("shard", JSON.string(shard.description)),
            ("units_total", String(plan.unitCount)),
            ("plan_kind", JSON.string(plan.isSweep ? "sweep" : "run")),
            ("plan_file", JSON.string(plan.file)),
            // The same file from anywhere: `plan_file` is as given, relative to where the
            // shard ran, and merge may run elsewhere.
            ("plan_path", JSON.string(URL(literalPath: plan.file).standardizedFileURL.path)),
            ("overrides", JSON.array(options.overrides.map { JSON.string("\($0.path)=\($0.value)") })),
            (
                "record",
                JSON.object(
                    [
                        ("tasks", String(r.tasks)), ("events", String(r.events)),
                        ("timeline_us", r.timelineEvery.map { String($0.microseconds) } ?? "null"),
                    ], indent: 1)
            ),
            ("units", "[\n" + units.joined(separator: ",\n") + "\n  ]"),
        ]
        try OutputFiles.write([], to: folder, replacing: OutputFiles.studyFiles) { _ in ("manifest.json", JSON.object(pairs + manifest.tail) + "\n") }
        return ["manifest.json"]
    }

    /// The plan the shards ran, read again from its file: as each shard named it (relative
    /// to where the shard ran, which is where merge usually runs), then by the absolute path
    /// a shard noted; the first file found here that still describes the study (its
    /// fingerprint) is used. Shards run from other folders, or merged elsewhere, join too.
    /// Returns it with the command line's overrides it was run with.
    static func studyPlan(of shards: [ShardFolder], progress: ((_ read: Int, _ total: Int) -> Void)?) throws -> (StudyPlan, [Override]) {
        let first = shards[0]
        let overrideTexts = first.manifest["overrides"] as? [String] ?? []
        let overrides = overrideTexts.compactMap(Override.init(parsing:))
        let fingerprint = try first.string("plan_sha256")
        let isSweep = try first.string("plan_kind") == "sweep"
        var candidates: [String] = []
        for key in ["plan_file", "plan_path"] {
            for s in shards {
                if let file = s.manifest[key] as? String, !candidates.contains(file) { candidates.append(file) }
            }
        }
        var tried: [String] = []
        for file in candidates {
            guard FileManager.default.fileExists(atPath: file) else {
                tried.append("\(file): not found from \(FileManager.default.currentDirectoryPath)")
                continue
            }
            let plan =
                isSweep
                ? try StudyPlan(sweep: Sweep.load(file: file), overrides: overrides, jobs: Cores.available(), progress: progress)
                : StudyPlan(scenario: try Scenario.load(file: file, overrides: overrides))
            if plan.fingerprint == fingerprint { return (plan, overrides) }
            tried.append("\(file) (with \(overrideTexts)) no longer describes it: its plan_sha256 differs")
        }
        throw MergeError(
            "cannot read again the study the shards ran: " + tried.joined(separator: "; ")
                + ". Merge where the shards ran, with the study's files as they were")
    }

    /// A shard's output options as the command-line flags that set them.
    static func recordFlags(_ manifest: [String: Any]) -> String {
        let r = manifest["record"] as? [String: Any] ?? [:]
        var flags: [String] = []
        if r["tasks"] as? Bool == false { flags.append("--no-tasks") }
        if r["events"] as? Bool == true { flags.append("--events") }
        if let us = (r["timeline_us"] as? NSNumber)?.int64Value { flags.append("--timeline \(us)us") }
        return flags.isEmpty ? "the default outputs" : flags.joined(separator: " ")
    }

    static func digest(of url: URL) throws(RuntimeFailure) -> (Int, String) {
        guard let (bytes, hex) = SHA256.file(at: url.path) else { throw RuntimeFailure("cannot read \(url.path)") }
        return (bytes, hex)
    }

    /// One shard folder as `merge` reads it.
    struct ShardFolder {
        var folder: URL
        /// The manifest without its `units`, which are in `units`.
        var manifest: [String: Any]
        /// The units the manifest lists: the name as written and each file's name and SHA-256.
        /// Taken out of the parsed JSON as each manifest is read: kept as Foundation's
        /// dictionaries they took about 3.5 kB a unit (massif), 3.5 GB for a million units.
        var units: [(name: String, files: [(name: String, sha256: String)])]
        var store: UnitStore { UnitStore(folder: folder.appendingPathComponent("units")) }

        init(folder: URL, manifest: [String: Any]) {
            self.folder = folder
            var manifest = manifest
            let listed = manifest.removeValue(forKey: "units") as? [[String: Any]] ?? []
            units = listed.map { entry in
                let files = (entry["files"] as? [[String: Any]] ?? []).compactMap { f -> (name: String, sha256: String)? in
                    guard let name = f["name"] as? String, let sha = f["sha256"] as? String else { return nil }
                    return (name, sha)
                }
                return ((entry["unit"] as? String) ?? "?", files)
            }
            self.manifest = manifest
        }
        func string(_ key: String) throws(MergeError) -> String {
            guard let s = manifest[key] as? String else {
                throw MergeError("\(folder.path)/manifest.json: '\(key)' is missing or not text")
            }
            return s
        }
    }

    /// Joins shard folders into the result files of the whole study, in `folder`. Checks
    /// that the shards are of one study and that every unit is present exactly once, and
    /// that each unit's files match its shard's manifest; the result is byte-identical to
    /// the study run in one piece.
    /// `progress`, if given, is told how many of a sweep's points have been read again;
    /// `steps`, how many units have been checked (each file hashed) and how much of each
    /// result file has been written (`StudyOptions.writing`).
    package static func merge(
        _ folders: [URL], to folder: URL, progress: ((_ read: Int, _ total: Int) -> Void)? = nil,
        steps: (@Sendable (_ what: String, _ done: Int, _ total: Int) -> Void)? = nil
    ) throws -> StudyOutcome {
        // One folder named twice (a glob and a name, say) is a slip, not a second copy of its
        // units: say so, rather than list every unit in it as a duplicate.
        var named: [String: URL] = [:]
        for f in folders {
            let key = f.standardizedFileURL.resolvingSymlinksInPath().path
            if let earlier = named[key] { throw MergeError("\(earlier.path) is named more than once") }
            named[key] = f
        }
        var shards: [ShardFolder] = []
        for f in folders {
            let url = f.appendingPathComponent("manifest.json")
            guard let data = FileManager.default.contents(atPath: url.path) else {
                // A shard still running or stopped has its unit store; anything else is not a
                // shard at all: bad input (exit 2), not an incomplete study (exit 3).
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: f.appendingPathComponent("units").path, isDirectory: &isFolder), isFolder.boolValue
                else {
                    throw UsageError(
                        FileManager.default.fileExists(atPath: f.path)
                            ? "\(f.path): not a shard folder (no manifest.json, no units/); give the folders written with --shard K/N"
                            : "\(f.path): no such shard folder")
                }
                throw MergeError("\(f.path): no manifest.json; not a finished shard (rerun its command to finish it)")
            }
            guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], json["kind"] as? String == "shard" else {
                throw MergeError("\(url.path): not a shard's manifest (kind must be \"shard\"; run with --shard K/N)")
            }
            shards.append(ShardFolder(folder: f, manifest: json))
        }
        guard let first = shards.first else { throw MergeError("no shard folders given") }
        // One study is one plan: the same fingerprint, whatever path each shard named its file by.
        for key in ["plan_sha256", "plan_kind"] {
            let value = try first.string(key)
            for s in shards.dropFirst() where try s.string(key) != value {
                throw MergeError("\(s.folder.path) is a shard of another study than \(first.folder.path): '\(key)' differs")
            }
        }
        // Units of another bgsim may hold other values for the same plan (the plan's digest
        // covers what was asked, not the code that answered), and its files other columns.
        for s in shards {
            let version = s.manifest["tool_version"] as? String, schema = s.manifest["schema_version"] as? Int
            guard version == Manifest.toolVersion, schema == Manifest.schemaVersion else {
                throw MergeError(
                    "\(s.folder.path) was written by bgsim \(version ?? "of no version") (schema \(schema.map(String.init) ?? "none")); "
                        + "this is bgsim \(Manifest.toolVersion) (schema \(Manifest.schemaVersion)), whose units may differ: "
                        + "run that shard again with this bgsim")
            }
        }
        // The same files from every shard: a shard run with other output options (--events,
        // --no-tasks, --timeline) holds units the merge cannot use, and says why here rather
        // than as a unit "missing or not of this study".
        let outputs = recordFlags(first.manifest)
        for s in shards.dropFirst() where recordFlags(s.manifest) != outputs {
            throw MergeError(
                "\(s.folder.path) was run with \(recordFlags(s.manifest)) and \(first.folder.path) with \(outputs): "
                    + "every shard of a study must write the same files; run \(s.folder.path)'s shard again with \(first.folder.path)'s options")
        }
        let (plan, overrides) = try studyPlan(of: shards, progress: progress)
        let recordJSON = first.manifest["record"] as? [String: Any] ?? [:]
        let timeline = (recordJSON["timeline_us"] as? NSNumber).map { SimDuration(microseconds: $0.int64Value) }
        let record = RecordOptions(
            events: recordJSON["events"] as? Bool ?? false, tasks: recordJSON["tasks"] as? Bool ?? false,
            timelineEvery: timeline)

        // Which shard holds each unit (by canonical index; -1 for none, and a unit in more than
        // one shard listed apart); every unit's files checked against its manifest.
        var holder = [Int32](repeating: -1, count: plan.unitCount)
        var also: [UnitKey: [Int]] = [:]
        let listed = shards.reduce(0) { $0 + $1.units.count }
        var checked = 0
        for (i, s) in shards.enumerated() {
            for entry in s.units {
                defer {
                    checked += 1
                    steps?("units checked", checked, listed)
                }
                let name = entry.name
                guard let u = UnitKey(folderName: name),
                    u.point < plan.points.count, u.policy < plan.policies.count, u.replication < plan.replications
                else {
                    throw MergeError("\(s.folder.path)/manifest.json: a unit that is not part of the study: \(name)")
                }
                // The manifest's digests first: they name the file that changed.
                for f in entry.files {
                    let file = s.store.file(u, f.name)
                    // A shard's files are files its run wrote; a link would have merge read,
                    // and copy into the result, whatever it points to.
                    if OutputFiles.isSymbolicLink(file.path) || OutputFiles.isSymbolicLink(s.store.folder.path) {
                        throw MergeError("\(file.path): a symbolic link, which merge does not follow (a shard's units are files its run wrote)")
                    }
                    guard FileManager.default.fileExists(atPath: file.path) else { continue }
                    let (_, digest) = try digest(of: file)
                    guard digest == f.sha256 else {
                        throw MergeError("\(file.path) does not match its SHA-256 in \(s.folder.path)/manifest.json")
                    }
                }
                guard s.store.isDone(u, fingerprint: plan.fingerprint(of: u, record: record), record: record) else {
                    let record = s.store.file(u, "unit.txt")
                    throw MergeError(
                        FileManager.default.fileExists(atPath: record.path)
                            ? "\(s.folder.path): unit \(plan.describe(u)) (\(name)) is not of this study, or its files changed after it finished"
                            : "\(s.folder.path): unit \(plan.describe(u)) (\(name)) is listed in its manifest but \(record.path) is missing; "
                                + "run that shard again to redo it")
                }
                let index = plan.index(of: u)
                if holder[index] < 0 { holder[index] = Int32(i) } else { also[u, default: [Int(holder[index])]].append(i) }
            }
        }
        var missing: [UnitKey] = []
        for index in 0..<plan.unitCount where holder[index] < 0 { missing.append(plan.unit(index)) }
        let duplicate = also.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if !missing.isEmpty || !duplicate.isEmpty {
            var lines = shardLines(shards)
            if !missing.isEmpty {
                lines.append("\(missing.count) of \(plan.unitCount) units missing:")
                lines += missing.prefix(20).map { "  missing: \(plan.describe($0))" }
                if missing.count > 20 { lines.append("  ... and \(missing.count - 20) more") }
            }
            if !duplicate.isEmpty {
                lines.append("\(duplicate.count) units in more than one shard:")
                lines += duplicate.prefix(20).map { u, where_ in
                    "  duplicate: \(plan.describe(u)) in " + where_.map { shards[$0].folder.path }.joined(separator: " and ")
                }
                if duplicate.count > 20 { lines.append("  ... and \(duplicate.count - 20) more") }
            }
            throw MergeError("the shards do not make one complete study:\n" + lines.joined(separator: "\n"))
        }
        let stores = shards.map(\.store)
        let storeOf = { (u: UnitKey) in stores[Int(holder[plan.index(of: u)])] }
        let runs = try readRuns(plan, replications: plan.replications, storeOf: storeOf)
        let options = StudyOptions(jobs: 1, record: record, overrides: overrides, writing: steps)
        try OutputFiles.createFolder(folder, "output folder ")
        let lock = try FolderLock(folder)
        defer { lock.release() }
        let (written, apps, conclusions) = try writeResults(
            plan, runs: runs, replications: plan.replications, precision: nil, options: options,
            storeOf: storeOf, to: folder)
        return StudyOutcome(
            runs: runs, replications: plan.replications, precision: nil, written: written, ran: 0, skipped: plan.unitCount, apps: apps,
            conclusions: conclusions)
    }

    /// Which shards (K/N) were given, when all split the study the same way: the shards not
    /// given, and any given twice, which is what a Slurm user has to rerun or drop. Nothing
    /// when the shards split it differently (1/2 with 2/4 and 4/4 is a complete study).
    static func shardLines(_ shards: [ShardFolder]) -> [String] {
        let given = shards.map { ($0.manifest["shard"] as? String).flatMap(Shard.init(parsing:)) }
        guard let n = given.first??.count, given.allSatisfy({ $0?.count == n }) else {
            // Slices of different splits overlap and leave gaps: say so before the units.
            let splits = shards.indices.map { "\(shards[$0].folder.path) is \(given[$0].map { "\($0)" } ?? "?")" }
            return [
                "the shards were split differently (" + splits.prefix(20).joined(separator: ", ")
                    + (splits.count > 20 ? ", ..." : "") + "): run every shard with the same N in --shard K/N"
            ]
        }
        var lines: [String] = []
        let absent = (1...n).filter { k in !given.contains { $0?.index == k } }
        if !absent.isEmpty {
            lines.append(
                "shards not given: " + absent.prefix(20).map { "\($0)/\(n)" }.joined(separator: ", ")
                    + (absent.count > 20 ? " and \(absent.count - 20) more" : ""))
        }
        for k in 1...n {
            let folders = shards.indices.filter { given[$0]?.index == k }.map { shards[$0].folder.path }
            if folders.count > 1 { lines.append("shard \(k)/\(n) given more than once: " + folders.joined(separator: " and ")) }
        }
        return lines
    }
}
