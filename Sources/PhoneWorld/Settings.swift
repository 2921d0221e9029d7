/// The user's settings that bear on background work (docs/sources.md §5).
public struct Settings: Equatable, Sendable {
    /// Settings > General > Background App Refresh.
    public enum BackgroundAppRefresh: String, Sendable, CaseIterable {
        case off
        case wifi
        case wifiAndCellular = "wifi-and-cellular"
    }

    /// Low Power Mode as a study fixes it: `auto` follows the person (the prompts at 20% and
    /// 10%, off again once charged to 80%); `on` and `off` hold it for the whole run.
    public enum LowPowerMode: String, Sendable, CaseIterable {
        case auto
        case on
        case off
    }

    /// The Background App Refresh switch for the whole phone (each app has its own too).
    public var backgroundAppRefresh: BackgroundAppRefresh = .wifiAndCellular
    /// Low Power Mode: offered and accepted at the prompt levels (`auto`), or forced on or off.
    public var lowPowerMode: LowPowerMode = .auto
    /// Charge levels at which the phone offers Low Power Mode, falling (docs/sources.md §5).
    public var lowPowerPromptLevels: [Double] = [0.2, 0.1]
    /// Charge at which Low Power Mode turns itself off while charging (docs/sources.md §5, [secondary]).
    public var lowPowerOffLevel: Double = 0.8

    /// The settings iOS ships with: refresh on Wi-Fi and cellular, Low Power Mode offered.
    public init() {}
}
