#!/usr/bin/env bash
# Live checks on a real NVIDIA GPU node, as root, from the repository root (no install needed):
#   OUT=/tmp/gpuslo-live bash bench/device/h200_live.sh
# 1. gpuslo check (JSON) and the NPD plugin output on the real NVML and /dev/kmsg paths;
# 2. the exporter serving on loopback with the kernel-log watcher on the real /dev/kmsg: an Xid 79
#    line is written to /dev/kmsg (marked name=gpuslo-injected-test) and the time until
#    gpuslo_gpu_usable drops to 0 is measured;
# 3. kill -9 and restart: the Xid counter continues (1, not 2) and the GPU stays unhealthy.
# It leaves an injected Xid in the kernel log: run it only on a machine that is given back.
set -u
OUT=${OUT:-/tmp/gpuslo-live}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
STATE=$(mktemp -d)
log() { echo "$@" | tee -a "$OUT/live.txt"; }
log "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
python3 -m gpuslo check --format json --state-dir "$STATE/check" > "$OUT/check.json" 2> "$OUT/check.err"
log "gpuslo check rc=$?"
python3 -m gpuslo check --format npd --state-dir "$STATE/check" > "$OUT/npd.txt" 2>&1
log "gpuslo check --format npd rc=$? : $(cat "$OUT/npd.txt")"
scrape() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:19835/metrics", timeout=2).read().decode())' 2>/dev/null; }
metric() { scrape | awk -v m="$1" 'index($0, m) == 1 {print $NF; exit}'; }
start_exporter() {
  python3 -m gpuslo exporter --listen 127.0.0.1:19835 --state-dir "$STATE/exporter" >> "$OUT/exporter.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 120); do [ "$(metric 'gpuslo_gpu_usable{')" != "" ] && break; sleep 0.25; done
}
start_exporter
log "exporter up: gpu_usable=$(metric 'gpuslo_gpu_usable{')"
scrape > "$OUT/metrics-healthy.prom"
sleep 1
BUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | sed 's/^0000//; s/\.0$//')
T0=$(date +%s.%N)
echo "NVRM: Xid (PCI:$BUS): 79, pid=0, name=gpuslo-injected-test, GPU has fallen off the bus." > /dev/kmsg
for _ in $(seq 1 400); do [ "$(metric 'gpuslo_gpu_usable{')" = "0.0" ] && break; sleep 0.025; done
T1=$(date +%s.%N)
log "injected Xid 79 at $BUS -> gpu_usable=$(metric 'gpuslo_gpu_usable{') after $(python3 -c "print(round($T1 - $T0, 2))") s (xid check interval 30 s)"
scrape > "$OUT/metrics-after-xid.prom"
log "xid counter before restart: $(grep '^gpuslo_xid_events_total' "$OUT/metrics-after-xid.prom")"
kill -9 "$PID"; wait "$PID" 2>/dev/null
start_exporter
sleep 2
scrape > "$OUT/metrics-after-restart.prom"
log "after kill -9 and restart: gpu_usable=$(metric 'gpuslo_gpu_usable{'); $(grep '^gpuslo_xid_events_total' "$OUT/metrics-after-restart.prom")"
kill "$PID"; wait "$PID" 2>/dev/null
log "exporter exit on SIGTERM: $?"
