"""The job side of the exporter: which workload holds which GPU, and how far each job got.

- `contract.AllocationSource`: the one contract of a GPU→workload source (in the manner of
  dcgm-exporter's `internal/pkg/transformation`, where the pod, HPC-job and DRA mappers share one
  interface); its implementations sit side by side: `allocations.KubeletAllocations` (the
  kubelet's pod-resources API) and `hpc.HpcJobAllocations` (dcgm-exporter's HPC job-mapping
  directory, written by Slurm's prolog/epilog).
- `journals.JournalTailer`: the Recorder's journals (`--journal-dir`) as job counters.
- `logs.JobLogTailer`: the lines training jobs already print (`--job-log`) as the same counters;
  `log_reading` is its pure half (which job a file is, how its lines decode, what they say).

This stage reads evidence and the shared records (`state`, `snapshot`) and the goodput
calculator; it never imports `checks` or `inspect` (tests/test_layout.py).
"""
