import PhoneWorld
import SimEngine

/// What the system's gates read besides each request's fixed fields: while it is unchanged,
/// every request's gates give the same answer.
struct GateKey: Equatable {
    fileprivate var phone: UInt8
    fileprivate var appChanges: Int
}

/// The requests past their `earliestBeginDate`, what the gates and the policy made of them,
/// and the policy's timer: the state of the seam between the system and the policy.
struct Decisions {
    /// The policy's requested wake.
    fileprivate let timer: TimerID
    /// Requests past `earliestBegin`, in the order they became eligible.
    fileprivate var eligible: [EligibleTask] = []
    /// The requests a decision is shown when gates hold some: the open ones among
    /// `eligible[..<shownUpTo]`, in order. It grows by the requests added since, and is rebuilt
    /// only when a gate opened or closed before `shownUpTo` (at 500 apps, rebuilding it after
    /// every new request was 3% of a run).
    fileprivate var shown: [EligibleTask] = []
    fileprivate var shownUpTo = 0
    /// Advanced whenever anything the gates read changes (`gateKey`, as of `epochKey`): a
    /// request checked in the current epoch has the same answer now.
    fileprivate var epoch: UInt32 = 1
    fileprivate var epochKey: GateKey?
    /// The epoch in which a decision point last found every eligible request held by a gate,
    /// with none added since: until the epoch changes, the next one would too (0: none).
    fileprivate var allClosedEpoch: UInt32 = 0
    /// In this epoch: the requests from `firstUnchecked` on may not have had their gates
    /// checked (those before have), and how many checked ones a gate holds. A decision point
    /// checks only the new requests, not the dozens a gate holds all day (at 500 apps, that
    /// scan was a tenth of a run).
    fileprivate var firstUnchecked = 0
    fileprivate var closedCount = 0
    /// The requests a decision starts, in a buffer kept across decisions.
    fileprivate var starting: [TaskID] = []
    /// The reasons policies gave for holding requests, numbered in the order first heard: the
    /// first 15 are told apart, later ones count together as `other` (`HoldTimes.byRule` has
    /// 16 lanes).
    fileprivate(set) var reasonTokens: [String] = []
    /// The policy's `holdReasons`, and the number in `reasonTokens` of each (-1: not yet
    /// heard): each is looked up once (a lookup in `reasonTokens` compares strings).
    fileprivate var holdReasons: [String]?
    fileprivate var reasonRules: [Int8] = []

    init(timer: TimerID) { self.timer = timer }

    mutating func append(_ task: EligibleTask) {
        eligible.append(task)
        allClosedEpoch = 0
    }

    /// Removes request `id` from the eligible ones, if it is there.
    mutating func remove(_ id: TaskID) {
        if let k = eligible.firstIndex(where: { $0.id == id }) {
            if eligible[k].gatesCheckedAt == epoch, Self.isGateHeld(eligible[k]) { closedCount -= 1 }
            if k < shownUpTo {
                if Self.isShown(eligible[k]), let j = shown.firstIndex(where: { $0.id == id }) { shown.remove(at: j) }
                shownUpTo -= 1
            }
            eligible.removeQuickly(at: k)
            firstUnchecked = min(firstUnchecked, k)
        }
    }

    /// The gates of `eligible[k]` opened or closed: `shown` is rebuilt if it held it.
    fileprivate mutating func shownChanged(at k: Int) {
        if k < shownUpTo {
            shown.removeAllKeepingCapacity()
            shownUpTo = 0
        }
    }

    /// Brings `shown` up to date: the open requests among those added since.
    fileprivate mutating func extendShown() {
        // Most decisions come with no request added: the slice alone was 130 instructions.
        guard shownUpTo < eligible.count else { return }
        for task in eligible[shownUpTo...] where Self.isShown(task) { shown.append(task) }
        shownUpTo = eligible.count
    }

    /// Whether an eligible request is open to the policy: no gate holds it (after the gates
    /// were checked at this decision point).
    @inline(__always)
    fileprivate static func isShown(_ task: EligibleTask) -> Bool { task.heldBy == nil || task.heldBy == .policy }

    /// Whether a gate holds the request (not the policy).
    @inline(__always)
    fileprivate static func isGateHeld(_ task: EligibleTask) -> Bool { task.heldBy != nil && task.heldBy != .policy }
}

/// The gates every policy obeys and the policy's decisions (docs/sources.md §1-5).
extension PhoneSimulation {
    /// Whether the person is using the phone: an app in the foreground, or a call.
    @inline(__always)
    var inUse: Bool { person.inUse }

    /// The first gate that keeps this request from starting now, or `nil` when the system
    /// lets it start (docs/sources.md §1-5): the phone on, Low Power Mode off, Background App
    /// Refresh on (for the phone and the app, on Wi-Fi if it says so), the app in the
    /// switcher and not in the foreground; for processing, the phone idle and the request's
    /// power and network requirements met.
    @inline(__always)
    fileprivate func closedGate(_ task: EligibleTask) -> HoldReason? {
        guard books.isOn else { return .phoneOff }
        guard !books.lowPower else { return .lowPowerMode }
        guard model.apps[task.app].backgroundRefresh else { return .backgroundRefreshOff }
        switch setup.settings.backgroundAppRefresh {
        case .off: return .backgroundRefreshOff
        case .wifi: guard radios.connection.kind == .wifi else { return .wifiOnly }
        case .wifiAndCellular: break
        }
        let life = apps[task.app].life
        guard !life.swipedAway else { return .appSwipedAway }
        guard !life.state.isForeground else { return .appInForeground }
        guard task.kind == .processing else { return nil }
        if inUse { return .deviceInUse }
        if task.requiresExternalPower && !books.isCharging { return .noExternalPower }
        if task.requiresNetworkConnectivity && radios.connection.kind == .none { return .noNetwork }
        return nil
    }

    /// What the gates read besides each request's own fixed fields (`closedGate`): the
    /// phone's state in bits, and how many times an app entered or left the foreground or
    /// the swiped-away state.
    @inline(__always)
    fileprivate var gateKey: GateKey {
        var bits = UInt8(truncatingIfNeeded: radios.connection.kind.index)
        if books.isOn { bits |= 1 << 2 }
        if books.lowPower { bits |= 1 << 3 }
        if inUse { bits |= 1 << 4 }
        if books.isCharging { bits |= 1 << 5 }
        return GateKey(phone: bits, appChanges: apps.gateChanges)
    }

    @inline(__always)
    fileprivate static func isShown(_ task: EligibleTask) -> Bool { Decisions.isShown(task) }

    /// From now on, the request `decisions.eligible[k]` is held for `reason` (`nil`: no longer
    /// held), in its record and in the eligible list's copy.
    mutating func hold(eligible k: Int, _ reason: HoldReason?) {
        let id = decisions.eligible[k].id
        hold(id.rawValue, reason, at: sim.now)
        decisions.eligible[k].heldBy = reason
        if reason != .policy { decisions.eligible[k].policyRule = -1 }
    }

    /// From now on, task `i` is held for `reason` (`nil`: no longer held); the time since the
    /// last change goes to the previous reason, and a policy's hold ends its rule's stretch
    /// too. `at` is later than now only for the requests that never ran, ended at the horizon
    /// after the last event.
    mutating func hold(_ i: Int, _ reason: HoldReason?, at time: SimInstant) {
        if let previous = tasks[i].heldBy { tasks[i].hold.held.add(time - tasks[i].heldSince, to: previous) }
        if reason != .policy, tasks[i].policyRule >= 0 {
            tasks[i].hold.held.add(time - tasks[i].heldSince, toRule: Int(tasks[i].policyRule))
            tasks[i].hold.policyRule = -1
        }
        tasks[i].hold.heldBy = reason
        tasks[i].hold.heldSince = time
        // The policy's hold is told as `policy` until its rule is known (`holdByRule`), which
        // may come only at the policy's next decision.
        if sink.observesHolds { sink.taskHeld(TaskID(i), by: reason?.token, at: time) }
    }

    /// From now on, the request `decisions.eligible[k]`, held by the policy, is held by its
    /// rule numbered `rule`: the stretch of the previous rule, if another, ends now.
    fileprivate mutating func holdByRule(eligible k: Int, _ rule: Int8) {
        guard decisions.eligible[k].policyRule != rule else { return }
        let i = decisions.eligible[k].id.rawValue
        assert(tasks[i].heldBy == .policy, "a rule holds \(i), which the policy does not")
        // The stretch held so far goes to the policy and to its rule, and both start again:
        // the rules' times sum to the policy's.
        if tasks[i].policyRule >= 0 {
            tasks[i].hold.held.add(sim.now - tasks[i].heldSince, toRule: Int(tasks[i].policyRule))
        }
        tasks[i].hold.held.add(sim.now - tasks[i].heldSince, to: .policy)
        tasks[i].hold.heldSince = sim.now
        tasks[i].hold.policyRule = rule
        decisions.eligible[k].policyRule = rule
        // Until the caller says which of the policy's reasons named it.
        decisions.eligible[k].policyReason = -1
        if sink.observesHolds { sink.taskHeld(TaskID(i), by: decisions.reasonTokens[Int(rule)], at: sim.now) }
    }

    /// The number in `reasonTokens` of the policy's hold reason numbered `k`.
    @inline(__always)
    fileprivate mutating func reasonRule(_ k: Int) -> Int8 {
        if decisions.holdReasons == nil {
            decisions.holdReasons = policy.holdReasons
            decisions.reasonRules = Array(repeating: -1, count: policy.holdReasons.count)
        }
        require(
            decisions.reasonRules.indices.contains(k),
            "policy \(policy.name) held a request for reason number \(k); it declares \(decisions.reasonRules.count) holdReasons")
        if decisions.reasonRules[k] < 0 { decisions.reasonRules[k] = policyRule(decisions.holdReasons![k]) }
        return decisions.reasonRules[k]
    }

    /// The number of a policy's reason (`nil`: the policy's name), as a run first hears
    /// them; after 15 distinct ones, `other`'s.
    mutating func policyRule(_ reason: String?) -> Int8 {
        let token = reason ?? policy.name
        if let k = decisions.reasonTokens.firstIndex(of: token) { return Int8(k) }
        if decisions.reasonTokens.count < 15 {
            decisions.reasonTokens.append(token)
            return Int8(decisions.reasonTokens.count - 1)
        }
        if decisions.reasonTokens.count == 15 { decisions.reasonTokens.append("other") }
        return 15
    }

    /// What the policy may observe now.
    fileprivate mutating func deviceState() -> DeviceState {
        var state = DeviceState(
            now: sim.now, charge: books.battery.charge, isCharging: books.isCharging,
            network: radios.connection.kind, inUse: inUse, inCall: person.inCall, lowPowerMode: books.lowPower)
        state.networkQuality = radios.quality
        state.radioAwake = radios.currentIsAwake
        if !state.inUse { state.lastInUse = person.lastInUse }
        state.powerChangedAt = power.powerChangedAt
        state.usage = person.usage
        return state
    }

    /// A decision point: each eligible request's gates, then the policy's choice among the
    /// open ones, which start at once.
    mutating func consultPolicy() {
        guard !decisions.eligible.isEmpty else { return }
        // Each request's gates, noted for its hold times. A request no gate holds is shown to
        // the policy; one the policy held last time stays held by it until the policy starts
        // it or a gate closes (hold times are whole microseconds, so not splitting the hold
        // at every decision changes nothing). Most of the time every request passes, and
        // `eligible` itself is shown; otherwise the open ones, in a buffer kept across calls
        // and rebuilt only when a gate opened or closed or the eligible requests changed.
        //
        // A request whose gates were checked since anything they read last changed (the same
        // epoch) keeps its answer, which its hold already records: a gate's reason, or none or
        // the policy's when open. Requests waiting for the charger sit in the list all day.
        let key = gateKey
        if key != decisions.epochKey {
            decisions.epochKey = key
            decisions.epoch &+= 1
            decisions.firstUnchecked = 0
            decisions.closedCount = 0
        }
        let epoch = decisions.epoch
        // Requests waiting all day for the charger are checked again only when a gate may have
        // opened or a request came.
        if decisions.allClosedEpoch == epoch { return }
        #if DEBUG
        for task in decisions.eligible[..<decisions.firstUnchecked] {
            assert(task.gatesCheckedAt == epoch, "a request before firstUnchecked was not checked")
            assert(closedGate(task) == (task.heldBy == .policy ? nil : task.heldBy), "a gate's answer changed within its epoch")
        }
        #endif
        for k in decisions.firstUnchecked..<decisions.eligible.count {
            let task = decisions.eligible[k]
            if task.gatesCheckedAt == epoch { continue }
            decisions.eligible[k].gatesCheckedAt = epoch
            let gate = closedGate(task)
            let current = task.heldBy
            assert(current == tasks[task.id.rawValue].heldBy, "the eligible list's copy of a hold differs from the task's")
            if gate != current && !(gate == nil && current == .policy) {
                hold(eligible: k, gate)
                if Self.isShown(task) != (gate == nil) { decisions.shownChanged(at: k) }
            }
            if gate != nil { decisions.closedCount += 1 }
        }
        decisions.firstUnchecked = decisions.eligible.count
        let closed = decisions.closedCount
        assert(closed == decisions.eligible.filter { $0.gatesCheckedAt == epoch && Decisions.isGateHeld($0) }.count, "the gates' count drifted")
        guard closed < decisions.eligible.count else {
            decisions.allClosedEpoch = epoch
            return
        }
        bringBooks()
        let state = deviceState()
        let decision: PolicyDecision
        if closed == 0 {
            decision = policy.decide(state, eligible: decisions.eligible)
        } else {
            decisions.extendShown()
            // Debug builds (the tests) check the kept list against a fresh one at every decision.
            assert(
                decisions.shown.map(\.id) == decisions.eligible.filter { Self.isShown($0) }.map(\.id),
                "the requests shown are not the open ones")
            decision = policy.decide(state, eligible: decisions.shown)
        }
        apply(decision, closed: closed)
    }

    /// Starts what the policy chose, notes why it held the rest, and sets its timer.
    fileprivate mutating func apply(_ decision: PolicyDecision, closed: Int) {
        decisions.starting.removeAllKeepingCapacity()
        switch decision.start {
        case .none: break
        case .all:
            for task in decisions.eligible where Self.isShown(task) { decisions.starting.append(task.id) }
        case .some(let chosen):
            for id in chosen {
                require(
                    decisions.eligible.contains { $0.id == id && Self.isShown($0) },
                    "policy \(policy.name) chose \(id), which it was not shown")
            }
            decisions.starting.append(contentsOf: chosen)
        }
        if decisions.starting.count < decisions.eligible.count - closed {
            var rule: Int8?
            // Holds usually come in the order the requests were shown, a subsequence of
            // `eligible`: matched with a cursor.
            var next = 0
            for k in decisions.eligible.indices where Self.isShown(decisions.eligible[k]) && !decisions.starting.contains(decisions.eligible[k].id) {
                if decisions.eligible[k].heldBy == nil { hold(eligible: k, .policy) }
                let id = decisions.eligible[k].id
                var named: Int?
                if next < decision.holds.count, decision.holds[next].id == id {
                    named = decision.holds[next].reason
                    next += 1
                } else if !decision.holds.isEmpty {
                    named = decision.holds.first { $0.id == id }?.reason
                }
                if let named {
                    // Held for the rule the policy named the same at the last decision:
                    // nothing changes (most holds, at most decisions).
                    if decisions.eligible[k].policyReason == named, decisions.eligible[k].policyRule >= 0 { continue }
                    let numbered = reasonRule(named)
                    if decisions.eligible[k].policyRule != numbered { holdByRule(eligible: k, numbered) }
                    decisions.eligible[k].policyReason = Int32(exactly: named) ?? -1
                } else {
                    if rule == nil { rule = policyRule(decision.reason) }
                    if decisions.eligible[k].policyRule != rule! { holdByRule(eligible: k, rule!) }
                }
            }
        }
        if !decisions.starting.isEmpty {
            let ids = decisions.starting
            // `shown` was whole when gates held some requests (the policy saw it): the started
            // ones leave it too. Otherwise it is rebuilt when next needed.
            var shownWhole = closed > 0
            if ids.count == decisions.eligible.count {
                decisions.eligible.removeAllKeepingCapacity()
                decisions.shown.removeAllKeepingCapacity()
                shownWhole = true
            } else if case .all = decision.start {
                // Every open request starts: those a gate holds stay, in their order.
                decisions.eligible.removeAll { Self.isShown($0) }
                decisions.shown.removeAllKeepingCapacity()
                shownWhole = true
            } else {
                decisions.eligible.removeAll { ids.contains($0.id) }
                if shownWhole { decisions.shown.removeAll { ids.contains($0.id) } }
            }
            // What is left was checked at this decision point; what the starts add comes after.
            decisions.firstUnchecked = decisions.eligible.count
            if shownWhole {
                decisions.shownUpTo = decisions.eligible.count
            } else {
                decisions.shown.removeAllKeepingCapacity()
                decisions.shownUpTo = 0
            }
            for limit in decision.timeLimits {
                require(ids.contains(limit.id), "policy \(policy.name) limited \(limit.id), which it did not start")
                require(limit.limit > .zero, "policy \(policy.name) limited \(limit.id) to \(limit.limit)")
            }
            for id in ids {
                start(id, timeLimit: decision.timeLimits.isEmpty ? nil : decision.timeLimits.first { $0.id == id }?.limit)
            }
        }
        if let at = decision.reconsiderAt {
            // Strictly later: a policy woken at the instant it was asked could loop there forever.
            require(at > sim.now, "policy \(policy.name) asked to be woken at \(at), which is not after now (\(sim.now))")
            sim.setTimer(decisions.timer, .policyWake, at: at, priority: PhoneEvent.policyPriority)
        } else {
            sim.cancelTimer(decisions.timer)
        }
    }
}

/// What held an eligible task: by what since when, the time held by each reason, and while
/// the policy holds it, its rule's number in `Decisions.reasonTokens` (-1: none). Written only
/// here.
struct Holding {
    fileprivate(set) var held = HoldTimes()
    fileprivate(set) var heldSince = SimInstant.start
    fileprivate(set) var heldBy: HoldReason?
    fileprivate(set) var policyRule: Int8 = -1
}
