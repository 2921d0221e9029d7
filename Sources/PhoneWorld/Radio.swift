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
