"""The kubelet's pod-resources API (gRPC `v1.PodResourcesLister`): which container holds which
device. `api.proto` is vendored from k8s.io/kubelet; `api_pb2*.py` are generated from it (see the
proto's header); `pod_resources` reads and parses it."""
