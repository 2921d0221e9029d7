import PhoneWorld
import SimEngine

/// What the phone draws and where its energy goes: the power of each part but the radios
/// (which keep books of their own, `RadioLink.charges`), the battery and the charger, and the
/// books by component, by use (background work, the person's) and by source.
///
/// Energy is accounted where power changes. Each part's power is constant between the
/// changes the simulation makes to it, and every change first brings the meters up to its
/// instant (`advanceMeters`), so the books are exact without a step per event. The battery
/// takes what the meters and the radios booked when it is read (`stepBattery`): in one step
/// when its response is additive (a linear battery off the charger, or on a charger that
/// gives it nothing; `lumpable`), or stretch by stretch at constant load, split at every
/// change of power and radio transition, when it is not (a KiBaM battery, or a battery the
/// charger fills, whose power depends on the load and the charge), and when the sink wants
/// every change of slope of the charge.
struct EnergyBooks {
    fileprivate let idleDrainW, screenW, cpuForegroundW, callW: Double
    let charger: ChargingCurve
    private(set) var battery: Battery
    /// A linear battery whose charge only the extremes of are observed.
    fileprivate let additive: Bool

    // What draws power now.
    private(set) var isOn = true
    private(set) var screenOn = false
    private(set) var inCall = false
    private(set) var lowPower = false
    private(set) var network = NetworkKind.none
    /// The bench load (`PhoneSetup.load`).
    private(set) var benchW = 0.0
    /// The CPU power of the tasks whose CPU runs, and how many they are; the part of it of
    /// scheduled work (refresh, processing, fetch), and of the continuous modes' hardware.
    private(set) var taskPowerW = 0.0
    private(set) var scheduledPowerW = 0.0
    private(set) var modePowerW = 0.0
    private(set) var cpuCount = 0
    private(set) var isCharging = false
    /// Optimized Battery Charging holds the charge at its hold level (`setHolding`).
    private(set) var holding = false

    // The meters: each part's power and energy (baseline, screen, foreground CPU, background
    // CPU but the modes', the modes' hardware, calls, the bench load), and by use (background
    // work's CPU, scheduled work's, the person's, and the whole load but the radios).
    private(set) var partsW = SIMD8<Double>()
    private(set) var partsJ = SIMD8<Double>()
    private(set) var useW = SIMD4<Double>()
    private(set) var metersUntil = SimInstant.start
    /// The radios' energy: promotions and transfers, and tails (`bookRadio`).
    private(set) var radioActiveJ = 0.0
    private(set) var radioTailJ = 0.0
    /// Energy of background work (CPU and radio charged to tasks) and of the person's use.
    private(set) var backgroundJ = 0.0
    private(set) var foregroundJ = 0.0
    private(set) var screenOnTime = SimDuration.zero
    private(set) var lowPowerTime = SimDuration.zero
    /// Microseconds on each network kind, indexed like `NetworkKind.allCases`.
    private(set) var onNetwork = SIMD4<Int64>()

    // The battery's books: what was booked since its last step, and where energy came from.
    private(set) var batteryUntil = SimInstant.start
    private(set) var pendingJ = 0.0
    private(set) var pendingBackgroundJ = 0.0
    private(set) var pendingScheduledJ = 0.0
    private(set) var energy = EnergyFlow()
    /// The part of background work's energy the battery supplied, and of scheduled work's.
    private(set) var backgroundFromBatteryJ = 0.0
    private(set) var scheduledFromBatteryJ = 0.0

    init(_ setup: PhoneSetup, chargeCurveObserved: Bool) {
        idleDrainW = setup.battery.idleDrainW
        screenW = setup.power.screenW
        cpuForegroundW = setup.power.cpuForegroundW
        callW = setup.power.callW
        charger = setup.charger
        battery = Battery(setup.battery)
        additive = battery.isLinear && !chargeCurveObserved
        lumping = additive
        lowPower = setup.settings.lowPowerMode == .on
        recomputePowers()
    }

    /// Whether the battery is booked in one step for the stretch since its last step (see the
    /// type's summary); decided after each event for the stretch that follows (`lumpable`).
    private(set) var lumping: Bool

    /// Whether the battery must be stepped at constant load.
    @inline(__always)
    var stepsWithRadios: Bool { !lumping }

    /// Whether the battery's response over the coming stretch is additive with the load at
    /// most `loadBound`: a linear battery off the charger, or on a charger that powers the
    /// whole load and gives the battery nothing (full, or at its limit or hold): net power zero
    /// whatever the radios do.
    @inline(__always)
    func lumpable(loadBound: Double) -> Bool {
        guard additive else { return false }
        guard isCharging else { return true }
        return loadBound <= charger.peakW && (battery.isFull || charger.acceptedW(charge: battery.charge, holding: holding) == 0)
    }

    /// The battery is booked in one step (`on`) or at constant load from now; the stretch so
    /// far must have been stepped in the old way (`stepBattery`).
    mutating func setLumping(_ on: Bool) { lumping = on }

    /// The phone's load but the radios.
    @inline(__always)
    var baseLoadW: Double { useW[3] }

    /// The phone's load with the radios drawing `radioW`.
    @inline(__always)
    func loadW(radioW: Double) -> Double { isOn ? useW[3] + radioW : 0 }

    /// Power the charger delivers at `loadW`: the load first, plus what the battery accepts at
    /// its charge, up to the charger's peak.
    @inline(__always)
    func chargerW(loadW: Double) -> Double {
        guard isCharging else { return 0 }
        return min(charger.peakW, loadW + charger.acceptedW(charge: battery.charge, holding: holding))
    }

    /// The consumption by component so far (as of `metersUntil` and the radios' last charges).
    var components: ComponentEnergy {
        var c = ComponentEnergy()
        c.baselineJ = partsJ[0]
        c.screenJ = partsJ[1]
        c.cpuForegroundJ = partsJ[2]
        c.cpuBackgroundJ = partsJ[3]
        c.modeJ = partsJ[4]
        c.callJ = partsJ[5]
        c.loadJ = partsJ[6]
        c.radioActiveJ = radioActiveJ
        c.radioTailJ = radioTailJ
        return c
    }

    // MARK: - Meters

    /// Books every part's energy, and the time meters, up to `t` at the powers of now.
    @inline(__always)
    mutating func advanceMeters(to t: SimInstant) {
        guard t > metersUntil else { return }
        let dt = t - metersUntil
        metersUntil = t
        onNetwork[network.index] &+= dt.microseconds
        guard isOn else { return }
        let s = dt.seconds
        partsJ += partsW * s
        let use = useW * s
        backgroundJ += use[0]
        foregroundJ += use[2]
        pendingJ += use[3]
        pendingBackgroundJ += use[0]
        pendingScheduledJ += use[1]
        if screenOn { screenOnTime += dt }
        if lowPower { lowPowerTime += dt }
    }

    /// The parts' powers after one of them changed.
    fileprivate mutating func recomputePowers() {
        guard isOn else {
            partsW = SIMD8()
            useW = SIMD4()
            return
        }
        let screen = screenOn ? screenW : 0, cpu = screenOn ? cpuForegroundW : 0, call = inCall ? callW : 0
        partsW = SIMD8(idleDrainW, screen, cpu, taskPowerW - modePowerW, modePowerW, call, benchW, 0)
        var load = idleDrainW + taskPowerW
        if screenOn { load += screenW + cpuForegroundW }
        if inCall { load += callW }
        useW = SIMD4(taskPowerW, scheduledPowerW, (screenOn ? screenW + cpuForegroundW : 0) + call, load + benchW)
    }

    // Each setter first brings the meters up to `now`, the instant of the change.

    mutating func setOn(_ on: Bool, at now: SimInstant) {
        advanceMeters(to: now)
        isOn = on
        recomputePowers()
    }

    mutating func setScreen(_ on: Bool, at now: SimInstant) {
        guard on != screenOn else { return }
        advanceMeters(to: now)
        screenOn = on
        recomputePowers()
    }

    mutating func setCall(_ on: Bool, at now: SimInstant) {
        advanceMeters(to: now)
        inCall = on
        recomputePowers()
    }

    mutating func setLowPower(_ on: Bool, at now: SimInstant) {
        advanceMeters(to: now)
        lowPower = on
    }

    mutating func setNetwork(_ kind: NetworkKind, at now: SimInstant) {
        advanceMeters(to: now)
        network = kind
    }

    mutating func setBench(_ w: Double, at now: SimInstant) {
        advanceMeters(to: now)
        benchW = w
        recomputePowers()
    }

    /// The charger comes or goes (the battery must have been stepped to `now`).
    mutating func setCharging(_ on: Bool, at now: SimInstant) {
        advanceMeters(to: now)
        isCharging = on
    }

    /// A task's CPU starts (`on`) or stops drawing `powerW`.
    @inline(__always)
    mutating func setCPU(_ powerW: Double, on: Bool, scheduled: Bool, mode: Bool, at now: SimInstant) {
        advanceMeters(to: now)
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
        recomputePowers()
    }

    // MARK: - Radios and holding

    /// A link's charges: its active and tail energy, which the battery has to supply.
    @inline(__always)
    mutating func bookRadio(activeJ: Double, tailJ: Double) {
        radioActiveJ += activeJ
        radioTailJ += tailJ
        pendingJ += activeJ + tailJ
    }

    /// Radio energy charged to a task (background work; `scheduled` work too).
    @inline(__always)
    mutating func bookTaskRadio(_ joules: Double, scheduled: Bool) {
        backgroundJ += joules
        pendingBackgroundJ += joules
        if scheduled { pendingScheduledJ += joules }
    }

    /// Radio energy of the person's own use.
    @inline(__always)
    mutating func bookForegroundRadio(_ joules: Double) { foregroundJ += joules }

    /// Optimized Battery Charging starts or stops holding the charge.
    mutating func setHolding(_ on: Bool) { holding = on }

    // MARK: - Battery

    /// Steps the battery to `t` (the meters and the radios' charges already booked to it)
    /// with the radios at `radioW` since its last step, when it steps at constant load, or
    /// with what was booked meanwhile.
    @inline(__always)
    mutating func stepBattery(to t: SimInstant, radioW: Double) {
        guard t > batteryUntil else { return }
        let dt = t - batteryUntil
        let flow: EnergyFlow
        if !lumping {
            let load = loadW(radioW: radioW)
            flow = battery.advance(by: dt, loadW: load, chargerW: chargerW(loadW: load))
        } else if isCharging {
            // The charger powers the load and the battery takes nothing.
            var f = EnergyFlow()
            f.consumedJ = pendingJ
            f.fromChargerJ = pendingJ
            flow = f
        } else {
            flow = battery.discharge(joules: pendingJ)
        }
        energy += flow
        if pendingBackgroundJ > 0, flow.consumedJ > 0 {
            let share = flow.fromBatteryJ / flow.consumedJ
            backgroundFromBatteryJ += pendingBackgroundJ * share
            scheduledFromBatteryJ += pendingScheduledJ * share
        }
        pendingJ = 0
        pendingBackgroundJ = 0
        pendingScheduledJ = 0
        batteryUntil = t
        assert(abs(flow.imbalanceJ) <= 1e-9 * max(1, flow.consumedJ), "energy books do not balance: \(flow)")
    }
}
