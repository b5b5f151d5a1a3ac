"""Checks that misbehave on purpose, for the runner and fault-injection tests.

Kept free of pytest imports: the runner's children import this module (by the pickled class
reference) and must start fast. No test functions here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from gpuslo.errors import DependencyMissing, ParseError, ToolError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.verdict import CheckResult


@dataclass
class Behaving:
    """A check doing `behaviour`: ok, slow, hang, crash, exit, dependency, tool, parse, bug,
    garbage, empty, misnamed, orphan (leaves a grandchild sleeping), tool-hang (its tool hangs)."""

    name: str
    behaviour: str = "ok"
    interval_s: float = 30.0
    dependencies: tuple[str, ...] = ()

    def run(self, context: CheckContext) -> list[CheckResult]:
        b = self.behaviour
        if b == "slow":
            time.sleep(context.timeout_s * 0.5)
        elif b == "hang":
            time.sleep(10**6)
        elif b == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif b == "exit":
            print("Failed to initialize NVML: Driver/library version mismatch", flush=True)
            os._exit(4)
        elif b == "dependency":
            raise DependencyMissing("tool 'ibstat' not found on PATH")
        elif b == "tool":
            raise ToolError("nvidia-smi exited 255: No devices were found")
        elif b == "parse":
            raise ParseError("nvidia-smi", "no GPU table", line=3)
        elif b == "bug":
            return [][1]
        elif b == "garbage":
            return "GPU 0: ok"  # type: ignore[return-value]
        elif b == "empty":
            return []
        elif b == "misnamed":
            return [CheckResult(check="other", scope="node", status="ok")]
        elif b == "tool-hang":
            subprocess.run([sys.executable, "-c", "import time; time.sleep(1000)"], check=False)
        elif b == "orphan":
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
        return [CheckResult(check=self.name, scope="node", status="ok", message=b)]
