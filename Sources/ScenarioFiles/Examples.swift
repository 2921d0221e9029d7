import Foundation
import ResultFiles

/// The scenarios and sweeps bgsim ships with (`models/scenarios/*.yaml`, `models/sweeps/*.yaml`
/// of the bundled models folder), which every command takes by name: `bgsim run default`,
/// `bgsim sweep refresh-setting`, from any folder, installed or not.
package enum BundledExamples {
    /// A scenario or a sweep.
    package enum Kind: String, Sendable {
        case scenario, sweep
        var folder: String { self == .scenario ? "scenarios" : "sweeps" }
    }

    /// One bundled file.
    package struct Example: Sendable {
        /// The name a command takes: the file's name without `.yaml`.
        package var name: String
        package var kind: Kind
        /// The file's path.
        package var path: String
        /// The file's first sentence, from its opening comment.
        package var summary: String
    }

    /// Every bundled example, scenarios then sweeps, each sorted by name; none when there is
    /// no bundled models folder.
    package static func all(in models: String? = BundledModels.folder) -> [Example] {
        guard let models else { return [] }
        return [Kind.scenario, .sweep].flatMap { kind -> [Example] in
            let folder = (models as NSString).appendingPathComponent(kind.folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.filter { $0.hasSuffix(".yaml") }.sorted().map { file in
                let path = (folder as NSString).appendingPathComponent(file)
                return Example(name: String(file.dropLast(5)), kind: kind, path: path, summary: summary(of: path))
            }
        }
    }

    /// The opening comment's first sentence, on one line.
    static func summary(of path: String) -> String {
        guard let text = try? InputFile.read(path, .scenario) else { return "" }
        var words: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("#") else { break }
            words.append(line.dropFirst().trimmingCharacters(in: .whitespaces))
        }
        var joined = words.joined(separator: " ")
        if let end = joined.range(of: ". ") { joined = String(joined[..<end.lowerBound]) + "." }
        guard joined.count > 100 else { return joined }
        let cut = joined.prefix(100)
        return String(cut[..<(cut.lastIndex(of: " ") ?? cut.endIndex)]) + " …"
    }

    /// `argument` as a path: itself when a file of that name exists or it names a folder,
    /// else the bundled example of that name (`default`, `refresh-setting.yaml`), preferring
    /// one of `kind`. A name that is neither is an error that lists what there is, and the
    /// example it may have meant.
    package static func resolve(_ argument: String, prefer kind: Kind, in models: String? = BundledModels.folder) throws(ScenarioError)
        -> String
    {
        if FileManager.default.fileExists(atPath: argument) { return argument }
        let examples = all(in: models)
        let name = argument.hasSuffix(".yaml") ? String(argument.dropLast(5)) : argument
        if !argument.contains("/") {
            let matches = examples.filter { $0.name == name }
            if let match = matches.first(where: { $0.kind == kind }) ?? matches.first { return match.path }
        }
        var message = "no such \(kind.rawValue) file"
        let base = ((argument as NSString).lastPathComponent as NSString).deletingPathExtension
        let near = examples.filter { $0.kind == kind }.min { editDistance($0.name, base) < editDistance($1.name, base) }
        if let near, editDistance(near.name, base) <= max(2, base.count / 3) {
            message += "; did you mean the bundled \(kind.rawValue) '\(near.name)' (bgsim \(kind == .scenario ? "run" : "sweep") \(near.name))?"
        } else if !examples.isEmpty {
            let names = examples.filter { $0.kind == kind }.map(\.name).joined(separator: ", ")
            message += "; bundled \(kind.rawValue)s, taken by name: \(names) ('\(ProgramName.current) examples' lists them)"
        }
        throw ScenarioError(.unreadable, file: argument, message: message)
    }
}
