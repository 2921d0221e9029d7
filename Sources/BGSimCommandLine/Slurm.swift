import Experiments
import Foundation
import Reports
import ResultFiles
import ScenarioFiles

/// `bgsim sweep --emit-slurm` (or `run --emit-slurm`): a job array whose task K runs shard K/N
/// of the study, a merge job that runs after all of them succeed, and `submit.sh`, which
/// submits both. Paths are
/// absolute, since the jobs run on other nodes (on a shared file system) from another
/// directory. A task that fails or is requeued resumes: the shard's finished units are kept.
enum SlurmScripts {
    static func write(
        plan: StudyPlan, studyFile: String, overrides: [String], seed: String?, replications: String?,
        output: OutputOptions, shards: Int, maxRunning: Int? = nil, options: [String],
        to folder: URL
    ) throws -> [String] {
        let bgsim = absolute(CommandLine.arguments[0], searchPath: true)
        let dir = folder.standardizedFileURL.path
        var common: [String] = []
        for o in overrides { common += ["--set", o] }
        if let seed { common += ["--seed", seed] }
        if let replications { common += ["--replications", replications] }
        if output.noTasks { common.append("--no-tasks") }
        if output.tasks { common.append("--tasks") }
        if output.events { common.append("--events") }
        if let t = output.timeline { common += ["--timeline", t] }
        let study = absolute(studyFile, searchPath: false)
        // A directive or a comment ends at a line break, and the rest of the line would run:
        // what goes into one is refused if it holds a control character (exit 2).
        let directive = { (option: String, value: String, what: String) throws(Quoting.Refused) -> String in
            "#SBATCH " + (try Quoting.sbatchArgument(option + value, what: what)) + "\n"
        }
        let comment = { (text: String) throws(Quoting.Refused) -> String in
            "# " + (try Quoting.comment(text, what: "the --emit-slurm folder")) + "\n"
        }
        let sh = Quoting.shell
        // `sweep.sbatch` runs a sweep's shards, `run.sbatch` a run's.
        let verb = plan.isSweep ? "sweep" : "run"
        let header = { (name: String, log: String) throws(Quoting.Refused) -> String in
            var s = "#!/bin/bash\n"
            s += try directive("--job-name=", name, "the study's name")
            s += try directive("--output=", Quoting.slurmFilename(dir + "/logs/") + log, "the --emit-slurm folder")
            for o in options { s += try directive(o, "", "--slurm-option '\(o)'") }
            return s
        }
        let shardOut = "--out \(sh(dir + "/shard-"))\"${SLURM_ARRAY_TASK_ID}\" "
        let arrayJob: String, mergeJob: String
        do {
            arrayJob =
                try header("bgsim-\(plan.name)", "shard-%a.out")
                + "#SBATCH --array=1-\(shards)\(maxRunning.map { "%\($0)" } ?? "")\n#SBATCH --cpus-per-task=\(output.jobs ?? 1)\n"
                + comment("Shard K of \(shards) of \(verb) '\(plan.name)': \(plan.unitCount) units in all.")
                + "set -euo pipefail\n"
                + "exec \(sh(bgsim)) \(verb) \(sh(study)) " + common.map(sh).joined(separator: " ")
                + (common.isEmpty ? "" : " ")
                + "--shard \"${SLURM_ARRAY_TASK_ID}/\(shards)\" \(shardOut)"
                + "--jobs \"${SLURM_CPUS_PER_TASK:-1}\"\n"
            let shardDirs = (1...shards).map { sh("\(dir)/shard-\($0)") }.joined(separator: " ")
            mergeJob =
                try header("bgsim-\(plan.name)-merge", "merge.out")
                + comment("Joins the \(shards) shards into \(dir)/result (byte-identical to an unsharded run).")
                + "set -euo pipefail\n"
                + "exec \(sh(bgsim)) merge \(shardDirs) --out \(sh(dir + "/result"))\n"
        } catch {
            throw UsageError(error.description)
        }
        // A merge whose shards did not all succeed (a time limit, a lost node) is cancelled,
        // not left pending for ever; running this script again then runs only the units not
        // yet finished (each shard keeps its own) and merges.
        let submit =
            "#!/bin/bash\n# Submits the shards as a job array, and the merge to run once every shard succeeded.\n"
            + "# If a shard fails, the merge is cancelled: run this script again, and only the units\n"
            + "# not yet finished run (finished ones are kept in each shard's folder) before the merge.\n"
            + "set -euo pipefail\n"
            + "array=$(sbatch --parsable \(sh(dir + "/\(verb).sbatch")))\n"
            + "array=${array%%;*}\n"
            + "merge=$(sbatch --parsable --dependency=afterok:\"${array}\" --kill-on-invalid-dep=yes \(sh(dir + "/merge.sbatch")))\n"
            + "echo \"submitted the shards as job ${array} and the merge as job ${merge}; results in \"\(sh(dir + "/result"))\n"
        _ = try OutputFiles.ownFolder(folder.appendingPathComponent("logs"), "the jobs' logs")
        let files = [("\(verb).sbatch", arrayJob), ("merge.sbatch", mergeJob), ("submit.sh", submit)]
        try OutputFiles.write(files.map { ($0.0, OutputContent.text($0.1)) }, to: folder)
        for (name, _) in files { chmod(folder.appendingPathComponent(name).path, 0o755) }
        return files.map(\.0)
    }

    static func absolute(_ path: String, searchPath: Bool) -> String {
        if path.hasPrefix("/") { return path }
        if searchPath, !path.contains("/") {
            for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
                let candidate = "\(dir)/\(path)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return URL(literalPath: path).standardizedFileURL.path
    }
}
