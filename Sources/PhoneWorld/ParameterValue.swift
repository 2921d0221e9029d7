import SimEngine
import SimRandom

/// A value a scenario sets for a declared key: a policy's parameter, a key of a mechanism's
/// section, of an app profile or of the world's sections (`phone`, `charging`, `people`...).
public enum ParameterValue: Sendable, Equatable, Hashable {
    /// A span of time (`30m`).
    case duration(SimDuration)
    /// A real number.
    case number(Double)
    /// A whole number.
    case integer(Int)
    /// `true` or `false`.
    case flag(Bool)
    /// `none`: an optional duration left unset (no limit).
    case off
    /// A name (`com.example.export`).
    case text(String)
    /// A quantity drawn per use: seconds or bytes, as its key's kind says.
    case distribution(Distribution)
    /// A list of names (`[home, work]`).
    case names([String])
    /// A trace file as written, and the file it is relative to.
    case file(String, relativeTo: String)
    /// A nested mapping's keys that were given (`battery: {capacity_wh: 13}`); the rest keep
    /// their defaults.
    case section([String: ParameterValue])
    /// A list's items (`tail: [{duration: 10s, power_w: 1}]`).
    case list([ParameterValue])
}
