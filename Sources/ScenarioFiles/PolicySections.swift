import ResultFiles
import Scheduling
import SimEngine

/// Reading a policy entry: `{name: coalesce, label: coalesce-30m, max_delay: 30m}`. The keys
/// are the parameters the policy declares (`RegisteredPolicy.parameters`), each optional and
/// checked against its declared range; unknown keys are errors that name the known ones.
extension Scenario {
    static func readPolicy(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> PolicySpec {
        var m = try r.mapping(node, at: path)
        let known = PolicyRegistry.names.joined(separator: ", ")
        let name = try m.required("name", "a policy name (\(known))") { n, p throws(ScenarioError) in try r.string(n, p) }
        let label = try m.optional("label", default: String?.none) { n, p throws(ScenarioError) in try r.label(n, p) }
        var rule = try self.rule(named: name, node, path.appending("name"), r)
        // Parameters named `group.key` are the keys of a nested mapping, read together.
        var groups: [String: [(key: String, parameter: (name: String, kind: PolicyParameterKind))]] = [:], groupOrder: [String] = []
        for parameter in rule.type.parameterKinds {
            // By bytes: by characters, the search was 7,000 instructions a name (callgrind).
            guard let dot = parameter.name.utf8.firstIndex(of: UInt8(ascii: ".")) else {
                if let value = try m.optional(
                    parameter.name, default: PolicyParameterValue?.none,
                    { n, p throws(ScenarioError) in
                        try readParameter(parameter.kind, n, p, r)
                    })
                {
                    rule.values[parameter.name] = value
                }
                continue
            }
            let group = String(parameter.name[..<dot])
            if groups[group] == nil { groupOrder.append(group) }
            groups[group, default: []].append((String(parameter.name[parameter.name.index(after: dot)...]), parameter))
        }
        for group in groupOrder {
            guard let n = m.node(group) else { continue }
            var g = try r.mapping(n, at: path.appending(group))
            for (key, parameter) in groups[group]! {
                if let value = try g.optional(
                    key, default: PolicyParameterValue?.none,
                    { n, p throws(ScenarioError) in
                        try readParameter(parameter.kind, n, p, r)
                    })
                {
                    rule.values[parameter.name] = value
                }
            }
            try g.finish()
        }
        try m.finish()
        if let listing = KeyListing.ifActive { listParameters(rule, at: path, r, listing) }
        return PolicySpec(rule, label: label)
    }

    /// For `bgsim validate --print`: each parameter the entry does not give, with its default,
    /// and each assumption's plausible range (docs/sources.md §12).
    static func listParameters(_ rule: PolicySpec.Rule, at path: ConfigKeyPath, _ r: ConfigReader, _ listing: KeyListing) {
        for info in rule.type.parameterInfo {
            var p = path
            for part in info.name.split(separator: ".") { p = p.appending(String(part)) }
            if rule.values[info.name] == nil {
                listing.respellDefault(info.defaultValue, at: p) { n, q throws(ScenarioError) in try readParameter(info.kind, n, q, r) }
            }
            guard let range = info.plausible else { continue }
            func end(_ x: Double) -> String {
                switch info.kind {
                case .duration: "\(SimDuration(seconds: x))"
                case .flag: x == 0 ? "false" : "true"
                default: KeyListing.number(x)
                }
            }
            listing.annotate(p, "assumption: plausible \(end(range.low)) to \(end(range.high))")
        }
    }
}
