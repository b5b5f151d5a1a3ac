#!/bin/sh
# Slurm Prolog: record which job uses which GPU in dcgm-exporter's HPC job-mapping directory
# (one file per GPU index, one job id per line). gpuslo's exporter reads it with
# --hpc-job-mapping-dir and exports gpuslo_gpu_allocation{hpc_job}; dcgm-exporter reads the same
# directory with --hpc-job-mapping-dir / DCGM_HPC_JOB_MAPPING_DIR.
# Input: SLURM_JOB_ID, and SLURM_JOB_GPUS (set for prolog/epilog) or CUDA_VISIBLE_DEVICES.
dir="${GPUSLO_HPC_JOB_MAPPING_DIR:-/var/run/dcgm-job-mapping}"
job="${SLURM_JOB_ID:-}"
gpus="${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}"
[ -n "$job" ] && [ -n "$gpus" ] || exit 0
mkdir -p "$dir" || exit 0
for gpu in $(echo "$gpus" | tr ',' ' '); do
  case "$gpu" in *[!0-9]*|'') continue ;; esac
  file="$dir/$gpu"
  if ! grep -qx "$job" "$file" 2>/dev/null; then
    tmp="$file.$job.tmp"
    { cat "$file" 2>/dev/null; echo "$job"; } > "$tmp" && mv "$tmp" "$file"
  fi
done
exit 0  # never fail a job for bookkeeping
