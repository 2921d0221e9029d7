import Foundation
import PhoneWorld
import Synchronization

/// Named model files under `models/` that a scenario refers to: `phone: iphone-15`, or
/// `phone: {profile: iphone-15, battery: {capacity_wh: 13}}` to override some fields.
///
/// A reference is replaced by the profile file's mapping with the scenario's own keys merged
/// over it (mappings key by key, anything else replaced), before the scenario is read. Values
/// from a profile keep their file and line for error messages. A profile may refer to
/// profiles of another kind (a network environment names its radios) but not of its own.
enum Profiles {
    /// Where references may appear, parents before children, and the folder of each kind.
    static let kinds: [(path: ConfigKeyPath, folder: String, what: String)] = [
        (ConfigKeyPath([.key("phone")]), "phones", "phone profile"),
        (ConfigKeyPath([.key("charging")]), "charging", "charging habit"),
        (ConfigKeyPath([.key("network")]), "networks", "network environment"),
        (ConfigKeyPath([.key("network"), .key("wifi_radio")]), "radios", "radio profile"),
        (ConfigKeyPath([.key("network"), .key("cellular_radio")]), "radios", "radio profile"),
        (ConfigKeyPath([.key("people")]), "people", "people profile"),
        (ConfigKeyPath([.key("apps"), anyIndex]), "apps", "app model"),
    ]

    /// In a kind's path, stands for every item of a list.
    static let anyIndex = ConfigKeyPath.Component.index(-1)

    static func matches(_ pattern: ConfigKeyPath, _ path: ConfigKeyPath) -> Bool {
        pattern.components.count == path.components.count
            && zip(pattern.components, path.components).allSatisfy { p, c in
                if p == c { return true }
                if p == anyIndex, case .index = c { return true }
                return false
            }
    }

    static func isReference(_ path: ConfigKeyPath) -> Bool { kinds.contains { matches($0.path, path) } }

    /// Whether a value set at `path` may hold references below it: `apps` (a list of app
    /// models by name) or `network` (a mapping that may name its radios).
    static func mayHoldReferences(_ path: ConfigKeyPath) -> Bool {
        kinds.contains { kind in
            kind.path.components.count > path.components.count
                && matches(ConfigKeyPath(Array(kind.path.components.prefix(path.components.count))), path)
        }
    }

    /// The names of the profiles of the kind stored at `path`, for messages.
    static func available(in folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// Replaces every profile reference in `tree` by the merged profile.
    /// - Parameter modelsDirs: the folders holding `phones/`, `people/` and the other kinds,
    ///   searched in order.
    /// - Parameter documents: parsed profile files; each is read and parsed once, however
    ///   many references name it (the reference scenario names each app model four times) and
    ///   however many scenarios share the cache (a sweep's points). Parsing was most of startup.
    static func resolve(_ tree: inout ConfigNode, modelsDirs: [String], file: String, documents: DocumentCache) throws(ScenarioError) {
        for kind in kinds {
            try resolve(
                &tree, at: kind.path.components[...], walked: .root, kind: kind, modelsDirs: modelsDirs, file: file,
                parsed: documents)
        }
    }

    private static func resolve(
        _ node: inout ConfigNode, at rest: ArraySlice<ConfigKeyPath.Component>, walked: ConfigKeyPath,
        kind: (path: ConfigKeyPath, folder: String, what: String),
        modelsDirs: [String], file: String, parsed: DocumentCache
    ) throws(ScenarioError) {
        guard let first = rest.first else {
            try expand(&node, at: walked, kind: kind, modelsDirs: modelsDirs, file: file, parsed: parsed)
            return
        }
        if first == anyIndex {
            guard case .sequence(var items) = node.value else { return }
            for i in items.indices {
                try resolve(
                    &items[i], at: rest.dropFirst(), walked: walked.appending(index: i), kind: kind,
                    modelsDirs: modelsDirs, file: file, parsed: parsed)
            }
            node.value = .sequence(items)
            return
        }
        guard case .key(let key) = first, case .mapping(var pairs) = node.value,
            let i = pairs.firstIndex(where: { $0.key == key }), !pairs[i].value.isNull
        else { return }
        try resolve(
            &pairs[i].value, at: rest.dropFirst(), walked: walked.appending(key), kind: kind,
            modelsDirs: modelsDirs, file: file, parsed: parsed)
        node.value = .mapping(pairs)
    }

    /// Expands one reference: a scalar name, or a mapping with a `profile` key.
    private static func expand(
        _ node: inout ConfigNode, at here: ConfigKeyPath, kind: (path: ConfigKeyPath, folder: String, what: String),
        modelsDirs: [String], file: String, parsed: DocumentCache
    ) throws(ScenarioError) {
        let reader = ConfigReader(file: file)
        let nameNode: ConfigNode
        let namePath: ConfigKeyPath
        var overlay: [(key: String, keyLine: Int?, value: ConfigNode)] = []
        switch node.value {
        case .scalar:
            nameNode = node
            namePath = here
        case .mapping(let pairs):
            guard let ref = pairs.first(where: { $0.key == "profile" })?.value else { return }
            nameNode = ref
            namePath = here.appending("profile")
            overlay = pairs.filter { $0.key != "profile" }
        case .sequence:
            return  // the section's reader reports the wrong kind of value
        }
        let name = try reader.name(nameNode, namePath)
        let paths = modelsDirs.map { ($0 as NSString).appendingPathComponent(kind.folder + "/" + name + ".yaml") }
        var found: (path: String, tree: ConfigNode)?
        for path in paths {
            if let tree = try parsed.file(path) { found = (path, tree); break }
        }
        guard let found else {
            let known = Set(modelsDirs.flatMap { available(in: ($0 as NSString).appendingPathComponent(kind.folder)) }).sorted()
            throw reader.error(
                nameNode, namePath,
                "no \(kind.what) named '\(name)' (looked for \(paths.joined(separator: ", "))); "
                    + (known.isEmpty ? "none of those folders has profiles" : "known: \(known.joined(separator: ", "))")
                    + "; a scenario's 'models' key names the folder that holds \(kind.folder)/")
        }
        let path = found.path
        var base = found.tree
        guard case .mapping(let basePairs) = base.value else {
            throw ScenarioError(
                .invalid, file: path, line: base.line, column: base.column,
                message: "a \(kind.what) file must be a mapping of keys to values")
        }
        if let nested = basePairs.first(where: { $0.key == "profile" }) {
            throw ScenarioError(
                .invalid, file: path, keyPath: here.appending("profile").description,
                line: nested.keyLine, message: "a \(kind.what) cannot refer to another \(kind.what)")
        }
        base.merge(
            ConfigNode(value: .mapping(overlay), line: node.line, column: node.column, origin: node.origin, file: node.file),
            childReferences: kinds.map(\.path).filter {
                $0.components.count == kind.path.components.count + 1
                    && Array($0.components.prefix(kind.path.components.count)) == kind.path.components
            }
            .compactMap { if case .key(let k) = $0.components.last { k } else { nil } })
        node = base
    }
}

extension ConfigNode {
    /// Merges `overlay` over this node: mappings key by key, anything else replaced. Under a
    /// key named in `childReferences`, a profile name and a mapping of overrides combine into
    /// `{profile: name, ...overrides}` rather than one replacing the other.
    mutating func merge(_ overlay: ConfigNode, childReferences: [String] = []) {
        guard case .mapping(var pairs) = value, case .mapping(let over) = overlay.value else {
            self = overlay
            return
        }
        for o in over {
            guard let i = pairs.firstIndex(where: { $0.key == o.key }), !o.value.isNull else {
                if !pairs.contains(where: { $0.key == o.key }) { pairs.append(o) }
                continue
            }
            if childReferences.contains(o.key), case .scalar = pairs[i].value.value, case .mapping(let m) = o.value.value,
                !m.contains(where: { $0.key == "profile" })
            {
                var ref = ConfigNode(
                    value: .mapping([("profile", pairs[i].keyLine, pairs[i].value)]),
                    line: pairs[i].value.line, column: pairs[i].value.column, file: pairs[i].value.file)
                ref.merge(o.value)
                pairs[i].value = ref
            } else {
                pairs[i].value.merge(o.value)
            }
        }
        value = .mapping(pairs)
    }
}

/// YAML documents as parsed, by file: for reading many scenarios from the same files (the
/// points of a sweep), each file once. Parsing the base scenario and its profiles again at
/// every point cost about 15 M instructions a point. Shared by the threads that read a
/// sweep's points; a file is parsed under the lock, so once.
package final class DocumentCache: Sendable {
    private struct State {
        var documents: [String: (text: String?, tree: ConfigNode)] = [:]
        var parses = 0
        var apps: (node: ConfigNode, file: String, places: [String]?, apps: [AppParameters])?
        var values: [String: ConfigNode] = [:]
    }
    /// Shared by the points of a sweep, which are read on several threads.
    private let state = Mutex(State())

    package init() {}

    /// Files parsed so far.
    var parses: Int { state.withLock { $0.parses } }

    /// `yaml`, the text of `file`, parsed (again only if the text differs).
    func tree(yaml: String, file: String) throws(ScenarioError) -> ConfigNode {
        try cached(file, text: yaml) { () throws(ScenarioError) in try ConfigNode.parse(yaml: yaml, file: file) }
    }

    /// The file at `path` parsed, or `nil` if it cannot be read.
    func file(_ path: String) throws(ScenarioError) -> ConfigNode? {
        if let tree = state.withLock({ $0.documents[path]?.tree }) { return tree }
        // Not there at all: nil, and the caller looks elsewhere. There but unreadable (a link
        // that loops or leads nowhere): the reading error, naming the file.
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        let text = try InputFile.read(path, .profile)
        return try cached(path, text: nil) { () throws(ScenarioError) in try ConfigNode.parse(yaml: text, file: path) }
    }

    /// The apps read from `node` (the resolved `apps` list of a scenario in `file`, with the
    /// places the network names), read again only when the node is not identical to the one
    /// read last. The points of a sweep mostly share their apps: read for every point, they
    /// were a fifth of planning a 2,000-point sweep (perf), and comparing the trees costs far
    /// less than reading them. Only a list read without error is kept.
    func apps(
        _ node: ConfigNode, file: String, places: [String]?,
        _ read: () throws(ScenarioError) -> [AppParameters]
    ) throws(ScenarioError) -> [AppParameters] {
        if let last = state.withLock({ $0.apps }), last.file == file, last.places == places, last.node.isIdentical(to: node) {
            // Debug builds (the tests) check the kept apps against a fresh reading.
            assert((try? read()) == last.apps, "apps kept for an identical tree differ from a fresh reading")
            return last.apps
        }
        let apps = try read()
        state.withLock { $0.apps = (node, file, places, apps) }
        return apps
    }

    /// An override's value `text`, given at `origin`, parsed; kept for the next read of the
    /// same scenario unless a word or a number: a fleet's person is its scenario read again,
    /// with the same overrides of its own (the YAML parser's setup was about 100,000
    /// instructions a value, callgrind). At most 1,024 are kept.
    func value(_ text: String, file: String, origin: String) throws(ScenarioError) -> ConfigNode {
        guard !ConfigNode.isPlainWord(text) else { return try ConfigNode.parse(yaml: text, file: file, origin: origin) }
        let key = "\(file)\u{0}\(origin)\u{0}\(text)"
        if let node = state.withLock({ $0.values[key] }) { return node }
        let node = try ConfigNode.parse(yaml: text, file: file, origin: origin)
        state.withLock { s in
            if s.values.count >= 1024 { s.values.removeAll(keepingCapacity: true) }
            s.values[key] = node
        }
        return node
    }

    /// The document under `key`, parsed by `parse` unless it is there with the same `text`
    /// (`nil` for a file, whose text is read once). Parsed under the lock, so a file is parsed
    /// once however many points ask for it at the same time.
    private func cached(_ key: String, text: String?, _ parse: () throws(ScenarioError) -> ConfigNode) throws(ScenarioError) -> ConfigNode {
        let result: Result<ConfigNode, ScenarioError> = state.withLock { s in
            if let d = s.documents[key], text == nil || d.text == text { return .success(d.tree) }
            do throws(ScenarioError) {
                let tree = try parse()
                s.parses += 1
                s.documents[key] = (text, tree)
                return .success(tree)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// The `models/` folder bgsim ships with, where a scenario outside it finds the bundled
/// profiles: `$BGSIM_MODELS`, else `share/bgsim/models` beside the installed binary (`make
/// install`), else the `models/` folder of the source tree this binary was built from.
package enum BundledModels {
    package static let folder: String? = {
        let fm = FileManager.default
        func isFolder(_ path: String) -> Bool {
            var dir: ObjCBool = false
            return fm.fileExists(atPath: path, isDirectory: &dir) && dir.boolValue
        }
        if let env = ProcessInfo.processInfo.environment["BGSIM_MODELS"], !env.isEmpty { return env }
        if let exe = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            let installed = exe.deletingLastPathComponent().appendingPathComponent("../share/bgsim/models").standardizedFileURL.path
            if isFolder(installed) { return installed }
        }
        // Sources/Experiments/Profiles.swift -> the package root.
        let tree = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("models").path
        return isFolder(tree) ? tree : nil
    }()
}
