import PhoneWorld
import SimEngine

/// The energy books kept up to date, the charger, the battery's levels and the bench load:
/// the glue between `EnergyBooks`, `BatteryLevels` and `Radios`.
extension PhoneSimulation {
    /// A charger, battery or load event; whether a policy may see a change.
    mutating func handlePower(_ event: PowerEvent) -> Bool {
        switch event {
        case .plugIn:
            plugIn()
            scheduleCharger()
        case .unplug:
            unplug()
            scheduleCharger()
        case .optimizedRelease: books.setHolding(false)
        case .level: batteryReachedLevel()
        case .replan:
            levels.dropPlan()
            return false
        case .watchEnded: preconditionFailure("handled before accounting")
        case .load(let i): changeLoad(i)
        }
        return true
    }

    // MARK: - Accounting

    /// Brings the radios to the event at `sim.now`, applying their transitions on the way (each
    /// link charges the stretch it ends), and reports the owners of bursts that ended. When
    /// the battery steps at constant load, every transition and the event close a stretch of
    /// the books; otherwise the battery waits until it is read (`bringBooks`).
    @inline(__always)
    mutating func advanceToEvent() {
        if books.stepsWithRadios {
            account(to: sim.now)
        } else {
            while let (t, r) = radios.nextTransition(notAfter: sim.now, through: true) {
                radios.links[r].advance(to: t)
                if radios.links[r].settledCount > 0 { settleRadios() }
            }
        }
    }

    /// Books everything up to `time`: the radios (their transitions at `time` too, unless
    /// `through` is false), the meters and the battery.
    mutating func account(to time: SimInstant, through: Bool = true) {
        if books.stepsWithRadios {
            while let (t, _) = radios.nextTransition(notAfter: time, through: through) {
                let radioW = radios.powerW
                radios.advance(to: t, through: true)
                closeStretch(to: t, radioW: radioW)
                settleRadios()
            }
        } else {
            while let (t, r) = radios.nextTransition(notAfter: time, through: through) {
                radios.links[r].advance(to: t)
                if radios.links[r].settledCount > 0 { settleRadios() }
            }
        }
        let radioW = radios.powerW
        radios.advance(to: time, through: through)
        closeStretch(to: time, radioW: radioW)
        settleRadios()
    }

    /// Books energy up to each radio transition before `time` and applies it, the battery
    /// stepped at constant load: the books then stand at the last such transition.
    fileprivate mutating func applyRadioTransitions(before time: SimInstant) {
        while let (t, _) = radios.nextTransition(notAfter: time, through: false) {
            let radioW = radios.powerW
            radios.advance(to: t, through: true)
            closeStretch(to: t, radioW: radioW)
            settleRadios()
        }
    }

    /// Brings the books and the battery to now, where the battery is read.
    @inline(__always)
    mutating func bringBooks() {
        if books.batteryUntil < sim.now || books.metersUntil < sim.now { account(to: sim.now) }
    }

    /// Closes the books' stretch to `time`: the meters, the radios' charges and the battery,
    /// with the radios at `radioW` over it when the battery steps at constant load; tells the
    /// sink the charge.
    @inline(__always)
    fileprivate mutating func closeStretch(to time: SimInstant, radioW: Double) {
        books.advanceMeters(to: time)
        drainRadioCharges()
        guard time > books.batteryUntil else { return }
        books.stepBattery(to: time, radioW: radioW)
        sink.chargeObserved(books.battery.charge, at: time)
    }

    /// Takes the links' charges into the books: each task's radio energy, the uses and the
    /// radio components, and what the battery has to supply.
    @inline(__always)
    mutating func drainRadioCharges() {
        for r in radios.links.indices where radios.links[r].chargeCount > 0 {
            let active = radios.links[r].chargedActiveJ, tail = radios.links[r].chargedTailJ
            books.bookRadio(activeJ: active, tailJ: tail)
            for k in 0..<radios.links[r].chargeCount {
                let c = radios.links[r].charges[k]
                switch c.owner {
                case .task(let i):
                    tasks[i].radio.radioJ += c.joules
                    if books.isCharging { tasks[i].addChargerEnergy(c.joules) }
                    if c.tail { tasks[i].radio.tailJ += c.joules }
                    books.bookTaskRadio(c.joules, scheduled: tasks[i].kind.isScheduled)
                case .foreground:
                    books.bookForegroundRadio(c.joules)
                }
            }
            radios.links[r].clearCharges()
        }
    }

    /// Reports the tasks whose radio bursts are over and that were only waiting for that, once
    /// the links' charges are in the books.
    @inline(__always)
    mutating func settleRadios() {
        for r in radios.links.indices where radios.links[r].settledCount > 0 {
            drainRadioCharges()
            reportSettled(r)
        }
    }

    /// The link's outbox is read in place and then emptied, so its storage is reused.
    fileprivate mutating func reportSettled(_ r: Int) {
        let n = radios.links[r].settledCount
        for k in 0..<n {
            guard case .task(let i) = radios.links[r].settled[k], tasks.isKept(i), tasks[i].flags.contains(.awaitingTail),
                !radioUsers(contain: .task(i))
            else { continue }
            report(i)
        }
        radios.links[r].clearSettled()
    }

    /// Whether a burst still going on some link has served `owner`.
    func radioUsers(contain owner: TransferOwner) -> Bool {
        for r in radios.links.indices where radios.links[r].users.contains(owner) { return true }
        return false
    }

    /// Works out the battery's next level after an event (`BatteryLevels`): while its watch
    /// holds, nothing is read; otherwise the books are brought to now and the level planned.
    /// First decides how the battery is booked over the stretch that follows.
    @inline(__always)
    mutating func rescheduleBattery(watching: Bool = true) {
        let radioW = radios.powerW
        let bound = books.isOn ? books.baseLoadW + radios.peakPowerW : 0
        let lumpable = books.lumpable(loadBound: bound)
        if lumpable != books.lumping {
            // The stretch so far is stepped the way it was booked.
            bringBooks()
            books.setLumping(lumpable)
        }
        if levels.watchHolds(loadBound: bound, states: levels.states(books), now: sim.now) {
            // Checked where the battery is current (a booked-in-one-step battery is read only
            // when needed, and a check must not change when that is).
            assert(books.lumping || levels.holds(levels.watch!, &books, radioW: radioW), "a battery level comes before the watch ends")
            return
        }
        // Stepped at constant load, the books stand at this event already (or, when a watch
        // ends, at the last radio transition: the plan starts there).
        if books.lumping { bringBooks() }
        levels.reschedule(&books, radioW: radioW, loadBound: bound, radioTransition: radios.nextTransition, now: sim.now, watching: watching, sim: &sim)
    }

    // MARK: - Charger

    fileprivate mutating func plugIn() {
        bringBooks()
        splitCPUEnergy()
        books.setCharging(true, at: sim.now)
        power.powerChangedAt = sim.now
        levels.recharged()
        sink.worldEvent(.plugIn, at: sim.now)
        powerChanged()
        guard setup.charger.optimized else { return }
        // Optimized Battery Charging predicts the unplug from the person's routine (the
        // habit's mean unplug time, next after now) and holds until a lead time before it.
        let now = sim.now
        var predicted = SimInstant.after(.days(now.day)) + setup.charging.unplug
        if predicted <= now { predicted += .days(1) }
        let release = predicted - setup.charger.optimizedLead
        guard release > now else { return }
        books.setHolding(true)
        power.optimizedRelease = sim.schedule(.power(.optimizedRelease), at: release, priority: PhoneEvent.worldPriority)
    }

    fileprivate mutating func unplug() {
        bringBooks()
        splitCPUEnergy()
        books.setCharging(false, at: sim.now)
        power.powerChangedAt = sim.now
        books.setHolding(false)
        if let h = power.optimizedRelease { sim.cancel(h) }
        power.optimizedRelease = nil
        sink.worldEvent(.unplug, at: sim.now)
        powerChanged()
    }

    // MARK: - Battery levels

    fileprivate mutating func batteryReachedLevel() {
        levels.dropPlan()
        bringBooks()
        let battery = books.battery
        let charge = battery.charge
        if books.isOn, battery.availableJ <= 1e-9 * battery.capacityJ {
            shutDown()
        } else if !books.isOn, books.isCharging, battery.availableJ >= levels.bootLevelJ(battery) * (1 - 1e-12) {
            boot()
        } else if levels.lowPowerAuto {
            if books.lowPower, books.isCharging, charge >= levels.offLevel - 1e-9 {
                setLowPower(false)
            } else if books.isOn, !books.lowPower, !books.isCharging,
                levels.promptLevels.indices.contains(where: {
                    levels.prompted & (1 << UInt64($0)) == 0 && charge <= levels.promptLevels[$0] + 1e-9
                })
            {
                // Every level passed at once is offered once; the person answers once.
                levels.offered(atCharge: charge)
                let accepted = streams.lowPower.bernoulli(setup.people.lowPowerAcceptShare)
                sink.worldEvent(.lowPowerPrompt(accepted: accepted), at: sim.now)
                if accepted { setLowPower(true) }
            }
        }
    }

    /// Whether the battery is watched far from its levels (tests compare the two).
    var watchesBattery: Bool {
        get { levels.watches }
        set { levels.setWatches(newValue) }
    }

    /// The battery's watch is over. Not a change in the world: no decision, and where the
    /// battery steps at constant load no stretch closed at an instant nothing happened
    /// (watching or not, the books come out the same): the radios' transitions before now are
    /// applied, and the plan starts from the last of them.
    mutating func batteryWatchEnded() {
        if books.stepsWithRadios { applyRadioTransitions(before: sim.now) } else { advanceToEvent() }
        levels.dropWatch()
        rescheduleBattery(watching: false)
    }

    mutating func setLowPower(_ on: Bool) {
        books.setLowPower(on, at: sim.now)
        sink.worldEvent(.lowPowerMode(on: on), at: sim.now)
    }

    fileprivate mutating func shutDown() {
        bringBooks()
        books.setOn(false, at: sim.now)
        power.offSince = sim.now
        sink.phoneShutDown(at: sim.now)
        // Every app goes with the phone, and its running work with it.
        for app in apps.indices where apps[app].life.state.isRunning { terminate(app, cause: .shutdown) }
        // So do the transfers the system carries for apps that are not running: their data
        // goes with the radios.
        for i in running where tasks[i].status == .running { finish(TaskID(i), .killed, at: sim.now, suspendIfIdle: false) }
        assert(apps.frontApp == nil, "the app in front ended with its process")
        radios.powerOff()
        settleRadios()
        radios.replaceLinks()
    }

    fileprivate mutating func boot() {
        bringBooks()
        books.setOn(true, at: sim.now)
        sink.phoneBooted(at: sim.now, offFor: sim.now - power.offSince!)
        power.offSince = nil
        if let r = radios.current {
            radios.links[r].setThroughput(upMbps: radios.connection.upMbps, downMbps: radios.connection.downMbps, at: sim.now)
        }
    }

    // MARK: - Bench load

    /// The bench load's step `index` begins; the next is scheduled if it begins before the horizon.
    mutating func changeLoad(_ index: Int) {
        guard let step = setup.load.step(index) else { return }
        books.setBench(step.powerW, at: sim.now)
        if let next = setup.load.step(index + 1), next.start < .after(setup.duration) {
            sim.schedule(.power(.load(index + 1)), at: next.start, priority: PhoneEvent.worldPriority)
        }
    }

    /// The charger's first step: plugged in at the start if its first session starts then.
    mutating func startCharger() {
        if world.charging.first?.start == .start {
            plugIn()
            power.chargerStep = 1
        }
        scheduleCharger()
    }

    /// Schedules the charger's next plug-in or unplug: one at a time, so that the event queue
    /// does not hold the horizon's sessions.
    fileprivate mutating func scheduleCharger() {
        let step = power.chargerStep
        guard step / 2 < world.charging.count else { return }
        power.chargerStep += 1
        let session = world.charging[step / 2]
        if step % 2 == 0 {
            sim.schedule(.power(.plugIn), at: session.start, priority: PhoneEvent.chargerPriority)
        } else if session.end < world.horizon {
            // A session the horizon cuts goes on while the work still running finishes: the
            // cut is not an unplug, which would end processing work that requires power.
            sim.schedule(.power(.unplug), at: session.end, priority: PhoneEvent.chargerPriority)
        }
    }
}

/// The power's own state, written only here (`fileprivate(set)`).
struct PowerState {
    /// Optimized Battery Charging's release, while one is scheduled.
    fileprivate(set) var optimizedRelease: EventHandle?
    /// The charger's next step to schedule: session `chargerStep / 2` of `world.charging`, its
    /// plug-in when even, its unplug when odd.
    fileprivate(set) var chargerStep = 0
    /// When the charger last came or went.
    fileprivate(set) var powerChangedAt = SimInstant.start
    /// Since when the phone is off.
    fileprivate(set) var offSince: SimInstant?
}

/// Radio energy charged to a task, and the part that is its share of tails: written only here.
struct RadioEnergy {
    fileprivate(set) var radioJ = 0.0
    fileprivate(set) var tailJ = 0.0
}
