"""node-problem-detector (NPD) custom-plugin output, and the custom-plugin-monitor config.

Protocol (kubernetes/node-problem-detector docs/custom_plugin_monitor.md): NPD runs the plugin
every `invoke_interval`; exit 0 = OK, 1 = NonOK (the condition is set), 2 = Unknown (NPD leaves
the condition as it was); stdout is the condition message, cut to `max_output_length` (80).
Because "Unknown" would keep a stale OK, gpuslo exits 1 on anything it cannot vouch for: an
unknown verdict, its own error, a missing dependency (shared/DESIGN.md §8).

`monitor_config()` builds the config with one condition and one rule per check (30 s interval),
plus the return-to-service gate's (`GpusloValidationProblem`: `gpuslo check --check validation`
runs every check, steps the gate and runs its validators, so its rule has `GATE_TIMEOUT`; the
per-check rules read the gate without stepping it, so each check's condition holds while the
gate holds a GPU for that check's fault), deterministically; regenerate the committed file with

    python -m gpuslo.exporter.npd deploy/node-problem-detector/gpuslo-monitor.json
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.errors import GpusloError
from gpuslo.exporter.checks.registry import CHECKS, default_names
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.files import write_atomic
from gpuslo.verdict import node_verdict, problems

MAX_MESSAGE_BYTES = 80
EXIT_OK, EXIT_PROBLEM = 0, 1
INTERVAL = "30s"
PLUGIN_TIMEOUT = "25s"  # NPD kills the plugin after this; gpuslo ends within --check-timeout + 1 s
CHECK_TIMEOUT_S = 20
GATE = "validation"
GATE_TIMEOUT = "90s"  # every check, then the active probe on the validating GPUs
GPUSLO_PATH = "/usr/local/bin/gpuslo"


def truncate(text: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """`text` on one line, cut to at most `limit` UTF-8 bytes without splitting a character."""
    line = " ".join(text.split())
    data = line.encode()
    if len(data) <= limit:
        return line
    return data[: limit - 3].decode(errors="ignore") + "..."


def plugin_answer(snapshot: NodeSnapshot) -> tuple[int, str]:
    """(exit code, message) for NPD: 0 only when the checks' verdict is healthy."""
    verdict = node_verdict(snapshot.results)
    if verdict == names.VERDICT_HEALTHY:
        checks = sorted({r.check for r in snapshot.results})
        return EXIT_OK, truncate(f"ok: {', '.join(checks)}")
    bad = problems(snapshot.results)
    if not bad:
        return EXIT_PROBLEM, truncate(f"{verdict}: no results")
    first = bad[0]
    where = f" gpu{first.gpu}" if first.gpu else ""
    more = f" (+{len(bad) - 1})" if len(bad) > 1 else ""
    text = f"{first.check}{where} {first.status} {first.reason}{more}: {first.message}"
    return EXIT_PROBLEM, truncate(text)


def run_plugin(cycle: Callable[[], NodeSnapshot]) -> int:
    """Run one cycle, print the NPD message, return the NPD exit code (errors → 1, never 2)."""
    try:
        code, message = plugin_answer(cycle())
    except GpusloError as error:
        print(f"gpuslo check: error: {error}", file=sys.stderr)  # whole, for the NPD log
        short = re.sub(r"(?<![\w.])/\S*/", "", str(error))  # directories out: 80 bytes are few
        code, message = EXIT_PROBLEM, truncate(f"gpuslo error: {short}")
    except Exception as error:  # noqa: BLE001 - NPD must see NonOK, not a traceback and exit 2
        code, message = EXIT_PROBLEM, truncate(f"gpuslo crashed: {type(error).__name__}: {error}")
    print(message)
    return code


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def monitor_config(check_names: list[str] | None = None) -> dict[str, Any]:
    """The custom-plugin-monitor config: a condition and a rule per check, 30 s interval."""
    chosen = check_names or [*default_names(active=False), GATE]
    conditions, rules = [], []
    for name in chosen:
        condition = f"Gpuslo{_camel(name)}Problem"
        what = CHECKS.get(name, "return-to-service gate: GPUs held, validating or failed")
        conditions.append(
            {
                "type": condition,
                "reason": f"Gpuslo{_camel(name)}IsOk",
                "message": f"gpuslo {name}: {what}",
            }
        )
        rules.append(
            {
                "type": "permanent",
                "condition": condition,
                "reason": f"Gpuslo{_camel(name)}Failed",
                "path": GPUSLO_PATH,
                "timeout": GATE_TIMEOUT if name == GATE else PLUGIN_TIMEOUT,
                "args": [
                    "check",
                    "--format",
                    "npd",
                    "--check",
                    name,
                    "--check-timeout",
                    str(CHECK_TIMEOUT_S),
                ],
            }
        )
    return {
        "plugin": "custom",
        "pluginConfig": {
            "invoke_interval": INTERVAL,
            "timeout": PLUGIN_TIMEOUT,
            "max_output_length": MAX_MESSAGE_BYTES,
            "concurrency": 3,
            "enable_message_change_based_condition_update": False,
        },
        "source": "gpuslo-custom-plugin-monitor",
        "metricsReporting": True,
        "conditions": conditions,
        "rules": rules,
    }


def render_monitor_config(check_names: list[str] | None = None) -> str:
    """The config as JSON text: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(monitor_config(check_names), sort_keys=True, indent=2) + "\n"


def main(argv: list[str]) -> int:
    """Write the config to argv[0] atomically (temp file + rename)."""
    if len(argv) != 1:
        print("usage: python -m gpuslo.exporter.npd OUTPUT.json", file=sys.stderr)
        return 2
    write_atomic(Path(argv[0]), render_monitor_config().encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
