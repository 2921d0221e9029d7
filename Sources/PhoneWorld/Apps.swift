import SimEngine
import SimRandom

/// How one app behaves: which background tasks it declares and when it submits them, what
/// each task does, how well it follows the rules, and how the person uses it.
///
/// The rules themselves (pending limits, gates, budgets, expiration) are the system's, in
/// the Scheduling layer; this is only what the app's code would do (docs/sources.md §1-3).
public struct AppParameters: Equatable, Sendable {
    /// The app's name, unique in a scenario.
    public var name: String
    /// The BGTaskScheduler tasks the app registers at launch, in registration order.
    public var tasks: [AppTask] = []
    /// Info.plist `BGTaskSchedulerPermittedIdentifiers`; `nil`: exactly the tasks' identifiers.
    /// A task whose identifier is not listed fails to register and its submits fail
    /// `notPermitted` (docs/sources.md §2).
    public var permittedIdentifiers: [String]?
    /// Time from the system's call of an expiration handler until the app calls
    /// `setTaskCompleted(false)` or `endBackgroundTask`; its CPU keeps running meanwhile.
    /// Assumption: a well-behaved handler takes a fraction of a second.
    public var expirationResponse: SimDuration = .milliseconds(200)
    /// Chance, per task, that the app never calls `setTaskCompleted` (docs/sources.md §2: the app
    /// may then be killed when the time runs out).
    public var forgetsCompletion = 0.0
    /// Chance, per finite-length task, that the app never calls `endBackgroundTask`
    /// (docs/sources.md §3: the app is then terminated).
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
    /// How many times a day the person opens this app, when the profile says so
    /// (`opens_per_day`, or `opens_per_week` / 7): it then takes that share of the person's
    /// launches (`PeopleParameters.appWeights`) and `usageWeight` is not used.
    public var opensPerDay: Double?
    /// Whether the profile gave `opens_per_week` (a change to the opens is made in its terms).
    public var opensGivenWeekly = false
    /// When in the day the person tends to open it; `nil`: whenever they pick up the phone.
    public var habit: AppHabit?
    /// Installed as the run starts: the system has no record of its use before the run
    /// (`PeopleParameters.history`), as for an app just downloaded.
    public var newInstall = false
    /// The app's own Background App Refresh switch (Settings > General > Background App
    /// Refresh > app).
    public var backgroundRefresh = true
    /// Info.plist `UIBackgroundModes`, the Background Modes capability; `nil`: every mode the
    /// app's declared work needs. Without `fetch` its refresh requests fail `notPermitted` and
    /// legacy fetch never runs; without `processing`, its processing requests fail; without
    /// `remote-notification` silent pushes do not wake it; without a continuous mode's key its
    /// sessions end as the person leaves (docs/sources.md §2).
    public var backgroundModes: Set<UIBackgroundMode>?
    /// Info.plist `UIApplicationExitsOnSuspend`: the app terminates instead of suspending and
    /// is never launched into the background.
    public var exitsOnSuspend = false
    /// The sections of declared mechanisms it has (`continued_processing`), by name: the
    /// values given, over the mechanism's defaults.
    public var mechanisms: [String: [String: ParameterValue]] = [:]
    /// The sections of declared mechanisms that are lists (`background_work`), by name: each
    /// entry's values given, over the mechanism's defaults.
    public var mechanismLists: [String: [[String: ParameterValue]]] = [:]

    /// An app named `name` with no background work and default habits.
    public init(name: String) { self.name = name }

    /// Whether it has the section of mechanism `name`, a mapping or a list.
    public func hasSection(_ name: String) -> Bool { mechanisms[name] != nil || mechanismLists[name] != nil }

    /// Whether `UIBackgroundModes` lists `mode` (or is left to what the app's work needs).
    public func declares(_ mode: UIBackgroundMode) -> Bool { backgroundModes?.contains(mode) ?? true }

    /// The identifiers the app may submit.
    public var permitted: [String] { permittedIdentifiers ?? tasks.map(\.identifier) }
}

/// One `BGTaskRequest` identifier the app registers, and what its handler does.
public struct AppTask: Equatable, Sendable {
    /// Which BGTask class the identifier is registered as.
    public enum Kind: String, Sendable, CaseIterable {
        /// `BGAppRefreshTask`: short, keeps content fresh (docs/sources.md §2).
        case refresh
        /// `BGProcessingTask`: deferrable maintenance that can run for minutes (docs/sources.md §2).
        case processing
    }

    /// When the app submits this request.
    public enum Trigger: String, Sendable, CaseIterable {
        /// Pending when the simulation starts, as if submitted when the app was last used,
        /// with `earliestBeginDate` at a random phase within `interval`.
        case start
        /// Each time the person opens the app (a launch, or a return from the background:
        /// `didFinishLaunching` or `sceneWillEnterForeground`), with `earliestBeginDate`
        /// `earliestBegin` later, replacing a pending request of the identifier.
        case launch
        /// When the app enters the background from the foreground (`didEnterBackground`),
        /// with `earliestBeginDate` `earliestBegin` later.
        case background
        /// From the task's own handler when it starts, with `earliestBeginDate` `interval`
        /// later: the usual way to keep a periodic task going, or a daily maintenance job.
        case handler
        /// From one of the app's extensions (a widget, a notification service) each time it
        /// runs (the app's `extensions` section), with `earliestBeginDate`
        /// `earliestBegin` later; the task runs in the main app (docs/sources.md §2).
        case `extension`
    }

    /// The BGTaskScheduler identifier (listed in `BGTaskSchedulerPermittedIdentifiers`).
    public var identifier: String
    /// Refresh or processing.
    public var kind: Kind
    /// When the app submits the request.
    public var submitOn: Set<Trigger>
    /// `earliestBeginDate` after a submission at a launch, on entering the background or from an extension.
    public var earliestBegin: SimDuration = .minutes(15)
    /// `earliestBeginDate` after a resubmission from the handler.
    public var interval: SimDuration = .hours(1)
    /// Processing only: run only while on external power, and then without the CPU monitor.
    public var requiresExternalPower = false
    /// Processing only: run only with a network connection.
    public var requiresNetworkConnectivity = false
    /// Wall time of the handler's computation after its transfers, in seconds.
    public var cpu: Distribution = .exponential(mean: 5)
    /// Bytes the handler sends before receiving and computing. Defaults: a small request
    /// and the 10 KB fetch of docs/sources.md §6's example (assumption for any particular app).
    public var upBytes: Distribution = .fixed(1_000)
    /// Bytes the handler receives after sending.
    public var downBytes: Distribution = .fixed(10_000)
    /// Share of a core the work keeps busy, for the CPU monitor (docs/sources.md §2).
    public var cpuShare = 0.5
    /// Chance that the work succeeds (`setTaskCompleted(success: true)`).
    public var successProbability = 1.0
    /// Whether the app sets the task's `expirationHandler`. Without one, when its time runs
    /// out the system marks the task completed and unsuccessful, with no warning and no grace
    /// (Apple, `BGTask.expirationHandler`; docs/sources.md §2).
    public var expirationHandler = true

    /// A task with the usual triggers of its kind: a refresh at the start, on leaving and from its handler; processing at the start and from its handler.
    public init(identifier: String, kind: Kind, submitOn: Set<Trigger>? = nil) {
        self.identifier = identifier
        self.kind = kind
        self.submitOn = submitOn ?? (kind == .refresh ? [.start, .background, .handler] : [.start, .handler])
    }
}

/// The keys of Info.plist `UIBackgroundModes` (Xcode's Background Modes capability,
/// docs/sources.md §2).
public enum UIBackgroundMode: String, Sendable, CaseIterable {
    /// "Background fetch": BGAppRefreshTask and legacy background fetch.
    case fetch
    /// "Background processing": BGProcessingTask.
    case processing
    /// "Remote notifications": silent pushes wake the app.
    case remoteNotification = "remote-notification"
    /// "Audio, AirPlay, and Picture in Picture": playback, streaming to AirPlay included.
    case audio
    case location, voip
    /// A Bluetooth LE accessory, or (`externalAccessory`) an MFi one: both allow the accessory mode.
    case bluetoothCentral = "bluetooth-central"
    case externalAccessory = "external-accessory"
    /// Newsstand downloads: read so that such an Info.plist can be described, with nothing
    /// modelled (Apple deprecated Newsstand Kit).
    case newsstandContent = "newsstand-content"
}

/// The continuous background modes of `UIBackgroundModes` the simulation models.
public enum BackgroundModeKind: String, Sendable, CaseIterable {
    /// `audio`: music or podcast playback.
    case audio
    /// `location`: continuous location updates, as in turn-by-turn navigation.
    case location
    /// `voip`: a call in a VoIP app.
    case voip
    /// `bluetooth-central` / `external-accessory`: talking to a Bluetooth LE accessory.
    case bluetooth

    /// The `UIBackgroundModes` keys that allow it (either, for an accessory).
    public var keys: [UIBackgroundMode] {
        switch self {
        case .audio: [.audio]
        case .location: [.location]
        case .voip: [.voip]
        case .bluetooth: [.bluetoothCentral, .externalAccessory]
        }
    }

    /// Power of the mode's own hardware, in watts, above the standby baseline. From Android
    /// power profiles, the only public per-component figures (docs/sources.md §6 uses them for the
    /// radios): audio DSP 100.88 mA (Nexus 5X `dsp.audio`, power_profile.xml of
    /// device/lge/bullhead) at 3.7 V; GPS 76.23 mA and Bluetooth transferring 51.55 mA
    /// (Nexus 5 `gps.on`, `bluetooth.active`, device/lge/hammerhead commit 15ecd6c, measured
    /// at 4.0 V). A VoIP call plays and records audio: the audio DSP's figure, with the
    /// network traffic modelled separately.
    public var defaultPowerW: Double {
        switch self {
        case .audio, .voip: 0.10088 * 3.7
        case .location: 0.07623 * 4.0
        case .bluetooth: 0.05155 * 4.0
        }
    }
}
