import PolicyAPI

extension PolicyRegistry {
    /// The built-in policies, in documentation order. A new built-in policy is a file in this
    /// folder, conforming to ``RegisteredPolicy``, and a line here; `BuiltInPolicyTests` fails
    /// when one is missing here or undocumented.
    public static let builtIn: [any RegisteredPolicy.Type] = [
        EagerPolicy.self,
        ChargeOnlyPolicy.self,
        CoalescePolicy.self,
        DuetPolicy.self,
        AndroidPolicy.self,
        OraclePolicy.self,
    ]
}
