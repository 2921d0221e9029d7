import PhoneWorld
import SimEngine
import SimRandom

/// One app's code, compiled from the scenario for a run: plain values read at every
/// submission, launch and leave, without reaching into the scenario's nested parameters
/// (copies of which retain every array they hold).
struct AppModel {
    /// CPU power of its background work, in watts (its own, or the phone's default).
    let cpuPowerW: Double
    let expirationResponse: SimDuration
    let forgetsCompletion: Double
    let cancelOnOpen: Bool
    let launchDownBytes: Double
    let exitsOnSuspend: Bool
    /// Its own Background App Refresh switch.
    let backgroundRefresh: Bool
    /// The `UIBackgroundModes` it declares, one bit per `UIBackgroundMode.allCases` index
    /// (every bit when it gives no list).
    let modes: UInt32
    /// Its BGTaskScheduler tasks, as a range of `PhoneModel.tasks`.
    let tasks: Range<Int>

    /// Whether its `UIBackgroundModes` has `mode` (`AppParameters.declares`).
    func declares(_ mode: UIBackgroundMode) -> Bool { modes & 1 << Self.modes.firstIndex(of: mode)! != 0 }
    /// The modes in the order of their bits (`allCases` builds an array at each call).
    static let modes = UIBackgroundMode.allCases
}

/// A BGTaskScheduler task an app submits. Plain values only (its identifier is kept apart,
/// in `PhoneModel.identifiers`): reading a field of a model that held a string copied the
/// whole model, retaining the string.
struct TaskModel {
    let app: Int
    /// Its index among the app's tasks.
    let index: Int
    let kind: TaskKind
    let interval: SimDuration
    let earliestBegin: SimDuration
    let requiresExternalPower: Bool
    let requiresNetworkConnectivity: Bool
    let cpu, upBytes, downBytes: PreparedDistribution
    let cpuShare: Double
    let successProbability: Double
    let expirationHandler: Bool
    let submitsOnStart, submitsOnLeave, resubmitsInHandler: Bool
}

/// Every app's and task's model, indexed like the scenario's apps.
struct PhoneModel {
    private(set) var apps: [AppModel] = []
    private(set) var tasks: [TaskModel] = []
    /// Each task model's BGTaskScheduler identifier.
    private(set) var identifiers: [String] = []
    /// The time granted to each refresh, when drawn (`SystemRules.refreshGrant`).
    let refreshGrant: PreparedDistribution?

    init(_ setup: PhoneSetup) {
        for (a, app) in setup.apps.enumerated() {
            let taskBase = tasks.count
            for (k, t) in app.tasks.enumerated() {
                tasks.append(
                    TaskModel(
                        app: a, index: k, kind: t.kind == .refresh ? .refresh : .processing,
                        interval: t.interval, earliestBegin: t.earliestBegin,
                        requiresExternalPower: t.requiresExternalPower, requiresNetworkConnectivity: t.requiresNetworkConnectivity,
                        cpu: PreparedDistribution(t.cpu), upBytes: PreparedDistribution(t.upBytes),
                        downBytes: PreparedDistribution(t.downBytes), cpuShare: t.cpuShare,
                        successProbability: t.successProbability, expirationHandler: t.expirationHandler,
                        submitsOnStart: t.submitOn.contains(.start), submitsOnLeave: t.submitOn.contains(.background),
                        resubmitsInHandler: t.submitOn.contains(.handler)))
                identifiers.append(t.identifier)
            }
            let cpuPowerW = app.cpuPowerW ?? setup.power.cpuBackgroundW
            apps.append(
                AppModel(
                    cpuPowerW: cpuPowerW, expirationResponse: app.expirationResponse,
                    forgetsCompletion: app.forgetsCompletion,
                    cancelOnOpen: app.cancelOnOpen, launchDownBytes: app.launchDownBytes,
                    exitsOnSuspend: app.exitsOnSuspend, backgroundRefresh: app.backgroundRefresh,
                    modes: AppModel.modes.indices.reduce(0) { app.declares(AppModel.modes[$1]) ? $0 | 1 << $1 : $0 },
                    tasks: taskBase..<tasks.count))
        }
        refreshGrant = setup.system.refreshGrant.map(PreparedDistribution.init)
    }
}
