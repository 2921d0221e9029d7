import PolicyAPI
import Synchronization

/// The policies scenario files may name: the built-in ones (``builtIn``) and those a user's
/// executable registers before it reads anything.
public enum PolicyRegistry {
    /// The built-in policies go in unchecked: their declarations are made only when a scenario
    /// names them (about 3 M instructions for the six), and `BuiltInPolicyTests` checks them.
    private static let types = Mutex<[String: any RegisteredPolicy.Type]>(
        Dictionary(uniqueKeysWithValues: builtIn.map { ($0.policyName, $0) }))

    /// Registers policy types. A name registered twice (a built-in one included), or a policy
    /// or parameter name that scenario files cannot write, is a programming error that traps
    /// with the names.
    public static func register(_ new: [any RegisteredPolicy.Type]) {
        types.withLock { table in
            for type in new {
                let name = checked(type)
                if let other = table[name] {
                    precondition(other == type, "policy name '\(name)' is taken by both \(other) and \(type)")
                }
                table[name] = type
            }
        }
    }

    /// `type`'s name, after checking it and its parameters' names (on bytes: a scenario file
    /// writes them in ASCII, and per `Character` the built-ins' check cost 2 M instructions
    /// at every start).
    static func checked(_ type: any RegisteredPolicy.Type) -> String {
        func isWord(_ s: Substring, _ extra: UInt8) -> Bool {
            !s.isEmpty
                && s.utf8.allSatisfy {
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") || $0 == extra
                }
        }
        let name = type.policyName
        precondition(isWord(name[...], UInt8(ascii: "-")), "policy name '\(name)' of \(type): use letters, digits, '-' and '_'")
        var seen = Set<String>()
        for parameter in type.parameterNames {
            let parts = parameter.split(separator: ".", omittingEmptySubsequences: false)
            precondition(
                (1...2).contains(parts.count) && parts.allSatisfy { isWord($0, UInt8(ascii: "_")) },
                "parameter '\(parameter)' of \(type): use letters, digits and '_', and at most one '.'")
            precondition(!["name", "label"].contains(parameter), "parameter '\(parameter)' of \(type) is a policy entry's own key")
            precondition(seen.insert(parameter).inserted, "parameter '\(parameter)' of \(type) is declared twice")
        }
        return name
    }

    /// The type registered as `name`.
    public static func type(named name: String) -> (any RegisteredPolicy.Type)? {
        types.withLock { $0[name] }
    }

    /// Every name scenario files may use: the built-in policies' in documentation order, then
    /// the registered ones', sorted.
    public static var names: [String] {
        let builtInNames = builtIn.map { $0.policyName }
        return builtInNames + types.withLock { $0.keys.filter { !builtInNames.contains($0) }.sorted() }
    }
}
