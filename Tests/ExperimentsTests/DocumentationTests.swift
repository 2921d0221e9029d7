import Foundation
import Scheduling
import Testing

@testable import Experiments
@testable import Policies
@testable import ResultFiles
@testable import ScenarioFiles

/// The documents say what the code does: facts that can drift (citations, the schema version,
/// the lists of profiles and policies) are checked against the repository itself.
@Suite("Documentation")
struct DocumentationTests {
    /// Every file git would ship: tracked or new, not ignored.
    static func shippedFiles() throws -> [String] {
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        git.arguments = ["git", "-C", repoRoot.path, "ls-files", "--cached", "--others", "--exclude-standard"]
        let pipe = Pipe()
        git.standardOutput = pipe
        try git.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        git.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            .filter { FileManager.default.fileExists(atPath: repoRoot.appendingPathComponent($0).path) }
    }

    static func text(_ path: String) -> String? {
        try? String(contentsOf: repoRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every `ios` parameter's default is fixed by a source (a section of docs/sources.md that
    /// exists) or is an assumption with a plausible range around it, which docs/sources.md
    /// lists with its reason: an assumption without a range fails here.
    @Test func everyIosDefaultHasASourceOrAPlausibleRange() throws {
        let doc = try #require(Self.text("docs/sources.md"))
        let sections = try Self.sourceSections()
        var assumptions = 0
        for p in DuetPolicy.parameterInfo {
            switch (p.source, p.plausible) {
            case (let source?, nil):
                if source.hasPrefix("§") {
                    #expect(Int(source.dropFirst()).map(sections.contains) == true, "\(p.name): \(source) is no section of docs/sources.md")
                }
            case (nil, let range?):
                assumptions += 1
                #expect(range.contains(p.defaultValue), "\(p.name): the default lies outside its plausible range")
                #expect(!range.why.isEmpty)
                #expect(doc.contains("| `\(p.name)` | "), "docs/sources.md §12 has no row for \(p.name)'s range")
            default:
                Issue.record("\(p.name): neither a source nor a plausible range (an assumption needs one)")
            }
        }
        #expect(assumptions >= 15, "the assumptions of docs/sources.md §12")
    }

    /// The section numbers `## N.` of docs/sources.md.
    static func sourceSections() throws -> Set<Int> {
        let doc = try #require(text("docs/sources.md"))
        return Set(
            doc.split(separator: "\n").compactMap { line -> Int? in
                guard line.hasPrefix("## ") else { return nil }
                return Int(line.dropFirst(3).prefix { $0.isNumber })
            })
    }

    /// The section numbers a citation such as `docs/sources.md §1-3, §5` or `[§4](sources.md)`
    /// names, each range expanded.
    static func cited(in text: String) -> [(line: Int, section: Int)] {
        var found: [(Int, Int)] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where line.contains("sources.md") {
            var rest = Substring(line)
            while let mark = rest.firstIndex(of: "§") {
                rest = rest[rest.index(after: mark)...]
                guard let first = Int(rest.prefix { $0.isNumber }) else { continue }  // a § alone cites nothing
                var last = first
                let afterFirst = rest.drop { $0.isNumber }
                if afterFirst.first == "-", let end = Int(afterFirst.dropFirst().prefix { $0.isNumber }) { last = end }
                for s in first...max(first, last) { found.append((n + 1, s)) }
            }
        }
        return found
    }

    @Test func noShippedFileNamesAPathOutsideTheRepository() throws {
        let files = try Self.shippedFiles()
        #expect(files.count > 100, "git listed the repository's files")
        for file in files where !file.hasPrefix("notebooks-data/") || file.hasSuffix(".md") {
            guard let text = Self.text(file) else { continue }
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                // Spelt in pieces so that this file does not match itself.
                for outside in ["FACTS" + ".md", "shared" + "/domain", "../.." + "/../"] where line.contains(outside) {
                    Issue.record("\(file):\(n + 1) names '\(outside)', which a clone does not have")
                }
            }
        }
    }

    @Test func everyCitationNamesASectionOfTheSourcesDocument() throws {
        let sections = try Self.sourceSections()
        #expect(sections == Set(1...12))
        var citations = 0
        for file in try Self.shippedFiles()
        where file.hasPrefix("models/") || file.hasPrefix("Sources/")
            || file.hasPrefix("Tests/") || file.hasPrefix("docs/") || file == "README.md"
        {
            guard let text = Self.text(file) else { continue }
            for (line, section) in Self.cited(in: text) {
                citations += 1
                #expect(sections.contains(section), "\(file):\(line) cites §\(section), which docs/sources.md lacks")
            }
        }
        #expect(citations > 100, "citations were found (\(citations))")
    }

    @Test func theCitationReaderSeesRangesAndLists() {
        let found = Self.cited(in: "x\n/// rules (docs/sources.md §1-3, §5)\n# [§12](sources.md)\nnot §9, with no document named")
        #expect(found.map(\.section) == [1, 2, 3, 5, 12] && found.map(\.line) == [2, 2, 2, 2, 3])
    }

    /// Every profile file of models/ cites its sources or says what is assumed.
    @Test func everyProfileSaysWhereItsNumbersComeFrom() throws {
        for file in try Self.shippedFiles()
        where file.hasPrefix("models/") && file.hasSuffix(".yaml")
            && !file.hasPrefix("models/traces/")
        {
            let text = try #require(Self.text(file))
            #expect(
                text.contains("sources.md") || text.lowercased().contains("assum"),
                "\(file) neither cites docs/sources.md nor names its assumptions")
        }
    }

    @Test func theOutputsPageGivesTheCurrentSchemaVersion() throws {
        let doc = try #require(Self.text("docs/outputs.md"))
        #expect(doc.contains("(schema version \(Manifest.schemaVersion);"))
    }

    /// The profiles table of docs/scenarios.md names exactly the files of each models/ folder.
    @Test(arguments: ["phones", "radios", "people", "charging", "networks", "apps"])
    func theProfileTableListsEveryProfile(folder: String) throws {
        let doc = try #require(Self.text("docs/scenarios.md"))
        let row = try #require(doc.split(separator: "\n").first { $0.hasPrefix("| `models/\(folder)/` |") })
        let cell = row.split(separator: "|")[1]
        let listed = Set(cell.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        let files = try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("models/\(folder)").path)
        let profiles = Set(files.filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(5)) })
        #expect(listed == profiles, "docs/scenarios.md lists \(listed.sorted()) for models/\(folder)/, which holds \(profiles.sorted())")
    }

    /// The policies table of docs/policies.md names the built-in rules, in their order.
    @Test func thePolicyTableListsEveryBuiltInPolicy() throws {
        let doc = try #require(Self.text("docs/policies.md"))
        let table = doc.components(separatedBy: "| policy | rule |")[1].components(separatedBy: "\n\n")[0]
        let names = table.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `") else { return nil }
            return String(line.dropFirst(3).prefix { $0 != "`" })
        }
        #expect(names == PolicyRegistry.builtIn.map { $0.policyName })
    }

    @Test func theReadmeStaysAFrontDoor() throws {
        let readme = try #require(Self.text("README.md"))
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(lines <= 250, "README.md has \(lines) lines; depth belongs in docs/")
        // Every page of docs/ is on the README's map.
        let pages = try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("docs").path)
        for page in pages where page.hasSuffix(".md") {
            let mapped = readme.contains("(docs/\(page))")
            #expect(mapped, "README's map of docs/ lacks \(page)")
        }
    }

    /// A reader knows what each source file is for: none grows past 500 lines (CONTRIBUTING.md).
    @Test func noSourceFileIsOverFiveHundredLines() throws {
        let sources = try Self.shippedFiles().filter { $0.hasPrefix("Sources/") && $0.hasSuffix(".swift") }
        #expect(sources.count > 50)
        for path in sources {
            let lines = try #require(Self.text(path)).split(separator: "\n", omittingEmptySubsequences: false).count - 1
            #expect(lines <= 500, "\(path) has \(lines) lines: split it by job")
        }
    }

    /// Every library product has a DocC catalog with a landing page, and `make docs` builds it.
    @Test func everyLibraryHasADocCCatalogThatMakeDocsBuilds() throws {
        let package = try #require(Self.text("Package.swift"))
        let makefile = try #require(Self.text("Makefile"))
        let libraries = package.components(separatedBy: ".library(name: \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(libraries.count >= 7, "Package.swift's library products: \(libraries)")
        let listed = makefile.split(separator: "\n").first { $0.hasPrefix("LIBRARIES :=") }?.split(separator: " ").dropFirst(2).map(String.init) ?? []
        #expect(Set(listed) == Set(libraries), "the Makefile's LIBRARIES \(listed) are not the library products \(libraries)")
        for target in libraries {
            let landing = try #require(Self.text("Sources/\(target)/\(target).docc/\(target).md"), "\(target) has no DocC catalog")
            #expect(landing.hasPrefix("# ``\(target)``"), "\(target)'s landing page is not titled with its module")
        }
    }

    /// Each target's `dependencies` in Package.swift name every module its sources import
    /// (the system's aside): a module used without being declared builds only by accident of
    /// the build order, and the layering is what the declarations say.
    @Test func everyTargetDeclaresWhatItImports() throws {
        let package = try #require(Self.text("Package.swift"))
        let system: Set<String> = ["Foundation", "Glibc", "Synchronization", "Testing", "Dispatch"]
        var checked = 0
        for (folder, prefix) in [("Sources", ".target(name: \""), ("Sources", ".executableTarget(name: \""), ("Tests", ".testTarget(name: \"")] {
            for piece in package.components(separatedBy: prefix).dropFirst() {
                let name = String(piece.prefix { $0 != "\"" })
                guard let files = FileManager.default.enumerator(atPath: repoRoot.appendingPathComponent("\(folder)/\(name)").path) else { continue }
                // The declaration runs to the next target.
                let declaration = piece.components(separatedBy: "\n        .").first ?? piece
                let declared = Set(
                    ("\"" + declaration).split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map {
                        String($0.element)
                    }
                )
                .union(declaration.contains("swift-argument-parser") ? ["ArgumentParser"] : [])
                for case let file as String in files where file.hasSuffix(".swift") {
                    let text = try #require(Self.text("\(folder)/\(name)/\(file)"))
                    for line in text.split(separator: "\n") {
                        let words = line.split(separator: " ")
                        guard let k = words.firstIndex(of: "import"), k + 1 < words.count, words[..<k].allSatisfy({ $0.hasPrefix("@") }) else { continue }
                        let module = String(words[k + 1])
                        // A module's name is capitalised; `import csv` is Python in a string.
                        guard !system.contains(module), module.first?.isUppercase == true else { continue }
                        checked += 1
                        #expect(
                            declared.contains(module),
                            "\(folder)/\(name)/\(file) imports \(module), which Package.swift does not list among \(name)'s dependencies")
                    }
                }
            }
        }
        #expect(checked > 100, "imports were found (\(checked))")
    }

    /// No test reads a clock to assert how long something took: this machine's speed drifts
    /// by half from hour to hour, so speed is claimed in benchmarks (instruction counts). A
    /// test may read the clock only for a deadline that turns a hang into a failure, in the
    /// files listed here with why.
    @Test func noTestAssertsAWallClockTime() throws {
        let deadlines = [
            "Tests/BGSimCLITests/FileIntegrityTests.swift": "waits up to 120 s for a run's first units before interrupting it"
        ]
        let clocks = ["ContinuousClock", "SuspendingClock", "clock_gettime", "DispatchTime.now", "Date()", "CFAbsoluteTimeGetCurrent", "timeIntervalSinceNow"]
        for file in try Self.shippedFiles()
        where file.hasPrefix("Tests/") && file.hasSuffix(".swift") && file != "Tests/ExperimentsTests/DocumentationTests.swift" {
            let text = try #require(Self.text(file))
            for clock in clocks where text.contains(clock) {
                #expect(deadlines[file] != nil, "\(file) reads the clock (\(clock)): assert counts, not times, or list it here with the reason")
            }
        }
    }

    /// Paths of the repository that the documents write in backticks (`Sources/...`,
    /// `models/...`) exist: a renamed file or folder cannot leave a document pointing nowhere.
    @Test func pathsNamedInTheDocumentsExist() throws {
        let roots = ["Sources/", "Tests/", "Benchmarks/", "models/", "Examples/", "docs/", "notebooks-data/"]
        var checked = 0
        for file in try Self.shippedFiles() where file.hasSuffix(".md") {
            let text = try #require(Self.text(file))
            for (i, piece) in text.split(separator: "`", omittingEmptySubsequences: false).enumerated() where i % 2 == 1 {
                let path = String(piece)
                guard roots.contains(where: path.hasPrefix), !path.contains("*"), !path.contains("<"), !path.contains(" ") else { continue }
                checked += 1
                #expect(FileManager.default.fileExists(atPath: repoRoot.appendingPathComponent(path).path), "\(file) names \(path), which does not exist")
            }
        }
        #expect(checked > 20, "paths were found (\(checked))")
    }

    /// Relative links in the Markdown documents lead to files that exist.
    @Test func relativeLinksResolve() throws {
        for file in try Self.shippedFiles() where file.hasSuffix(".md") {
            let text = try #require(Self.text(file))
            let folder = repoRoot.appendingPathComponent(file).deletingLastPathComponent()
            var rest = Substring(text)
            while let open = rest.range(of: "](") {
                rest = rest[open.upperBound...]
                let target = String(rest.prefix { $0 != ")" && $0 != "#" && $0 != " " })
                guard !target.isEmpty, !target.contains(":") else { continue }
                #expect(
                    FileManager.default.fileExists(atPath: folder.appendingPathComponent(target).path),
                    "\(file) links to \(target), which does not exist")
            }
        }
    }
}
