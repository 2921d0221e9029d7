import SimEngine

/// Parameters of the phone's battery.
public struct BatteryParameters: Equatable, Sendable {
    /// Usable capacity in watt-hours. Default: iPhone 15, 12.98 Wh (regulatory filing,
    /// FACTS.md §7).
    public var capacityWh: Double = 12.98
    /// State of charge at the start of the simulation, in [0, 1].
    public var initialCharge: Double = 0.8
    /// Standby drain of the phone while on and idle, as a share of capacity per hour.
    /// Default 0.5%/h: standby without Doze-like deep idle (FACTS.md §6, Nexus 5 figure).
    public var idleDrainPerHour: Double = 0.005
    /// After a shutdown at 0%, the phone boots again once charged to this level.
    /// An assumption (a phone shows the charging screen first); a parameter.
    public var bootCharge: Double = 0.03

    public init() {}

    /// Capacity in joules (1 Wh = 3600 J).
    public var capacityJ: Double { capacityWh * 3600 }
    /// The idle drain in watts.
    public var idleDrainW: Double { idleDrainPerHour * capacityWh }
}

/// Where energy came from and went over some interval, in joules.
///
/// The books balance: `consumed = fromBattery + fromCharger - intoBattery`, and the battery's
/// stored energy changed by `intoBattery - fromBattery`.
public struct EnergyFlow: Equatable, Sendable {
    /// Energy the phone used (its load integrated over time).
    public var consumedJ: Double = 0
    /// Energy drawn from the battery to power the load.
    public var fromBatteryJ: Double = 0
    /// Energy drawn from the charger: the load it powered plus what it stored.
    public var fromChargerJ: Double = 0
    /// Energy the charger stored in the battery.
    public var intoBatteryJ: Double = 0

    public init() {}

    public static func += (a: inout EnergyFlow, b: EnergyFlow) {
        a.consumedJ += b.consumedJ
        a.fromBatteryJ += b.fromBatteryJ
        a.fromChargerJ += b.fromChargerJ
        a.intoBatteryJ += b.intoBatteryJ
    }

    /// `consumed - (fromBattery + fromCharger - intoBattery)`: zero up to rounding.
    public var imbalanceJ: Double { consumedJ - (fromBatteryJ + fromChargerJ - intoBatteryJ) }
}

/// An ideal battery: stored energy changes linearly with net power, with no rate-capacity or
/// recovery effects (the `kibam` model adds those).
///
/// While a charger is connected it powers the load first and stores what is left, up to full;
/// if the load exceeds the charger's power, the battery covers the difference.
public struct LinearBattery: Equatable, Sendable {
    public let capacityJ: Double
    /// Stored energy, in [0, capacityJ].
    public private(set) var energyJ: Double

    public init(_ p: BatteryParameters) {
        capacityJ = p.capacityJ
        energyJ = p.capacityJ * p.initialCharge
    }

    /// State of charge in [0, 1].
    public var charge: Double { energyJ / capacityJ }
    public var isEmpty: Bool { energyJ <= 0 }
    public var isFull: Bool { energyJ >= capacityJ }

    /// Net power into the battery (negative: out of it) at the given load and charger power.
    public func netPowerW(loadW: Double, chargerW: Double) -> Double {
        let net = chargerW - loadW
        return net > 0 && isFull ? 0 : net
    }

    /// Runs the battery for `dt` at constant load and charger power; returns the energy flow.
    ///
    /// Stored energy is clamped to [0, capacity]. A load the battery cannot cover once empty
    /// is not booked as consumed: the caller shuts the phone down at that instant (events are
    /// scheduled at the exact microsecond the battery empties, so the clamp only absorbs
    /// rounding).
    public mutating func advance(by dt: SimDuration, loadW: Double, chargerW: Double) -> EnergyFlow {
        var flow = EnergyFlow()
        let seconds = dt.seconds
        guard seconds > 0 else { return flow }
        let fromCharger = min(chargerW, loadW) * seconds
        let surplus = max(chargerW - loadW, 0) * seconds
        let deficit = max(loadW - chargerW, 0) * seconds
        let stored = min(surplus, capacityJ - energyJ)
        let drawn = min(deficit, energyJ + stored)
        energyJ = min(max(energyJ + stored - drawn, 0), capacityJ)
        flow.intoBatteryJ = stored
        flow.fromBatteryJ = drawn
        flow.fromChargerJ = fromCharger + stored
        flow.consumedJ = fromCharger + drawn
        return flow
    }

    /// How long until stored energy reaches `targetJ` at constant net power, rounded up to
    /// the microsecond; `nil` if it never does (net power zero or pointing away).
    public func timeToReach(_ targetJ: Double, netPowerW: Double) -> SimDuration? {
        let gap = targetJ - energyJ
        if gap == 0 { return .zero }
        guard netPowerW != 0, (gap > 0) == (netPowerW > 0) else { return nil }
        let seconds = gap / netPowerW
        return SimDuration(microseconds: Int64((seconds * 1e6).rounded(.up)))
    }
}
