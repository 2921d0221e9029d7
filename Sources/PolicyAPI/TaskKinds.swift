import PhoneWorld
import SimEngine

/// The kind of background work: each door through which an app runs in the background
/// (docs/sources.md §1-3) is its own kind in `tasks.csv` and the metrics.
///
/// The built-in kinds are listed once, in `builtIn`, with their traits; a mechanism
/// (`Mechanism`) declares its own, which follow them in `allCases`. A kind's value carries
/// its index and the traits the run reads at every task, so reading them costs nothing. The
/// kinds' names and `allCases` come with the mechanisms' registry (target Mechanisms).
public struct TaskKind: Hashable, Sendable {
    /// Position in `allCases`: the index of the kind's columns in per-kind counts.
    public let index: Int
    @usableFromInline package let traits: Traits.Flags

    @inlinable package init(index: Int, _ traits: Traits.Flags) {
        self.index = index
        self.traits = traits
    }

    /// `BGAppRefreshTask`: short, keeps content fresh, up to 30 s (docs/sources.md §2).
    @inlinable public static var refresh: TaskKind { TaskKind(index: 0, [.scheduled, .refreshLike, .producesResult, .countsLatency]) }
    /// `BGProcessingTask`: deferrable maintenance, minutes, only while the phone is idle.
    @inlinable public static var processing: TaskKind { TaskKind(index: 1, [.scheduled, .producesResult, .countsLatency]) }

    /// The built-in kinds, in index order, with their names and budgets: the one list of them.
    package static let builtIn: [Traits] = [
        Traits("refresh", refresh.traits, budget: { $0.refreshBudget }),
        Traits("processing", processing.traits, budget: { $0.processingBudget }),
    ]

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
    @inlinable public static func == (a: TaskKind, b: TaskKind) -> Bool { a.index == b.index }
    /// Hashes the index.
    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(index) }

    /// What a kind is: its name, what the system does with its tasks, and the time a task of
    /// it has once it starts. A mechanism declares one for each kind of task it runs.
    public struct Traits: Sendable {
        /// What the run reads at every task.
        public struct Flags: OptionSet, Sendable {
            /// The flags' bits.
            public let rawValue: UInt16
            /// The flags of `rawValue`.
            @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
            /// A scheduling policy decides when it starts.
            @inlinable public static var scheduled: Flags { Flags(rawValue: 1 << 0) }
            /// Decided like a refresh.
            @inlinable public static var refreshLike: Flags { Flags(rawValue: 1 << 1) }
            /// A continuous mode's session: ends as completed with its app.
            @inlinable public static var mode: Flags { Flags(rawValue: 1 << 2) }
            /// Its time is the finite-length grant in the background.
            @inlinable public static var usesGrant: Flags { Flags(rawValue: 1 << 3) }
            /// Leaves a result the app archives (state preservation).
            @inlinable public static var producesResult: Flags { Flags(rawValue: 1 << 4) }
            /// Declared by a mechanism; set by the registry.
            @inlinable public static var declared: Flags { Flags(rawValue: 1 << 5) }
            /// Its identifiers end in a request's number (`com.example.export.7`): apps.csv
            /// tallies them under their wildcard (`com.example.export.*`), one row, not one each.
            @inlinable public static var numbered: Flags { Flags(rawValue: 1 << 6) }
            /// The system moves its data without the app, which it then wakes for the kind's
            /// budget to handle the result; the app's process ending does not stop it, unless
            /// the phone shuts down.
            @inlinable public static var systemCarried: Flags { Flags(rawValue: 1 << 7) }
            /// Its latencies count in the summaries (implied by `scheduled`).
            @inlinable public static var countsLatency: Flags { Flags(rawValue: 1 << 8) }
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
