import SimEngine

/// A bench load: a power the phone draws besides its components while it is on, in steps,
/// the way battery models are tested on their own (constant-current or constant-power
/// discharges, pulsed loads). With no apps, nobody using the phone and no charger it is a
/// discharge test (`models/scenarios/discharge.yaml`, docs/battery.md).
///
/// bgsim's batteries hold energy, not charge, and have no voltage curve: a constant current
/// of x C is the constant power x × capacity in watt-hours, at the nominal voltage.
public struct LoadProfile: Equatable, Sendable {
    /// One step: `powerW` for `duration`.
    public struct Step: Equatable, Sendable {
        /// Power drawn, in watts.
        public var powerW: Double
        /// How long the step lasts.
        public var duration: SimDuration
        /// A step of `powerW` for `duration`.
        public init(powerW: Double, duration: SimDuration) {
            self.powerW = powerW
            self.duration = duration
        }
    }

    /// The steps, in order from the start; after the last, the cycle starts again if
    /// `repeats`, else the last step's power holds to the end.
    public var steps: [Step]
    /// Whether the cycle of steps starts again after the last.
    public var repeats: Bool

    /// No load.
    public static let none = LoadProfile(steps: [], repeats: false)

    /// A load of `steps`, repeated or not.
    public init(steps: [Step], repeats: Bool) {
        self.steps = steps
        self.repeats = repeats
    }

    /// Whether the profile draws anything at all.
    public var isNone: Bool { steps.allSatisfy { $0.powerW == 0 } }

    /// The power of step `index` (counting through repeated cycles) and when it starts;
    /// `nil` past the last step of a profile that does not repeat. Computed, not listed, so
    /// that a short cycle repeated over a long horizon costs no memory.
    public func step(_ index: Int) -> (start: SimInstant, powerW: Double)? {
        guard !steps.isEmpty, index >= 0 else { return nil }
        let n = steps.count
        guard repeats || index < n else { return nil }
        let cycle = index / n, k = index % n
        let cycleLength = steps.reduce(SimDuration.zero) { $0 + $1.duration }
        var start = SimInstant.start + cycleLength * Int64(cycle)
        for i in 0..<k { start += steps[i].duration }
        return (start, steps[k].powerW)
    }
}
