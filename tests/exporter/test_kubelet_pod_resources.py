"""GPU → pod mapping from the kubelet's pod-resources API, against a real gRPC server speaking the
vendored api.proto on a unix socket (grpc.server + the generated servicer), as the kubelet does.

The node: 8 GPUs of the NVML replay (UUIDs …a4a0 … …a4a7); GPU 2 is in MIG mode with two MIG
devices. The pods: a full GPU by UUID, two time-sliced replicas of GPU 1 in two pods, a MIG slice
of GPU 2 (new UUID form) and one in the old `MIG-GPU-<uuid>/<gi>/<ci>` form, a GPU by index
(`DEVICE_ID_STRATEGY=index`), a CPU-only container, a non-GPU device, and one id no GPU explains.
"""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from conftest import REPO

from gpuslo.exporter.evidence.kubelet import api_pb2, api_pb2_grpc
from gpuslo.exporter.evidence.kubelet.pod_resources import (
    KubeletUnavailable,
    PodDevice,
    read_pod_resources,
)
from gpuslo.exporter.evidence.nvml import read_node
from gpuslo.exporter.jobs.allocations import KubeletAllocations, gpu_of, pod_allocations
from gpuslo.exporter.snapshot import GpuAllocation, GpuInfo

KUBELET = REPO / "gpuslo" / "exporter" / "evidence" / "kubelet"
REPLAY = REPO / "gpuslo" / "data" / "nvml_replay"
UUID = "GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4a{}"
MIG = ("MIG-8e1a2b3c-0000-5a5a-9c9c-00000000aa01", "MIG-8e1a2b3c-0000-5a5a-9c9c-00000000aa02")
GHOST = "GPU-00000000-dead-beef-0000-000000000000"  # no GPU of this node
GPUS = tuple(GpuInfo(str(i), UUID.format(i), "", "NVIDIA H200", "hopper",
                     MIG if i == 2 else ()) for i in range(8))  # fmt: skip


def pod(namespace: str, name: str, *containers: tuple[str, list[tuple[str, list[str]]]]):
    return api_pb2.PodResources(
        namespace=namespace, name=name,
        containers=[api_pb2.ContainerResources(
            name=c, devices=[api_pb2.ContainerDevices(resource_name=r, device_ids=ids)
                             for r, ids in groups]) for c, groups in containers])  # fmt: skip


PODS = [
    pod("ml", "llama-0", ("trainer", [("nvidia.com/gpu", [UUID.format(0)])])),
    pod("ml", "notebook-a", ("lab", [("nvidia.com/gpu", [f"{UUID.format(1)}::0"])])),
    pod("ml", "notebook-b", ("lab", [("nvidia.com/gpu.shared", [f"{UUID.format(1)}::3"])])),
    pod("infer", "mig-small", ("server", [("nvidia.com/mig-1g.18gb", [MIG[1]])])),
    pod("infer", "mig-old", ("server", [("nvidia.com/mig-3g.71gb",
                                         [f"MIG-{UUID.format(2)}/1/0"])])),
    pod("batch", "by-index", ("job", [("nvidia.com/gpu", ["5"])])),
    pod("web", "cpu-only", ("nginx", [])),
    pod("net", "sriov", ("app", [("openshift.io/mlnxnics", ["0000:3b:00.2"])])),
    pod("ml", "ghost", ("trainer", [("nvidia.com/gpu", [GHOST])])),
]


class Lister(api_pb2_grpc.PodResourcesListerServicer):
    """The kubelet's side: answers List from PODS, or hangs until `release` is set."""

    def __init__(self, hang: bool = False) -> None:
        self.hang, self.release, self.calls = hang, threading.Event(), 0

    def List(self, request, context):  # noqa: N802 - the gRPC method name
        self.calls += 1
        if self.hang:
            self.release.wait(30)
        return api_pb2.ListPodResourcesResponse(pod_resources=PODS)


def serve(path: Path, lister: Lister) -> grpc.Server:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    api_pb2_grpc.add_PodResourcesListerServicer_to_server(lister, server)
    assert server.add_insecure_port(f"unix://{path}") != 0
    server.start()
    return server


@pytest.fixture
def kubelet(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "kubelet.sock"
    server = serve(path, Lister())
    yield path
    server.stop(0)


def test_generated_code_is_what_grpcio_tools_writes_from_the_vendored_proto(tmp_path: Path):
    pytest.importorskip("grpc_tools", reason="grpcio-tools (the test extra) is not installed")
    target = tmp_path / "gpuslo" / "exporter" / "evidence" / "kubelet"
    target.mkdir(parents=True)
    (target / "api.proto").write_bytes((KUBELET / "api.proto").read_bytes())
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I.", "--python_out=.",
                    "--grpc_python_out=.", "gpuslo/exporter/evidence/kubelet/api.proto"],
                   cwd=tmp_path, check=True, capture_output=True, timeout=60)  # fmt: skip
    for name in ("api_pb2.py", "api_pb2_grpc.py"):
        assert filecmp.cmp(target / name, KUBELET / name, shallow=False), (
            f"{name} drifted from api.proto: regenerate it (see api.proto's header)")


def test_the_vendored_proto_is_the_kubelet_v1_service():
    service = api_pb2.DESCRIPTOR.services_by_name["PodResourcesLister"]
    assert api_pb2.DESCRIPTOR.package == "v1"
    assert {m.name for m in service.methods} == {"List", "GetAllocatableResources", "Get"}
    text = (KUBELET / "api.proto").read_text()
    assert "Apache License, Version 2.0" in text and "option (gogoproto" not in text


def test_real_server_each_gpu_resource_read_other_resources_ignored(kubelet: Path):
    devices = read_pod_resources(kubelet, timeout_s=5)
    assert {(d.pod, d.device_id) for d in devices} == {
        ("llama-0", UUID.format(0)), ("notebook-a", f"{UUID.format(1)}::0"),
        ("notebook-b", f"{UUID.format(1)}::3"), ("mig-small", MIG[1]),
        ("mig-old", f"MIG-{UUID.format(2)}/1/0"), ("by-index", "5"),
        ("ghost", "GPU-00000000-dead-beef-0000-000000000000")}  # fmt: skip


def test_device_ids_map_to_their_physical_gpu(kubelet: Path):
    allocations = pod_allocations(read_pod_resources(kubelet, timeout_s=5), GPUS)
    assert allocations == [
        GpuAllocation("0", UUID.format(0), "ml", "llama-0", "trainer"),
        GpuAllocation("1", UUID.format(1), "ml", "notebook-a", "lab"),  # time-sliced replica ::0
        GpuAllocation("1", UUID.format(1), "ml", "notebook-b", "lab"),  # and ::3, another pod
        GpuAllocation("2", UUID.format(2), "infer", "mig-old", "server"),  # MIG-GPU-…/1/0
        GpuAllocation("2", UUID.format(2), "infer", "mig-small", "server"),  # MIG-… via NVML
        GpuAllocation("5", UUID.format(5), "batch", "by-index", "job"),
        # no GPU of this node: still exported, with the id as uuid and no index (joins nothing)
        GpuAllocation("", "GPU-00000000-dead-beef-0000-000000000000", "ml", "ghost", "trainer"),
    ]


def test_two_slices_of_one_gpu_in_one_container_count_once():
    devices = [PodDevice("ml", "p", "c", "nvidia.com/mig-1g.18gb", m) for m in MIG]
    devices.append(PodDevice("ml", "p", "c", "nvidia.com/mig-1g.18gb", f"{MIG[0]}::1"))
    assert pod_allocations(devices, GPUS) == [GpuAllocation("2", UUID.format(2), "ml", "p", "c")]
    assert gpu_of("GPU-4C1D2E3F-0A1B-2C3D-4E5F-60718293A4A3", GPUS) == GPUS[3]  # case
    assert gpu_of("2:1", GPUS) == GPUS[2] and gpu_of("9", GPUS) is None
    assert gpu_of("MIG-unknown", GPUS) is None and gpu_of("", GPUS) is None


def test_source_states_ok_unknown_and_not_configured(kubelet: Path, tmp_path: Path):
    source = KubeletAllocations(kubelet, lambda: GPUS)
    source.sample()
    assert source.state().status == "ok" and len(source.allocations()) == 7
    missing = KubeletAllocations(tmp_path / "absent.sock", lambda: GPUS)
    missing.sample()
    assert (missing.state().status, missing.state().reason) == ("unknown", "dependency_missing")
    assert missing.allocations() == []
    off = KubeletAllocations(None, lambda: GPUS)
    off.sample()
    assert (off.state().status, off.allocations()) == ("not_configured", [])


def test_a_hung_kubelet_is_check_timeout_within_the_deadline(tmp_path: Path):
    lister = Lister(hang=True)
    path = tmp_path / "hung.sock"
    server = serve(path, lister)
    try:
        started = time.monotonic()
        with pytest.raises(KubeletUnavailable) as caught:
            read_pod_resources(path, timeout_s=0.5)
        assert caught.value.reason == "check_timeout"
        assert time.monotonic() - started < 5  # the deadline, not the 30 s hang
        source = KubeletAllocations(path, lambda: GPUS, timeout_s=0.5)
        source.sample()
        assert (source.state().status, source.state().reason) == ("unknown", "check_timeout")
        assert source.allocations() == [] and lister.calls == 2
    finally:
        lister.release.set()
        server.stop(0)


def test_a_socket_nobody_listens_on_is_tool_error(tmp_path: Path):
    path = tmp_path / "dead.sock"
    server = serve(path, Lister())
    # the kubelet went away; a stale file may remain. Wait for the stop to finish: gRPC may
    # unlink its socket after stop() returns, which raced the check below in a loaded full run
    # (the file gone by the read: dependency_missing).
    server.stop(0).wait(10)
    if not path.exists():
        path.write_text("")  # a stale non-socket file in its place
    with pytest.raises(KubeletUnavailable) as caught:
        read_pod_resources(path, timeout_s=2)
    assert caught.value.reason == "tool_error"


def test_nvml_gives_each_mig_device_uuid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    node = json.loads((REPLAY / "h200x1.json").read_text())
    node["gpus"][0]["mig_devices"] = [MIG[0], None, MIG[1]]  # slot 1 empty
    recorded = tmp_path / "mig.json"
    recorded.write_text(json.dumps(node))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(recorded))
    monkeypatch.syspath_prepend(str(REPLAY))
    sys.modules.pop("pynvml", None)
    try:
        import pynvml  # the replay, answering from `recorded`

        assert read_node(pynvml).gpus[0].mig_uuids == MIG
        plain = json.loads((REPLAY / "h200x1.json").read_text())  # MIG not supported
        recorded.write_text(json.dumps(plain))
        pynvml._NODE = None
        assert read_node(pynvml).gpus[0].mig_uuids is None
    finally:
        sys.modules.pop("pynvml", None)


def test_exporter_once_publishes_the_pods_of_the_gpus(kubelet: Path, tmp_path: Path):
    env = {**os.environ, "GPUSLO_NVML_PATH": str(REPLAY)}
    kernel_log = tmp_path / "kern.log"
    kernel_log.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "gpuslo", "exporter", "--once", "--kernel-log", str(kernel_log),
         "--path.sysfs", str(tmp_path), "--pod-resources-kubelet-socket", str(kubelet),
         "--state-dir", str(tmp_path / "s")],
        capture_output=True, text=True, env=env, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [x for x in done.stdout.splitlines() if x.startswith("gpuslo_gpu_allocation")]
    assert ('gpuslo_gpu_allocation{container="trainer",gpu="0",hpc_job="",namespace="ml",'
            f'pod="llama-0",uuid="{UUID.format(0)}"}} 1.0') in lines
    assert 'gpuslo_gpu_allocation_source{reason="",source="kubelet",status="ok"} 1.0' in lines
    assert ('gpuslo_gpu_allocation_source{reason="",source="hpc_job_mapping",'
            'status="not_configured"} 1.0') in lines
    assert sum("by-index" in x for x in lines) == 1  # "5": GPU 5 of the replay's inventory
