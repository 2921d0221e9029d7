import SimEngine
import SimRandom

/// How one app behaves: which background tasks it declares and when it submits them, what
/// each task does, how well it follows the rules, and how the person uses it.
///
/// The rules themselves (pending limits, gates, budgets, expiration) are the system's, in
/// the Scheduling layer; this is only what the app's code would do (FACTS.md §1-3).
public struct AppParameters: Equatable, Sendable {
    public var name: String
    /// The BGTaskScheduler tasks the app registers at launch, in registration order.
    public var tasks: [AppTask] = []
    /// Info.plist `BGTaskSchedulerPermittedIdentifiers`; `nil`: exactly the tasks' identifiers.
    /// A task whose identifier is not listed fails to register and its submits fail
    /// `notPermitted` (FACTS.md §2).
    public var permittedIdentifiers: [String]?
    /// Finite-length background work the app begins (`beginBackgroundTask`) each time it
    /// enters the background from the foreground, each with its own probability.
    public var backgroundWork: [BackgroundWork] = []
    /// Time from the system's call of an expiration handler until the app calls
    /// `setTaskCompleted(false)` or `endBackgroundTask`; its CPU keeps running meanwhile.
    /// Assumption: a well-behaved handler takes a fraction of a second.
    public var expirationResponse: SimDuration = .milliseconds(200)
    /// Chance, per task, that the app never calls `setTaskCompleted` (FACTS.md §2: the app
    /// may then be killed when the time runs out).
    public var forgetsCompletion = 0.0
    /// Chance, per finite-length task, that the app never calls `endBackgroundTask`
    /// (FACTS.md §3: the app is then terminated).
    public var forgetsEndBackground = 0.0
    /// Whether the app cancels all its pending requests when the person opens it
    /// (`cancelAllTaskRequests`), typically because it refreshes in the foreground anyway
    /// and submits again when it leaves.
    public var cancelOnOpen = false
    /// CPU power of this app's background work in watts; `nil` takes the phone's `cpuBackgroundW`.
    public var cpuPowerW: Double?
    /// Bytes the app downloads each time the person opens it (assumption).
    public var launchDownBytes: Double = 100_000
    /// How often the person opens this app, relative to the other apps (people model).
    public var usageWeight: Double = 1
    /// The app's own Background App Refresh switch (Settings > General > Background App
    /// Refresh > app).
    public var backgroundRefresh = true

    public init(name: String) { self.name = name }

    /// The identifiers the app may submit.
    public var permitted: [String] { permittedIdentifiers ?? tasks.map(\.identifier) }
}

/// One `BGTaskRequest` identifier the app registers, and what its handler does.
public struct AppTask: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// `BGAppRefreshTask`: short, keeps content fresh (FACTS.md §2).
        case refresh
        /// `BGProcessingTask`: deferrable maintenance that can run for minutes (FACTS.md §2).
        case processing
    }

    /// When the app submits this request.
    public enum Trigger: String, Sendable, CaseIterable {
        /// Pending when the simulation starts, as if submitted when the app was last used,
        /// with `earliestBeginDate` at a random phase within `interval`.
        case start
        /// When the app enters the background from the foreground (`didEnterBackground`),
        /// with `earliestBeginDate` `earliestBegin` later.
        case background
        /// From the task's own handler when it starts, with `earliestBeginDate` `interval`
        /// later: the usual way to keep a periodic task going, or a daily maintenance job.
        case handler
    }

    public var identifier: String
    public var kind: Kind
    public var submitOn: Set<Trigger>
    /// `earliestBeginDate` after a submission on entering the background.
    public var earliestBegin: SimDuration = .minutes(15)
    /// `earliestBeginDate` after a resubmission from the handler.
    public var interval: SimDuration = .hours(1)
    /// Processing only: run only while on external power, and then without the CPU monitor.
    public var requiresExternalPower = false
    /// Processing only: run only with a network connection.
    public var requiresNetworkConnectivity = false
    /// Wall time of the handler's computation after its transfers, in seconds.
    public var cpu: Distribution = .exponential(mean: 5)
    /// Bytes the handler sends, then receives, before computing. Defaults: a small request
    /// and the 10 KB fetch of FACTS.md §6's example (assumption for any particular app).
    public var upBytes: Distribution = .fixed(1_000)
    public var downBytes: Distribution = .fixed(10_000)
    /// Share of a core the work keeps busy, for the CPU monitor (FACTS.md §2).
    public var cpuShare = 0.5
    /// Chance that the work succeeds (`setTaskCompleted(success: true)`).
    public var successProbability = 1.0

    public init(identifier: String, kind: Kind, submitOn: Set<Trigger>? = nil) {
        self.identifier = identifier
        self.kind = kind
        self.submitOn = submitOn ?? (kind == .refresh ? [.start, .background, .handler] : [.start, .handler])
    }
}

/// Work an app finishes in finite-length background time (`beginBackgroundTask`) after the
/// person leaves it, such as an upload in flight (FACTS.md §3).
public struct BackgroundWork: Equatable, Sendable {
    /// Chance that a given entry into the background begins this work.
    public var probability = 1.0
    public var cpu: Distribution = .fixed(2)
    public var upBytes: Distribution = .fixed(0)
    public var downBytes: Distribution = .fixed(0)

    public init() {}
}
