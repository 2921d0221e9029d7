import PolicyAPI

// The open lists the policy API names only by index (kinds of task, submission errors,
// expiration reasons): the built-in entries, then each registered mechanism's, in the
// registry's order. They are completed here, where the registry is, so that the policy API
// does not depend on the mechanisms.

extension TaskKind: CaseIterable, CustomStringConvertible {
    /// Every kind's traits: the built-in ones, then each registered mechanism's. The
    /// latencies of work a policy decides on always count.
    package static let table: [Traits] =
        builtIn
        + MechanismRegistry.builtIn.flatMap {
            $0.kinds.map { Traits($0.name, $0.flags.union($0.flags.contains(.scheduled) ? [.declared, .countsLatency] : .declared), budget: $0.budget) }
        }

    /// Every kind, built-in and declared by a mechanism.
    public static let allCases: [TaskKind] = table.enumerated().map { TaskKind(index: $0.offset, $0.element.flags) }

    /// The kind named `name` (its `tasks.csv` value), if there is one.
    public init?(rawValue name: String) {
        guard let k = Self.table.firstIndex(where: { $0.name == name }) else { return nil }
        self = Self.allCases[k]
    }

    /// Its name in `tasks.csv` and in column names (`runs_<name>`).
    public var rawValue: String { Self.table[index].name }
    /// Its name.
    public var description: String { rawValue }
}

extension SubmitError: CaseIterable, CustomStringConvertible {
    /// Every error's names: the built-in ones, then each registered mechanism's.
    static let table: [Name] = builtIn + MechanismRegistry.builtIn.flatMap { $0.rejections }
    /// Every error, built-in and declared by a mechanism.
    public static let allCases: [SubmitError] = table.indices.map { SubmitError(index: $0) }

    /// The error iOS spells `rawValue`, if there is one.
    public init?(rawValue: String) {
        guard let k = Self.table.firstIndex(where: { $0.rawValue == rawValue }) else { return nil }
        self.init(index: k)
    }

    /// iOS's spelling.
    public var rawValue: String { Self.table[index].rawValue }
    /// Its name in column names (`rejected_<token>`).
    public var token: String { Self.table[index].token }
    /// iOS's spelling.
    public var description: String { rawValue }
}

extension ExpirationReason: CaseIterable, CustomStringConvertible {
    /// Every reason's name: the built-in ones, then each registered mechanism's.
    static let table: [String] = builtIn + MechanismRegistry.builtIn.flatMap { $0.expirationReasons }
    /// Every reason, built-in and declared by a mechanism.
    public static let allCases: [ExpirationReason] = table.indices.map { ExpirationReason(index: $0) }

    /// The reason named `rawValue`, if there is one.
    public init?(rawValue: String) {
        guard let k = Self.table.firstIndex(of: rawValue) else { return nil }
        self.init(index: k)
    }

    /// Its name in events.csv and column names: lower case, digits and `_`.
    public var rawValue: String { Self.table[index] }
    /// Its name.
    public var description: String { rawValue }
}
