import ArgumentParser
import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import SimRandom

/// How far an answer depends on the model's assumptions (docs/sources.md §11-12).
struct SensitivityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensitivity",
        abstract: "Global sensitivity analysis: Morris screening and Sobol' indices.",
        discussion: """
            bgsim varies each assumption of a model (a default no published figure fixes, \
            listed with its plausible range by 'bgsim policies') over its range to say how far \
            an answer depends on it. 'bgsim sensitivity SCENARIO' reruns a study over the \
            ranges and says which of its paired differences keep their sign; 'bgsim \
            sensitivity check' checks the methods on a function whose indices are known.
            """,
        subcommands: [SensitivityStudy.self, SensitivityCheck.self],
        defaultSubcommand: SensitivityStudy.self
    )
}

/// The methods checked on the Ishigami function: the points, the outputs and the estimates,
/// written for anyone (and the Python test, with SALib) to recompute.
struct SensitivityCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check Morris screening and Sobol' indices on the Ishigami function, whose indices are known.",
        discussion: """
            Evaluates sin x1 + 7 sin² x2 + 0.1 x3⁴ sin x1 on [-π, π]³ at Saltelli's design of \
            --samples points of GSL's Sobol' sequence and at --trajectories Morris trajectories, \
            and writes sobol.csv and morris.csv (each point, scaled to the unit cube, and the \
            output) and indices.csv (per method and factor: the estimates and, for Sobol', the \
            known values). Prints the estimates and their largest error, and fails (exit 1) if it \
            is over --tolerance.
            """
    )

    @Option(help: "Base samples of Saltelli's design (2 to 65536): samples × 5 evaluations.")
    var samples = 8192

    @Option(help: "Morris trajectories (2 to 10000): trajectories × 4 evaluations.")
    var trajectories = 50

    @Option(help: "Levels of Morris's grid (an even number from 2 to 20).")
    var levels = 4

    @Option(help: "Seed of the Morris trajectories.")
    var seed: UInt64 = 1

    @Option(help: "The largest error of a Sobol' index that passes.")
    var tolerance = 0.02

    @Option(help: "Output folder.")
    var out = "results/sensitivity-check"

    func validate() throws {
        guard (2...65_536).contains(samples) else { throw ValidationError("--samples \(samples): expected 2 to 65536") }
        guard (2...10_000).contains(trajectories) else { throw ValidationError("--trajectories \(trajectories): expected 2 to 10000") }
        guard (2...20).contains(levels), levels % 2 == 0 else { throw ValidationError("--levels \(levels): expected an even number from 2 to 20") }
        guard tolerance > 0, tolerance.isFinite else { throw ValidationError("--tolerance \(tolerance): expected a number above 0") }
    }

    func run() throws {
        let k = 3
        let sobolPoints = Sensitivity.sobolDesign(factors: k, samples: samples)
        let sobolY = sobolPoints.map(Sensitivity.Ishigami.f)
        let indices = Sensitivity.sobolIndices(outputs: sobolY, factors: k)
        let morrisPoints = Sensitivity.morrisDesign(
            factors: k, trajectories: trajectories, levels: levels, stream: try RandomStream(seed: seed))
        let morrisY = morrisPoints.map(Sensitivity.Ishigami.f)
        let effects = Sensitivity.morrisEffects(design: morrisPoints, outputs: morrisY, factors: k)
        let known = Sensitivity.Ishigami.indices

        func points(_ xs: [[Double]], _ ys: [Double]) -> String {
            CSVWriter.line((1...k).map { "x\($0)" } + ["y"])
                + zip(xs, ys).map { CSVWriter.line($0.map { CSVWriter.number($0) } + [CSVWriter.number($1)]) }.joined()
        }
        var table = CSVWriter.line(["method", "factor", "first", "total", "known_first", "known_total", "mu_star", "mu", "sigma"])
        for i in 0..<k {
            let s = indices[i], truth = known[i]
            table += CSVWriter.line(["sobol", "x\(i + 1)"] + [s.first, s.total, truth.first, truth.total].map { CSVWriter.number($0) } + ["", "", ""])
        }
        for i in 0..<k {
            let e = effects[i]
            table += CSVWriter.line(["morris", "x\(i + 1)", "", "", "", ""] + [e.muStar, e.mu, e.sigma].map { CSVWriter.number($0) })
        }
        let folder = URL(fileURLWithPath: out)
        try OutputFiles.write(
            [("sobol.csv", .text(points(sobolPoints, sobolY))), ("morris.csv", .text(points(morrisPoints, morrisY))), ("indices.csv", .text(table))],
            to: folder)
        let error = (0..<k).map { max(abs(indices[$0].first - known[$0].first), abs(indices[$0].total - known[$0].total)) }.max()!
        func f(_ x: Double) -> String { String(format: "%.3f", x) }
        print("Ishigami, \(sobolPoints.count) evaluations: Sobol' first and total indices (known)")
        for i in 0..<k {
            print(
                "  x\(i + 1): \(f(indices[i].first)) (\(f(known[i].first)))  \(f(indices[i].total)) (\(f(known[i].total)))"
                    + "   Morris μ* \(f(effects[i].muStar)), σ \(f(effects[i].sigma))")
        }
        print("largest error \(String(format: "%.4f", error)) (tolerance \(tolerance)); wrote sobol.csv, morris.csv, indices.csv to \(out)")
        if error > tolerance {
            throw RuntimeFailure("the largest error of a Sobol' index, \(String(format: "%.4f", error)), is over --tolerance \(tolerance)")
        }
    }
}
