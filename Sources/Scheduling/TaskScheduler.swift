import SimEngine

/// One app's `BGTaskScheduler`: permitted identifiers, registration, and the pending
/// requests with the rules `submit` enforces (docs/sources.md §2).
///
/// Pure bookkeeping: it decides what is accepted, replaced, cancelled or pending; the
/// simulation decides when pending requests run.
package struct BGTaskScheduler: Sendable {
    /// At most this many refresh requests pending per app (docs/sources.md §2).
    package static let refreshLimit = 1
    /// At most this many processing requests pending per app (docs/sources.md §2).
    package static let processingLimit = 10

    /// A request submitted and not yet started.
    package struct Pending: Sendable, Equatable {
        /// The BGTaskScheduler identifier.
        package var identifier: String
        /// Refresh or processing.
        package var kind: TaskKind
        /// The task the request became.
        package var task: TaskID
        /// Its `earliestBeginDate`.
        package var earliestBegin: SimInstant

        /// A pending request.
        package init(identifier: String, kind: TaskKind, task: TaskID, earliestBegin: SimInstant) {
            self.identifier = identifier
            self.kind = kind
            self.task = task
            self.earliestBegin = earliestBegin
        }
    }

    /// The outcome of registering a launch handler.
    package enum Registration: Sendable, Equatable {
        case registered
        /// Not in `BGTaskSchedulerPermittedIdentifiers`: registration fails.
        case notPermitted
        /// Registered twice in one process: iOS kills the app.
        case duplicate
    }

    /// Info.plist `BGTaskSchedulerPermittedIdentifiers`.
    package let permitted: [String]
    /// `permitted` for looking up when it is long: its plain identifiers, and the stems of its
    /// `.*` entries. An app of many identifiers registers and submits each at every launch, and
    /// a scan of the list for each made a launch quadratic in them.
    fileprivate let exact: Set<String>, stems: [Substring]
    /// Lists up to this long are scanned: hashing an identifier costs more than comparing a
    /// few (sets for every list made the reference run 4% dearer, callgrind).
    fileprivate static var scanned: Int { 16 }
    /// Identifiers registered by the running process, in order.
    package private(set) var registered: [String] = []
    private var registeredSet: Set<String> = []
    /// `getPendingTaskRequests`: pending requests in submission order.
    package private(set) var pending: [Pending] = []

    /// Whether `UIBackgroundModes` has `fetch` (refresh requests) and `processing`.
    package let refreshMode: Bool, processingMode: Bool

    /// A scheduler for an app that permits `permitted`, with the background modes `fetch`
    /// (`refreshMode`) and `processing` as given, nothing registered or pending.
    package init(permitted: [String], refreshMode: Bool = true, processingMode: Bool = true) {
        self.permitted = permitted
        exact = Set(permitted.filter { !$0.hasSuffix(".*") })
        stems = permitted.filter { $0.hasSuffix(".*") }.map { $0.dropLast() }
        self.refreshMode = refreshMode
        self.processingMode = processingMode
    }

    /// `register(forTaskWithIdentifier:using:launchHandler:)`, which an app calls at every
    /// launch before launching finishes.
    package mutating func register(_ identifier: String) -> Registration {
        guard allows(identifier) else { return .notPermitted }
        if registered.count < Self.scanned {
            guard !registered.contains(identifier) else { return .duplicate }
        } else {
            if registeredSet.isEmpty { registeredSet = Set(registered) }
            guard registeredSet.insert(identifier).inserted else { return .duplicate }
        }
        registered.append(identifier)
        return .registered
    }

    /// Whether `permitted` lists `identifier`, or an entry ending in `.*` whose stem it
    /// extends (`com.example.export.*` allows `com.example.export.7`; iOS 26, docs/sources.md §2).
    package static func allows(_ permitted: [String], _ identifier: String) -> Bool {
        permitted.contains { entry in
            entry == identifier || (entry.hasSuffix(".*") && identifier.count > entry.count - 1 && identifier.hasPrefix(entry.dropLast()))
        }
    }

    /// `allows(permitted, identifier)`: a scan of a short list, the sets made once for a long one.
    fileprivate func allows(_ identifier: String) -> Bool {
        if permitted.count <= Self.scanned { return Self.allows(permitted, identifier) }
        return exact.contains(identifier) || stems.contains { identifier.count > $0.count && identifier.hasPrefix($0) }
    }

    /// The process ended: registrations go with it; pending requests stay with the system.
    package mutating func processEnded() {
        registered.removeAll()
        registeredSet.removeAll()
    }

    /// `submit(_:)`. On success, returns the request it replaced (same identifier, not yet
    /// started), if any. `available` is false when Background App Refresh is off for the app
    /// or the phone.
    package mutating func submit(_ request: Pending, available: Bool) -> Result<TaskID?, SubmitError> {
        guard available else { return .failure(.unavailable) }
        // Either cause is notPermitted: the identifier not in the Info.plist list, or the
        // request's background mode missing (docs/sources.md §2).
        guard allows(request.identifier), request.kind == .processing ? processingMode : refreshMode else {
            return .failure(.notPermitted)
        }
        let same = pending.firstIndex { $0.identifier == request.identifier }
        var others = 0
        for i in pending.indices where i != same && pending[i].kind == request.kind { others += 1 }
        let limit = request.kind == .processing ? Self.processingLimit : Self.refreshLimit
        guard others < limit else { return .failure(.tooManyPendingTaskRequests) }
        var replaced: TaskID?
        if let same {
            replaced = pending[same].task
            pending.removeQuickly(at: same)
        }
        pending.append(request)
        return .success(replaced)
    }

    /// `cancel(taskRequestWithIdentifier:)`: the cancelled request, if one was pending.
    package mutating func cancel(identifier: String) -> TaskID? {
        guard let i = pending.firstIndex(where: { $0.identifier == identifier }) else { return nil }
        return pending.removeQuickly(at: i).task
    }

    /// `cancelAllTaskRequests()`: the cancelled requests, in submission order.
    package mutating func cancelAll() -> [TaskID] {
        defer { pending.removeAll() }
        return pending.map(\.task)
    }

    /// The system started (or ended) `task`: it is no longer pending.
    package mutating func remove(_ task: TaskID) {
        if let i = pending.firstIndex(where: { $0.task == task }) { pending.removeQuickly(at: i) }
    }
}
