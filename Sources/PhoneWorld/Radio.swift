import SimEngine

/// One stage of a radio's tail: after the last transfer the radio stays in a high-power state
/// for a while before it drops back to idle, in case more data comes.
public struct TailStage: Equatable, Sendable {
    /// How long the stage lasts if no transfer comes.
    public var duration: SimDuration
    /// Power during the stage, in watts.
    public var powerW: Double
    /// A stage of `duration` at `powerW`.
    public init(duration: SimDuration, powerW: Double) {
        self.duration = duration
        self.powerW = powerW
    }
}

/// How one radio technology spends energy: a promotion from idle, an active state whose power
/// grows with throughput, and a tail of one or more stages (docs/sources.md §6).
///
/// The numbers live in `models/radios/*.yaml` with their sources (LTE and 3G from the AT&T
/// ARO tool's configuration files, Huang et al. MobiSys 2012; Wi-Fi from the same tool).
/// Idle power is not modelled here: it is part of the phone's standby baseline, which was
/// measured with the radios idle.
public struct RadioProfile: Equatable, Sendable {
    /// The profile's name (`lte`, `wifi`, ...).
    public var name: String
    /// Idle to active: signalling before the first byte moves.
    public var promotion: SimDuration = .zero
    /// Power during the promotion, in watts.
    public var promotionW: Double = 0
    /// Power while transferring, before the throughput-dependent part.
    public var activeW: Double = 0
    /// Extra power per Mbit/s of uplink throughput in use.
    public var upWPerMbps: Double = 0
    /// Extra power per Mbit/s of downlink throughput in use.
    public var downWPerMbps: Double = 0
    /// Stages after the last transfer, in order; then idle.
    public var tail: [TailStage] = []

    /// A radio named `name` that costs nothing until its fields are set.
    public init(name: String) { self.name = name }

    /// A radio that costs nothing: the default until a scenario names real profiles.
    public static let free = RadioProfile(name: "free")

    /// Active power while moving data in one direction at `mbps`.
    public func activePowerW(direction: TransferDirection, mbps: Double) -> Double {
        activeW + mbps * (direction == .up ? upWPerMbps : downWPerMbps)
    }

    /// Energy of the whole tail, in joules.
    public var tailEnergyJ: Double { tail.reduce(0) { $0 + $1.duration.seconds * $1.powerW } }
}

/// Which way bytes move.
public enum TransferDirection: Sendable { case up, down }

/// Who a transfer is for; the radio's promotion and active energy is charged to its owner,
/// and the tail after it is split among the owners served in that burst.
public enum TransferOwner: Hashable, Sendable {
    /// A background task, by its index in the run.
    case task(Int)
    /// The app the person is using.
    case foreground
}

/// Bytes to move, up first (the request), then down (the response).
public struct Transfer: Equatable, Sendable {
    /// Who the transfer is for.
    public var owner: TransferOwner
    /// Bits to send.
    public var upBits: Double
    /// Bits to receive.
    public var downBits: Double
    /// A transfer for `owner` of the given bytes each way.
    public init(owner: TransferOwner, upBytes: Double, downBytes: Double) {
        self.owner = owner
        self.upBits = upBytes * 8
        self.downBits = downBytes * 8
    }
    /// Whether nothing is left to move.
    public var isEmpty: Bool { upBits <= 0 && downBits <= 0 }
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
/// The link is driven by its owner: call `advance(to:)` at the instant `nextEvent` names
/// (and before any change), which moves through every transition due by then and returns
/// the transfers that finished. Power is constant between those instants.
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
    /// Promotions from idle so far.
    public private(set) var promotions = 0
    /// Promotions caused by a background task's transfer.
    public private(set) var taskPromotions = 0
    /// Uplink throughput in Mbit/s; zero in both directions means no connection.
    public private(set) var upMbps: Double = 0
    /// Downlink throughput in Mbit/s.
    public private(set) var downMbps: Double = 0
    /// When the current active phase started, and the head's bits in that direction then.
    var phaseStart = SimInstant.start
    /// The distinct owners whose transfers this burst (from leaving idle or the tail, to the
    /// end of the tail that follows) has served: they share its tail.
    public private(set) var users: [TransferOwner] = []
    /// Owners of bursts that are over (their tail ran out or was cut short by a new burst):
    /// no more radio energy will be charged to them for those bursts. The driver takes them
    /// by reading `settled`, then `clearSettled()`.
    public private(set) var settled: [TransferOwner] = []

    /// An idle, disconnected link of `profile`.
    public init(profile: RadioProfile) { self.profile = profile }

    /// Whether the link has throughput both ways.
    public var isConnected: Bool { upMbps > 0 && downMbps > 0 }

    /// Whether the radio is out of idle (promoting, active or in its tail): a transfer
    /// enqueued now needs no promotion of its own.
    public var isAwake: Bool { state != .idle }

    /// Direction the head transfer is moving now.
    var headDirection: TransferDirection { queue[0].upBits > 0 ? .up : .down }

    /// Power drawn now. Stored, not computed: the simulation reads it several times per event
    /// (energy books, load, battery), and computing it from `profile` cost 5% of a run.
    public private(set) var powerW: Double = 0

    /// Recomputes `powerW` (and what is stored beside it) after the state, the head transfer or
    /// the throughput changed; every public mutating method ends with it.
    mutating func refreshPower() {
        defer {
            nextEvent = nextTransition
            nextCompletion = headCompletion
            peakPowerW = peakPower
        }
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
    }

    /// Who the current power is charged to: the head transfer's owner while promoting or
    /// active; in the tail, `nil`, and the power is split equally among `users`. Stored with
    /// the power: the energy books read it at every event, and a computed property of a link
    /// in an array, called from another module, copied the whole link (160 bytes) each time.
    public private(set) var chargedTo: TransferOwner?

    /// Empties the outbox of settled owners, once the driver has read it.
    public mutating func clearSettled() { settled.removeAllKeepingCapacity() }

    /// The current burst is over: its users are settled.
    mutating func endBurst() {
        settled.append(contentsOf: users)
        users.removeAllKeepingCapacity()
    }

    /// When the current phase ends; `nil` while idle. Stored, like `powerW`: read from
    /// another module at every event, a computed property copied the whole link.
    public private(set) var nextEvent: SimInstant?

    var nextTransition: SimInstant? {
        switch state {
        case .idle: nil
        case .promoting(let t), .active(let t), .tail(_, let t): t
        }
    }

    /// When the head transfer finishes, at the current throughput: the instant at which
    /// `advance(to:)` reports it; `nil` with nothing queued. Only a change to the link (a new
    /// throughput, a cancellation, a disconnection) or the head finishing moves it: a transfer
    /// enqueued behind the head does not. Stored, like `nextEvent`.
    public private(set) var nextCompletion: SimInstant?

    var headCompletion: SimInstant? {
        guard let head = queue.first else { return nil }
        switch state {
        case .promoting(let until):
            var t = until
            if head.upBits > 0 { t += SimDuration(microsecondsRoundedUp: head.upBits / upMbps) }
            if head.downBits > 0 { t += SimDuration(microsecondsRoundedUp: head.downBits / downMbps) }
            return t
        case .active(let end):
            guard headDirection == .up, head.downBits > 0 else { return end }
            return end + SimDuration(microsecondsRoundedUp: head.downBits / downMbps)
        case .idle, .tail:
            return nil
        }
    }

    /// The most power the link can draw before anything is enqueued, cancelled or its
    /// throughput changes: its current power while idle, otherwise the highest of its
    /// promotion, its active power in either direction at the current throughput, and its
    /// tail stages. Between such changes its power moves only through its own transitions.
    /// Stored, like `nextEvent`.
    public private(set) var peakPowerW: Double = 0

    var peakPower: Double {
        guard state != .idle else { return powerW }
        var peak = max(powerW, profile.promotionW)
        peak = max(peak, profile.activePowerW(direction: .up, mbps: upMbps), profile.activePowerW(direction: .down, mbps: downMbps))
        for stage in profile.tail { peak = max(peak, stage.powerW) }
        return peak
    }

    /// Adds a transfer at `now`, waking the radio if it is idle or in its tail.
    public mutating func enqueue(_ transfer: Transfer, at now: SimInstant) {
        defer { refreshPower() }
        precondition(isConnected, "a transfer on a link with no connection")
        guard !transfer.isEmpty else { return }
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
            break
        }
    }

    /// Moves through every transition due at or before `now`, calling `finished` with the
    /// owner of each transfer that completes, in order. (A callback, not a returned array, so
    /// the hot loop does not allocate.)
    public mutating func advance(to now: SimInstant, finished: (TransferOwner) -> Void = { _ in }) {
        while let t = nextEvent, t <= now {
            switch state {
            case .idle: break
            case .promoting:
                startPhase(at: t)
            case .active:
                if headDirection == .up { queue[0].upBits = 0 } else { queue[0].downBits = 0 }
                if queue[0].isEmpty { finished(queue.removeFirstQuickly().owner) }
                startPhase(at: t)
            case .tail(let stage, _):
                if stage + 1 < profile.tail.count {
                    state = .tail(stage: stage + 1, until: t + profile.tail[stage + 1].duration)
                } else {
                    state = .idle
                    endBurst()
                }
            }
            refreshPower()
        }
    }

    /// Serves the head of the queue from `now`, or enters the tail when the queue is empty.
    mutating func startPhase(at now: SimInstant) {
        while let head = queue.first, head.isEmpty { queue.removeFirstQuickly() }
        guard let head = queue.first else {
            enterTail(at: now)
            return
        }
        if !users.contains(head.owner) { users.append(head.owner) }
        phaseStart = now
        let (bits, mbps) = head.upBits > 0 ? (head.upBits, upMbps) : (head.downBits, downMbps)
        // Rounded up to the microsecond, so the phase never ends before its last bit.
        state = .active(phaseEnd: now + SimDuration(microsecondsRoundedUp: bits / mbps))
    }

    /// Bits of the head's current direction still to move at `now`.
    func remainingHeadBits(at now: SimInstant) -> Double {
        guard case .active(let end) = state else { return queue.first.map { $0.upBits > 0 ? $0.upBits : $0.downBits } ?? 0 }
        let mbps = headDirection == .up ? upMbps : downMbps
        return max(0, Double((end - now).microseconds) * mbps)
    }

    /// Takes the throughput of a new network state at `now` (after `advance(to: now)`). The
    /// head's remaining bits continue at the new rate.
    public mutating func setThroughput(upMbps up: Double, downMbps down: Double, at now: SimInstant) {
        defer { refreshPower() }
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
    }

    /// Disconnects at `now`: returns the queued transfers with what is left of them, and
    /// leaves the radio in its tail if it was moving data (a promotion in progress is
    /// abandoned). Call `advance(to: now)` first.
    public mutating func disconnect(at now: SimInstant) -> [Transfer] {
        defer { refreshPower() }
        if case .active = state {
            let left = remainingHeadBits(at: now)
            if headDirection == .up { queue[0].upBits = left } else { queue[0].downBits = left }
        }
        let taken = queue
        queue.removeAll()
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
    /// what was left of it, if it was queued here. Call `advance(to: now)` first.
    @discardableResult
    public mutating func cancel(_ owner: TransferOwner, at now: SimInstant) -> Transfer? {
        defer { refreshPower() }
        guard let i = queue.firstIndex(where: { $0.owner == owner }) else { return nil }
        if i == 0, case .active = state {
            let left = remainingHeadBits(at: now)
            if headDirection == .up { queue[0].upBits = left } else { queue[0].downBits = left }
        }
        let left = queue.removeQuickly(at: i)
        guard i == 0 else { return left }
        switch state {
        case .active: startPhase(at: now)
        case .promoting:
            if queue.isEmpty {
                state = .idle
                endBurst()
            }
        case .idle, .tail: break
        }
        return left
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

    /// Shuts the radio off at once (the phone died): the burst, if any, is over.
    public mutating func powerOff() {
        defer { refreshPower() }
        queue.removeAll()
        state = .idle
        upMbps = 0
        downMbps = 0
        endBurst()
    }
}
