import PhoneWorld
import SimEngine

/// The kind of background work: each door through which an app runs in the background
/// (docs/sources.md §1-3) is its own kind in `tasks.csv` and the metrics.
///
/// The built-in kinds are listed once, in `builtIn`, with their traits; a mechanism
/// (`Mechanism`) declares its own, which follow them in ``allCases``. A kind's value carries
/// its index and the traits the run reads at every task, so reading them costs nothing.
public struct TaskKind: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Position in ``allCases``: the index of the kind's columns in per-kind counts.
    public let index: Int
    @usableFromInline let traits: Traits.Flags

    init(index: Int, _ traits: Traits.Flags) {
        self.index = index
        self.traits = traits
    }

    /// `BGAppRefreshTask`: short, keeps content fresh, up to 30 s (docs/sources.md §2).
    public static let refresh = TaskKind(index: 0, [.scheduled, .refreshLike, .producesResult, .countsLatency])
    /// `BGProcessingTask`: deferrable maintenance, minutes, only while the phone is idle.
    public static let processing = TaskKind(index: 1, [.scheduled, .producesResult, .countsLatency])

    /// The built-in kinds, in index order, with their names and budgets: the one list of them.
    static let builtIn: [Traits] = [
        Traits("refresh", refresh.traits, budget: { $0.refreshBudget }),
        Traits("processing", processing.traits, budget: { $0.processingBudget }),
    ]

    /// Every kind's traits: the built-in ones, then each registered mechanism's, in the
    /// registry's order. The latencies of work a policy decides on always count.
    static let table: [Traits] =
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

    /// Work a scheduling policy decides on: BGTaskScheduler's two kinds, and legacy fetch's.
    @inlinable public var isScheduled: Bool { traits.contains(.scheduled) }
    /// Work the system decides on like a refresh (docs/sources.md §2, §4).
    @inlinable public var isRefreshLike: Bool { traits.contains(.refreshLike) }
    /// A session of a continuous background mode.
    @inlinable public var isMode: Bool { traits.contains(.mode) }
    /// Work whose time is the app's finite-length grant in the background and unlimited in
    /// the foreground.
    @inlinable public var usesGrant: Bool { traits.contains(.usesGrant) }
    /// Whether a completed task of this kind leaves a result the app must archive.
    @inlinable public var producesResult: Bool { traits.contains(.producesResult) }
    /// A kind a mechanism declared (`Mechanism`), not built in.
    @inlinable public var isDeclared: Bool { traits.contains(.declared) }
    /// Work the system carries out without its app (its transfer), then hands to the app,
    /// woken for the kind's budget (a background URLSession transfer).
    @inlinable public var isSystemCarried: Bool { traits.contains(.systemCarried) }
    /// Whether its tasks' latencies count in the summaries (`latency_*`): work a policy decides
    /// on, and finite-length work; not the work the system starts when it wakes the app
    /// whatever the policy (a push, a crossing, a session), which would dilute the comparison.
    @inlinable public var countsLatency: Bool { traits.contains(.countsLatency) }
    /// Whether its identifiers end in a request's number.
    @inlinable public var isNumbered: Bool { traits.contains(.numbered) }

    /// Same kind: same index.
    public static func == (a: TaskKind, b: TaskKind) -> Bool { a.index == b.index }
    /// Hashes the index.
    public func hash(into hasher: inout Hasher) { hasher.combine(index) }

    /// What a kind is: its name, what the system does with its tasks, and the time a task of
    /// it has once it starts. A mechanism declares one for each kind of task it runs.
    public struct Traits: Sendable {
        /// What the run reads at every task.
        public struct Flags: OptionSet, Sendable {
            /// The flags' bits.
            public let rawValue: UInt16
            /// The flags of `rawValue`.
            public init(rawValue: UInt16) { self.rawValue = rawValue }
            /// A scheduling policy decides when it starts.
            public static let scheduled = Flags(rawValue: 1 << 0)
            /// Decided like a refresh.
            public static let refreshLike = Flags(rawValue: 1 << 1)
            /// A continuous mode's session: ends as completed with its app.
            public static let mode = Flags(rawValue: 1 << 2)
            /// Its time is the finite-length grant in the background.
            public static let usesGrant = Flags(rawValue: 1 << 3)
            /// Leaves a result the app archives (state preservation).
            public static let producesResult = Flags(rawValue: 1 << 4)
            /// Declared by a mechanism; set by the registry.
            public static let declared = Flags(rawValue: 1 << 5)
            /// Its identifiers end in a request's number (`com.example.export.7`): apps.csv
            /// tallies them under their wildcard (`com.example.export.*`), one row, not one each.
            public static let numbered = Flags(rawValue: 1 << 6)
            /// The system moves its data without the app, which it then wakes for the kind's
            /// budget to handle the result; the app's process ending does not stop it, unless
            /// the phone shuts down.
            public static let systemCarried = Flags(rawValue: 1 << 7)
            /// Its latencies count in the summaries (implied by `scheduled`).
            public static let countsLatency = Flags(rawValue: 1 << 8)
        }

        /// Its name in `tasks.csv` and in column names: lower case, digits and `_`.
        public let name: String
        /// What the system does with its tasks.
        public let flags: Flags
        /// The system rule that gives its time once it starts; `nil`: no limit (a year).
        public let budget: (@Sendable (SystemRules) -> SimDuration)?

        /// A kind named `name` with `flags`, whose tasks have the time `budget` gives.
        public init(_ name: String, _ flags: Flags = [], budget: (@Sendable (SystemRules) -> SimDuration)?) {
            self.name = name
            self.flags = flags
            self.budget = budget
        }

    }
}
