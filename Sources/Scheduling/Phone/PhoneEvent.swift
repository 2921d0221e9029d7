import SimEngine

/// What can happen in a phone's run, grouped by the part of the simulation that owns it.
/// Indices are into the world timeline (the person, the network, pushes from a trace) or
/// name an app; the person's and the network's come from the world, the rest are scheduled
/// by the part that owns them.
enum PhoneEvent {
    /// The charger, the battery and the bench load (`Power.swift`, `BatteryLevels.swift`).
    case power(PowerEvent)
    /// The person (`Person.swift`).
    case person(PersonEvent)
    /// Network change `Int` of the timeline (`Network.swift`).
    case network(Int)
    /// A task's own timers (`Submission.swift`, `Execution.swift`): its `earliestBeginDate`
    /// came (it is open to the gates and the policy); the end of its current phase (its work,
    /// its time, or its expiration handler); the CPU monitor's window passed on battery.
    case eligible(TaskID), phaseEnd(TaskID), cpuMonitor(TaskID)
    /// The system's doings for app `Int`: its moments in the background after it left the
    /// foreground are over (`AppLife.swift`); its server's next push, drawn as the run goes,
    /// and its push budget having room again (`Pushes.swift`).
    case suspend(Int)
    /// The time the policy asked to be consulted again (`Decisions.swift`).
    case policyWake
    /// Link `Int` finishes the transfer it serves (`Network.swift`): one timer per link, at
    /// its head's completion, so a change on the link moves one event, not one per task.
    case transferDone(Int)
    /// A declared mechanism's own event: its payload shifted left by 8 bits above whether it
    /// is a task's step (bit 7) and its index in the registry, so that the event stays one word
    /// (`MechanismHosting.swift`).
    case mechanism(Int)

    /// Same-instant order: the world changes first, then work ends, then new work arrives,
    /// and the policy's own timer last, so it sees the state after everything at that instant.
    static var worldPriority: EventPriority { .high }
    /// The charger's sessions are scheduled one at a time (`scheduleCharger`); just before the
    /// other world changes, they keep the order they had when all were scheduled first.
    static var chargerPriority: EventPriority { EventPriority(rawValue: EventPriority.high.rawValue - 1) }
    static var taskEndPriority: EventPriority { .normal }
    static var arrivalPriority: EventPriority { .low }
    static var policyPriority: EventPriority { .last }
}

enum PowerEvent {
    case plugIn, unplug
    /// Optimized Battery Charging stops holding, to finish by the predicted unplug.
    case optimizedRelease
    /// The battery reached a level that was being waited for (empty, boot level, a level of
    /// the charging curve, a Low Power Mode level).
    case level
    /// The battery may be near such a level again: time to work out when it reaches it.
    /// Nothing in the world happens at this instant (`BatteryLevels.Watch`).
    case watchEnded
    /// Near such a level, a radio's transition changes the load: the level's instant is
    /// worked out again.
    case replan
    /// The bench load's step `Int` begins.
    case load(Int)
}

enum PersonEvent {
    case launch(Int), leave(Int)
    case call(Int), callEnd(Int)
    case purge(Int)
    /// Notification Centre, Control Centre or a declined call over the app in use: one
    /// begins, or ends.
    case interrupt(Int), interruptEnd(Int)
}
