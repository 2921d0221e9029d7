/// Why the system called a task's expiration handler. The built-in reasons are listed once,
/// in `builtIn`; a mechanism may declare its own (`Mechanism.expirationReasons`), which
/// follow them in `allCases`.
public struct ExpirationReason: Hashable, Sendable {
    /// Position in `allCases`: the index of its column in per-reason counts.
    public let index: Int

    /// Its time (budget or finite-length grant) ran out.
    @inlinable public static var timeUp: ExpirationReason { ExpirationReason(index: 0) }
    /// A processing task, and the person started using the phone.
    @inlinable public static var deviceInUse: ExpirationReason { ExpirationReason(index: 1) }
    /// A processing task that requires external power, and the charger was removed.
    @inlinable public static var powerLost: ExpirationReason { ExpirationReason(index: 2) }
    /// The time the policy gave it ran out (`PolicyTimeLimit`: Android's quota).
    @inlinable public static var timeLimit: ExpirationReason { ExpirationReason(index: 3) }

    /// The built-in reasons' names, in index order.
    package static let builtIn = ["time_up", "device_in_use", "power_lost", "time_limit"]
    @inlinable package init(index: Int) { self.index = index }
    /// Declared by a mechanism, not built in.
    public var isDeclared: Bool { index >= Self.builtIn.count }
}
