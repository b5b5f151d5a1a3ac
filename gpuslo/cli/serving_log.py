"""`gpuslo serving-log`: a serving replica's timeline from its engine log (issue 29, item 3).

    gpuslo serving-log LOG [--gpus N] [--markers FILE]

For a replica that only has logs (no scraped engine metrics): reads the engine's start-up,
ready, crash, shutdown and periodic throughput lines (vLLM, SGLang, TGI, Triton; wording
families in gpuslo/data/serving_log_markers.yaml, or --markers FILE) and prints one JSON object:
the replica's timeline in the serving categories (serving, idle_capacity, model_loading,
not_ready, draining, other) with reason and layer, wall seconds per category, and with --gpus
the GPU-hours per category and the lost GPU-hours by layer; `unread` lists the recurring lines
neither the training-log reader nor a serving family reads. `status` is `unknown`, with
`reason`, when the log cannot tell (no stamp, no serving marker, never seen ready).

LOG `-` is standard input (saved to a temporary file: the log is read twice).

Exit status: 0 the log was read, 1 its status is `unknown`, 2 usage or input error (one line
on stderr naming the file).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from gpuslo import names
from gpuslo.cli.terminal import whole
from gpuslo.config_file import STDIN, data_name
from gpuslo.goodput.journal import MAX_GPUS
from gpuslo.slo.serving_logs import load_wording, serving_log


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo serving-log`."""
    parser.add_argument("log", metavar="LOG", help="a serving engine's log file")
    parser.add_argument("--gpus", type=whole(1, MAX_GPUS, "GPUs"),
                        help="GPUs the replica held (1 to 1,000,000): gives GPU-hours")
    parser.add_argument("--markers", metavar="FILE",
                        help="wording families YAML replacing the packaged ones")


def run(args: argparse.Namespace) -> int:
    """Print the log's timeline document; 0, or 1 when its status is `unknown`."""
    wording = load_wording(args.markers)
    if args.log == STDIN:
        doc = _from_stdin(args.gpus, wording)
    else:
        doc = serving_log(args.log, gpus=args.gpus, wording=wording)
    print(json.dumps(doc, indent=2, sort_keys=True, allow_nan=False))
    return 1 if doc["status"] == names.STATUS_UNKNOWN else 0


def _from_stdin(gpus: int | None, wording) -> dict:
    """The document of the log on standard input: saved to a temporary file first, since the
    log is read twice (markers, then the templates nothing reads), as `<(zstd -dc FILE)` and
    /dev/stdin pipes already were (newcomer8 F6: `-` was refused while the zstd hint sent the
    operator there). Named `<stdin>` in the document."""
    with tempfile.TemporaryDirectory(prefix="gpuslo-serving-") as folder:
        path = Path(folder) / "stdin.log"
        with path.open("wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        doc = serving_log(path, gpus=gpus, wording=wording)
    doc["file"] = data_name(STDIN)
    return doc
