// swift-tools-version:6.0
//
// bgsim: a discrete-event simulator of how a phone schedules apps' background work.
// Targets are layered; each depends only on the layers above it in this file.
import PackageDescription

// The phone's run calls into the policy API and the mechanisms at every event; their bodies are
// made available to it as if they were one module (docs/performance.md).
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

let package = Package(
    name: "bgsim",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "bgsim", targets: ["bgsim"]),
        .library(name: "BGSimCommandLine", targets: ["BGSimCommandLine"]),
        .library(name: "SimEngine", targets: ["SimEngine"]),
        .library(name: "SimRandom", targets: ["SimRandom"]),
        .library(name: "PhoneWorld", targets: ["PhoneWorld"]),
        .library(name: "PolicyAPI", targets: ["PolicyAPI"]),
        .library(name: "ResultFiles", targets: ["ResultFiles"]),
        .library(name: "Experiments", targets: ["Experiments"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // `make docs`: the DocC catalogs of the library targets.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // MARK: - C libraries

        /// GNU Scientific Library: random generators, distributions, statistics.
        .systemLibrary(
            name: "CGSL",
            pkgConfig: "gsl",
            providers: [.apt(["libgsl-dev"])]
        ),

        /// SHA-256 blocks with the x86 SHA instructions, for the digests of result files.
        .target(name: "CSHA256"),

        // MARK: - Engine (knows nothing of phones)

        /// Integer simulated time, the event queue and the run loop.
        .target(name: "SimEngine"),
        /// Named, seeded random streams over GSL generators; distributions; statistics.
        .target(name: "SimRandom", dependencies: ["CGSL"]),

        // MARK: - World model

        /// Battery, charger, apps' workloads: the physical and human world of one phone.
        .target(name: "PhoneWorld", dependencies: ["SimEngine", "SimRandom"]),

        // MARK: - Scheduling semantics and policies

        /// What a policy sees and returns, and what a phone is set up with: task requests and
        /// records, kinds, the device state, decisions, declared parameters, the setup and the
        /// world's timeline. A policy package depends on this alone.
        .target(name: "PolicyAPI", dependencies: ["SimEngine", "SimRandom", "PhoneWorld"], swiftSettings: crossModule),
        /// The built-in policies and the registry scenario files name policies from. Without
        /// package access they see only the policy API's public face, as a package's policy does.
        .target(name: "Policies", dependencies: ["SimEngine", "PhoneWorld", "PolicyAPI"], packageAccess: false),
        /// The doors into background time besides BGTaskScheduler, each a declaration behind
        /// the host protocol the phone implements; their registry completes the open lists of
        /// kinds, errors and expiration reasons.
        .target(name: "Mechanisms", dependencies: ["SimEngine", "SimRandom", "PhoneWorld", "PolicyAPI"], swiftSettings: crossModule),
        /// The phone: the gates the system enforces, its components and run loop, the metrics.
        /// Re-exports the policy API and the mechanisms, whose types its API takes; the targets
        /// below still name them, so that a change of theirs rebuilds what uses them.
        .target(name: "Scheduling", dependencies: ["SimEngine", "SimRandom", "PhoneWorld", "PolicyAPI", "Mechanisms"]),

        // MARK: - Experiments

        /// Scenario and sweep files: the YAML tree and its key paths, profiles, overrides,
        /// traces, sweep designs (Sobol points from GSL), and their checks and messages.
        .target(
            name: "ScenarioFiles",
            dependencies: [
                "SimEngine", "SimRandom", "PhoneWorld", "PolicyAPI", "Mechanisms", "Scheduling", "Policies", "ResultFiles", "CGSL",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        /// Writing result files: RFC 4180 CSV, SHA-256, atomic output folders and their lock.
        .target(name: "ResultFiles", dependencies: ["SimEngine", "CSHA256"]),
        /// Studies: plans of units, replications in parallel, resume, shards and merge, the
        /// result rows, statistics, the manifest and the comparison table. Re-exports
        /// ScenarioFiles, whose types its API takes.
        .target(
            name: "Experiments",
            dependencies: [
                "SimEngine", "SimRandom", "PhoneWorld", "PolicyAPI", "Mechanisms", "Scheduling", "Policies", "ScenarioFiles", "ResultFiles",
            ]
        ),
        /// The HTML and Markdown report of a results folder (inline SVG, no script).
        .target(
            name: "Reports",
            dependencies: [
                "SimEngine", "SimRandom", "PhoneWorld", "PolicyAPI", "Mechanisms", "Scheduling", "Policies", "ScenarioFiles", "ResultFiles",
                "Experiments",
            ]
        ),

        // MARK: - Command line

        /// The command line as a library: `BGSimCommandLine.main(policies:)` is bgsim with a
        /// user's registered policies besides the built-in ones.
        .target(
            name: "BGSimCommandLine",
            dependencies: [
                "Experiments", "Reports", "ScenarioFiles", "ResultFiles", "PolicyAPI", "Mechanisms", "Scheduling", "Policies", "SimEngine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        /// `bgsim` itself: the command line with the built-in policies.
        .executableTarget(name: "bgsim", dependencies: ["BGSimCommandLine"]),

        // MARK: - Examples

        /// The template package's policy (Examples/PolicyPackage, a package of its own), built
        /// here too so that ExamplePolicyTests runs it through the library API;
        /// Tests/PolicyPackage builds the template itself, as a user would.
        .target(
            name: "QuietHoursPolicy", dependencies: ["PolicyAPI", "SimEngine"],
            path: "Examples/PolicyPackage/Sources/QuietHoursPolicy"
        ),

        // MARK: - Tests

        .testTarget(name: "SimEngineTests", dependencies: ["SimEngine"]),
        .testTarget(name: "SimRandomTests", dependencies: ["SimRandom", "CGSL"]),
        .testTarget(name: "PhoneWorldTests", dependencies: ["PhoneWorld", "SimEngine", "SimRandom"]),
        .testTarget(
            name: "SchedulingTests",
            dependencies: ["Scheduling", "PolicyAPI", "Policies", "Mechanisms", "PhoneWorld", "SimEngine", "SimRandom"]
        ),
        .testTarget(
            name: "ExperimentsTests",
            dependencies: [
                "Experiments", "ScenarioFiles", "ResultFiles", "Reports", "Scheduling", "PolicyAPI", "Policies", "Mechanisms", "PhoneWorld",
                "SimEngine", "SimRandom",
            ]
        ),
        .testTarget(name: "BGSimCLITests", dependencies: ["bgsim", "BGSimCommandLine", "PolicyAPI", "Mechanisms", "Scheduling", "Policies"]),
        .testTarget(
            name: "ExamplePolicyTests", dependencies: ["QuietHoursPolicy", "Experiments", "Scheduling", "PolicyAPI", "Policies", "SimEngine"]
        ),
    ]
)
