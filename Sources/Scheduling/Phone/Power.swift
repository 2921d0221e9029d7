import PhoneWorld
import SimEngine

/// Radio energy taken from the links' books during a stretch, by use.
struct RadioSums {
    var background = 0.0, scheduled = 0.0, foreground = 0.0
    /// All of it: what the battery supplies with the rest of the load.
    var joules = 0.0
}

/// The energy books kept up to date, the charger, the battery's levels and the bench load:
/// the glue between `EnergyBooks`, `BatteryLevels` and `Radios`.
extension PhoneSimulation {
    /// A charger, battery or load event; whether a policy may see a change.
    mutating func handlePower(_ event: PowerEvent) -> Bool {
        switch event {
        case .plugIn: plugIn()
        case .unplug: unplug()
        case .optimizedRelease: books.holding = false
        case .level: batteryReachedLevel()
        case .replan:
            levels.plan = nil
            return false
        case .watchEnded: preconditionFailure("handled before accounting")
        case .load(let i): changeLoad(i)
        }
        return true
    }

    // MARK: - Accounting

    /// Integrates energy from the last accounting to `time`, applying the radios' transitions
    /// as they come (those at `time` too, unless `through` is false): each link charges its
    /// energy to its owners. When the battery's step needs a constant load
    /// (`EnergyBooks.stepsWithRadios`) the books close a stretch at every transition; otherwise
    /// once, and the radios' charges are taken only when an owner's share must be known.
    mutating func account(to time: SimInstant, through: Bool = true) {
        var sums = RadioSums()
        if books.stepsWithRadios {
            while let (t, _) = radios.nextTransition(notAfter: time, through: through) {
                let radioW = radios.powerW
                radios.advance(to: t, through: true)
                closeStretch(to: t, radioW: radioW, &sums)
                settleRadios()
            }
            let radioW = radios.powerW
            radios.advance(to: time, through: through)
            closeStretch(to: time, radioW: radioW, &sums)
        } else {
            while let (t, r) = radios.nextTransition(notAfter: time, through: through) {
                radios.links[r].advance(to: t)
                if !radios.links[r].settled.isEmpty {
                    drainRadioCharges(into: &sums)
                    settleRadios()
                }
            }
            radios.advance(to: time, through: through)
            closeStretch(to: time, radioW: 0, &sums)
        }
        settleRadios()
    }

    /// Applies the radios' transitions before `time` without closing the books past the last
    /// of them (a battery watch ending, where nothing happens, must not split the books).
    mutating func applyRadioTransitions(before time: SimInstant) {
        var sums = RadioSums()
        while let (t, _) = radios.nextTransition(notAfter: time, through: false) {
            let radioW = radios.powerW
            radios.advance(to: t, through: true)
            closeStretch(to: t, radioW: radioW, &sums)
            settleRadios()
        }
    }

    /// Closes the books' stretch to `time` at the parts' constant power, with the radios at
    /// `radioW` (or their charges, when the battery's step may span their transitions), and
    /// tells the sink the charge.
    @inline(__always)
    mutating func closeStretch(to time: SimInstant, radioW: Double, _ sums: inout RadioSums) {
        guard time > books.accountedUntil else { return }
        let dt = time - books.accountedUntil
        let parts = books.bookParts(seconds: dt.seconds, dt)
        var stretch = RadioSums(
            background: parts.background + sums.background, scheduled: parts.scheduled + sums.scheduled,
            foreground: parts.foreground + sums.foreground, joules: sums.joules)
        sums = RadioSums()
        drainRadioCharges(into: &stretch)
        books.close(
            to: time, dt, background: stretch.background, scheduled: stretch.scheduled, foreground: stretch.foreground,
            radioW: radioW, radioJ: stretch.joules)
        sink.chargeObserved(books.battery.charge, at: time)
    }

    /// Takes the links' charges into the books: each task's radio energy, the use sums of
    /// `sums` and the radio components.
    @inline(__always)
    mutating func drainRadioCharges(into sums: inout RadioSums) {
        for r in radios.links.indices where !radios.links[r].charges.isEmpty {
            let active = radios.links[r].chargedActiveJ, tail = radios.links[r].chargedTailJ
            books.components.radioActiveJ += active
            books.components.radioTailJ += tail
            sums.joules += active + tail
            for k in radios.links[r].charges.indices {
                let c = radios.links[r].charges[k]
                switch c.owner {
                case .task(let i):
                    tasks[i].radioJ += c.joules
                    if c.tail { tasks[i].tailJ += c.joules }
                    sums.background += c.joules
                    if tasks[i].kind.isScheduled { sums.scheduled += c.joules }
                case .foreground:
                    sums.foreground += c.joules
                }
            }
            radios.links[r].clearCharges()
        }
    }

    /// Reports the tasks whose radio bursts are over and that were only waiting for that. Their
    /// charges must be in the books already: outside `account`, a link changed at the instant
    /// the books were closed has charged nothing since.
    @inline(__always)
    mutating func settleRadios() {
        for r in radios.links.indices where !radios.links[r].settled.isEmpty { reportSettled(r) }
    }

    /// The link's outbox is read in place and then emptied, so its storage is reused.
    mutating func reportSettled(_ r: Int) {
        assert(radios.links[r].charges.isEmpty, "a burst settled with charges not in the books")
        let n = radios.links[r].settled.count
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

    /// Works out the battery's next level after an event (`BatteryLevels.reschedule`).
    @inline(__always)
    mutating func rescheduleBattery(watching: Bool = true) {
        levels.reschedule(
            &books, radioW: radios.powerW, radioPeakW: radios.peakPowerW, radioTransition: radios.nextTransition, now: sim.now,
            watching: watching, sim: &sim)
    }

    // MARK: - Charger

    mutating func plugIn() {
        books.isCharging = true
        powerChangedAt = sim.now
        levels.prompted = 0
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
        books.holding = true
        optimizedRelease = sim.schedule(.power(.optimizedRelease), at: release, priority: PhoneEvent.worldPriority)
    }

    mutating func unplug() {
        books.isCharging = false
        powerChangedAt = sim.now
        books.holding = false
        if let h = optimizedRelease { sim.cancel(h) }
        optimizedRelease = nil
        sink.worldEvent(.unplug, at: sim.now)
        powerChanged()
    }

    // MARK: - Battery levels

    mutating func batteryReachedLevel() {
        levels.plan = nil
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
                for (k, l) in levels.promptLevels.enumerated() where charge <= l + 1e-9 { levels.prompted |= 1 << UInt64(k) }
                let accepted = streams.lowPower.bernoulli(setup.people.lowPowerAcceptShare)
                sink.worldEvent(.lowPowerPrompt(accepted: accepted), at: sim.now)
                if accepted { setLowPower(true) }
            }
        }
    }

    mutating func setLowPower(_ on: Bool) {
        books.lowPower = on
        sink.worldEvent(.lowPowerMode(on: on), at: sim.now)
    }

    mutating func shutDown() {
        books.isOn = false
        offSince = sim.now
        sink.phoneShutDown(at: sim.now)
        // Every app goes with the phone, and its running work with it.
        for app in apps.indices where apps[app].life.state.isRunning { terminate(app, cause: .shutdown) }
        // So do the transfers the system carries for apps that are not running: their data
        // goes with the radios.
        for i in running where tasks[i].status == .running { finish(TaskID(i), .killed, at: sim.now, suspendIfIdle: false) }
        person.frontApp = nil
        radios.powerOff()
        settleRadios()
        radios.replaceLinks()
    }

    mutating func boot() {
        books.isOn = true
        sink.phoneBooted(at: sim.now, offFor: sim.now - offSince!)
        offSince = nil
        if let r = radios.current {
            radios.links[r].setThroughput(upMbps: radios.connection.upMbps, downMbps: radios.connection.downMbps, at: sim.now)
        }
    }

    // MARK: - Bench load

    /// The bench load's step `index` begins; the next is scheduled if it begins before the horizon.
    mutating func changeLoad(_ index: Int) {
        guard let step = setup.load.step(index) else { return }
        books.benchW = step.powerW
        if let next = setup.load.step(index + 1), next.start < .after(setup.duration) {
            sim.schedule(.power(.load(index + 1)), at: next.start, priority: PhoneEvent.worldPriority)
        }
    }
}
