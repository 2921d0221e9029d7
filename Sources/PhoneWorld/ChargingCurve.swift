import Foundation
import SimEngine

/// Chargers, by the name a scenario uses. Powers from docs/sources.md §7 (5 W old adapters, the 20 W
/// adapter, a 27 W peak for iPhone 15, MagSafe 25 W) and the 15 W wireless.
public enum ChargerPreset: String, Sendable, CaseIterable {
    case wired5W = "wired-5w"
    case wired20W = "wired-20w"
    case wired27W = "wired-27w"
    case wireless15W = "wireless-15w"
    case magsafe25W = "magsafe-25w"

    /// The preset's rated power, in watts.
    public var powerW: Double {
        switch self {
        case .wired5W: 5
        case .wired20W: 20
        case .wired27W: 27
        case .wireless15W: 15
        case .magsafe25W: 25
        }
    }
}

/// How fast a connected charger fills the battery: CC-CV with Optimized Battery Charging and
/// a fixed limit.
///
/// Li-ion charging is constant current to about 4.2 V (roughly 70-80% charged), then constant
/// voltage with the current tapering to about 3% of rated (docs/sources.md §7). Here the battery
/// accepts the charger's full delivered power below the knee, then a power that falls linearly
/// with the remaining charge to `taperFloor` of it at full — so charge approaches full
/// exponentially, as the CV phase does. The taper is applied in steps of `taperStep` of
/// charge, each at the power of its start: power is constant between events.
///
/// The charger powers the phone's load first; the battery gets what it accepts, up to what is
/// left. At the charge limit, or while Optimized Battery Charging holds, it accepts nothing and
/// the charger powers the load alone.
public struct ChargingCurve: Equatable, Sendable {
    /// The charger's rated power, in watts. Default: the 20 W adapter (docs/sources.md §7).
    public var powerW: Double = ChargerPreset.wired20W.powerW
    /// The share of the rated power that reaches the battery at most. Default 0.65, derived
    /// from docs/sources.md §7: about 50% of a ~13 Wh iPhone in 30 min with a 20 W adapter is 13 W.
    public var deliveredShare: Double = 0.65
    /// Charge at which constant current gives way to constant voltage (docs/sources.md §7: 70-80%).
    public var knee: Double = 0.8
    /// Accepted power at full, as a share of the peak (docs/sources.md §7: current tapers to ~3%).
    public var taperFloor: Double = 0.03
    /// Charge step at which the tapering power is re-evaluated.
    public var taperStep: Double = 0.01
    /// Fixed charge limit (iPhone 15 and later offer 80-100%, docs/sources.md §5); 1: none.
    public var limit: Double = 1
    /// Optimized Battery Charging: on by default since iOS 13 (docs/sources.md §5).
    public var optimized: Bool = true
    /// Where Optimized Battery Charging holds (docs/sources.md §5: 80%).
    public var optimizedHold: Double = 0.8
    /// How long before the predicted unplug the hold ends, so charging finishes in time.
    /// An assumption (docs/sources.md §5 says only "finishes by the predicted unplug time").
    public var optimizedLead: SimDuration = .hours(1)

    /// A 20 W adapter with the default curve: no fixed limit, Optimized Battery Charging on.
    public init() {}

    /// The most power the battery takes from the charger, in watts.
    public var peakW: Double { powerW * deliveredShare }

    /// The charge above which the battery accepts nothing.
    public func cap(holding: Bool) -> Double { holding ? min(limit, optimizedHold) : limit }

    /// Power the battery accepts at `charge`, in watts.
    public func acceptedW(charge: Double, holding: Bool) -> Double {
        if charge >= cap(holding: holding) - 1e-9 { return 0 }
        if charge < knee - 1e-9 { return peakW }
        let stepStart = knee + (((charge - knee) / taperStep) + 1e-9).rounded(.down) * taperStep
        let remaining = max(1 - stepStart, 0) / (1 - knee)
        return peakW * (taperFloor + (1 - taperFloor) * remaining)
    }

    /// The next charge at which `acceptedW` changes: the knee, the next taper step, or the cap.
    public func nextLevel(after charge: Double, holding: Bool) -> Double? {
        let cap = cap(holding: holding)
        if charge >= cap - 1e-9 { return nil }
        if charge < knee - 1e-9 { return min(knee, cap) }
        let next = knee + ((((charge - knee) / taperStep) + 1e-9).rounded(.down) + 1) * taperStep
        return min(next, cap)
    }

    /// The highest charge at or below `charge` at which `acceptedW` changes: the cap when at or
    /// above it, else the start of the current taper step (the knee included); `nil` below
    /// the knee. On a charger weaker than the load the charge falls through such a level, and
    /// climbs back to it when the load drops.
    public func levelBelow(_ charge: Double, holding: Bool) -> Double? {
        let cap = cap(holding: holding)
        if charge >= cap - 1e-9 { return cap }
        if charge < knee - 1e-9 { return nil }
        return knee + (((charge - knee) / taperStep) + 1e-9).rounded(.down) * taperStep
    }
}
