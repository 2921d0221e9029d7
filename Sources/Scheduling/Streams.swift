import Mechanisms
import PolicyAPI
import SimRandom

extension WorldStreams {
    /// The streams of `replication` under `masterSeed`, for the apps of `setup` and the
    /// registered mechanisms whose sections they give.
    package init(
        setup: PhoneSetup, masterSeed: UInt64, replication: UInt64,
        generator: GeneratorKind = .mt19937
    ) throws(RandomStreamError) {
        try self.init(
            setup: setup, masterSeed: masterSeed, replication: replication, generator: generator,
            mechanisms: MechanismRegistry.builtIn.map { ($0.name, $0.streams) })
    }
}
