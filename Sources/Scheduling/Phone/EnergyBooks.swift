import PhoneWorld
import SimEngine

/// What the phone draws and where its energy goes: the power of each part but the radios
/// (which keep books of their own, `RadioLink.charges`), the battery and the charger, and the
/// books by component, by use (background work, the person's) and by source.
///
/// Every part's power is constant between the changes the simulation makes to it, so a
/// stretch between two changes is booked exactly (`bookParts`, then `close`). The battery
/// needs the load over each stretch at constant power only when its response is not
/// additive: a KiBaM battery, or any battery on the charger, whose power depends on the load
/// and the charge (`stepsWithRadios`), or when the sink wants every change of slope of the
/// charge curve. Otherwise, off the charger, a linear battery takes a stretch's energy in one
/// step however the radios' power moved within it, and its charge only falls meanwhile.
struct EnergyBooks {
    let idleDrainW, screenW, cpuForegroundW, callW: Double
    let charger: ChargingCurve
    var battery: Battery
    /// A linear battery whose charge only the extremes of are observed: off the charger, its
    /// step can span the radios' transitions.
    let additive: Bool

    // What draws power now.
    var isOn = true
    var screenOn = false
    var inCall = false
    var lowPower = false
    var network = NetworkKind.none
    /// The bench load (`PhoneSetup.load`).
    var benchW = 0.0
    /// The CPU power of the tasks whose CPU runs, and how many they are; the part of it of
    /// scheduled work (refresh, processing, fetch), and of the continuous modes' hardware.
    var taskPowerW = 0.0
    var scheduledPowerW = 0.0
    var modePowerW = 0.0
    var cpuCount = 0
    var isCharging = false
    /// Optimized Battery Charging holds the charge at its hold level.
    var holding = false

    // The books.
    var accountedUntil = SimInstant.start
    var energy = EnergyFlow()
    var components = ComponentEnergy()
    /// Energy of background work (CPU and radio charged to tasks) and of the person's use,
    /// booked as it is spent, and the part of each the battery supplied.
    var backgroundJ = 0.0
    var foregroundJ = 0.0
    var backgroundFromBatteryJ = 0.0
    var scheduledFromBatteryJ = 0.0
    var screenOnTime = SimDuration.zero
    var lowPowerTime = SimDuration.zero
    /// Microseconds on each network kind, indexed like `NetworkKind.allCases`.
    var onNetwork = SIMD4<Int64>()

    init(_ setup: PhoneSetup, chargeCurveObserved: Bool) {
        idleDrainW = setup.battery.idleDrainW
        screenW = setup.power.screenW
        cpuForegroundW = setup.power.cpuForegroundW
        callW = setup.power.callW
        charger = setup.charger
        battery = Battery(setup.battery)
        additive = battery.isLinear && !chargeCurveObserved
        lowPower = setup.settings.lowPowerMode == .on
    }

    /// Whether the battery's step can span the radios' transitions (see the type's summary).
    @inline(__always)
    var stepsWithRadios: Bool { !additive || isCharging }

    /// The phone's load with the radios drawing `radioW`.
    @inline(__always)
    func loadW(radioW: Double) -> Double {
        guard isOn else { return 0 }
        var w = idleDrainW + taskPowerW + radioW
        if screenOn { w += screenW + cpuForegroundW }
        if inCall { w += callW }
        return w + benchW
    }

    /// Power the charger delivers at `loadW`: the load first, plus what the battery accepts at
    /// its charge, up to the charger's peak.
    @inline(__always)
    func chargerW(loadW: Double) -> Double {
        guard isCharging else { return 0 }
        return min(charger.peakW, loadW + charger.acceptedW(charge: battery.charge, holding: holding))
    }

    /// A task's CPU starts (`on`) or stops drawing `powerW`.
    mutating func setCPU(_ powerW: Double, on: Bool, scheduled: Bool, mode: Bool) {
        if on {
            taskPowerW += powerW
            if scheduled { scheduledPowerW += powerW }
            if mode { modePowerW += powerW }
            cpuCount += 1
        } else {
            taskPowerW -= powerW
            if scheduled { scheduledPowerW -= powerW }
            if mode { modePowerW -= powerW }
            cpuCount -= 1
            if cpuCount == 0 {  // no drift from repeated float subtraction
                taskPowerW = 0
                scheduledPowerW = 0
                modePowerW = 0
            }
        }
    }

    /// Books the parts other than the radios over a stretch of `s` seconds ending now, and
    /// returns the energy so far of background work, of scheduled work and of the person's
    /// use, to which the radios' charges are added.
    @inline(__always)
    mutating func bookParts(seconds s: Double, _ dt: SimDuration) -> (background: Double, scheduled: Double, foreground: Double) {
        guard isOn else { return (0, 0, 0) }
        components.baselineJ += idleDrainW * s
        components.cpuBackgroundJ += (taskPowerW - modePowerW) * s
        components.modeJ += modePowerW * s
        var foreground = 0.0
        if screenOn {
            components.screenJ += screenW * s
            components.cpuForegroundJ += cpuForegroundW * s
            foreground += (screenW + cpuForegroundW) * s
            screenOnTime += dt
        }
        if inCall {
            components.callJ += callW * s
            foreground += callW * s
        }
        components.loadJ += benchW * s
        if lowPower { lowPowerTime += dt }
        return (taskPowerW * s, scheduledPowerW * s, foreground)
    }

    /// Closes the stretch to `time`: its use totals, the time on the network, and the battery,
    /// stepped at the constant load with the radios at `radioW` or, when the step may span
    /// the radios' transitions, drawing the stretch's energy with `radioJ` of radios.
    @inline(__always)
    mutating func close(
        to time: SimInstant, _ dt: SimDuration, background: Double, scheduled: Double, foreground: Double,
        radioW: Double, radioJ: Double
    ) {
        self.backgroundJ += background
        self.foregroundJ += foreground
        onNetwork[network.index] &+= dt.microseconds
        let flow: EnergyFlow
        if stepsWithRadios {
            let load = loadW(radioW: radioW)
            flow = battery.advance(by: dt, loadW: load, chargerW: chargerW(loadW: load))
        } else {
            flow = battery.discharge(joules: isOn ? (loadW(radioW: 0) * dt.seconds + radioJ) : 0)
        }
        energy += flow
        if background > 0, flow.consumedJ > 0 {
            let share = flow.fromBatteryJ / flow.consumedJ
            backgroundFromBatteryJ += background * share
            scheduledFromBatteryJ += scheduled * share
        }
        accountedUntil = time
        assert(abs(flow.imbalanceJ) <= 1e-9 * max(1, flow.consumedJ), "energy books do not balance: \(flow)")
    }
}
