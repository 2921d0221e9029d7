"""Policy colours by name: the same table as bgsim's reports (Sources/Experiments/Palette.swift).

The built-in policies have fixed colours; any other name hashes (FNV-1a, 64 bits, of its UTF-8
bytes) into the colours left, and when two such names meet in one study the later by name moves
on to the next free colour. A study's manifest.json records its colours (`policy_colors`), and
`Study.colors` uses those; this function is for names a manifest does not list.
"""

FIXED = {
    "ios": "#0072B2",
    "android": "#009E73",
    "eager": "#E69F00",
    "charge-only": "#CC79A7",
    "coalesce": "#56B4E9",
    "oracle": "#000000",
}
FREE = ["#D55E00", "#8C6D1F", "#882255", "#44AA99", "#999933", "#6A3D9A", "#777777", "#AA4499"]


def fnv1a(name: str) -> int:
    """FNV-1a, 64 bits, of the name's UTF-8 bytes."""
    h = 0xCBF29CE484222325
    for b in name.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def policy_colors(policies):
    """{policy: "#RRGGBB"} for the policies of one study, in their order."""
    policies = list(policies)
    out = {p: FIXED[p] for p in policies if p in FIXED}
    taken = set()
    for p in sorted(q for q in policies if q not in FIXED):
        start = fnv1a(p) % len(FREE)
        free = [(start + i) % len(FREE) for i in range(len(FREE)) if FREE[(start + i) % len(FREE)] not in taken]
        k = free[0] if free else start
        out[p] = FREE[k]
        taken.add(FREE[k])
    return {p: out[p] for p in policies}
