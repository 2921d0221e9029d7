import Foundation
import Testing

/// The documents cannot fall behind the command line: every option that a subcommand's
/// `--help` lists is written somewhere in docs/.
@Suite("Options in the documents")
struct HelpDocumentationTests {
    /// The options a help text lists, each from the start of its own entry.
    static func options(inHelp help: String) -> Set<String> {
        Set(
            help.split(separator: "\n").compactMap { line -> String? in
                let entry = line.drop { $0 == " " }
                guard line.hasPrefix("  "), entry.hasPrefix("--") else { return nil }
                return String(entry.prefix { $0 == "-" || $0.isLetter })
            })
    }

    /// Whether `text` names `option` as a whole word: `--out` does not count for `--output`.
    static func mentions(_ text: String, _ option: String) -> Bool {
        var rest = Substring(text)
        while let found = rest.range(of: option) {
            let next = rest[found.upperBound...].first
            if next.map({ !($0.isLetter || $0 == "-") }) ?? true { return true }
            rest = rest[found.upperBound...]
        }
        return false
    }

    @Test func anOptionIsMentionedOnlyAsAWholeWord() {
        #expect(Self.mentions("use `--output` or --out.", "--out"))
        #expect(!Self.mentions("use `--output` or --outer", "--out"))
    }

    @Test func theOptionReaderTakesEntriesNotMentions() {
        let help = "OPTIONS:\n  --out <out>   The folder.\n  -q, --quiet   Say nothing; see --out.\n  --jobs <n>    Threads.\n"
        #expect(Self.options(inHelp: help) == ["--out", "--jobs"])
    }

    @Test(arguments: ["run", "sweep", "merge", "validate", "report", "forecast", "timeline", "sensitivity study", "sensitivity check"])
    func everyOptionOfASubcommandIsDocumented(command: String) throws {
        let help = try bgsim(command.split(separator: " ").map(String.init) + ["--help"])
        #expect(help.status == 0)
        let docs = try FileManager.default.contentsOfDirectory(atPath: repo.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }
            .map { try String(contentsOf: repo.appendingPathComponent("docs/\($0)"), encoding: .utf8) }
            .joined(separator: "\n")
        let options = Self.options(inHelp: help.stdout).subtracting(["--help"])
        #expect(options.count >= 3, "the help lists options: \(options)")
        for option in options.sorted() {
            #expect(Self.mentions(docs, option), "bgsim \(command) \(option) is in --help but in no page of docs/")
        }
    }
}
