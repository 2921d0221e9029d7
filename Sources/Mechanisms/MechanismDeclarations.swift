import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

// What a mechanism's declaration is made of, beside the protocol (`Mechanism.swift`): the
// hooks it implements, the events it schedules, its sections' values and its keys' kinds.

/// The calls the run makes to every mechanism in use (`Mechanism.hooks`); a mechanism's own
/// events and its tasks' ends reach it whatever it declares.
package struct MechanismHooks: OptionSet, Sendable {
    /// The hooks' bits.
    package let rawValue: UInt16
    /// The hooks of `rawValue`.
    package init(rawValue: UInt16) { self.rawValue = rawValue }
    /// ``Mechanism/start(_:)``.
    package static let start = Self(rawValue: 1 << 0)
    /// ``Mechanism/gatesChanged(_:)``.
    package static let gatesChanged = Self(rawValue: 1 << 1)
    /// ``Mechanism/appOpened(_:_:)``.
    package static let appOpened = Self(rawValue: 1 << 2)
    /// ``Mechanism/personLaunched(_:until:_:)``.
    package static let personLaunched = Self(rawValue: 1 << 3)
    /// ``Mechanism/appEnteredBackground(_:_:)``.
    package static let appEnteredBackground = Self(rawValue: 1 << 4)
    /// ``Mechanism/appLeft(_:swiped:_:)``.
    package static let appLeft = Self(rawValue: 1 << 5)
    /// ``Mechanism/appSwipedAway(_:_:)``.
    package static let appSwipedAway = Self(rawValue: 1 << 6)
    /// ``Mechanism/placeChanged(left:entered:_:)``.
    package static let placeChanged = Self(rawValue: 1 << 7)
    /// ``Mechanism/pressure(_:)``.
    package static let pressure = Self(rawValue: 1 << 8)
    /// ``Mechanism/appEnteredForeground(_:_:)``.
    package static let appEnteredForeground = Self(rawValue: 1 << 9)
    /// ``Mechanism/processStarted(_:_:)``.
    package static let processStarted = Self(rawValue: 1 << 10)
    /// ``Mechanism/processEnded(_:cause:_:)``.
    package static let processEnded = Self(rawValue: 1 << 11)
    /// Every one.
    package static let all = Self(rawValue: (1 << 12) - 1)
    /// Each hook by its method's name, in bit order.
    package static let named: [(String, Self)] = [
        ("start", .start), ("gatesChanged", .gatesChanged), ("appOpened", .appOpened), ("personLaunched", .personLaunched),
        ("appEnteredBackground", .appEnteredBackground), ("appLeft", .appLeft), ("appSwipedAway", .appSwipedAway),
        ("placeChanged", .placeChanged), ("pressure", .pressure), ("appEnteredForeground", .appEnteredForeground),
        ("processStarted", .processStarted), ("processEnded", .processEnded),
    ]
}

/// An event a mechanism scheduled, which it may cancel.
package struct MechanismEvent: Sendable {
    package let handle: EventHandle
    /// The event `handle` names.
    package init(handle: EventHandle) { self.handle = handle }

    /// What an event is, which places it among what happens at the same instant.
    package enum Kind: Sendable {
        /// New work arrives: after the world's changes and the tasks' own timers, and the
        /// policy decides after it.
        case arrival
        /// A step of one of its running tasks (a session's next chunk): with the tasks' own
        /// timers, and it changes nothing a policy sees, so no decision follows it.
        case taskStep
        /// A change in the world (a server's push reaching the phone): first at its instant,
        /// with the charger, the network and the person; the policy decides after it.
        case world
    }
}

/// The values a scenario gave a mechanism's section, over its declared defaults.
package struct MechanismValues: Sendable, Equatable {
    /// The declared keys.
    package let declared: [PolicyParameterInfo]
    /// The values given, by key.
    package let given: [String: ParameterValue]
    /// A list section's entries, each over the same defaults (none for a mapping section).
    package let entries: [MechanismValues]

    /// The values `given` over the defaults of `declared`.
    package init(declared: [PolicyParameterInfo], given: [String: ParameterValue]) {
        self.declared = declared
        self.given = given
        self.entries = []
    }

    /// A list section's `entries`, each over the defaults of `declared`.
    package init(declared: [PolicyParameterInfo], entries: [[String: ParameterValue]]) {
        self.declared = declared
        self.given = [:]
        self.entries = entries.map { MechanismValues(declared: declared, given: $0) }
    }

    /// Key `name`'s value: given, or its default.
    package func value(_ name: String) -> ParameterValue {
        if let v = given[name] { return v }
        guard let d = declared.first(where: { $0.name == name }) else { preconditionFailure("'\(name)' is not a declared key") }
        return d.defaultValue
    }
    /// Duration key `name`.
    package func duration(_ name: String) -> SimDuration {
        if case .duration(let d) = value(name) { d } else { preconditionFailure("'\(name)' is not a duration") }
    }
    /// Number key `name`.
    package func number(_ name: String) -> Double {
        if case .number(let x) = value(name) { x } else { preconditionFailure("'\(name)' is not a number") }
    }
    /// Number-or-none key `name`: `nil` for none.
    package func optionalNumber(_ name: String) -> Double? {
        switch value(name) {
        case .number(let x): x
        case .off: nil
        default: preconditionFailure("'\(name)' is not a number")
        }
    }
    /// Duration-or-none key `name`: `nil` for none.
    package func optionalDuration(_ name: String) -> SimDuration? {
        switch value(name) {
        case .duration(let d): d
        case .off: nil
        default: preconditionFailure("'\(name)' is not a duration")
        }
    }
    /// Whole-number key `name`.
    package func integer(_ name: String) -> Int {
        if case .integer(let n) = value(name) { n } else { preconditionFailure("'\(name)' is not a whole number") }
    }
    /// Flag key `name`.
    package func flag(_ name: String) -> Bool {
        if case .flag(let b) = value(name) { b } else { preconditionFailure("'\(name)' is not a flag") }
    }
    /// Name key `name`.
    package func text(_ name: String) -> String {
        if case .text(let t) = value(name) { t } else { preconditionFailure("'\(name)' is not a name") }
    }
    /// Distribution key `name`, in seconds or bytes.
    package func distribution(_ name: String) -> Distribution {
        if case .distribution(let d) = value(name) { d } else { preconditionFailure("'\(name)' is not a distribution") }
    }
    /// Names key `name`.
    package func names(_ name: String) -> [String] {
        if case .names(let n) = value(name) { n } else { preconditionFailure("'\(name)' is not a list of names") }
    }
}

extension PolicyParameterInfo {
    /// A duration key with its default, within `range`.
    package static func duration(_ name: String, _ value: SimDuration, in range: ClosedRange<SimDuration> = .nonNegative, help: String) -> Self {
        Self(name: name, kind: .duration(range, noneAllowed: false), defaultValue: .duration(value), help: help)
    }
    /// A number key with its default, within `range`, in `unit`.
    package static func number(_ name: String, _ value: Double, in range: NumberRange, unit: SettingUnit, help: String) -> Self {
        Self(name: name, kind: .number(range, unit: unit), defaultValue: .number(value), help: help)
    }
    /// A whole-number key with its default, within `range`, counting `unit`.
    package static func integer(_ name: String, _ value: Int, in range: ClosedRange<Int>, unit: SettingUnit = "a whole number", help: String) -> Self {
        Self(name: name, kind: .integer(range, unit: unit), defaultValue: .integer(value), help: help)
    }
    /// A true-or-false key with its default.
    package static func flag(_ name: String, _ value: Bool, help: String) -> Self {
        Self(name: name, kind: .flag, defaultValue: .flag(value), help: help)
    }
    /// A key of seconds drawn per use, with its default (in seconds).
    package static func seconds(_ name: String, _ value: Distribution, help: String) -> Self {
        Self(name: name, kind: .distribution(.seconds), defaultValue: .distribution(value), help: help)
    }
    /// A key of sizes drawn per use, written in kilobytes, with its default (in bytes).
    package static func kilobytes(_ name: String, _ value: Distribution, help: String) -> Self {
        Self(name: name, kind: .distribution(.kilobytes), defaultValue: .distribution(value), help: help)
    }
    /// A number key in `unit`, within `range`, that may be `none` (its default).
    package static func optionalNumber(_ name: String, in range: NumberRange, unit: SettingUnit, help: String) -> Self {
        Self(name: name, kind: .optionalNumber(range, unit: unit), defaultValue: .off, help: help)
    }
    /// A duration key within `range` that may be `none` (its default).
    package static func optionalDuration(_ name: String, in range: ClosedRange<SimDuration> = .positive, help: String) -> Self {
        Self(name: name, kind: .duration(range, noneAllowed: true), defaultValue: .off, help: help)
    }
    /// A key naming one of `names`, which a section must give.
    package static func choice(_ name: String, _ names: [String], help: String) -> Self {
        Self(name: name, kind: .choice(names), defaultValue: .text(names[0]), help: help, isRequired: true)
    }
    /// A key naming one of `names`, with its default.
    package static func choice(_ name: String, _ names: [String], default value: String, help: String) -> Self {
        Self(name: name, kind: .choice(names), defaultValue: .text(value), help: help)
    }
    /// A key listing places of the network model, which a section must give.
    package static func places(_ name: String, help: String) -> Self {
        Self(name: name, kind: .places, defaultValue: .names([]), help: help, isRequired: true)
    }
    /// A list of some of `names`, or `none` (its default: a value that depends on other keys).
    package static func choices(_ name: String, _ names: [String], help: String) -> Self {
        Self(name: name, kind: .choices(names), defaultValue: .off, help: help)
    }
    /// A name key which a section must give.
    package static func name(_ name: String, help: String) -> Self {
        Self(name: name, kind: .text, defaultValue: .text(""), help: help, isRequired: true)
    }
    /// A name key with its default.
    package static func text(_ name: String, _ value: String, help: String) -> Self {
        Self(name: name, kind: .text, defaultValue: .text(value), help: help)
    }
}
