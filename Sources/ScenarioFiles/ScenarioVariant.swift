import SimRandom

extension Scenario {
    /// The scenario loaded with `overrides`, named for them when they change it: a scenario
    /// run with `--set people=heavy` is `default_people-heavy` in every output and in its
    /// default folder, so a variant never passes for (or overwrites) the scenario it varies.
    /// `--seed` and `--replications` (overrides of `seed` and `replications`) and an explicit
    /// `name` override keep the name.
    ///
    /// - Returns: the scenario and the overrides that give it, the name's among them.
    package static func loadVariant(file: String, overrides: [Override]) throws(ScenarioError) -> (Scenario, [Override]) {
        // Read twice, the second time named: the file and its profiles are parsed once.
        let text = try InputFile.read(file, .scenario)
        let documents = DocumentCache()
        let scenario = try parse(yaml: text, file: file, overrides: overrides, documents: documents)
        guard let name = variantName(scenario.name, overrides: overrides) else { return (scenario, overrides) }
        let all = overrides + [Override(path: ConfigKeyPath([.key("name")]), value: name, origin: "--set name=\(name)")]
        return (try parse(yaml: text, file: file, overrides: all, documents: documents), all)
    }

    /// `base` followed by each override that changes the world, as a name bgsim accepts
    /// (letters, digits, `.`, `_`, `-`); `nil` when none does. A long one is cut and ends in a
    /// hash of all the overrides, so distinct variants keep distinct names.
    static func variantName(_ base: String, overrides: [Override]) -> String? {
        let unnamed: Set<ConfigKeyPath> = [ConfigKeyPath([.key("seed")]), ConfigKeyPath([.key("replications")])]
        guard !overrides.contains(where: { $0.path == ConfigKeyPath([.key("name")]) }) else { return nil }
        let changes = overrides.filter { !unnamed.contains($0.path) }
        guard !changes.isEmpty else { return nil }
        let parts = changes.map { o -> String in
            var slug = ""
            for c in "\(o.path.description)-\(o.value)" {
                let keep = c.isASCII && (c.isLetter || c.isNumber || c == "." || c == "_" || c == "-")
                if keep { slug.append(c) } else if !slug.hasSuffix("-") { slug.append("-") }
            }
            while slug.hasSuffix("-") || slug.hasSuffix(".") { slug.removeLast() }
            return slug
        }
        let name = ([base] + parts).joined(separator: "_")
        guard name.count > 100 else { return name }
        let hash = StreamID.fnv1a(changes.map { "\($0.path.description)=\($0.value)" }.joined(separator: "\n"))
        let hex = String(hash, radix: 16)
        return String(name.prefix(80)) + "-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
