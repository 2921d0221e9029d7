import SimRandom

/// The colours charts give policies and the causes of a wait, chosen by name so that one
/// policy keeps its colour in every report, page, notebook and the Python reader (which
/// repeats this table; its tests compare the two through manifest.json's `policy_colors`).
///
/// Okabe & Ito's palette, distinguishable with the common colour-vision deficiencies: the
/// built-in policies have fixed colours; any other name hashes (FNV-1a of its UTF-8 bytes)
/// into the colours left, and when two such names meet in one study, the later by name moves
/// on to the next free colour.
package enum Palette {
    /// The built-in policies' colours.
    package static let fixed: [String: String] = [
        "ios": "#0072B2", "android": "#009E73", "eager": "#E69F00", "charge-only": "#CC79A7",
        "coalesce": "#56B4E9", "oracle": "#000000",
    ]
    /// The colours other names draw from, in order.
    package static let free = ["#D55E00", "#8C6D1F", "#882255", "#44AA99", "#999933", "#6A3D9A", "#777777", "#AA4499"]

    /// The colours of `policies`, in their order: fixed ones as fixed, the others hashed.
    package static func colors(_ policies: [String]) -> [String] {
        var taken = Set<String>()
        var out = Array(repeating: "", count: policies.count)
        for (i, p) in policies.enumerated() {
            if let c = fixed[p] { out[i] = c }
        }
        for i in policies.indices.sorted(by: { policies[$0] < policies[$1] }) where out[i].isEmpty {
            let start = Int(fnv1a(policies[i]) % UInt64(free.count))
            let k = (0..<free.count).map { (start + $0) % free.count }.first { !taken.contains(free[$0]) } ?? start
            out[i] = free[k]
            taken.insert(free[k])
        }
        return out
    }

    /// The colour of one cause of a wait (a gate's token or a policy's rule): gates fixed,
    /// rules hashed, so one cause has one colour on every page.
    package static func cause(_ token: String) -> String {
        if let c = gates[token] { return c }
        return rules[Int(fnv1a(token) % UInt64(rules.count))]
    }

    static let gates: [String: String] = [
        "earliest_begin": "#DDDDDD", "phone_off": "#000000", "low_power_mode": "#8C6D1F", "background_refresh_off": "#777777",
        "wifi_only": "#56B4E9", "app_swiped_away": "#D55E00", "app_in_foreground": "#44AA99",
        "device_in_use": "#CC79A7", "no_external_power": "#E69F00", "no_network": "#999933", "policy": "#0072B2",
    ]
    /// The colours a policy's rules take, hashed by name.
    package static let rules = ["#332288", "#117733", "#88CCEE", "#DDCC77", "#AA4499", "#882255", "#4477AA", "#66CCEE", "#228833", "#EE6677"]

    /// FNV-1a, 64 bits, of the name's UTF-8 bytes (as streams name their seeds): the same in
    /// every process and language.
    package static func fnv1a(_ s: String) -> UInt64 { StreamID.fnv1a(s) }
}
