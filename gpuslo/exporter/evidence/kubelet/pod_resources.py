"""GPU devices the kubelet gave each container, from its pod-resources API (evidence, no judging).

The kubelet serves gRPC `v1.PodResourcesLister/List` on a unix socket
(`/var/lib/kubelet/pod-resources/kubelet.sock`, `DEFAULT_SOCKET`; dcgm-exporter's
`--pod-resources-kubelet-socket`). Its answer lists, per pod and container, the device ids each
device plugin allocated, by resource name. NVIDIA's device plugin names full GPUs
`nvidia.com/gpu` (`nvidia.com/gpu.shared` when time-sliced replicas are renamed) and MIG slices
`nvidia.com/mig-<profile>` (`RESOURCE_PREFIXES`); other resources are ignored.

- `parse_list_response(response)` (pure): the `ListPodResourcesResponse` message → `PodDevice`
  records, in the kubelet's order, device ids as the plugin wrote them (`GPU-<uuid>`,
  `MIG-<uuid>`, `GPU-<uuid>::<replica>`, an index): mapping them to a GPU is not this module's.
- `read_pod_resources(socket, timeout_s)` (I/O): one `List` call with a deadline. Raises
  `KubeletUnavailable` with a `names.REASONS` reason: `dependency_missing` when the socket does
  not exist (no kubelet, or the hostPath is not mounted), `check_timeout` when the kubelet does
  not answer within `timeout_s` (a hung socket), `tool_error` for any other gRPC failure
  (connection refused, the API unimplemented on a kubelet older than 1.20).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grpc

from gpuslo.errors import SourceUnavailable
from gpuslo.exporter.evidence.kubelet import api_pb2, api_pb2_grpc

DEFAULT_SOCKET = "/var/lib/kubelet/pod-resources/kubelet.sock"
DEFAULT_TIMEOUT_S = 5.0
RESOURCE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-")
MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # the kubelet's own limit for this API


class KubeletUnavailable(SourceUnavailable):
    """The pod-resources API could not tell: `reason` is dependency_missing, check_timeout or
    tool_error (names.REASONS, layer observability)."""


@dataclass(frozen=True)
class PodDevice:
    """One device id the kubelet allocated to one container (`resource`: the resource name,
    e.g. `nvidia.com/gpu`; `device_id`: as the device plugin wrote it)."""

    namespace: str
    pod: str
    container: str
    resource: str
    device_id: str


def is_gpu_resource(resource: str) -> bool:
    """True for NVIDIA GPU and MIG resource names (`RESOURCE_PREFIXES`). Pure."""
    return resource.startswith(RESOURCE_PREFIXES)


def parse_list_response(response: Any) -> list[PodDevice]:
    """The GPU devices of a `ListPodResourcesResponse` (or anything with its fields). Pure."""
    return list(_devices(response.pod_resources))


def _devices(pods: Iterable[Any]) -> Iterable[PodDevice]:
    for pod in pods:
        for container in pod.containers:
            for group in container.devices:
                if not is_gpu_resource(group.resource_name):
                    continue
                for device_id in group.device_ids:
                    yield PodDevice(pod.namespace, pod.name, container.name,
                                    group.resource_name, device_id)


def read_pod_resources(socket_path: str | os.PathLike[str] = DEFAULT_SOCKET,
                       timeout_s: float = DEFAULT_TIMEOUT_S) -> list[PodDevice]:
    """Call `List` on the kubelet at `socket_path` and return its GPU devices (see the module
    docstring for the errors raised)."""
    path = os.fspath(socket_path)
    if not os.path.exists(path):
        raise KubeletUnavailable("dependency_missing",
                                 f"kubelet pod-resources socket {path}: no such file")
    options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
               ("grpc.enable_http_proxy", 0)]
    try:
        with grpc.insecure_channel(f"unix://{os.path.abspath(path)}", options=options) as channel:
            stub = api_pb2_grpc.PodResourcesListerStub(channel)
            response = stub.List(api_pb2.ListPodResourcesRequest(), timeout=timeout_s)
    except grpc.RpcError as error:
        code = error.code() if hasattr(error, "code") else None
        detail = error.details() if hasattr(error, "details") else str(error)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            raise KubeletUnavailable(
                "check_timeout", f"kubelet pod-resources {path}: no answer in {timeout_s:g} s"
            ) from None
        name = code.name if code is not None else "error"
        raise KubeletUnavailable("tool_error",
                                 f"kubelet pod-resources {path}: {name}: {detail}") from None
    return parse_list_response(response)
