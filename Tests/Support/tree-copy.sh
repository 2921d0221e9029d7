# Sourced by the scripts that change a copy of the working tree (Tests/AddPolicy,
# Tests/AddMechanism): `tree_copy WORK` copies the tracked and unignored files into WORK/repo
# with their times kept (so a kept build in WORK/build sees them unchanged), makes it a
# repository of its own so that git counts what a change touches, and enters it.
tree_copy() {
    local work=$1 repo
    repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    rm -rf "$work/repo" && mkdir -p "$work/repo"
    (cd "$repo" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh | xargs -0 cp -p --parents -t "$work/repo")
    cd "$work/repo"
    rm -rf .git && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base
}
