import PhoneWorld
import PolicyAPI
import SimEngine

/// What `DuetPolicy` keeps across decisions, and the keys it compares to know that a kept
/// answer still holds (`decide(_:eligible:)`).
extension DuetPolicy {
    /// What the rules answered for one app and kind: in the decision numbered `stamp`, for a
    /// request eligible since `eligibleSince`, from `inputs` (nil: not to be kept).
    struct Kept {
        var stamp = 0
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
