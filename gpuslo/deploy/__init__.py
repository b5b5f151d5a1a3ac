"""Generators of the repository's deploy/ files that no subcommand writes (composition tier: they
wrap what `gpuslo rules` and the NPD generator produced). `kubernetes`: the PrometheusRule and the
node-problem-detector ConfigMap of deploy/kubernetes/."""
