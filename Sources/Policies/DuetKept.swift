import PhoneWorld
import PolicyAPI
import SimEngine

/// What `DuetPolicy` keeps across decisions, and the keys it compares to know that a kept
/// answer still holds (`decide(_:eligible:)`).
extension DuetPolicy {
    /// What the rules answered for one app and kind, for a request eligible since
    /// `eligibleSince`, from `inputs` (nil: not to be kept).
    struct Kept {
        var eligibleSince = SimInstant.start
        var outcome = Outcome(start: false)
        var inputs: Inputs?
        var quick: Quick?
    }

    /// The policy's counts of changes at one decision: the phone's, the battery's, the person's
    /// activity's, the prediction bins'.
    struct Epochs: Equatable {
        var phone, power, activity, scores: Int

        /// Which of them moved since `last` (all, after none).
        func moved(since last: Epochs?) -> (phone: Bool, power: Bool, activity: Bool, scores: Bool) {
            guard let last else { return (true, true, true, true) }
            return (phone != last.phone, power != last.power, activity != last.activity, scores != last.scores)
        }
    }

    /// One app and kind's outcome as the quick test of `decide(_:eligible:)` reads it: used at
    /// the decision numbered `stamp` for a request eligible since `eligibleSince`; the same
    /// until `until` (its own, or its app's allowance's) while nothing it `reads` moved and
    /// its app's counts stay `usage` (the person's use) and `app` (the allowance's version
    /// plus the launches'); asking to be woken at `wake`; holding for the rule numbered `hold`
    /// (-1: a start, which the quick test never keeps).
    struct Fast {
        var stamp = 0
        var eligibleSince = SimInstant.start
        var until = SimInstant.start
        var wake = SimInstant.distantFuture
        var usage = 0, app = 0
        var hold: Int32 = -1
        var reads: UInt8 = never

        /// What moved, as bits: the battery's refusal (every outcome reads it), the phone's
        /// other inputs, the person's activity, the prediction bins; `never` is set in an
        /// outcome not to be kept (the energy budget empty on battery).
        static let power: UInt8 = 1, phone: UInt8 = 2, activity: UInt8 = 4, scores: UInt8 = 8, never: UInt8 = 128

        /// What an outcome for a request of `kind` reads of what may move.
        static func reads(_ outcome: Outcome, _ kind: TaskKind) -> UInt8 {
            var bits = power
            if outcome.readsPhone { bits |= phone }
            if kind == .processing { bits |= activity }
            if kind.isRefreshLike && (outcome.readsScore || outcome.readsBurst) { bits |= scores }
            return bits
        }
    }

    /// The counts of changes a kept outcome was decided at (`decide(_:eligible:)`).
    struct Quick: Equatable {
        var phone, power, activity, scores, usage, use, launches: Int
    }

    /// What the rules read for a request besides the phone, its kind and the time: an outcome
    /// is kept while these and the phone's stay the same, until its `until`.
    struct Inputs: Equatable {
        var phone: Int
        var power: Int
        /// `activityEpoch` for processing, 0 for the others.
        var activity: Int
        var appScore: Double
        var perDay: Double
        var learningUntil: SimInstant?
        var neverUsed: Bool
        var usage: UseKey
        var launches: Int
    }

    /// What the rules read of the phone (`Rules.forEachVerdict`) besides the time.
    struct PhoneInputs: Equatable {
        var level: Double
        var charging: Bool
        var critical: Bool
        var network: NetworkKind
        var quality: Double
        var idleWindow: SimInstant?
        var dataLeft: Bool
    }

    /// What decides whether the battery refuses a request (`Rules.forEachVerdict`).
    struct PowerInputs: Equatable {
        var charging: Bool
        var critical: Bool
        var belowRefreshFloor: Bool
        var belowProcessingFloor: Bool
    }

    /// What an app's allowance reads of its record besides the time.
    struct UseKey: Equatable {
        var launches: Int
        var lastLeft: SimInstant?
        var inForeground: Bool
    }

    /// An app's application score, worked out for `epoch` of the bins and `learned` of its
    /// launches; `version` counts the changes of its value: a kept outcome read a version, so
    /// a new bin moves only the outcomes of the apps whose score it moved (at each bin, every
    /// refresh request's rules were read again, though most apps' scores stay the same).
    struct AppScore {
        var score = 0.0
        var learned = -1, epoch = -1, version = 0
    }

    struct AppScoresKey: Equatable {
        var firstBin, lastBin: SimInstant
        var firstDay: Int64
        var appsLearned: Int
    }
}
