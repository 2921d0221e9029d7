import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

extension Report {
    /// The Markdown summary: the comparison table and the study's heading.
    package func markdown() -> String {
        let r = results
        let md = Quoting.markdown
        var s = "# \(md(title)): policy comparison\n\n"
        if title != r.scenarioName { s += "Study \(Quoting.markdownCode(r.scenarioName)).\n\n" }
        s +=
            r.kind == "sweep"
            ? "Sweep over \(r.parameters.map(Quoting.markdownCode).joined(separator: ", ")), \(pointCount) point\(pointCount == 1 ? "" : "s"); " : "Run; "
        s += "\(r.replications) replication\(r.replications == 1 ? "" : "s"), seed \(md(r.seed)).\n"
        // A fenced block, its words quoted for the shell: pasted, it runs exactly this command.
        if !r.commandLine.isEmpty { s += "\nReproduce with:\n\n" + Quoting.markdownBlock(Quoting.shellCommand(r.commandLine), info: "sh") }
        if let program = r.program { s += md(program.prefix(1).uppercased() + program.dropFirst()) + ".\n\n" }
        if let precision = r.precision { s += md(precision) + "\n" }
        s += "\nMean ± 95% CI half-width over replications"
        s += r.kind == "sweep" ? " (each replication averaged over all points)" : ""
        s += "; **bold ★** best among deployable policies.\n\n"
        let intervals = r.policies.map { p in Self.columns.map { interval($0.metric, policy: p) } }
        let bestColumn = best(intervals)
        s += "| policy | " + Self.columns.map(\.title).joined(separator: " | ") + " |\n"
        s += "| --- |" + String(repeating: " ---: |", count: Self.columns.count) + "\n"
        for (i, p) in r.policies.enumerated() {
            s += "| \(md(p))\(isBound(p) ? " (bound)" : "") |"
            for (c, column) in Self.columns.enumerated() {
                let ci = intervals[i][c]
                var cell = ci.mean.isFinite ? column.format(ci.mean) : "–"
                if ci.halfWidth.isFinite { cell += " ± " + column.format(ci.halfWidth) }
                s += " " + (bestColumn[c].contains(i) ? "**\(cell) ★**" : cell) + " |"
            }
            s += "\n"
        }
        let energy = r.policies.map { interval("background_energy_j", policy: $0).mean }
        let stale = r.policies.map { interval("staleness_mean_s", policy: $0).mean }
        let front = SVG.paretoFront(r.policies.indices.map { isBound(r.policies[$0]) ? (.nan, .nan) : (energy[$0], stale[$0]) })
        s += "\nPareto front among deployable policies (background energy against staleness, lower is better on both): "
        s += front.map { "\(md(r.policies[$0])) (\(SVG.number(energy[$0])) J, \(SVG.duration(stale[$0])))" }.joined(separator: "; ") + ".\n"
        s += pairedMarkdown()
        s += sensitivityMarkdown()
        if !r.fleet.isEmpty, let baseline = r.baseline {
            s += "\n### People, against \(md(baseline)), person by person\n\nEach replication is one person drawn from the fleet ("
            s += r.fleet.map(Quoting.markdownCode).joined(separator: ", ") + ").\n\n"
            s += "| " + Self.peopleHeadings.joined(separator: " | ") + " |\n|" + String(repeating: " --- |", count: Self.peopleHeadings.count) + "\n"
            for row in peopleRows(baseline: baseline) { s += "| " + row.map(md).joined(separator: " | ") + " |\n" }
        }
        let apps = appRows()
        if !apps.isEmpty {
            s += "\n### Apps\n\nEach app's scheduled tasks across " + (r.fleet.isEmpty ? "replications" : "people") + ", from apps.csv.\n\n"
            s += "| " + Self.appHeadings.joined(separator: " | ") + " |\n|" + String(repeating: " --- |", count: Self.appHeadings.count) + "\n"
            for row in apps { s += "| " + row.map(md).joined(separator: " | ") + " |\n" }
        }
        s += sweepMarkdown()
        return s
    }
}
