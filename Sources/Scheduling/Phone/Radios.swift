import PhoneWorld
import SimEngine

/// The phone's radios and its connection: which link carries data now, the transfers each
/// link serves, those held until there is a connection they may use, and the radio energy
/// the links charge to their owners.
///
/// The links move through their transitions by themselves (`RadioLink.advance(to:)`), so a
/// promotion, a direction or a tail stage ending is no event: the energy books apply them
/// as they integrate (`PhoneSimulation.account(to:)`). Links are indexed by `link(for:)`;
/// nothing here assumes how many there are.
struct Radios: ~Copyable {
    /// A transfer waiting for a connection it may use.
    struct Held {
        var transfer: Transfer
        /// Whether it may go over cellular (Background App Refresh on Wi-Fi only keeps
        /// scheduled work off it).
        var cellularAllowed: Bool
    }

    var links: OwnedArray<RadioLink>
    /// Per link, its change count when its head's task and its timer were last brought up to
    /// date, and when that timer is due (`PhoneSimulation.syncTransfers`).
    var synced: OwnedArray<(changes: Int, due: SimInstant?)>
    /// The connection, and its quality as a policy sees it (two logarithms, worked out
    /// when the connection changes rather than at every decision).
    var connection = NetworkState.disconnected
    var quality = NetworkState.disconnected.quality
    /// Where the person is (the network model's places), for region monitoring.
    var place: String?
    var held: [Held] = []
    /// Promotions of links replaced when the phone shut down.
    fileprivate var promotions = 0
    fileprivate var taskPromotions = 0

    /// The links of `network`'s radios, idle and disconnected.
    init(_ network: NetworkEnvironment) {
        links = OwnedArray([RadioLink(profile: network.wifiRadio), RadioLink(profile: network.cellularRadio)])
        synced = OwnedArray(Array(repeating: (0, nil), count: links.count))
    }

    /// The link a connection of `kind` uses.
    @inline(__always)
    static func link(for kind: NetworkKind) -> Int? {
        switch kind {
        case .wifi: 0
        case .cellular: 1
        case .none: nil
        }
    }

    /// The link the connection uses now.
    @inline(__always)
    var current: Int? { Self.link(for: connection.kind) }

    /// Whether the current connection's radio is out of idle.
    var currentIsAwake: Bool { current.map { links[$0].isAwake } ?? false }

    /// What the radios draw now.
    @inline(__always)
    var powerW: Double {
        var w = 0.0
        for r in links.indices { w += links[r].powerW }
        return w
    }

    /// The most the radios can draw before one of them is changed (`RadioLink.peakPowerW`).
    var peakPowerW: Double {
        var w = 0.0
        for r in links.indices { w += links[r].peakPowerW }
        return w
    }

    /// The earliest transition of any link at or before `time` (strictly before, unless
    /// `through`), and its link.
    @inline(__always)
    func nextTransition(notAfter time: SimInstant, through: Bool) -> (SimInstant, Int)? {
        var best: (SimInstant, Int)?
        for r in links.indices {
            guard let t = links[r].nextEvent, through ? t <= time : t < time else { continue }
            if best.map({ t < $0.0 }) ?? true { best = (t, r) }
        }
        return best
    }

    /// The earliest transition of any link.
    var nextTransition: SimInstant? {
        var best: SimInstant?
        for r in links.indices { if let t = links[r].nextEvent { best = min(best ?? t, t) } }
        return best
    }

    /// Moves every link to `time`, charging its energy; transitions at `time` are applied
    /// only when `through`.
    @inline(__always)
    mutating func advance(to time: SimInstant, through: Bool) {
        for r in links.indices {
            if through, let t = links[r].nextEvent, t <= time {
                links[r].advance(to: time)
            } else {
                links[r].charge(upTo: time)
            }
        }
    }

    /// Sends `transfer` over the current connection at `now`, or holds it until there is one it
    /// may use; returns whether it went to a link.
    mutating func send(_ transfer: Transfer, cellularAllowed: Bool, at now: SimInstant) -> Bool {
        guard let r = current, cellularAllowed || Self.link(for: .cellular) != r else {
            held.append(Held(transfer: transfer, cellularAllowed: cellularAllowed))
            return false
        }
        links[r].advance(to: now)
        links[r].enqueue(transfer, at: now)
        return true
    }

    /// When `owner`'s transfer finishes, if it is the head of the current link's queue.
    func headCompletion(of owner: TransferOwner) -> SimInstant? {
        guard let r = current, let (head, completion) = links[r].served, head == owner else { return nil }
        return completion
    }

    /// Drops every transfer of `owner`, held or on a link, and returns the bits they had left.
    /// A continuous-mode session's chunks pile up while there is no connection or behind each
    /// other on a slow link: all of them go.
    mutating func cancel(_ owner: TransferOwner, at now: SimInstant) -> (upBits: Double, downBits: Double) {
        var upBits = 0.0, downBits = 0.0
        while let k = held.firstIndex(where: { $0.transfer.owner == owner }) {
            let left = held.removeQuickly(at: k).transfer
            upBits += left.upBits
            downBits += left.downBits
        }
        for r in links.indices {
            links[r].advance(to: now)
            while let left = links[r].cancel(owner, at: now) {
                upBits += left.upBits
                downBits += left.downBits
            }
        }
        return (upBits, downBits)
    }

    /// The phone shut down: every link goes off and starts afresh (its promotions kept), and
    /// what was held is dropped.
    mutating func powerOff() {
        held.removeAll()
        for r in links.indices {
            links[r].powerOff()
            promotions += links[r].promotions
            taskPromotions += links[r].taskPromotions
        }
    }

    /// After a shutdown, once every owner is settled: fresh links, as they were.
    mutating func replaceLinks() {
        for r in links.indices {
            let chargedUntil = links[r].chargedUntil, changes = links[r].changes, log = links[r].stateLog
            links[r] = RadioLink(profile: links[r].profile)
            links[r].stateLog = log
            links[r].charge(upTo: chargedUntil)
            links[r].changes = changes &+ 1
        }
    }

    /// Promotions over the run: the links' and those replaced.
    var totalPromotions: (all: Int, tasks: Int) {
        var all = promotions, tasks = taskPromotions
        for r in links.indices {
            all += links[r].promotions
            tasks += links[r].taskPromotions
        }
        return (all, tasks)
    }
}
