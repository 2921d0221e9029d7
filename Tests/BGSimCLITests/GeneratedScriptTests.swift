import Foundation
import Testing

/// What bgsim writes for a person or a shell to run (Slurm scripts, the reports' "reproduce"
/// line) runs exactly what it says, whatever the folder names and values in it: hostile names
/// run nothing, every `#SBATCH` line survives as sbatch reads it, and control characters are
/// refused before anything is written.
@Suite("generated scripts")
struct GeneratedScriptTests {
    /// A folder name that runs a command wherever a shell or sbatch reads it unquoted, or
    /// reads it quoted the wrong way: spaces, both quotes, `$(...)`, backticks, `;`, `#`,
    /// and `%a` (a replacement symbol in sbatch's file names).
    static let hostile = "out dir $(touch PWNED) `touch PWNED` ; x\"q'%a #c"

    /// `sbatch` as a stub on PATH (Tests/Slurm/stub-sbatch.py): reads the script's `#SBATCH`
    /// block with sbatch's own rules and logs the options as JSON lines.
    static let stubSbatch = repo.appendingPathComponent("Tests/Slurm/stub-sbatch.py")

    @Test func hostileFolderNamesAndOptionsRunNothingAndEveryDirectiveSurvives() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bin = dir.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent("sbatch"), withDestinationURL: Self.stubSbatch)
        let comment = "--comment=a b \"c\" 'd' $(touch PWNED) `touch PWNED` \\ #e"
        let options = ["--replications", "2", "--set", "duration=2h", "--set", "policies=[eager, ios]", "--no-tasks"]
        let r = try bgsim(["run", defaultScenario, "--emit-slurm", Self.hostile, "--shards", "2", "--slurm-option=\(comment)"] + options, in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let folder = dir.appendingPathComponent(Self.hostile)
        let log = dir.appendingPathComponent("sbatch.log")
        let environment = ["PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? ""), "STUB_LOG": log.path]
        let submit = try shell(["bash", folder.appendingPathComponent("submit.sh").path], in: dir, environment: environment)
        #expect(submit.status == 0, "\(submit.stderr)")
        #expect(submit.stdout == "submitted the shards as job 1 and the merge as job 2; results in \(folder.path)/result\n", "\(submit.stdout)")
        let calls = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
        #expect(calls.map { $0["script"] as? String } == [folder.path + "/run.sbatch", folder.path + "/merge.sbatch"])
        let logs = folder.path.replacingOccurrences(of: "%", with: "%%") + "/logs/"
        // The run's name (the scenario's, with the --set values) names the jobs.
        let name = "--job-name=bgsim-default_duration-2h_policies-eager-ios"
        #expect(
            calls.first?["options"] as? [String] == [name, "--output=\(logs)shard-%a.out", comment, "--array=1-2", "--cpus-per-task=1"],
            "\(calls.first ?? [:])")
        #expect(calls.last?["options"] as? [String] == [name + "-merge", "--output=\(logs)merge.out", comment], "\(calls.last ?? [:])")
        // The jobs as Slurm runs them: each array task, then the merge.
        for k in 1...2 {
            let task = try shell(["bash", folder.appendingPathComponent("run.sbatch").path], in: dir, environment: ["SLURM_ARRAY_TASK_ID": "\(k)"])
            #expect(task.status == 0, "array task \(k): \(task.stderr)")
        }
        let merge = try shell(["bash", folder.appendingPathComponent("merge.sbatch").path], in: dir)
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("result/runs.csv").path))
        #expect(!files(in: dir).contains { $0.hasSuffix("PWNED") }, "a command in a name ran: \(files(in: dir))")
    }

    @Test func aLineBreakInAFolderOrOptionIsRefusedBeforeAnythingIsWritten() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cases: [[String]] = [
            ["--emit-slurm", "a\ntouch PWNED"],
            ["--emit-slurm", "cluster", "--slurm-option=--comment=x\ntouch PWNED"],
            ["--emit-slurm", "cluster", "--slurm-option=--comment=x\rtouch PWNED"],
            ["--out", "a\u{1B}[2Jb"],
            ["--set", "phone.description=a\nb"],
        ]
        for extra in cases {
            let r = try bgsim(["run", defaultScenario] + extra, in: dir)
            #expect(r.status == 2, "\(extra): \(r.stderr)")
            #expect(r.stderr.hasPrefix("error: the argument $'") && r.stderr.contains("contains a control character (U+"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
        }
        #expect(files(in: dir).isEmpty, "nothing written: \(files(in: dir))")
    }

    /// A path that begins with `~`, given quoted or from a script, is a folder of that name:
    /// Foundation's file URLs read it as the home folder, where `--out '~'` and
    /// `--emit-slurm '~'` wrote (found by the fuzzer).
    @Test func aFolderNamedTildeIsThatFolderNotHome() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = dir.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let run = try bgsim(
            ["run", defaultScenario, "--set", "duration=1h", "--replications", "1", "--out", "~", "--quiet"], in: dir, environment: ["HOME": home.path])
        #expect(run.status == 0, "\(run.stderr)")
        let slurm = try bgsim(["run", defaultScenario, "--emit-slurm", "~"], in: dir, environment: ["HOME": home.path])
        #expect(slurm.status == 0, "\(slurm.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).isEmpty, "nothing in the home folder")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("~/runs.csv").path))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("~/submit.sh").path))
        #expect(try bgsim(["report", "~", "--quiet"], in: dir, environment: ["HOME": home.path]).status == 0)
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("~/report.html").path))
    }

    /// The "reproduce" line of both reports, pasted into a shell, gives back the command's
    /// words exactly and runs nothing else; Markdown carries no raw HTML from the study's values.
    @Test func theReportsReproduceLineRunsOnlyTheCommandAndMarkdownCarriesNoRawHTML() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let value = "$(touch PWNED) `touch PWNED` 'q\" ; <script>alert(1)</script> | *x* [l](u)"
        let sweep = dir.appendingPathComponent("sweep.yaml")
        try """
        scenario: \(defaultScenario)
        set: {duration: 2h}
        replications: 1
        policies: [eager]
        axes:
          - {path: phone.description, values: [plain, \(JSONSerialization.string(value))]}
        """.write(to: sweep, atomically: true, encoding: .utf8)
        let r = try bgsim(["sweep", sweep.path, "--set", "network.description=\(value)", "--out", "out", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try bgsim(["report", "out", "--format", "md", "--quiet"], in: dir).status == 0)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("out/manifest.json"))) as? [String: Any]
        let words = try #require(manifest?["command_line"] as? [String])
        let md = try String(contentsOf: dir.appendingPathComponent("out/report.md"), encoding: .utf8)
        let block = try #require(md.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "\n```").first)
        let html = try String(contentsOf: dir.appendingPathComponent("out/report.html"), encoding: .utf8)
        let code = try #require(html.components(separatedBy: "reproduce: <code>").dropFirst().first?.components(separatedBy: "</code>").first)
        let unescaped = code.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
        for line in [block, unescaped] {
            // The line's first word is the program; printf gets the rest, as the program would.
            let echoed = try shell(["bash", "-c", "set -- " + line + "; printf '%s\\0' \"$@\""], in: dir)
            #expect(echoed.status == 0, "\(echoed.stderr)")
            #expect(echoed.stdout.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init) == words, "\(line)")
        }
        #expect(!files(in: dir).contains { $0.hasSuffix("PWNED") }, "a command in a value ran")
        // Outside the code block, whose text Markdown shows as it is.
        let prose = md.replacingOccurrences(of: block, with: "")
        #expect(!prose.contains("<script>") && !prose.contains("</script>"), "raw HTML in report.md")
        #expect(md.contains("\\<script\\>alert(1)\\</script\\>"), "the value is shown, escaped")
        #expect(!html.contains("<script>alert"), "raw HTML in report.html")
    }
}

extension JSONSerialization {
    /// `s` as a JSON (and so YAML flow) string.
    static func string(_ s: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes]), as: UTF8.self).dropFirst().dropLast().description
    }
}
