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

/// The values a scenario gave a mechanism's section, which the mechanism decodes by its
/// declared keys (`decode(_:over:)`).
package struct MechanismValues: Sendable, Equatable {
    /// The values given, by key.
    package let given: [String: ParameterValue]
    /// A list section's entries (none for a mapping section).
    package let entries: [MechanismValues]

    /// The values `given`.
    package init(given: [String: ParameterValue]) {
        self.given = given
        self.entries = []
    }

    /// A list section's `entries`.
    package init(entries: [[String: ParameterValue]]) {
        self.given = [:]
        self.entries = entries.map { MechanismValues(given: $0) }
    }

    /// The section's values set over `defaults` by `keys`, each by its key path: a
    /// mechanism reads its section as a typed value, never a key by its name.
    package func decode<S>(_ keys: [Setting<S>], over defaults: S) -> S {
        var section = defaults
        for key in keys { if let v = given[key.name] { key.apply(v, to: &section) } }
        // Each key reads back what it was given: two keys on one field, or a key stored in
        // another unit than it reads, would not.
        assert(
            keys.allSatisfy { k in given[k.name].map { Self.same($0, k.value(in: section)) } ?? true },
            "a key of the section does not read back its value: \(keys.filter { k in given[k.name].map { !Self.same($0, k.value(in: section)) } ?? false }.map(\.name))"
        )
        return section
    }

    /// Whether two values are one, numbers to a relative 1e-9 (a unit's conversion rounds).
    static func same(_ a: ParameterValue, _ b: ParameterValue) -> Bool {
        func close(_ x: Double, _ y: Double) -> Bool { abs(x - y) <= 1e-9 * max(abs(x), abs(y)) }
        switch (a, b) {
        case (.number(let x), .number(let y)): return close(x, y)
        case (.distribution(let x), .distribution(let y)):
            switch (x, y) {
            case (.fixed(let p), .fixed(let q)), (.exponential(let p), .exponential(let q)): return close(p, q)
            case (.uniform(let p, let q), .uniform(let r, let t)), (.lognormal(let p, let q), .lognormal(let r, let t)): return close(p, r) && close(q, t)
            default: return false
            }
        default: return a == b
        }
    }
}

extension Array {
    /// The keys' descriptions, with `defaults`' values as theirs: a mechanism's `parameters`.
    package func described<S>(_ defaults: S) -> [PolicyParameterInfo] where Element == Setting<S> { map { $0.info(defaults) } }
}
