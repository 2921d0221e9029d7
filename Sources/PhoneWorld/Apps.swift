import SimEngine

/// What one app asks of the background scheduler, and what its work costs.
///
/// The app submits a refresh request every `refreshInterval`, starting at a random phase,
/// with `earliestBeginDate = submit + earliestBeginDelay`; a new request replaces a pending
/// one with the same identifier (FACTS.md §2). The work of each task is drawn when it is
/// submitted, so every policy sees the same work for the same request (common random numbers).
public struct AppParameters: Equatable, Sendable {
    public var name: String
    /// How often the app submits a refresh request.
    public var refreshInterval: SimDuration = .hours(1)
    /// `earliestBeginDate` relative to the submission.
    public var earliestBeginDelay: SimDuration = .minutes(15)
    /// Mean of the exponentially distributed work of one task (wall time while running).
    public var meanTaskDuration: SimDuration = .seconds(5)
    /// Power drawn while a task runs, in watts, above the idle drain. Default 0.8 W: CPU plus
    /// an active Wi-Fi radio (0.403 W active, FACTS.md §6) with CPU taken as about as much
    /// again — an assumption until the component power model arrives.
    public var taskPowerW: Double = 0.8

    public init(name: String) { self.name = name }
}
