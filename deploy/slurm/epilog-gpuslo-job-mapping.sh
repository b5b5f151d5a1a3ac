#!/bin/sh
# Slurm Epilog: remove the ending job from dcgm-exporter's HPC job-mapping directory (see
# prolog-gpuslo-job-mapping.sh); a GPU's file goes away with its last job.
dir="${GPUSLO_HPC_JOB_MAPPING_DIR:-/var/run/dcgm-job-mapping}"
job="${SLURM_JOB_ID:-}"
gpus="${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}"
[ -n "$job" ] && [ -n "$gpus" ] || exit 0
for gpu in $(echo "$gpus" | tr ',' ' '); do
  case "$gpu" in *[!0-9]*|'') continue ;; esac
  file="$dir/$gpu"
  [ -f "$file" ] || continue
  tmp="$file.$job.tmp"
  grep -vx "$job" "$file" > "$tmp"
  if [ -s "$tmp" ]; then mv "$tmp" "$file"; else rm -f "$tmp" "$file"; fi
done
exit 0
