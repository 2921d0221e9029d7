// A study is planned from scenarios and sweeps, so whoever imports Experiments reads them too.
@_exported import ScenarioFiles
