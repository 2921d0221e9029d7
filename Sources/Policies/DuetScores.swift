import SimEngine

/// The application score: the chance that the person opens an app within the lookahead,
/// worked out once per prediction bin and learned launch and kept per app with a version
/// that outcomes reading it compare.
extension DuetPolicy {
    /// The application score of `app` at `now`, worked out once per bin and learned launch
    /// (`AppScore`), and its version.
    @inline(__always)
    mutating func appScore(of app: Int, now: SimInstant) -> (score: Double, version: Int) {
        if app < appScores.count, appScores[app].epoch == scoresEpoch, appScores[app].learned == predictor.learnedLaunches(of: app) {
            assert(appScores[app].score == applicationScore(app: app, now: now), "a kept application score differs from a fresh one")
            return (appScores[app].score, appScores[app].version)
        }
        return rescore(app, now: now)
    }

    mutating func rescore(_ app: Int, now: SimInstant) -> (score: Double, version: Int) {
        if appScores.count <= app { appScores += Array(repeating: AppScore(), count: app + 1 - appScores.count) }
        // From the bins' places worked out for this bin (the same arithmetic as
        // `applicationScore(app:now:)`, which debug builds check it against).
        let certain = parameters.certainLaunchProbability
        var none = 1.0
        for place in scoredPlaces {
            let pr = predictor.probability(app: app, place)
            none *= 1 - (pr > certain ? 1 : pr)
        }
        let score = (1 - none).squareRoot()
        if score != appScores[app].score || appScores[app].epoch < 0 { appScores[app].version &+= 1 }
        appScores[app].score = score
        appScores[app].learned = predictor.learnedLaunches(of: app)
        appScores[app].epoch = scoresEpoch
        return (score, appScores[app].version)
    }

    /// Whether two application scores are on the same side of `burstScore`, the one thing the
    /// rules read of the score when its value did not count (`Outcome.readsScore`).
    func sameBurstSide(_ a: Double, _ b: Double) -> Bool { parameters.burstScore.map { (a >= $0) == (b >= $0) } ?? true }

    /// The application rule's score for a refresh of `app` at `now`: the square root of the
    /// chance that the person opens it within the lookahead (a bin above the certain
    /// probability counts as certain).
    func applicationScore(app: Int, now: SimInstant) -> Double {
        Self.applicationScore(
            predictor, app: app, now: now, lookahead: parameters.launchLookahead,
            certain: parameters.certainLaunchProbability)
    }

    /// `applicationScore(app:now:)`, static so that `decide` (mutating) passes the predictor
    /// alone rather than a copy of the whole policy.
    static func applicationScore(
        _ predictor: LaunchPredictor, app: Int, now: SimInstant, lookahead: SimDuration,
        certain: Double
    ) -> Double {
        var none = 1.0
        predictor.forEachProbability(app: app, now: now, lookahead: lookahead) { pr in
            none *= 1 - (pr > certain ? 1 : pr)
        }
        return (1 - none).squareRoot()
    }
}
