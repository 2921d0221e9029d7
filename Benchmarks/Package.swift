// swift-tools-version:6.1
//
// Benchmarks for bgsim, kept out of the main package so that `make test` does not build
// the benchmark framework. Run with `make bench` (or `swift package benchmark` here).
import PackageDescription

let package = Package(
    name: "bgsim-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "bgsim", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        // MARK: - Engine

        /// The classic hold model: N pending events; each step pops the earliest and schedules
        /// one new event an exponential delay later.
        .executableTarget(
            name: "HoldModel",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SimEngine", package: "bgsim"),
                .product(name: "SimRandom", package: "bgsim"),
            ],
            path: "Benchmarks/HoldModel",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),

        // MARK: - Whole simulations

        /// Simulated phone-days per second for the bundled scenarios, per policy.
        .executableTarget(
            name: "Scenarios",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Experiments", package: "bgsim"),
            ],
            path: "Benchmarks/Scenarios",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),

        /// Writing results: a run's files with and without tasks.csv, and SHA-256.
        .executableTarget(
            name: "Outputs",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Experiments", package: "bgsim"),
                .product(name: "ResultFiles", package: "bgsim"),
            ],
            path: "Benchmarks/Outputs",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
