// swift-tools-version:6.0
//
// A package of your own policies, with an executable that is bgsim plus those policies.
// Copy this folder anywhere; it finds bgsim's clone through BGSIM_PATH, or as the folder two
// levels up when it still sits in bgsim's Examples/.
import Foundation
import PackageDescription

let bgsimPath =
    Context.environment["BGSIM_PATH"]
    ?? URL(fileURLWithPath: Context.packageDirectory).appendingPathComponent("../..").standardizedFileURL.path
// SwiftPM names a package found by path after its folder, whatever the clone is called.
let bgsim = URL(fileURLWithPath: bgsimPath).standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "my-policies",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: bgsimPath)],
    targets: [
        /// Your policies: each a `RegisteredPolicy`.
        .target(
            name: "QuietHoursPolicy",
            dependencies: [.product(name: "PolicyAPI", package: bgsim), .product(name: "SimEngine", package: bgsim)]
        ),
        /// bgsim with your policies registered: `swift run my-bgsim run scenarios/compare.yaml`.
        .executableTarget(
            name: "my-bgsim",
            dependencies: ["QuietHoursPolicy", .product(name: "BGSimCommandLine", package: bgsim)]
        ),
    ]
)
