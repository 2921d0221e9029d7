import Foundation
import SimEngine

/// Which battery model a scenario uses.
public enum BatteryModelKind: String, Sendable, CaseIterable {
    /// An ideal store: all stored energy is available at any rate.
    case linear
    /// The Kinetic Battery Model (Manwell & McGowan): available and bound wells, so that
    /// high loads empty the available well early (rate-capacity effect) and rest refills it
    /// (recovery effect). docs/sources.md §7.
    case kibam
}

/// Parameters of the phone's battery.
public struct BatteryParameters: Equatable, Sendable {
    /// `linear` (an ideal store) or `kibam` (the Kinetic Battery Model, docs/sources.md §7).
    public var model: BatteryModelKind = .linear
    /// Usable capacity in watt-hours. Default: iPhone 15, 12.98 Wh (regulatory filing,
    /// docs/sources.md §7).
    public var capacityWh: Double = 12.98
    /// State of charge at the start of the simulation, in [0, 1].
    public var initialCharge: Double = 0.8
    /// Standby drain of the phone while on and idle, as a share of capacity per hour.
    /// Default 0.5%/h: standby without Doze-like deep idle (docs/sources.md §6, Nexus 5 figure).
    public var idleDrainPerHour: Double = 0.005
    /// After a shutdown at 0%, the phone boots again once its available energy is back to
    /// this share of the available well (of the whole capacity for `linear`).
    /// An assumption (a phone shows the charging screen first); a parameter.
    public var bootCharge: Double = 0.03
    /// KiBaM: the share of capacity in the available well, c in (0, 1).
    /// Default 0.625 [secondary]: the value public KiBaM implementations following Jongerden &
    /// Haverkort ("Which battery model to use?", IET Software 2009) use; docs/sources.md §7.
    public var kibamC: Double = 0.625
    /// KiBaM: the rate constant k (per second) of flow between the wells, as in docs/sources.md §7's
    /// update formula (Jongerden & Haverkort's k'). Default 4.5e-5 /s [secondary], same source.
    public var kibamK: Double = 4.5e-5

    /// The defaults above: an iPhone 15's capacity, linear, 80% charged.
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

    /// No energy moved.
    public init() {}

    /// Adds the flows of `b` to `a`.
    public static func += (a: inout EnergyFlow, b: EnergyFlow) {
        a.consumedJ += b.consumedJ
        a.fromBatteryJ += b.fromBatteryJ
        a.fromChargerJ += b.fromChargerJ
        a.intoBatteryJ += b.intoBatteryJ
    }

    /// `consumed - (fromBattery + fromCharger - intoBattery)`: zero up to rounding.
    public var imbalanceJ: Double { consumedJ - (fromBatteryJ + fromChargerJ - intoBatteryJ) }
}

/// The phone's battery: stored energy in joules, under the model the scenario chose.
///
/// Energy is the currency throughout (power in watts, charge in joules); the KiBaM equations,
/// written for charge and current, are applied to energy and power, which assumes a constant
/// terminal voltage — the usual simplification when only energy is accounted.
///
/// While a charger is connected it powers the load first and stores what is left, up to full;
/// if the load exceeds the charger's power, the battery covers the difference.
public struct Battery: Equatable, Sendable {
    @usableFromInline
    enum State: Equatable, Sendable {
        case linear(energyJ: Double)
        /// Available (q1) and bound (q2) energy.
        case kibam(availableJ: Double, boundJ: Double)
    }

    /// Usable capacity, in joules.
    public let capacityJ: Double
    let c: Double
    let k: Double
    @usableFromInline var state: State

    /// A battery as `p` describes it, at its initial charge.
    public init(_ p: BatteryParameters) {
        capacityJ = p.capacityJ
        c = p.kibamC
        k = p.kibamK
        let stored = p.capacityJ * p.initialCharge
        switch p.model {
        case .linear: state = .linear(energyJ: stored)
        // Start at equilibrium: both wells at the same height.
        case .kibam: state = .kibam(availableJ: stored * p.kibamC, boundJ: stored * (1 - p.kibamC))
        }
    }

    // The getters below are inlinable: the simulation reads them at every event, from
    // another module, where a call cost more than the read.

    /// Total stored energy, in [0, capacityJ].
    @inlinable
    public var energyJ: Double {
        switch state {
        case .linear(let e): e
        case .kibam(let q1, let q2): q1 + q2
        }
    }

    /// Energy the load can draw now: all of it for `linear`, the available well for `kibam`.
    @inlinable
    public var availableJ: Double {
        switch state {
        case .linear(let e): e
        case .kibam(let q1, _): q1
        }
    }

    /// State of charge in [0, 1]: total stored energy over capacity.
    /// Clamped: the two wells' sum can exceed the capacity by a rounding error when full.
    @inlinable
    public var charge: Double { min(1, max(0, energyJ / capacityJ)) }
    /// Whether the battery holds its whole capacity.
    @inlinable
    public var isFull: Bool { energyJ >= capacityJ }

    /// Net power into the battery (negative: out of it) at the given load and charger power.
    public func netPowerW(loadW: Double, chargerW: Double) -> Double {
        let net = chargerW - loadW
        return net > 0 && isFull ? 0 : net
    }

    /// Runs the battery for `dt` at constant load and charger power; returns the energy flow.
    ///
    /// Charging stops at full (the interval is split there). Energy drawn is clamped to what
    /// is available: the caller shuts the phone down at the exact microsecond the available
    /// energy runs out (`timeToEmpty`), so the clamp only absorbs rounding.
    public mutating func advance(by dt: SimDuration, loadW: Double, chargerW: Double) -> EnergyFlow {
        var flow = EnergyFlow()
        let seconds = dt.seconds
        guard seconds > 0 else { return flow }
        let fromChargerToLoad = min(chargerW, loadW) * seconds
        let surplusW = max(chargerW - loadW, 0)
        let deficitW = max(loadW - chargerW, 0)
        var stored = 0.0, drawn = 0.0
        if surplusW > 0 {
            let untilFull = max(capacityJ - energyJ, 0) / surplusW
            let charging = min(seconds, untilFull)
            step(currentW: -surplusW, seconds: charging)
            stored = surplusW * charging
            if seconds > charging { step(currentW: 0, seconds: seconds - charging) }
            clampToCapacity()
        } else {
            step(currentW: deficitW, seconds: seconds)
            drawn = deficitW * seconds
            drawn -= clampAvailableAtZero()
        }
        flow.intoBatteryJ = stored
        flow.fromBatteryJ = drawn
        flow.fromChargerJ = fromChargerToLoad + stored
        flow.consumedJ = fromChargerToLoad + drawn
        return flow
    }

    /// Draws `joules` for the load, off the charger, from a linear battery: its energy is
    /// additive, so a stretch whose load changed within it (the radios' phases) is drawn in
    /// one step. The draw is clamped to what is stored, as `advance` clamps.
    public mutating func discharge(joules: Double) -> EnergyFlow {
        guard case .linear(let e) = state else { preconditionFailure("only a linear battery discharges in one step") }
        var flow = EnergyFlow()
        guard joules > 0 else { return flow }
        let drawn = min(joules, max(e, 0))
        state = .linear(energyJ: e - joules)
        _ = clampAvailableAtZero()
        flow.fromBatteryJ = drawn
        flow.consumedJ = drawn
        return flow
    }

    /// Whether the battery is the ideal store (`linear`).
    public var isLinear: Bool { if case .linear = state { true } else { false } }

    /// Applies a constant current (power; positive discharges) for `seconds`.
    mutating func step(currentW i: Double, seconds t: Double) {
        guard t > 0 else { return }
        switch state {
        case .linear(let e):
            state = .linear(energyJ: e - i * t)
        case .kibam(let q1, let q2):
            state = Self.kibamStep(q1: q1, q2: q2, c: c, k: k, current: i, seconds: t)
        }
    }

    /// docs/sources.md §7: with r = exp(-k t) and q0 = q1 + q2,
    /// q1' = q1 r + ((q0 k c - I)(1 - r) - I c (k t - 1 + r)) / k,
    /// q2' = q2 r + q0 (1 - c)(1 - r) - I (1 - c)(k t - 1 + r) / k.
    /// The total changes by exactly -I t.
    static func kibamStep(q1: Double, q2: Double, c: Double, k: Double, current i: Double, seconds t: Double) -> State {
        let kt = k * t
        // 1 - r and k t - 1 + r without cancellation: steps are often microseconds.
        let oneMinusR = -expm1(-kt)
        let r = 1 - oneMinusR
        let g = kt < 1e-4 ? kt * kt / 2 - kt * kt * kt / 6 + kt * kt * kt * kt / 24 : kt - oneMinusR
        let q0 = q1 + q2
        let a = q1 * r + ((q0 * k * c - i) * oneMinusR - i * c * g) / k
        let b = q2 * r + q0 * (1 - c) * oneMinusR - i * (1 - c) * g / k
        return .kibam(availableJ: a, boundJ: b)
    }

    /// Removes any excess above capacity (rounding at the end of a charge).
    mutating func clampToCapacity() {
        let excess = energyJ - capacityJ
        guard excess > 0 else { return }
        switch state {
        case .linear: state = .linear(energyJ: capacityJ)
        case .kibam(let q1, let q2): state = .kibam(availableJ: q1 - excess * c, boundJ: q2 - excess * (1 - c))
        }
    }

    /// Sets a negative available energy to zero; returns the overshoot (energy not delivered).
    mutating func clampAvailableAtZero() -> Double {
        switch state {
        case .linear(let e) where e < 0:
            state = .linear(energyJ: 0)
            return -e
        case .kibam(let q1, let q2) where q1 < 0:
            state = .kibam(availableJ: 0, boundJ: q2)
            return -q1
        default:
            return 0
        }
    }

    /// How long until total stored energy reaches `targetJ` at constant net power, rounded up
    /// to the microsecond; `nil` if it never does. Exact for both models: the total changes
    /// linearly with net power.
    public func timeToReach(_ targetJ: Double, netPowerW: Double) -> SimDuration? {
        let gap = targetJ - energyJ
        if gap == 0 { return .zero }
        guard netPowerW != 0, (gap > 0) == (netPowerW > 0) else { return nil }
        return Self.roundUp(seconds: gap / netPowerW)
    }

    /// The most power that can flow between KiBaM's wells, in watts: with the update formula
    /// above, the available well changes at -I + k (c q2 - (1 - c) q1), and |c q2 - (1 - c) q1|
    /// is at most the capacity. Zero for `linear`. With the load, it bounds how fast the
    /// available energy can move.
    public var maxInternalFlowW: Double {
        switch state {
        case .linear: 0
        case .kibam: k * capacityJ
        }
    }

    /// The most energy the available well can hold: all of the capacity for `linear`, the
    /// share c of it for `kibam`.
    public var availableCapacityJ: Double {
        switch state {
        case .linear: capacityJ
        case .kibam: c * capacityJ
        }
    }

    /// How long until the available energy reaches `targetJ` at constant net power — falling
    /// to it under a net discharge, rising to it under a net charge or at rest — rounded up to
    /// the microsecond; `.zero` if it is already there, `nil` if it never gets there (wrong
    /// direction, or the battery is full first).
    ///
    /// Linear: exact division. KiBaM: q1(t) = alpha e^(-k t) + beta - I c t is monotone or
    /// has one turning point (concave while recovering under discharge, convex while filling
    /// the bound well under charge), so the times at which it is past the target form one
    /// interval [t*, ...). t* is found by bisection on whole microseconds within a bracket
    /// where the target is certainly passed: the total reaching the target under discharge,
    /// the battery reaching full under charge. At rest (no net power, or full) KiBaM's
    /// available well still recovers: q1(t) = c q0 + (q1 - c q0) e^(-k t) rises towards its
    /// share c of the total, so a target below that is reached, after ln((c q0 - q1) /
    /// (c q0 - target)) / k, which brackets the bisection. (A KiBaM phone that died, on a
    /// charger that gives it nothing because its charge is above the charger's limit, boots
    /// this way; a random sweep found such a phone staying off until it was unplugged.)
    public func timeUntilAvailable(reaches targetJ: Double, netPowerW: Double) -> SimDuration? {
        // A full battery takes nothing more: a charge on it is rest.
        let net = netPowerW > 0 && isFull ? 0 : netPowerW
        let falling = net < 0
        let a0 = availableJ
        if falling ? a0 <= targetJ : a0 >= targetJ { return .zero }
        switch state {
        case .linear(let e):
            guard net != 0 else { return nil }
            return Self.roundUp(seconds: (targetJ - e) / net)
        case .kibam(let q1, let q2):
            let i = -net
            let bracketSeconds: Double
            if net == 0 {
                let share = c * (q1 + q2)
                guard targetJ < share else { return nil }
                bracketSeconds = log((share - q1) / (share - targetJ)) / k * (1 + 1e-9)
            } else {
                bracketSeconds = falling ? (q1 + q2 - targetJ) / -net : (capacityJ - q1 - q2) / net
            }
            // Beyond any run (about 32,000 years; a tiny rate constant or net power), and
            // beyond what microseconds in an Int64 hold.
            guard bracketSeconds < 1e12 else { return nil }
            var hi = Int64((bracketSeconds * 1e6).rounded(.up)) + 1
            func available(_ us: Int64) -> Double {
                guard case .kibam(let a, _) = Self.kibamStep(q1: q1, q2: q2, c: c, k: k, current: i, seconds: Double(us) / 1e6)
                else { return 0 }
                return a
            }
            func passed(_ us: Int64) -> Bool { falling ? available(us) <= targetJ : available(us) >= targetJ }
            guard passed(hi) else { return nil }
            var lo: Int64 = 0
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2
                if passed(mid) { hi = mid } else { lo = mid }
            }
            return SimDuration(microseconds: hi)
        }
    }

    /// How long until the available energy runs out at a constant net power; `nil` unless it
    /// is a net discharge.
    public func timeToEmpty(netPowerW: Double) -> SimDuration? {
        netPowerW < 0 ? timeUntilAvailable(reaches: 0, netPowerW: netPowerW) : nil
    }

    static func roundUp(seconds: Double) -> SimDuration { SimDuration(secondsRoundedUp: seconds) }
}
