/// Power drawn by the phone's components other than the battery's standby baseline and the
/// radios, in watts. The total load at any instant is the sum of the components in use.
///
/// The standby baseline (everything suspended, radios idle) is `BatteryParameters.idleDrainW`;
/// radios are `RadioProfile`s. Profiles in `models/phones/` give these per phone.
public struct PowerParameters: Equatable, Sendable {
    /// Display on at typical brightness: 0.58 W (AT&T ARO, docs/sources.md §6).
    public var screenW: Double = 0.58
    /// CPU while the person uses an app. An assumption (docs/sources.md §12) between the Pixel 6
    /// power profile's idle CPU (28.6 mA at 3.7 V, 0.11 W) and a busy big core.
    public var cpuForegroundW: Double = 0.6
    /// CPU while background work runs: an assumption, about one mid core busy.
    public var cpuBackgroundW: Double = 0.4
    /// An incoming call, screen off at the ear: the Pixel 6 modem receiving (198 mA) and
    /// transmitting at its lowest level (223 mA) at 3.7 V, averaged (docs/sources.md §6).
    public var callW: Double = 0.78

    /// The reference values above, the same for every phone profile.
    public init() {}
}
