import SimEngine

/// What one app asks of the background scheduler, what its work costs, and how the person
/// uses it.
///
/// The app submits a refresh request every `refreshInterval`, starting at a random phase,
/// with `earliestBeginDate = submit + earliestBeginDelay`; a new request replaces a pending
/// one with the same identifier (FACTS.md §2). A task first fetches (`fetchUpBytes` up, then
/// `fetchDownBytes` down, over whatever radio is connected), then computes for its CPU work.
/// The CPU work is drawn when the request is submitted, so every policy sees the same work
/// for the same request (common random numbers).
public struct AppParameters: Equatable, Sendable {
    public var name: String
    /// How often the app submits a refresh request.
    public var refreshInterval: SimDuration = .hours(1)
    /// `earliestBeginDate` relative to the submission.
    public var earliestBeginDelay: SimDuration = .minutes(15)
    /// Mean of the exponentially distributed CPU work of one task (wall time).
    public var meanTaskDuration: SimDuration = .seconds(5)
    /// CPU power of this app's tasks in watts; `nil` takes the phone's `cpuBackgroundW`.
    public var cpuPowerW: Double?
    /// Bytes a task sends and receives. Defaults: a small request and the 10 KB fetch of
    /// FACTS.md §6's example (assumption for any particular app).
    public var fetchUpBytes: Double = 1_000
    public var fetchDownBytes: Double = 10_000
    /// Bytes the app downloads each time the person opens it (assumption).
    public var launchDownBytes: Double = 100_000
    /// How often the person opens this app, relative to the other apps (people model).
    public var usageWeight: Double = 1
    /// The app's own Background App Refresh switch (Settings > General > Background App
    /// Refresh > app).
    public var backgroundRefresh = true

    public init(name: String) { self.name = name }
}
