import PhoneWorld
import SimEngine
import SimRandom

/// Everything that defines the simulated phone, its person and its apps, apart from the policy.
public struct PhoneSetup: Equatable, Sendable {
    /// Simulated time span, from midnight of day 0 (a Monday).
    public var duration: SimDuration = .days(7)
    /// The battery and its model.
    public var battery = BatteryParameters()
    /// Power of the components other than the radios.
    public var power = PowerParameters()
    /// When the person charges (and, under Optimized Battery Charging, the unplug time the
    /// phone predicts), unless `chargingTrace` replays the sessions.
    public var charging = ChargingHabit()
    /// Charging sessions replayed from a trace, instead of drawn from `charging`.
    public var chargingTrace: [ChargingSession]?
    /// How fast a connected charger fills the battery.
    public var charger = ChargingCurve()
    /// Where the phone is connected and with which radios, unless `networkTrace` replays the
    /// connection (the radios still come from `network`).
    public var network = NetworkEnvironment()
    /// Connection changes replayed from a trace, instead of drawn from `network`.
    public var networkTrace: [NetworkChange]?
    /// How the person uses the phone, unless `peopleTrace` replays launches, calls and purges
    /// (the Low Power Mode answer still comes from `people`).
    public var people = PeopleParameters.absent
    /// Launches, calls and purges replayed from a trace, instead of drawn from `people`.
    public var peopleTrace: PeopleTimeline?
    /// Silent pushes the apps' servers send, unless drawn from each app's `silentPushes`.
    public var pushTrace: [PushArrival]?
    /// Background App Refresh and Low Power Mode.
    public var settings = Settings()
    /// The apps, in the order their indices name them.
    public var apps: [AppParameters] = []
    /// The limits iOS sets on background work.
    public var system = SystemRules()
    /// A bench load drawn besides the components while the phone is on; none by default.
    public var load = LoadProfile.none

    /// A week with nobody using the phone, no apps and the default phone.
    public init() {}
}

/// The limits iOS sets on background work (docs/sources.md §2-3), apart from the fixed ones in
/// `BGTaskScheduler` (pending limits).
public struct SystemRules: Equatable, Sendable {
    /// Time a refresh task may run before it expires: "up to 30 seconds" (docs/sources.md §2).
    public var refreshBudget: SimDuration = .seconds(30)
    /// The time granted to each refresh, in seconds, drawn per refresh and at most
    /// `refreshBudget`; `nil`: every refresh gets the whole budget. Developers see most
    /// refreshes that expire do so 2-5 s after launch (docs/sources.md §4 [secondary]); no
    /// distribution is published, so the default, uniform from 2 s to the 30 s budget, is
    /// calibrated against that report (docs/validation.md) and an assumption (§12).
    public var refreshGrant: Distribution? = .uniform(low: 2, high: 30)
    /// Time a processing task may run: "can run for minutes" (docs/sources.md §2); 5 minutes is an
    /// assumption within "several minutes".
    public var processingBudget: SimDuration = .minutes(5)
    /// Finite-length background time `beginBackgroundTask` grants (docs/sources.md §3).
    public var backgroundTime: SimDuration = BackgroundTimeGrant.ios13.duration
    /// Time an app that left the foreground with no work stays running in the background
    /// before the system suspends it: "a very short time (less than 5 seconds)" (docs/sources.md
    /// §1); 2 s is an assumption within it (§12).
    public var suspensionDelay: SimDuration = .seconds(2)
    /// Time the system waits, after calling an expiration handler, for the app to end the
    /// task before terminating the app: "a couple of seconds" (docs/sources.md §3), read as 2 s.
    public var expirationGrace: SimDuration = .seconds(2)
    /// The CPU monitor on battery (docs/sources.md §2, [secondary]); `nil`: off.
    public var cpuMonitor: CPUMonitor? = CPUMonitor()
    /// Time a legacy background fetch handler has: 30 s (docs/sources.md §2).
    public var fetchBudget: SimDuration = .seconds(30)
    /// Time the app has for a silent push, and for handling a finished background transfer:
    /// 30 s, as for `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`
    /// (Apple, "Pushing background updates to your App"; the figure).
    public var wakeBudget: SimDuration = .seconds(30)
    /// Silent pushes the system delivers to one app per hour; the newest of the rest is held
    /// until the budget allows. Apple: "don't try to send more than two or three
    /// notifications per hour" (same page); the exact throttle is not published.
    public var pushesPerHour = 3
    /// Time the app has to handle a geofence crossing: about 10 s (Apple, Location and Maps
    /// Programming Guide, [secondary]).
    public var regionBudget: SimDuration = .seconds(10)
    /// Declared mechanisms' phone-wide rules (`system.continued_processing`), by name: the
    /// values given, over the mechanism's defaults.
    public var mechanisms: [String: [String: ParameterValue]] = [:]

    /// iOS's limits as docs/sources.md §2-3 give them, the assumptions of §12 elsewhere.
    public init() {}
}

/// On battery, the system kills a processing task that keeps more than `threshold` of a core
/// busy for `window` (docs/sources.md §2, [secondary]). Tasks that require external power are exempt.
public struct CPUMonitor: Equatable, Sendable {
    /// Share of a core above which processing work is killed.
    public var threshold = 0.8
    /// How long the work may stay above it.
    public var window: SimDuration = .seconds(60)
    /// 80% of a core for 60 s.
    public init() {}
}
