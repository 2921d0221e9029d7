import PolicyAPI
import SimEngine

/// One app's job time as AOSP's `QuotaController` counts it (docs/sources.md §9): timing
/// sessions, each from the first of its jobs to start to the last to end, counted only off the
/// charger; whether the app is within its bucket's quota; when quota comes back; how long a
/// job started now may run.
struct QuotaTracker: Sendable, Equatable {
    /// A bucket's limits.
    struct Limits: Equatable, Sendable {
        /// Job time allowed per window; `nil`: unlimited.
        var time: SimDuration?
        /// The rolling window the limits count over.
        var window: SimDuration
        /// Most jobs, and most sessions (jobs less than `coalescing` apart count as one), per window.
        var maxJobs: Int, maxSessions: Int
        /// The limits of `time` and `maxJobs` jobs in `maxSessions` sessions per `window`.
        init(time: SimDuration?, window: SimDuration, maxJobs: Int, maxSessions: Int) {
            self.time = time
            self.window = window
            self.maxJobs = maxJobs
            self.maxSessions = maxSessions
        }
    }

    /// What applies to every bucket.
    struct Common: Equatable, Sendable {
        /// Most job time in any 24 h (MAX_EXECUTION_TIME).
        var maxExecution: SimDuration = .hours(4)
        /// Quota comes back once this much of it is free again (IN_QUOTA_BUFFER).
        var inQuotaBuffer: SimDuration = .seconds(30)
        /// Sessions closer than this count as one (TIMING_SESSION_COALESCING_DURATION).
        var coalescing: SimDuration = .seconds(5)
        /// Most jobs and sessions started in any `rateWindow` (RATE_LIMITING_WINDOW).
        var rateWindow: SimDuration = .minutes(1)
        var maxJobsPerRateWindow = 20, maxSessionsPerRateWindow = 20
        /// AOSP's defaults.
        init() {}
    }

    /// A finished timing session.
    struct Session: Equatable, Sendable {
        /// When its first job started and its last ended.
        var start, end: SimInstant
        /// How many jobs it ran.
        var jobs: Int
        /// A session from `start` to `end` that ran `jobs` jobs.
        init(_ start: SimInstant, _ end: SimInstant, jobs: Int) {
            self.start = start
            self.end = end
            self.jobs = jobs
        }
    }

    /// Why an app is out of quota.
    enum Limit: String, CaseIterable, Sendable {
        case time = "quota_time", jobs = "quota_jobs", sessions = "quota_sessions", rate = "quota_rate"
    }

    /// Finished sessions, in time order, of the last 24 h or so.
    var sessions: [Session] = []
    /// The session in progress (a job running off the charger): its start and its jobs.
    var timerStart: SimInstant?
    var timerJobs = 0
    /// The app's jobs running now, counted or not.
    var running = 0
    /// Jobs and sessions started in the current rate-limiting window, and when it ends.
    var rateJobs = 0, rateSessions = 0
    var rateJobsEnd = SimInstant.start, rateSessionsEnd = SimInstant.start

    /// No job run yet.
    init() {}

    /// A session recorded as if it had run, after the others (AOSP's tests' `saveTimingSession`).
    mutating func save(_ session: Session) { sessions.append(session) }

    /// Counts `count` more jobs, and a session if `session`, in the rate-limiting windows.
    mutating func countRate(jobs count: Int, session: Bool, at now: SimInstant, _ c: Common) {
        if count > 0 {
            if rateJobsEnd <= now {
                rateJobsEnd = now + c.rateWindow
                rateJobs = 0
            }
            rateJobs += count
        }
        if session {
            if rateSessionsEnd <= now {
                rateSessionsEnd = now + c.rateWindow
                rateSessions = 0
            }
            rateSessions += 1
        }
    }

    /// A job started at `now`; counted unless `charging`.
    mutating func jobStarted(at now: SimInstant, charging: Bool, _ c: Common) {
        running += 1
        guard !charging else { return }
        if timerStart == nil { timerStart = now }
        timerJobs += 1
        countRate(jobs: 1, session: false, at: now, c)
    }

    /// A job ended at `now`: the session ends with the last.
    mutating func jobEnded(at now: SimInstant, _ c: Common) {
        running = max(0, running - 1)
        if running == 0 { endSession(at: now, c) }
    }

    /// The charger came (`true`) or went at `now`: a session in progress ends, or one begins
    /// with the jobs still running.
    mutating func charging(_ on: Bool, at now: SimInstant, _ c: Common) {
        if on {
            endSession(at: now, c)
        } else if running > 0, timerStart == nil {
            timerStart = now
            timerJobs = running
            countRate(jobs: running, session: false, at: now, c)
        }
    }

    mutating func endSession(at now: SimInstant, _ c: Common) {
        guard let start = timerStart else { return }
        sessions.append(Session(start, now, jobs: timerJobs))
        timerStart = nil
        timerJobs = 0
        countRate(jobs: 0, session: true, at: now, c)
        // Only the last day matters (the longest window), and a day and a bit for coalescing.
        let keep = now - .hours(25)
        if let first = sessions.firstIndex(where: { $0.end > keep }), first > 0 { sessions.removeFirst(first) }
    }

    /// What `updateExecutionStatsLocked` computes: the time, jobs and sessions in the window
    /// and the day, and when the app would be within quota again.
    struct Stats {
        var executionInWindow = SimDuration.zero, executionInDay = SimDuration.zero
        var jobsInWindow = 0, sessionsInWindow = 0
        var inQuotaAt = SimInstant.start
    }

    func stats(_ limits: Limits, at now: SimInstant, _ c: Common) -> Stats {
        var s = Stats()
        let allowed = limits.time ?? .days(36_500)
        let allowedIntoQuota = allowed - c.inQuotaBuffer, maxIntoQuota = c.maxExecution - c.inQuotaBuffer
        if limits.maxJobs == 0 || limits.maxSessions == 0 { s.inQuotaAt = .distantFuture }
        if let start = timerStart {
            // The session in progress counts its time and jobs, not as a session.
            s.executionInWindow = now - start
            s.executionInDay = now - start
            s.jobsInWindow = timerJobs
            if s.executionInWindow >= allowedIntoQuota { s.inQuotaAt = max(s.inQuotaAt, now - allowedIntoQuota + limits.window) }
            if s.executionInDay >= maxIntoQuota { s.inQuotaAt = max(s.inQuotaAt, now - maxIntoQuota + .days(1)) }
            if s.jobsInWindow >= limits.maxJobs { s.inQuotaAt = max(s.inQuotaAt, now + limits.window) }
        }
        let windowStart = now - limits.window, dayStart = now - .days(1)
        for i in sessions.indices.reversed() {
            let session = sessions[i]
            if windowStart < session.end {
                let start = max(session.start, windowStart)
                s.executionInWindow += session.end - start
                s.jobsInWindow += session.jobs
                if s.executionInWindow >= allowedIntoQuota {
                    s.inQuotaAt = max(s.inQuotaAt, start + s.executionInWindow - allowedIntoQuota + limits.window)
                }
                if s.jobsInWindow >= limits.maxJobs { s.inQuotaAt = max(s.inQuotaAt, session.end + limits.window) }
                if i == sessions.count - 1 || sessions[i + 1].start - session.end > c.coalescing {
                    s.sessionsInWindow += 1
                    if s.sessionsInWindow >= limits.maxSessions { s.inQuotaAt = max(s.inQuotaAt, session.end + limits.window) }
                }
            }
            if dayStart < session.start {
                s.executionInDay += session.end - session.start
                if s.executionInDay >= maxIntoQuota {
                    s.inQuotaAt = max(s.inQuotaAt, session.start + s.executionInDay - maxIntoQuota + .days(1))
                }
            } else if dayStart < session.end {
                s.executionInDay += session.end - dayStart
                if s.executionInDay >= maxIntoQuota { s.inQuotaAt = max(s.inQuotaAt, dayStart + s.executionInDay - maxIntoQuota + .days(1)) }
            } else {
                break
            }
        }
        return s
    }

    /// Whether the app may start a job now under `limits` (`isWithinQuotaLocked`), and if not,
    /// which limit holds it and when quota comes back (`maybeScheduleStartAlarmLocked`: the
    /// in-quota alarm, `inQuotaBuffer` after it would be free again).
    func check(_ limits: Limits, at now: SimInstant, _ c: Common) -> (limit: Limit, back: SimInstant)? {
        let s = stats(limits, at: now, c)
        let allowed = limits.time ?? .days(36_500)
        let remaining = min(allowed - s.executionInWindow, c.maxExecution - s.executionInDay)
        let jobsRate = rateJobsEnd > now && rateJobs >= c.maxJobsPerRateWindow
        let sessionsRate = rateSessionsEnd > now && rateSessions >= c.maxSessionsPerRateWindow
        let limit: Limit
        if remaining <= .zero {
            limit = .time
        } else if s.jobsInWindow >= limits.maxJobs {
            limit = .jobs
        } else if s.sessionsInWindow >= limits.maxSessions {
            limit = .sessions
        } else if jobsRate || sessionsRate {
            limit = .rate
        } else {
            return nil
        }
        var back = s.inQuotaAt
        if jobsRate { back = max(back, rateJobsEnd) }
        if sessionsRate { back = max(back, rateSessionsEnd) }
        return (limit, back)
    }

    /// How long a job started now may run before the app's quota is used up, if it ran the
    /// whole time (`getTimeUntilQuotaConsumedLocked`): sessions rolling out of the window give
    /// time back as it goes.
    func timeUntilConsumed(_ limits: Limits, at now: SimInstant, _ c: Common) -> SimDuration {
        let s = stats(limits, at: now, c)
        guard let allowed = limits.time else {
            return Self.consumed(sessions, from: now - .days(1), deadSpace: c.maxExecution - s.executionInDay)
        }
        if sessions.isEmpty { return limits.window == allowed ? c.maxExecution : allowed }
        let maxRemaining = c.maxExecution - s.executionInDay
        if limits.window == allowed { return Self.consumed(sessions, from: now - .days(1), deadSpace: maxRemaining) }
        return min(
            Self.consumed(sessions, from: now - .days(1), deadSpace: maxRemaining),
            Self.consumed(sessions, from: now - limits.window, deadSpace: allowed - s.executionInWindow))
    }

    /// `calculateTimeUntilQuotaConsumedLocked`.
    static func consumed(_ sessions: [Session], from windowStart: SimInstant, deadSpace: SimDuration) -> SimDuration {
        var dead = deadSpace, total = SimDuration.zero, start = windowStart
        for session in sessions {
            if session.end < windowStart { continue }
            if session.start <= windowStart {
                total += session.end - windowStart
                start = session.end
            } else {
                let gap = session.start - start
                if gap > dead { break }
                total += gap + (session.end - session.start)
                dead = dead - gap
                start = session.end
            }
        }
        return total + dead
    }
}
