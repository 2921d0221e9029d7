#!/usr/bin/env bash
# The Slurm test (run by `make test`, so by CI): brings up a one-node Slurm cluster on
# loopback from Debian's packages, runs a small sweep through it with the scripts
# `bgsim sweep --emit-slurm` writes (a job array of shards, then a merge job), and checks the
# merged result against a local run of the same sweep, byte for byte; then makes one shard
# fail, checks that the merge is cancelled, and that submitting again finishes the study;
# and runs a run's replications (`bgsim run --emit-slurm`) through it the same way.
#
# Usage: Tests/Slurm/slurm-sweep-test.sh path/to/bgsim
# Needs root (or sudo) to start munged as user munge and slurmd; the packages slurmctld,
# slurmd, slurm-client and munge (`make deps-slurm`). Starts no daemon it does not stop: every
# daemon runs in the foreground in the background and is killed by the PID started.
set -euo pipefail

bgsim=$(readlink -f "${1:?usage: $0 path/to/bgsim}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
work=$(mktemp -d /tmp/bgsim-slurm.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do $SUDO kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do $SUDO kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  wait 2>/dev/null || true
  if [ $status -ne 0 ]; then
    echo "--- slurmctld.log"; tail -n 30 "$work/slurmctld.log" 2>/dev/null || true
    echo "--- slurmd.log"; tail -n 30 "$work/slurmd.log" 2>/dev/null || true
    echo "--- job logs"; tail -n 20 "$work"/cluster/logs/* "$work"/again/logs/* "$work"/run-cluster/logs/* 2>/dev/null || true
    echo "slurm test FAILED (work folder kept: $work)"
  else
    $SUDO rm -rf "$work"
  fi
}
trap cleanup EXIT

for c in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$c" >/dev/null || { echo "error: $c not found: install slurmctld slurmd slurm-client munge (make deps-slurm)" >&2; exit 1; }
done

# munge: the key (the package makes one; make one if not), its run folder, the daemon.
[ -f /etc/munge/munge.key ] || $SUDO mungekey --create --force
$SUDO mkdir -p /run/munge /var/lib/munge /var/log/munge
$SUDO chown munge:munge /run/munge /var/lib/munge /var/log/munge
$SUDO chmod 755 /run/munge
$SUDO runuser -u munge -- /usr/sbin/munged --foreground --force >"$work/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S /run/munge/munge.socket.2 ] && break; sleep 0.1; done
[ -S /run/munge/munge.socket.2 ] || { echo "munged did not start"; cat "$work/munged.out"; exit 1; }

# Slurm: configuration and state under the work folder; free ports on loopback.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<CONF
ClusterName=bgsim-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
$SUDO env SLURM_CONF="$SLURM_CONF" slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
$SUDO env SLURM_CONF="$SLURM_CONF" slurmd -D -N localhost -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
up=""
for _ in $(seq 300); do
  if sinfo -h -N -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then up=yes; break; fi
  sleep 0.2
done
[ -n "$up" ] || { echo "the Slurm node did not come up"; sinfo -N || true; exit 1; }
echo "slurm: one node up on loopback ($(sinfo -h -N -o '%N %t %c CPUs'))"

# A small sweep: 2 x 2 grid, 2 policies, 3 replications = 24 units in 3 shards.
cat >"$work/sweep.yaml" <<YAML
scenario: $repo/models/scenarios/default.yaml
set: {duration: 2d}
replications: 3
policies: [eager, ios]
design: grid
axes:
  - {path: settings.background_app_refresh, values: [wifi, wifi-and-cellular]}
  - {path: people.sessions_per_day, values: [30, 70]}
YAML
drain() {  # waits until the queue is empty
  for _ in $(seq 600); do
    [ -z "$(squeue -h -o %i 2>/dev/null)" ] && return
    sleep 0.5
  done
  echo "jobs still queued after 5 minutes:"; squeue; exit 1
}
# The same sweep run locally, to compare with byte for byte (manifest included).
"$bgsim" sweep "$work/sweep.yaml" --out "$work/local" --jobs 2 --quiet
same() {  # the result in $1 equals the local run's
  for f in runs.csv summary.csv comparisons.csv tasks.csv manifest.json; do
    cmp "$work/local/$f" "$1/$f" || { echo "$f differs between Slurm ($1) and the local run"; exit 1; }
  done
  [ "$(ls "$work/local")" = "$(ls "$1")" ] || { echo "different file sets"; exit 1; }
}

# At most two shards at once (--max-running, the array's %2): sbatch must take the limit.
"$bgsim" sweep "$work/sweep.yaml" --emit-slurm "$work/cluster" --shards 3 --max-running 2 --jobs 1
grep -q '^#SBATCH --array=1-3%2$' "$work/cluster/sweep.sbatch" || { echo "no array limit in sweep.sbatch"; exit 1; }
submitted=$("$work/cluster/submit.sh")
echo "$submitted"
array=$(sed -n 's/^submitted the shards as job \([0-9]*\) .*/\1/p' <<< "$submitted")
scontrol show job "$array" | grep -q 'ArrayTaskThrottle=2' || { echo "Slurm did not take the array limit:"; scontrol show job "$array"; exit 1; }
drain
[ -f "$work/cluster/result/manifest.json" ] || { echo "the merge job wrote no result"; exit 1; }
same "$work/cluster/result"

# A shard that fails (a file where its folder goes): the merge is cancelled, not left pending
# for ever; with the file gone, submit.sh again runs only what had not finished, and merges.
"$bgsim" sweep "$work/sweep.yaml" --emit-slurm "$work/again" --shards 3 --jobs 1
: > "$work/again/shard-2"
"$work/again/submit.sh"
drain
[ ! -e "$work/again/result" ] || { echo "the merge ran though a shard had failed"; exit 1; }
grep -q "units run, 0 already finished" "$work/again/logs/shard-1.out" || { echo "shard 1 did not run"; exit 1; }
rm "$work/again/shard-2"
"$work/again/submit.sh"
drain
for k in 1 3; do
  grep -q ": 0 units run, [0-9]* already finished" "$work/again/logs/shard-$k.out" \
    || { echo "shard $k ran its units again:"; cat "$work/again/logs/shard-$k.out"; exit 1; }
done
same "$work/again/result"

# A run (not a sweep) through Slurm too: its replications in 2 array tasks, then the merge.
run=("$repo/models/scenarios/default.yaml" --set duration=1d --replications 3 --no-tasks)
"$bgsim" run "${run[@]}" --out "$work/run-local" --jobs 2 --quiet
"$bgsim" run "${run[@]}" --emit-slurm "$work/run-cluster" --shards 2 --jobs 1
"$work/run-cluster/submit.sh"
drain
for f in runs.csv summary.csv comparisons.csv manifest.json; do
  cmp "$work/run-local/$f" "$work/run-cluster/result/$f" || { echo "$f differs between the run through Slurm and the local run"; exit 1; }
done
# A folder and an option with every character a shell or sbatch treats specially: the real
# sbatch must read every #SBATCH line whole (the array and its log files), and nothing in a
# name may run.
hostile="$work/hostile \$(touch PWNED) \`touch PWNED\` ; x\"q'%a #c"
(cd "$work" && "$bgsim" run "${run[@]}" --emit-slurm "$hostile" --shards 2 --jobs 1 --slurm-option="--comment=a \"b\" \$(touch PWNED) #c")
(cd "$work" && "$hostile/submit.sh")
drain
for f in runs.csv summary.csv comparisons.csv manifest.json; do
  cmp "$work/run-local/$f" "$hostile/result/$f" || { echo "$f differs in the folder with a hostile name"; exit 1; }
done
[ -f "$hostile/logs/shard-1.out" ] && [ -f "$hostile/logs/shard-2.out" ] && [ -f "$hostile/logs/merge.out" ] \
  || { echo "the jobs' logs are not where --output said:"; ls -R "$work"; exit 1; }
[ -z "$(find "$work" -name PWNED)" ] || { echo "a command in a folder name ran"; exit 1; }
echo "slurm test passed: 3 array tasks (at most 2 at once) and a merge job; result byte-identical to a local run ($(wc -l <"$work/local/runs.csv") lines of runs.csv); after a failed shard the merge was cancelled, and submit.sh again ran only that shard's units; a run's 2 array tasks and merge equal the local run, also in a folder whose name holds \$(...), backticks, quotes, ; and %a"
