import SimEngine

/// The states of an iOS app (docs/sources.md §1).
public enum AppState: String, Sendable, CaseIterable {
    case notRunning = "not_running"
    /// In the foreground, not receiving events (launching, resigning, during a call).
    case inactive
    /// In the foreground, receiving events.
    case active
    /// Executing code off screen.
    case background
    /// In memory, executing nothing.
    case suspended

    /// Whether the app is in memory.
    public var isRunning: Bool { self != .notRunning }
    /// Whether the app is on screen (active, or inactive during a transition or a call).
    @inlinable public var isForeground: Bool { self == .active || self == .inactive }
}

/// The `UIApplicationDelegate` calls that accompany transitions (docs/sources.md §1).
public enum DelegateEvent: String, Sendable, CaseIterable {
    case willFinishLaunching, didFinishLaunching, didBecomeActive, willResignActive
    case didEnterBackground, willEnterForeground, willTerminate
}

/// What moved an app between states.
public enum LifecycleCause: String, Sendable, CaseIterable {
    /// The person opened the app.
    case open
    /// The person left it (home, app switch).
    case leave
    /// The person swiped it away in the app switcher.
    case swipe
    /// A call took the foreground, or ended and gave it back.
    case call
    /// Notification Centre or Control Centre pulled over the app, or a call declined: inactive
    /// and back to active, never in the background.
    case interruption
    /// The system launched or resumed it in the background for background work.
    case backgroundWork = "background_work"
    /// Its background work ended, so the system suspended it.
    case workDone = "work_done"
    /// Memory pressure purged it: suspended, or (named by a trace) running in the background.
    case purge
    /// The system terminated it: a task not ended by its expiration, or the CPU monitor.
    case terminated
    case shutdown
    /// `UIApplicationExitsOnSuspend`: the app left the foreground and terminated instead of
    /// suspending.
    case exitsOnSuspend = "exits_on_suspend"
}

/// One app's place in the life cycle, with the rules of which moves exist.
public struct AppLifecycle: Sendable, Equatable {
    /// Where the app is now.
    public private(set) var state = AppState.notRunning
    /// Swiped away in the app switcher and not opened since: no background launches
    /// (WWDC20 session 10063, docs/sources.md §1).
    public private(set) var swipedAway = false

    /// An app not running, never swiped away.
    public init() {}

    /// The transitions iOS makes (docs/sources.md §1). Termination may come from any state.
    public static func allows(_ from: AppState, _ to: AppState) -> Bool {
        switch (from, to) {
        case (.notRunning, .inactive), (.notRunning, .background),
            (.inactive, .active), (.active, .inactive), (.inactive, .background),
            (.background, .suspended), (.suspended, .background),
            (.background, .inactive), (.suspended, .inactive):
            true
        case (let f, .notRunning): f != .notRunning
        default: false
        }
    }

    /// The delegate calls that go with a transition. `willTerminate` is called when an app
    /// running (in the background too) is terminated, not for a suspended app, nor for one
    /// the system kills for breaking a rule (docs/sources.md §1).
    public static func delegateEvents(from: AppState, to: AppState, cause: LifecycleCause) -> [DelegateEvent] {
        switch (from, to) {
        case (.notRunning, _): [.willFinishLaunching, .didFinishLaunching]
        case (_, .active): [.didBecomeActive]
        case (.active, .inactive): [.willResignActive]
        case (.inactive, .background): [.didEnterBackground]
        case (.background, .inactive), (.suspended, .inactive): [.willEnterForeground]
        case (.suspended, .notRunning): []
        case (_, .notRunning): cause == .terminated ? [] : [.willTerminate]
        default: []
        }
    }

    /// The person swiped away an app that was not running (its card was still in the switcher).
    public mutating func markSwipedAway() { swipedAway = true }

    /// Moves to `to`; a move iOS does not make is a programming error.
    public mutating func move(to new: AppState, cause: LifecycleCause) {
        precondition(Self.allows(state, new), "no transition from \(state) to \(new) (\(cause))")
        state = new
        switch cause {
        case .open: swipedAway = false
        case .swipe: swipedAway = true
        default: break
        }
    }
}

/// A change of an app's state, as sinks see it.
public struct LifecycleTransition: Sendable, Equatable {
    /// The app, as an index into the scenario's apps.
    public var app: Int
    /// The state it left.
    public var from: AppState
    /// The state it entered.
    public var to: AppState
    /// What made it move.
    public var cause: LifecycleCause
    /// The `UIApplicationDelegate` calls the move comes with, in order.
    public var delegateEvents: [DelegateEvent] { AppLifecycle.delegateEvents(from: from, to: to, cause: cause) }

    /// `app`'s move from `from` to `to`, for `cause`.
    @inlinable package init(app: Int, from: AppState, to: AppState, cause: LifecycleCause) {
        self.app = app
        self.from = from
        self.to = to
        self.cause = cause
    }
}

/// How much finite-length background time `beginBackgroundTask` grants (docs/sources.md §3).
public enum BackgroundTimeGrant: String, Sendable, CaseIterable {
    /// iOS 13 and later: about 30 s.
    case ios13
    /// iOS 7 to 12: 180 s.
    case ios7
    /// iOS 6 and earlier: 600 s.
    case ios6

    /// The time granted.
    public var duration: SimDuration {
        switch self {
        case .ios13: .seconds(30)
        case .ios7: .seconds(180)
        case .ios6: .seconds(600)
        }
    }
}
