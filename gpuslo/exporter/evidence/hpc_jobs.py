"""dcgm-exporter's HPC job-mapping directory: one file per GPU index, each listing the ids of the
jobs using that GPU (one per line). Slurm prolog/epilog scripts write it (deploy/slurm/); the
exporter publishes it as `gpuslo_gpu_allocation{hpc_job}`.

`parse_job_file(text)` is pure; `read_hpc_job_mapping(dir)` reads the directory.
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.errors import InputError


def parse_job_file(text: str) -> list[str]:
    """Job ids in one GPU's file: one per line (commas and spaces also separate), blanks and
    `#` comments skipped, duplicates dropped, order kept. Pure."""
    jobs: list[str] = []
    for line in text.splitlines():
        for word in line.split("#", 1)[0].replace(",", " ").split():
            if word not in jobs:
                jobs.append(word)
    return jobs


def read_hpc_job_mapping(directory: str | Path) -> dict[str, list[str]]:
    """{gpu index (text): [job ids]} for every file named by a GPU index (`0`, `1`, ...) in
    `directory` with at least one job; other names are ignored. A missing directory means no job
    on any GPU ({}). Raises InputError when `directory` exists but cannot be listed."""
    root = Path(directory)
    try:
        entries = sorted(root.iterdir(), key=lambda p: (len(p.name), p.name))
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise InputError(str(root), error.strerror or str(error)) from None
    out: dict[str, list[str]] = {}
    for entry in entries:
        if not entry.name.isdigit() or not entry.is_file():
            continue
        try:
            jobs = parse_job_file(entry.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue  # removed by an epilog between listing and reading
        if jobs:
            out[str(int(entry.name))] = jobs
    return out
