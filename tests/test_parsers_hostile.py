"""Issue 12: every parser is linear-time and raises nothing untyped.

1. A 1 MB pathological input (a line of spaces after a field name, half a million blank lines,
   `NVRM: Xid (PCI:` repeated) is parsed well under 5 s by every parser (a linear parser takes
   tenths; the ibstatus field pattern took 10.7 s on 40k spaces, `inspect` 21 s on 80,000 blank
   lines). The bound only catches super-linear blow-ups; speed is bench/'s business.
2. Hypothesis fuzzes every parser with a fixed budget: arbitrary text built from the tokens the
   parsers look for, asserting no exception other than gpuslo's typed errors.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuslo.errors import GpusloError
from gpuslo.exporter.evidence.dcgm import dcgmi
from gpuslo.exporter.evidence.dcgm.page import parse_dcgm_page
from gpuslo.exporter.evidence.fabric import tools
from gpuslo.exporter.evidence.fabric.ports import parse_rate
from gpuslo.exporter.evidence.hpc_jobs import parse_job_file
from gpuslo.exporter.evidence.kernel_log.kmsg import parse_kmsg_text
from gpuslo.exporter.evidence.kernel_log.parse import parse_timestamp
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from gpuslo.exporter.evidence.nvidia_smi import csv_output, nvlink, proc, query, table
from gpuslo.exporter.evidence.slurm import parse_node_text
from gpuslo.exporter.inspect.kinds import InspectOptions, inspect_text
from gpuslo.goodput.journal import parse_journal

PARSERS: dict[str, tuple[Callable[[str], object], str]] = {
    # name: (parser, the start of its own input, so the pathological part reaches its patterns)
    "ibstat": (tools.parse_ibstat, "CA 'mlx5_0'\n\tPort 1:\n\t\tState: "),
    "ibstat bare": (tools.parse_ibstat, "State: "),
    "ibstatus": (tools.parse_ibstatus, "Infiniband device 'mlx5_0' port 1 status:\n\tstate: "),
    "fi_info": (tools.parse_fi_info, "provider: efa\n    domain: "),
    "ibdev2netdev": (tools.parse_ibdev2netdev, "mlx5_0 port 1 ==> "),
    "rate": (parse_rate, "100 Gb/sec "),
    "dcgm page": (parse_dcgm_page, 'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="'),
    "dcgmi dmon": (dcgmi.parse_dmon, "#Entity   XIDER\nGPU 0 "),
    "dcgmi health": (dcgmi.parse_health, "Overall Health: "),
    "nvidia-smi -q": (lambda t: query.parse_query(t, "q"), "GPU 00000000:18:00.0\n    Product "),
    "nvidia-smi -q -x": (lambda t: query.parse_xml(t, "x"), "<?xml version=\"1.0\" ?>\n<nvidia"),
    "nvidia-smi nvlink": (lambda t: nvlink.parse_nvlink(t, "n"), "GPU 0: NVIDIA H200 (UUID: "),
    "nvidia-smi csv": (lambda t: csv_output.parse_csv(t, "c"), "index, name\n0, "),
    "nvidia-smi table": (lambda t: table.parse_table(t, "t"), "|   0  NVIDIA H200   "),
    "nvml errors": (lambda t: proc.parse_nvml_errors(t, "e"), "Unable to determine the device "),
    "proc driver": (lambda t: proc.parse_proc_driver(t, "p"), "Model: \t "),
    "kernel log": (parse_kernel_log, "[    1.000000] NVRM: Xid (PCI:0000:18:00): "),
    "kmsg": (lambda t: parse_kmsg_text(t, "k"), "6,1,1,-;"),
    "kernel timestamp": (lambda t: parse_timestamp(t), "[ "),
    "slurm node": (lambda t: parse_node_text(t, "n"), "NodeName=n State=IDLE Reason="),
    "hpc job file": (parse_job_file, "1234 "),
    "journal": (lambda t: parse_journal(t, "j"), '{"v": 1, "t": '),
    "inspect": (lambda t: inspect_text(t, "i", InspectOptions()), ""),
}
MB = 1_000_000
FILLS = {
    "spaces": " " * MB + "x",
    "a line of spaces": "\n" + " " * MB + "\n",  # the ibstatus ReDoS (spaces fit its key)
    "spaced value": "x" + " " * MB + "y",  # `(.*?)\s*$` retried the run at every step
    "blank lines": " \n" * (MB // 2) + "x",  # `\s*` across newlines under MULTILINE
    "Xid openings": "NVRM: Xid (PCI:" * (MB // 15),  # an unbounded address rescanned per match
    "colons": ": " * (MB // 2) + "x",
    "long rows": ("| 0 a" + " " * 3990 + "b |\n") * (MB // 4000),  # lines at a 4 KiB cap
}


def _expect_typed(call: Callable[[], object]) -> None:
    with contextlib.suppress(GpusloError):  # a typed error naming the source is a fine answer
        call()


@pytest.mark.timeout(60)  # a super-linear parser fails here instead of hanging the suite
@pytest.mark.parametrize("fill", list(FILLS))
@pytest.mark.parametrize("name", list(PARSERS))
def test_a_1_mb_pathological_input_is_parsed_in_linear_time(name: str, fill: str) -> None:
    parser, head = PARSERS[name]
    text = head + FILLS[fill]
    started = time.perf_counter()
    _expect_typed(lambda: parser(text))
    took = time.perf_counter() - started
    assert took < 5.0, f"{name} took {took:.1f} s on 1 MB of {fill}"


TOKENS = st.sampled_from([
    "NVRM: Xid (PCI:0000:18:00): 79, ", "SXid (PCI:0000:04:00.0): 22013, ", "[  12.5] ", "\n",
    " ", "\t", ":", ",", "|", "'", "(", ")", "CA 'mlx5_0'\n", "\tPort 1:\n", "\t\tState: Active\n",
    "Infiniband device 'mlx5_0' port 1 status:\n", "\tstate:\t 4: ACTIVE\n", "Rate: 400\n",
    "GPU 00000000:18:00.0\n", "    Product Name : NVIDIA H200\n", "<nvidia_smi_log>", "</gpu>",
    "index, name, pci.bus_id\n", "0, NVIDIA H200, 00000000:18:00.0\n", "6,1,100,-;", " DEVICE=x\n",
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-1"} 79\n', "# TYPE x gauge\n", "#Entity XIDER\n",
    "GPU 0 12\n", "Overall Health: Failure\n", "{", "}", '"Overall Health"', "NodeName=n ",
    "Reason=psu [root@2026]", "provider: efa\n", "    domain: efa_0-rdm\n",
    "mlx5_0 port 1 ==> ib0 (Up)\n",
    "+---", "| 0 NVIDIA H200 On | 00000000:18:00.0 Off | 0 |\n", "ERR!", "N/A", "\x00", "\ufffd",
    '{"v": 1, "t": 1, "event": {}}\n', "Unable to determine the device handle for GPU0000:18:00.0",
    "Model: NVIDIA H200\n", "Bus Location: 0000:18:00.0\n", "100 Gb/sec (4X EDR)",
])
TEXTS = st.lists(TOKENS | st.text(max_size=6), max_size=40).map("".join)


@pytest.mark.parametrize("name", list(PARSERS))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
def test_fuzz_no_parser_raises_an_untyped_exception(name: str, text: str) -> None:
    parser, head = PARSERS[name]
    _expect_typed(lambda: parser(text))
    _expect_typed(lambda: parser(head + text))
