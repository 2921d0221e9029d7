import SimEngine

/// Radio energy charged to one owner over one stretch of time.
public struct RadioCharge: Equatable, Sendable {
    /// Who pays: the head transfer's owner while promoting or active, each user of the burst
    /// (an equal share) in the tail.
    public var owner: TransferOwner
    /// The energy, in joules.
    public var joules: Double
    /// Whether it is a share of the tail.
    public var tail: Bool
}

/// One radio's state machine: idle -> promoting -> active -> tail stages -> idle.
///
/// Transfers queue on the link and are served one at a time at the link's full throughput
/// (first come, first served), which gives the same total busy time as sharing the link and
/// keeps every phase end an exact instant. Any transfer that arrives during the tail starts
/// at once with no promotion and ends that tail; any that arrives during promotion or
/// activity joins the queue. So closely spaced or overlapping use shares one promotion, one
/// active period and one tail, the effect TailEnder (IMC 2009) exploits (docs/sources.md §6).
///
/// The link keeps its own books: `advance(to:)` moves through every transition due by then
/// and charges the energy of each stretch at constant power to its owners (`charges`, taken
/// with `takeCharges()`), so its transitions need no events of their own. Every queued
/// transfer's completion is known when it is enqueued (`completions`), and moves only when
/// the link is changed: a new throughput, a cancellation, a disconnection.
public struct RadioLink: Sendable {
    /// Where the radio is in its cycle.
    public enum State: Equatable, Sendable {
        case idle
        case promoting(until: SimInstant)
        /// Serving the head transfer's current direction until `phaseEnd`.
        case active(phaseEnd: SimInstant)
        case tail(stage: Int, until: SimInstant)
    }

    /// The radio technology's costs.
    public let profile: RadioProfile
    /// Where the radio is now.
    public private(set) var state: State = .idle
    /// Transfers waiting or being served, head first.
    public private(set) var queue: [Transfer] = []
    /// When each queued transfer finishes at the current throughput, in queue order.
    public private(set) var completions: [SimInstant] = []
    /// Promotions from idle so far.
    public private(set) var promotions = 0
    /// Promotions caused by a background task's transfer.
    public private(set) var taskPromotions = 0
    /// Uplink throughput in Mbit/s; zero in both directions means no connection.
    public private(set) var upMbps: Double = 0
    /// Downlink throughput in Mbit/s.
    public private(set) var downMbps: Double = 0
    /// The distinct owners whose transfers this burst (from leaving idle or the tail, to the
    /// end of the tail that follows) has served: they share its tail.
    public private(set) var users: [TransferOwner] = []
    /// Owners of bursts that are over (their tail ran out or was cut short by a new burst):
    /// no more radio energy will be charged to them for those bursts. The driver takes them
    /// by reading `settled`, then `clearSettled()`.
    public private(set) var settled: [TransferOwner] = []
    /// Energy charged since the driver last took it, in the order it was spent, and its sums:
    /// promotion and transfer, and tail.
    public private(set) var charges: [RadioCharge] = []
    public private(set) var chargedActiveJ = 0.0
    public private(set) var chargedTailJ = 0.0
    /// The instant up to which energy is charged.
    public private(set) var chargedUntil = SimInstant.start

    // Stored, not computed: the simulation reads these at every event from another module,
    // where a computed property of a link copied the whole link.

    /// Power drawn now.
    public private(set) var powerW: Double = 0
    /// Who the current power is charged to: the head transfer's owner while promoting or
    /// active; in the tail, `nil`, and the power is split equally among `users`.
    public private(set) var chargedTo: TransferOwner?
    /// When the current phase ends; `nil` while idle.
    public private(set) var nextEvent: SimInstant?
    /// The most power the link can draw before anything is enqueued, cancelled or its
    /// throughput changes: its current power while idle, otherwise the highest of its
    /// promotion, its active power in either direction at the current throughput, and its
    /// tail stages. Between such changes its power moves only through its own transitions.
    public private(set) var peakPowerW: Double = 0

    /// An idle, disconnected link of `profile`.
    public init(profile: RadioProfile) { self.profile = profile }

    /// Whether the link has throughput both ways.
    public var isConnected: Bool { upMbps > 0 && downMbps > 0 }

    /// Whether the radio is out of idle (promoting, active or in its tail): a transfer
    /// enqueued now needs no promotion of its own.
    public var isAwake: Bool { state != .idle }

    /// Direction the head transfer is moving now.
    var headDirection: TransferDirection { queue[0].upBits > 0 ? .up : .down }

    /// Empties the outbox of settled owners, once the driver has read it.
    public mutating func clearSettled() { settled.removeAllKeepingCapacity() }

    /// Empties the outbox of charges, once the driver has read it.
    public mutating func clearCharges() {
        charges.removeAllKeepingCapacity()
        chargedActiveJ = 0
        chargedTailJ = 0
    }

    /// Adds a transfer at `now`, waking the radio if it is idle or in its tail; returns when
    /// it will finish at the current throughput (`nil` for an empty transfer, which is
    /// dropped). Call `advance(to: now)` first.
    @discardableResult
    public mutating func enqueue(_ transfer: Transfer, at now: SimInstant) -> SimInstant? {
        defer { refresh() }
        precondition(isConnected, "a transfer on a link with no connection")
        charge(upTo: now)
        guard !transfer.isEmpty else { return nil }
        queue.append(transfer)
        switch state {
        case .idle:
            promotions += 1
            if case .task = transfer.owner { taskPromotions += 1 }
            state = .promoting(until: now + profile.promotion)
            if profile.promotion == .zero { startPhase(at: now) }
        case .tail:
            // A new burst: the tail so far was the last one's.
            endBurst()
            startPhase(at: now)
        case .promoting, .active:
            // Behind the others: their completions do not move.
            let end = completions.last! + Self.duration(transfer, upMbps: upMbps, downMbps: downMbps)
            completions.append(end)
            return end
        }
        computeCompletions()
        return completions.last
    }

    /// Moves through every transition due at or before `now`, charging the energy of each
    /// stretch, and calls `finished` with the owner of each transfer that completes, in order.
    /// (A callback, not a returned array, so the hot loop does not allocate.)
    public mutating func advance(to now: SimInstant, finished: (TransferOwner) -> Void = { _ in }) {
        while let t = nextEvent, t <= now {
            charge(upTo: t)
            switch state {
            case .idle: break
            case .promoting:
                startPhase(at: t)
            case .active:
                if headDirection == .up { queue[0].upBits = 0 } else { queue[0].downBits = 0 }
                if queue[0].isEmpty {
                    completions.removeFirstQuickly()
                    finished(queue.removeFirstQuickly().owner)
                }
                startPhase(at: t)
            case .tail(let stage, _):
                if stage + 1 < profile.tail.count {
                    state = .tail(stage: stage + 1, until: t + profile.tail[stage + 1].duration)
                } else {
                    state = .idle
                    endBurst()
                }
            }
            refresh()
        }
        charge(upTo: now)
    }

    /// Takes the throughput of a new network state at `now` (after `advance(to: now)`). The
    /// head's remaining bits continue at the new rate; every completion moves.
    public mutating func setThroughput(upMbps up: Double, downMbps down: Double, at now: SimInstant) {
        defer { refresh() }
        charge(upTo: now)
        if case .active = state {
            let left = remainingHeadBits(at: now)
            if headDirection == .up { queue[0].upBits = left } else { queue[0].downBits = left }
            upMbps = up
            downMbps = down
            startPhase(at: now)
        } else {
            upMbps = up
            downMbps = down
        }
        computeCompletions()
    }

    /// Disconnects at `now`: returns the queued transfers with what is left of them, and
    /// leaves the radio in its tail if it was moving data (a promotion in progress is
    /// abandoned). Call `advance(to: now)` first.
    public mutating func disconnect(at now: SimInstant) -> [Transfer] {
        defer { refresh() }
        charge(upTo: now)
        if case .active = state {
            let left = remainingHeadBits(at: now)
            if headDirection == .up { queue[0].upBits = left } else { queue[0].downBits = left }
        }
        let taken = queue
        queue.removeAll()
        completions.removeAll()
        switch state {
        case .active: enterTail(at: now)
        case .promoting:
            state = .idle
            endBurst()
        case .idle, .tail: break
        }
        upMbps = 0
        downMbps = 0
        return taken
    }

    /// Drops `owner`'s transfer at `now` (its task ended before the data did) and returns
    /// what was left of it, if it was queued here; the transfers behind it finish sooner.
    /// Call `advance(to: now)` first.
    @discardableResult
    public mutating func cancel(_ owner: TransferOwner, at now: SimInstant) -> Transfer? {
        defer { refresh() }
        charge(upTo: now)
        guard let i = queue.firstIndex(where: { $0.owner == owner }) else { return nil }
        if i == 0, case .active = state {
            let left = remainingHeadBits(at: now)
            if headDirection == .up { queue[0].upBits = left } else { queue[0].downBits = left }
        }
        let left = queue.removeQuickly(at: i)
        if i == 0 {
            switch state {
            case .active: startPhase(at: now)
            case .promoting:
                if queue.isEmpty {
                    state = .idle
                    endBurst()
                }
            case .idle, .tail: break
            }
        }
        computeCompletions()
        return left
    }

    /// Shuts the radio off at once (the phone died): the burst, if any, is over. Call
    /// `advance(to:)` first.
    public mutating func powerOff() {
        defer { refresh() }
        queue.removeAll()
        completions.removeAll()
        state = .idle
        upMbps = 0
        downMbps = 0
        endBurst()
    }

    // MARK: - Phases

    /// Charges the energy from `chargedUntil` to `t` at the current power: to the head's
    /// owner, or in the tail an equal share to each user of the burst. No transition may come
    /// before `t` (`advance(to:)` applies them).
    public mutating func charge(upTo t: SimInstant) {
        guard t > chargedUntil else { return }
        assert(nextEvent.map { t <= $0 } ?? true, "charging past a radio transition")
        let j = powerW * (t - chargedUntil).seconds
        chargedUntil = t
        guard j > 0 else { return }
        if let owner = chargedTo {
            chargedActiveJ += j
            charges.append(RadioCharge(owner: owner, joules: j, tail: false))
        } else {
            assert(!users.isEmpty, "a radio tail with no burst before it")
            chargedTailJ += j
            let share = j / Double(users.count)
            for owner in users { charges.append(RadioCharge(owner: owner, joules: share, tail: true)) }
        }
    }

    /// Serves the head of the queue from `now`, or enters the tail when the queue is empty.
    mutating func startPhase(at now: SimInstant) {
        while let head = queue.first, head.isEmpty {
            queue.removeFirstQuickly()
            completions.removeFirstQuickly()
        }
        guard let head = queue.first else {
            enterTail(at: now)
            return
        }
        if !users.contains(head.owner) { users.append(head.owner) }
        let (bits, mbps) = head.upBits > 0 ? (head.upBits, upMbps) : (head.downBits, downMbps)
        // Rounded up to the microsecond, so the phase never ends before its last bit.
        state = .active(phaseEnd: now + SimDuration(microsecondsRoundedUp: bits / mbps))
    }

    /// The time a whole transfer takes once it is the head: its upload, then its download.
    @inline(__always)
    static func duration(_ t: Transfer, upMbps: Double, downMbps: Double) -> SimDuration {
        var d = SimDuration.zero
        if t.upBits > 0 { d += SimDuration(microsecondsRoundedUp: t.upBits / upMbps) }
        if t.downBits > 0 { d += SimDuration(microsecondsRoundedUp: t.downBits / downMbps) }
        return d
    }

    /// Works out every queued transfer's completion from the state: the head's from its
    /// phase (or the promotion's end), each of the others from the one before it.
    mutating func computeCompletions() {
        completions.removeAllKeepingCapacity()
        guard let head = queue.first else { return }
        let up = upMbps, down = downMbps
        var t: SimInstant
        switch state {
        case .promoting(let until):
            t = until + Self.duration(head, upMbps: up, downMbps: down)
        case .active(let end):
            t = end
            if head.upBits > 0, head.downBits > 0 { t += SimDuration(microsecondsRoundedUp: head.downBits / down) }
        case .idle, .tail:
            preconditionFailure("transfers queued on a link that serves none")
        }
        completions.append(t)
        var k = 1
        while k < queue.count {
            t += Self.duration(queue[k], upMbps: up, downMbps: down)
            completions.append(t)
            k += 1
        }
    }

    /// Bits of the head's current direction still to move at `now`.
    func remainingHeadBits(at now: SimInstant) -> Double {
        guard case .active(let end) = state else { return queue.first.map { $0.upBits > 0 ? $0.upBits : $0.downBits } ?? 0 }
        let mbps = headDirection == .up ? upMbps : downMbps
        return max(0, Double((end - now).microseconds) * mbps)
    }

    /// After the last transfer of a burst: the tail, or idle if the radio has none.
    mutating func enterTail(at now: SimInstant) {
        if profile.tail.isEmpty {
            state = .idle
            endBurst()
        } else {
            state = .tail(stage: 0, until: now + profile.tail[0].duration)
        }
    }

    /// The current burst is over: its users are settled.
    mutating func endBurst() {
        settled.append(contentsOf: users)
        users.removeAllKeepingCapacity()
    }

    /// Recomputes what is stored beside the state after it, the head transfer or the
    /// throughput changed; every public mutating method ends with it.
    mutating func refresh() {
        switch state {
        case .idle: powerW = 0
        case .promoting: powerW = profile.promotionW
        case .active:
            let direction = headDirection
            powerW = profile.activePowerW(direction: direction, mbps: direction == .up ? upMbps : downMbps)
        case .tail(let stage, _): powerW = profile.tail[stage].powerW
        }
        switch state {
        case .promoting, .active: chargedTo = queue.first?.owner
        case .idle, .tail: chargedTo = nil
        }
        switch state {
        case .idle: nextEvent = nil
        case .promoting(let t), .active(let t), .tail(_, let t): nextEvent = t
        }
        if state == .idle {
            peakPowerW = powerW
        } else {
            var peak = max(powerW, profile.promotionW)
            peak = max(peak, profile.activePowerW(direction: .up, mbps: upMbps), profile.activePowerW(direction: .down, mbps: downMbps))
            for stage in profile.tail { peak = max(peak, stage.powerW) }
            peakPowerW = peak
        }
    }
}
