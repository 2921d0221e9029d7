import PhoneWorld
import SimEngine

/// Radio energy charged to one owner over one stretch of time.
struct RadioCharge {
    /// Who pays: the head transfer's owner while promoting or active, each user of the burst
    /// (an equal share) in the tail.
    fileprivate(set) var owner: TransferOwner
    fileprivate(set) var joules: Double
    /// Whether it is a share of the tail.
    fileprivate(set) var tail: Bool
}

/// One radio's state machine: idle -> promoting -> active -> tail stages -> idle
/// (docs/sources.md §6).
///
/// Transfers queue on the link and are served one at a time at the link's full throughput
/// (first come, first served), which gives the same total busy time as sharing the link and
/// keeps every phase end an exact instant. Any transfer that arrives during the tail starts
/// at once with no promotion and ends that tail; any that arrives during promotion or
/// activity joins the queue. So closely spaced or overlapping use shares one promotion, one
/// active period and one tail, the effect TailEnder (IMC 2009) exploits.
///
/// The link keeps its own books: `advance(to:)` moves through every transition due by then
/// and charges the energy of each stretch at constant power to its owners (`charges`), so its
/// transitions need no events of their own. The head's completion is known (`served`): it is
/// worked out when a transfer becomes the head, and again when the link is changed (a new
/// throughput, a cancellation); the others' are not needed until they are the head, so a
/// change costs the same however long the queue. `changes` counts those changes and every new
/// head, so that the driver updates the one task whose end the link decides only when it moved.
///
/// Written for the hot loop: the powers of every phase are worked out when the throughput
/// changes, not at each transition, and the queue and the outboxes are buffers with a start
/// or a count rather than lists that shift or shrink (removals from short arrays took the
/// standard library's generic paths, several times the work).
struct RadioLink {
    /// Where the radio is in its cycle.
    enum State: Equatable {
        case idle
        case promoting(until: SimInstant)
        /// Serving the head transfer's current direction until `phaseEnd`.
        case active(phaseEnd: SimInstant)
        case tail(stage: Int, until: SimInstant)
    }

    let profile: RadioProfile
    /// Each tail stage's power, the highest of them, and the promotion's.
    fileprivate let tailW: [Double]
    fileprivate let maxTailW: Double
    private(set) var state = State.idle {
        didSet { if stateLog != nil { logState() } }
    }
    /// Each change of `activity`, with its time (the link has always charged up to the
    /// change before it makes it); `nil` unless a sink asked for the radio's states.
    var stateLog: [(at: SimInstant, activity: RadioActivity)]?
    /// Transfers waiting or being served, `buffer[head..<end]`, and when the head finishes at
    /// the current throughput. The buffer only grows: an emptied queue starts again at 0.
    private(set) var buffer: [Transfer] = []
    private(set) var headDone = SimInstant.start
    private(set) var head = 0
    private(set) var end = 0
    private(set) var promotions = 0
    /// Promotions a background task's transfer caused.
    private(set) var taskPromotions = 0
    /// Throughput in Mbit/s each way; zero means no connection.
    private(set) var upMbps: Double = 0
    private(set) var downMbps: Double = 0
    /// Active power each way at the current throughput.
    private(set) var upActiveW: Double = 0
    private(set) var downActiveW: Double = 0
    /// The distinct owners this burst (from leaving idle or the tail, to the end of the tail
    /// that follows) has served: they share its tail.
    private(set) var users: [TransferOwner] = []
    /// Owners of bursts that are over, the first `settledCount` entries (the driver reads them,
    /// then `clearSettled()`).
    private(set) var settled: [TransferOwner] = []
    private(set) var settledCount = 0
    /// Energy charged since the driver last took it, the first `chargeCount` entries, and its
    /// sums: promotion and transfer, and tail.
    private(set) var charges: [RadioCharge] = []
    private(set) var chargeCount = 0
    private(set) var chargedActiveJ = 0.0
    private(set) var chargedTailJ = 0.0
    /// The instant up to which energy is charged.
    private(set) var chargedUntil = SimInstant.start

    /// Power drawn now, and who it is charged to: the head transfer's owner while promoting or
    /// active; in the tail `nil`, and it is split equally among `users`.
    private(set) var powerW: Double = 0
    private(set) var chargedTo: TransferOwner?
    /// When the current phase ends; `nil` while idle.
    private(set) var nextEvent: SimInstant?
    /// The most power the link can draw before anything is enqueued, cancelled or its
    /// throughput changes: its current power while idle, otherwise the highest of its
    /// promotion, its active power either way and its tail stages.
    private(set) var peakPowerW: Double = 0

    /// An idle, disconnected link of `profile`.
    init(profile: RadioProfile) {
        self.profile = profile
        tailW = profile.tail.map(\.powerW)
        maxTailW = tailW.max() ?? 0
    }

    /// Whether the link has throughput both ways.
    var isConnected: Bool { upMbps > 0 && downMbps > 0 }
    /// Whether the radio is out of idle: a transfer enqueued now needs no promotion of its own.
    var isAwake: Bool { state != .idle }
    /// Transfers queued or being served.
    var queueCount: Int { end - head }
    /// The transfers queued or being served, head first.
    var queue: ArraySlice<Transfer> { buffer[head..<end] }
    /// Counts the changes to the queue, its head or its completions: a driver that saw the
    /// same count has nothing to update.
    var changes = 0
    /// The transfer being served (or promoted for), and when it finishes.
    var served: (owner: TransferOwner, completion: SimInstant)? { head < end ? (buffer[head].owner, headDone) : nil }

    /// Adds a transfer at the end of the queue.
    @inline(__always)
    fileprivate mutating func push(_ t: Transfer) {
        if end < buffer.count { buffer[end] = t } else { buffer.append(t) }
        end += 1
    }

    /// Empties the outboxes once the driver has read them.
    mutating func clearSettled() { settledCount = 0 }
    mutating func clearCharges() {
        chargeCount = 0
        chargedActiveJ = 0
        chargedTailJ = 0
    }

    /// Adds a transfer at `now`, waking the radio if it is idle or in its tail (an empty
    /// transfer is dropped). Call `advance(to: now)` first.
    mutating func enqueue(_ transfer: Transfer, at now: SimInstant) {
        precondition(isConnected, "a transfer on a link with no connection")
        charge(upTo: now)
        guard !transfer.isEmpty else { return }
        changes &+= 1
        defer { refresh() }
        switch state {
        case .idle:
            push(transfer)
            promotions += 1
            if case .task = transfer.owner { taskPromotions += 1 }
            state = .promoting(until: now + profile.promotion)
            if profile.promotion == .zero { startPhase(at: now) }
            headDone = headCompletion()
        case .tail:
            // A new burst: the tail so far was the last one's.
            endBurst()
            push(transfer)
            startPhase(at: now)
            headDone = headCompletion()
        case .promoting, .active:
            // Behind the others: the head's completion does not move.
            push(transfer)
        }
    }

    /// Moves through every transition due at or before `now`, charging the energy of each
    /// stretch, and calls `finished` with the owner of each transfer that completes, in order.
    mutating func advance(to now: SimInstant, finished: (TransferOwner) -> Void = { _ in }) {
        while let t = nextEvent, t <= now {
            charge(upTo: t)
            // The common transitions set what they change directly; the rest go through
            // `refresh`.
            switch state {
            case .idle: break
            case .promoting:
                startPhase(at: t)
                refresh()
            case .active:
                if buffer[head].upBits > 0 {
                    buffer[head].upBits = 0
                    let down = buffer[head].downBits
                    if down > 0 {
                        // The head's download follows its upload: same owner, new power.
                        let end = t + SimDuration(microsecondsRoundedUp: down / downMbps)
                        state = .active(phaseEnd: end)
                        nextEvent = end
                        powerW = downActiveW
                        continue
                    }
                } else {
                    buffer[head].downBits = 0
                }
                let owner = buffer[head].owner
                popHead()
                finished(owner)
                startPhase(at: t)
                // The next one from the instant this one finished: what it would have been
                // from the end of each before it.
                if head < end { headDone = headCompletion() }
                refresh()
            case .tail(let stage, _):
                if stage + 1 < tailW.count {
                    let end = t + profile.tail[stage + 1].duration
                    state = .tail(stage: stage + 1, until: end)
                    nextEvent = end
                    powerW = tailW[stage + 1]
                } else {
                    state = .idle
                    endBurst()
                    powerW = 0
                    nextEvent = nil
                    peakPowerW = 0
                }
            }
        }
        charge(upTo: now)
    }

    /// Takes the throughput of a new network state at `now` (after `advance(to: now)`). The
    /// head's remaining bits continue at the new rate; every completion moves.
    mutating func setThroughput(upMbps up: Double, downMbps down: Double, at now: SimInstant) {
        charge(upTo: now)
        changes &+= 1
        let active: Bool
        if case .active = state { active = true } else { active = false }
        if active { keepRemainingHeadBits(at: now) }
        upMbps = up
        downMbps = down
        upActiveW = profile.activePowerW(direction: .up, mbps: up)
        downActiveW = profile.activePowerW(direction: .down, mbps: down)
        if active { startPhase(at: now) }
        if head < end { headDone = headCompletion() }
        refresh()
    }

    /// Disconnects at `now`: returns the queued transfers with what is left of them, and
    /// leaves the radio in its tail if it was moving data (a promotion in progress is
    /// abandoned). Call `advance(to: now)` first.
    mutating func disconnect(at now: SimInstant) -> [Transfer] {
        charge(upTo: now)
        changes &+= 1
        if case .active = state { keepRemainingHeadBits(at: now) }
        let taken = Array(buffer[head..<end])
        clearQueue()
        switch state {
        case .active: enterTail(at: now)
        case .promoting:
            state = .idle
            endBurst()
        case .idle, .tail: break
        }
        upMbps = 0
        downMbps = 0
        upActiveW = 0
        downActiveW = 0
        refresh()
        return taken
    }

    /// Drops `owner`'s transfer at `now` (its task ended before the data did) and returns
    /// what was left of it, if it was queued here; the transfers behind it finish sooner.
    /// Call `advance(to: now)` first.
    @discardableResult
    mutating func cancel(_ owner: TransferOwner, at now: SimInstant) -> Transfer? {
        charge(upTo: now)
        guard let i = buffer[head..<end].firstIndex(where: { $0.owner == owner }) else { return nil }
        changes &+= 1
        let isHead = i == head
        if isHead, case .active = state { keepRemainingHeadBits(at: now) }
        let left = buffer[i]
        var k = i
        while k + 1 < end {
            buffer[k] = buffer[k + 1]
            k += 1
        }
        end -= 1
        if isHead {
            switch state {
            case .active: startPhase(at: now)
            case .promoting:
                if queueCount == 0 {
                    clearQueue()
                    state = .idle
                    endBurst()
                }
            case .idle, .tail: break
            }
        }
        if head < end { headDone = headCompletion() }
        refresh()
        return left
    }

    /// Shuts the radio off at once (the phone died): the burst, if any, is over. Call
    /// `advance(to:)` first.
    mutating func powerOff() {
        changes &+= 1
        clearQueue()
        state = .idle
        upMbps = 0
        downMbps = 0
        upActiveW = 0
        downActiveW = 0
        endBurst()
        refresh()
    }

    // MARK: - Phases

    /// Charges the energy from `chargedUntil` to `t` at the current power: to the head's
    /// owner, or in the tail an equal share to each user of the burst. No transition may come
    /// before `t` (`advance(to:)` applies them).
    @inline(__always)
    mutating func charge(upTo t: SimInstant) {
        guard t > chargedUntil else { return }
        assert(nextEvent.map { t <= $0 } ?? true, "charging past a radio transition")
        guard powerW > 0 else {
            chargedUntil = t
            return
        }
        let j = powerW * (t - chargedUntil).seconds
        chargedUntil = t
        guard j > 0 else { return }
        if let owner = chargedTo {
            chargedActiveJ += j
            appendCharge(RadioCharge(owner: owner, joules: j, tail: false))
        } else {
            assert(!users.isEmpty, "a radio tail with no burst before it")
            chargedTailJ += j
            let share = j / Double(users.count)
            for owner in users { appendCharge(RadioCharge(owner: owner, joules: share, tail: true)) }
        }
    }

    @inline(__always)
    fileprivate mutating func appendCharge(_ c: RadioCharge) {
        if chargeCount < charges.count { charges[chargeCount] = c } else { charges.append(c) }
        chargeCount += 1
    }

    /// Serves the head of the queue from `now`, or enters the tail when the queue is empty.
    fileprivate mutating func startPhase(at now: SimInstant) {
        while head < end, buffer[head].isEmpty { popHead() }
        guard head < end else {
            enterTail(at: now)
            return
        }
        let owner = buffer[head].owner
        if !users.contains(owner) { users.append(owner) }
        let up = buffer[head].upBits
        let (bits, mbps) = up > 0 ? (up, upMbps) : (buffer[head].downBits, downMbps)
        // Rounded up to the microsecond, so the phase never ends before its last bit.
        state = .active(phaseEnd: now + SimDuration(microsecondsRoundedUp: bits / mbps))
    }

    /// Where the radio is in its cycle, without the times.
    fileprivate var activity: RadioActivity {
        switch state {
        case .idle: .idle
        case .promoting: .promoting
        case .active: .active
        case .tail: .tail
        }
    }

    private mutating func logState() {
        let now = activity
        if stateLog!.last?.activity != now { stateLog!.append((chargedUntil, now)) }
    }

    /// Drops the head; an emptied queue starts its buffers afresh.
    @inline(__always)
    fileprivate mutating func popHead() {
        changes &+= 1
        head += 1
        if head == end { clearQueue() }
    }

    @inline(__always)
    fileprivate mutating func clearQueue() {
        head = 0
        end = 0
    }

    /// The time a whole transfer takes once it is the head: its upload, then its download.
    @inline(__always)
    fileprivate func duration(_ t: Transfer) -> SimDuration {
        var d = SimDuration.zero
        if t.upBits > 0 { d += SimDuration(microsecondsRoundedUp: t.upBits / upMbps) }
        if t.downBits > 0 { d += SimDuration(microsecondsRoundedUp: t.downBits / downMbps) }
        return d
    }

    /// When the head finishes, from its phase (or the promotion's end).
    mutating func headCompletion() -> SimInstant {
        switch state {
        case .promoting(let until):
            return until + duration(buffer[head])
        case .active(let end):
            let h = buffer[head]
            guard h.upBits > 0, h.downBits > 0 else { return end }
            return end + SimDuration(microsecondsRoundedUp: h.downBits / downMbps)
        case .idle, .tail:
            preconditionFailure("transfers queued on a link that serves none")
        }
    }

    /// Notes the head's bits of its current direction still to move at `now`.
    fileprivate mutating func keepRemainingHeadBits(at now: SimInstant) {
        guard case .active(let end) = state else { return }
        let up = buffer[head].upBits > 0
        let left = max(0, Double((end - now).microseconds) * (up ? upMbps : downMbps))
        if up { buffer[head].upBits = left } else { buffer[head].downBits = left }
    }

    /// After the last transfer of a burst: the tail, or idle if the radio has none.
    fileprivate mutating func enterTail(at now: SimInstant) {
        if tailW.isEmpty {
            state = .idle
            endBurst()
        } else {
            state = .tail(stage: 0, until: now + profile.tail[0].duration)
        }
    }

    /// The current burst is over: its users are settled.
    fileprivate mutating func endBurst() {
        for owner in users {
            if settledCount < settled.count { settled[settledCount] = owner } else { settled.append(owner) }
            settledCount += 1
        }
        if !users.isEmpty { users.removeAll(keepingCapacity: true) }
    }

    /// What is stored beside the state after it, the head or the throughput changed.
    @inline(__always)
    fileprivate mutating func refresh() {
        switch state {
        case .idle:
            powerW = 0
            chargedTo = nil
            nextEvent = nil
            peakPowerW = 0
            return
        case .promoting(let t):
            powerW = profile.promotionW
            chargedTo = buffer[head].owner
            nextEvent = t
        case .active(let t):
            powerW = buffer[head].upBits > 0 ? upActiveW : downActiveW
            chargedTo = buffer[head].owner
            nextEvent = t
        case .tail(let stage, let t):
            powerW = tailW[stage]
            chargedTo = nil
            nextEvent = t
        }
        peakPowerW = max(profile.promotionW, upActiveW, downActiveW, maxTailW)
    }
}
