import SimEngine
import SimRandom

/// A value a scenario sets for a declared parameter: a policy's, or a key of a mechanism's
/// section in an app profile or in `system`.
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
}
