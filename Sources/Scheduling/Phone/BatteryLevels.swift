import PhoneWorld
import SimEngine

/// When the battery next reaches a level that changes the phone's state or the charger's
/// power: the available energy running out while on, the boot level while off and charging,
/// the next level of the charging curve while charging, and Low Power Mode's levels.
///
/// Worked out after every event, since most change the load. Far from every level it only
/// checks that its watch still holds (`Watch`): working out the level's instant at each
/// change of load was a tenth of a run, for a few hundred levels a month. Near one, the
/// instant is planned at the net power of now, and planned again at each radio transition
/// that may change it (`PowerEvent.replan`). A phone that died does not start by itself, even
/// when a KiBaM battery recovers at rest: it needs the charger.
struct BatteryLevels {
    /// The states the levels that matter depend on (which levels, and whether they are
    /// approached), besides the battery itself.
    struct States: Equatable {
        var isOn, isCharging, holding, lowPower: Bool
        /// Low Power Mode prompt levels offered, by bit.
        var prompted: UInt64
    }

    /// What a planned level's instant depends on besides the battery itself.
    struct Plan: Equatable {
        var netW: Double
        var states: States
    }

    /// While the battery is far from every level that matters: no level can be reached before
    /// `until` while the load stays at most `maxLoadW` and the states stay the same.
    struct Watch {
        var until: SimInstant
        var maxLoadW: Double
        var states: States
    }

    let lowPowerAuto: Bool
    let promptLevels: [Double]
    let offLevel: Double
    fileprivate let bootCharge: Double
    fileprivate let timer: TimerID
    /// Low Power Mode prompt levels already offered since the last charge, by bit (index into
    /// `promptLevels`).
    private(set) var prompted: UInt64 = 0
    private(set) var watch: Watch?
    /// What the planned level's instant was worked out from (`nil` after it fired), the
    /// instant, and whether the timer is armed for a replan rather than the level.
    private(set) var plan: Plan?
    private(set) var levelAt: SimInstant?
    private(set) var armedForReplan: Bool?
    /// Watches can be turned off (tests compare the two), and are counted.
    private(set) var watches = true
    private(set) var watchCount = 0

    /// The planned level fired, or the plan is to be worked out again.
    mutating func dropPlan() { plan = nil }
    /// Watches on or off.
    mutating func setWatches(_ on: Bool) { watches = on }
    /// The watch is over.
    mutating func dropWatch() { watch = nil }
    /// The charger came: Low Power Mode's prompts may be offered again.
    mutating func recharged() { prompted = 0 }
    /// Every prompt level at or above `charge` has been offered.
    mutating func offered(atCharge charge: Double) {
        for (k, l) in promptLevels.enumerated() where charge <= l + 1e-9 { prompted |= 1 << UInt64(k) }
    }

    /// Watches shorter than this are not worth their event; longer ones are cut to the longest.
    fileprivate static var shortestWatch: SimDuration { .minutes(5) }
    fileprivate static var longestWatch: SimDuration { .days(1) }
    /// How much the load may grow during a watch before the watch is redone. Above the load of
    /// a phone in use with both radios transferring; a larger value means shorter watches.
    fileprivate static var watchHeadroomW: Double { 5 }

    init(_ setup: PhoneSetup, timer: TimerID) {
        precondition(setup.settings.lowPowerPromptLevels.count <= 64, "at most 64 Low Power Mode prompt levels")
        lowPowerAuto = setup.settings.lowPowerMode == .auto
        promptLevels = setup.settings.lowPowerPromptLevels
        offLevel = setup.settings.lowPowerOffLevel
        bootCharge = setup.battery.bootCharge
        self.timer = timer
    }

    /// Available energy at which a phone that shut down boots again.
    @inline(__always)
    func bootLevelJ(_ battery: Battery) -> Double { bootCharge * battery.availableCapacityJ }

    @inline(__always)
    func states(_ books: EnergyBooks) -> States {
        States(isOn: books.isOn, isCharging: books.isCharging, holding: books.holding, lowPower: books.lowPower, prompted: prompted)
    }

    /// Whether the watch still holds after the event at `now`, with the load at most
    /// `loadBound` until the next event (the radios move through their transitions without
    /// events: their peak counts) and the states `states`.
    @inline(__always)
    func watchHolds(loadBound: Double, states: States, now: SimInstant) -> Bool {
        guard let watch else { return false }
        return now < watch.until && loadBound <= watch.maxLoadW && watch.states == states
    }

    /// Sets the timer after the event at `now`, the books brought to now, with the radios
    /// drawing `radioW`, the load at most `bound` until the next event, and the radios' next
    /// transition at `radioTransition`. When a watch ends (`watching` false), the instant is
    /// worked out; the next event that changes the load may start a new watch.
    mutating func reschedule(
        _ books: inout EnergyBooks, radioW: Double, loadBound bound: Double, radioTransition: SimInstant?,
        now: SimInstant, watching: Bool = true, sim: inout Simulator<PhoneEvent>
    ) {
        let load = books.loadW(radioW: radioW)
        let states = states(books)
        watch = nil
        let base = books.batteryUntil
        let net = books.battery.netPowerW(loadW: load, chargerW: books.chargerW(loadW: load))
        // Between levels the net power is constant, so while it and the states the levels
        // depend on are unchanged, the planned instant is still right.
        let plan = Plan(netW: net, states: states)
        if plan == self.plan {
            assert(followsPlan(&books, netW: net, now: now), "the battery timer is not where its plan puts it")
            arm(&books, loadBound: bound, radioTransition: radioTransition, now: now, sim: &sim)
            return
        }
        // On a charger that powers the whole load and gives the battery nothing (full, or at its
        // limit or hold), the charge stays where it is while the load stays within the charger's
        // peak: no level comes, however near (the night, mostly).
        if watching && watches && books.isOn && books.isCharging && bound <= books.charger.peakW
            && (books.battery.isFull || books.charger.acceptedW(charge: books.battery.charge, holding: books.holding) == 0)
        {
            watch = Watch(until: base + Self.longestWatch, maxLoadW: books.charger.peakW, states: states)
            assert(holds(watch!, &books, radioW: radioW), "a battery level comes before the watch ends")
            watchCount += 1
            self.plan = nil
            armedForReplan = nil
            sim.setTimer(timer, .power(.watchEnded), at: max(watch!.until, now), priority: PhoneEvent.worldPriority)
            return
        }
        // Far from every level, watch instead: the net power's size is at most the load, or
        // the charger's peak while charging, plus for KiBaM the flow between its wells.
        if watching && watches {
            let maxLoadW = bound + Self.watchHeadroomW
            let rateW = max(maxLoadW, books.isCharging ? books.charger.peakW : 0) + books.battery.maxInternalFlowW
            let far = min(marginJ(&books) / rateW, Self.longestWatch.seconds)
            if far >= Self.shortestWatch.seconds {
                let until = base + SimDuration(microseconds: Int64(far * 1e6))
                watch = Watch(until: until, maxLoadW: maxLoadW, states: states)
                assert(holds(watch!, &books, radioW: radioW), "a battery level comes before the watch ends")
                watchCount += 1
                self.plan = nil
                armedForReplan = nil
                sim.setTimer(timer, .power(.watchEnded), at: max(until, now), priority: PhoneEvent.worldPriority)
                return
            }
        }
        self.plan = plan
        if let wait = nextLevelWait(&books, netW: net) {
            assert(base + wait >= now, "a battery level passed during a watch")
            levelAt = max(base + wait, now)
        } else {
            levelAt = nil
        }
        arm(&books, loadBound: bound, radioTransition: radioTransition, now: now, sim: &sim)
    }

    /// Sets the timer to the planned level's instant, or to the radios' next transition if that
    /// comes first and may change the net power. On a charger that powers the whole load and
    /// gives the battery nothing (at its limit, or full), the net power is zero whatever the
    /// radios do.
    fileprivate mutating func arm(
        _ books: inout EnergyBooks, loadBound: Double, radioTransition: SimInstant?, now: SimInstant,
        sim: inout Simulator<PhoneEvent>
    ) {
        var due = levelAt.map { ($0, false) }
        let insensitive =
            !books.isOn
            || (books.isCharging && loadBound <= books.charger.peakW
                && (books.battery.isFull || books.charger.acceptedW(charge: books.battery.charge, holding: books.holding) == 0))
        if !insensitive, let radio = radioTransition.map({ max($0, now) }), radio < due?.0 ?? .distantFuture {
            due = (radio, true)
        }
        guard let (time, replan) = due else {
            sim.cancelTimer(timer)
            return
        }
        if sim.timerTime(timer) == time, armedForReplan == replan { return }
        armedForReplan = replan
        sim.setTimer(timer, .power(replan ? .replan : .level), at: time, priority: PhoneEvent.worldPriority)
    }

    /// How long, at the constant net power `netW`, until the battery as of the last accounting
    /// reaches the first level that matters; `nil` when none is ahead.
    fileprivate func nextLevelWait(_ books: inout EnergyBooks, netW net: Double) -> SimDuration? {
        let battery = books.battery
        var wait =
            books.isOn
            ? battery.timeToEmpty(netPowerW: net)
            : books.isCharging ? battery.timeUntilAvailable(reaches: bootLevelJ(battery), netPowerW: net) : nil
        func consider(_ level: Double) {
            if let w = battery.timeToReach(level * battery.capacityJ, netPowerW: net) { wait = min(wait ?? w, w) }
        }
        // While charging, the charger's power changes at the knee, each taper step and the cap.
        if books.isCharging, net > 0, let level = books.charger.nextLevel(after: battery.charge, holding: books.holding) {
            consider(level)
        }
        if lowPowerAuto {
            if books.lowPower, books.isCharging, net > 0 { consider(offLevel) }
            if books.isOn, !books.lowPower, !books.isCharging, net < 0,
                let next = Self.nextPromptLevel(promptLevels, below: battery.charge, offered: prompted)
            {
                consider(next)
            }
        }
        return wait
    }

    /// The watch's promise, checked by debug builds at every event it outlives: at the load
    /// now (constant until the next event, which checks again), no level comes before the
    /// watch ends. Random sweeps found two watches that broke it silently (a KiBaM phone
    /// booting late, a weak charger's limit passed), caught only later, if at all.
    func holds(_ watch: Watch, _ books: inout EnergyBooks, radioW: Double) -> Bool {
        let load = books.loadW(radioW: radioW)
        let net = books.battery.netPowerW(loadW: load, chargerW: books.chargerW(loadW: load))
        guard let wait = nextLevelWait(&books, netW: net) else { return true }
        return books.batteryUntil + wait >= watch.until
    }

    /// The plan's promise, checked by debug builds whenever it is kept: while the net power and
    /// the states are unchanged, the instant planned earlier is still the one worked out now
    /// (within the rounding of the levels' instants to the microsecond and of the books' sums).
    fileprivate func followsPlan(_ books: inout EnergyBooks, netW net: Double, now: SimInstant) -> Bool {
        guard let wait = nextLevelWait(&books, netW: net) else { return levelAt == nil }
        guard let levelAt else { return false }
        let expected = max(books.batteryUntil + wait, now)
        let slackMicroseconds = 2 + (net == 0 ? 0 : 1e-9 * books.battery.capacityJ / abs(net) * 1e6)
        return abs(Double((levelAt - expected).microseconds)) <= slackMicroseconds
    }

    /// The highest Low Power Mode prompt level below `charge` not yet offered.
    fileprivate static func nextPromptLevel(_ levels: [Double], below charge: Double, offered: UInt64) -> Double? {
        var next: Double?
        for (k, level) in levels.enumerated() where level < charge && offered & (1 << UInt64(k)) == 0 {
            next = max(next ?? level, level)
        }
        return next
    }

    /// Energy, in joules, the battery's stored or available energy has to move before it can
    /// reach any level that matters in the current states (whatever the direction): the
    /// levels `nextLevelWait` looks for, and the same tolerances.
    fileprivate func marginJ(_ books: inout EnergyBooks) -> Double {
        let battery = books.battery
        let capacity = battery.capacityJ, total = battery.energyJ, available = battery.availableJ
        var margin = Double.infinity
        // Off on the charger, the phone boots once the available energy is at the boot level,
        // however it got there: a KiBaM battery recovers at rest, so a phone that died can be
        // above that level already when the charger comes, and then it boots now.
        if books.isOn { margin = available } else if books.isCharging { margin = max(0, bootLevelJ(battery) - available) }
        if books.isCharging, let level = books.charger.nextLevel(after: battery.charge, holding: books.holding) {
            margin = min(margin, abs(level * capacity - total))
        }
        // The level below counts too: on a charger weaker than the load the charge falls
        // through it, and when the load drops within the same watch it charges back up to it,
        // a level the next plan waits for. Without it such a phone (a 1.6 W charger and a
        // 64.6% limit, found by a random sweep) passed its limit during a watch.
        if books.isCharging, let level = books.charger.levelBelow(battery.charge, holding: books.holding) {
            margin = min(margin, abs(total - level * capacity))
        }
        if lowPowerAuto {
            if books.lowPower, books.isCharging { margin = min(margin, abs(offLevel * capacity - total)) }
            if books.isOn, !books.lowPower, !books.isCharging,
                let next = Self.nextPromptLevel(promptLevels, below: battery.charge, offered: prompted)
            {
                margin = min(margin, total - next * capacity)
            }
        }
        // The levels' tolerances (1e-9 of charge) and rounding to the microsecond.
        return max(0, margin - 1e-6 * capacity)
    }
}
