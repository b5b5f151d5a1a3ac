"""The evidence and expectation flags `gpuslo check` and `gpuslo exporter` share, and the
Runner they build from them.

Both point the checks at the same evidence (`--path.sysfs`, a kernel-log file, a dcgm-exporter
URL, ...). Flags win over the `--config` file, which wins over the defaults.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gpuslo.cli.source_args import DEFAULT_TIMEOUT_S
from gpuslo.cli.source_args import add_source_arguments as add_source_arguments  # re-exported
from gpuslo.cli.terminal import directory
from gpuslo.errors import UsageError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.registry import load_checks
from gpuslo.exporter.gate import ReturnToService, gate_for
from gpuslo.exporter.node_config import NodeConfig, load_node_config
from gpuslo.exporter.policy.return_to_service import load_gate_policy
from gpuslo.exporter.policy.speeds import load_speed_policy
from gpuslo.exporter.policy.xid import load_policy
from gpuslo.exporter.runner import Runner
from gpuslo.exporter.state import default_state_dir


def _config(args: argparse.Namespace) -> NodeConfig:
    path = getattr(args, "config", None)
    return load_node_config(path) if path else NodeConfig()


def node_config(args: argparse.Namespace) -> NodeConfig:
    """The `--config` file's NodeConfig (empty without one); ConfigError/InputError when bad."""
    return _config(args)


def _pick(flag: Any, configured: Any, default: Any = None) -> Any:
    return flag if flag is not None else (configured if configured is not None else default)


def context_from_args(args: argparse.Namespace, config: NodeConfig | None = None) -> CheckContext:
    """The CheckContext for parsed `add_source_arguments` flags merged over `--config`.

    Raises ConfigError/InputError for a bad config file or Xid policy overlay (checked here, once,
    so it is one error at start and not an `unknown` every run), UsageError for a bad flag value."""
    config = config if config is not None else _config(args)
    get = lambda name: getattr(args, name, None)  # noqa: E731
    expect_gpus = _pick(get("expect_gpus"), config.expect_gpus)
    if expect_gpus is not None and expect_gpus < 1:
        raise UsageError(f"--expect-gpus must be 1 or more, got {expect_gpus}")
    policy_path = _pick(get("policy"), config.policy)
    load_policy(policy_path)
    load_speed_policy(config.probe_speeds)  # a bad overlay is one error at start
    load_gate_policy(config.validation or None)
    kernel_log = _pick(get("kernel_log"), config.kernel_log)
    extra = {"expect_nvlinks": config.expect_nvlinks, "checks": config.checks,
             "degradation_status": config.degradation_status,
             "port_error_threshold": config.port_error_threshold,
             "probe_speeds": config.probe_speeds}
    return CheckContext(
        sysfs=Path(get("path_sysfs") or "/sys"),
        procfs=Path(get("path_procfs") or "/proc"),
        kernel_log=Path(kernel_log) if kernel_log else None,
        dcgm_url=_pick(get("dcgm_url"), config.dcgm_url),
        expect_gpus=expect_gpus,
        expect_network_devices=_pick(
            get("expect_network_devices"), config.expect_network_devices or None, {}
        ),
        instance_type=_pick(get("instance_type"), config.instance_type, ""),
        state_dir=directory(_pick(get("state_dir"), config.state_dir) or default_state_dir(),
                            "--state-dir"),
        timeout_s=float(_pick(get("check_timeout"), config.check_timeout_s, DEFAULT_TIMEOUT_S)),
        active=bool(get("active")),
        policy_path=policy_path,
        config={k: v for k, v in extra.items() if v},
        fabricmanager_log=_path(get("fabricmanager_log")),
        hostengine_log=_path(get("hostengine_log")),
    )


def gate_from_args(args: argparse.Namespace, context: CheckContext,
                   background: bool = False) -> ReturnToService:
    """The return-to-service gate for the flags' node (its config's `validation:` over the
    packaged policy; ConfigError for a bad field); `background`: validators on their own thread
    (the serving exporter)."""
    return gate_for(context, _config(args).validation or None, background)
def _path(text: str | None) -> Path | None:
    return Path(text) if text else None


def runner_from_args(
    args: argparse.Namespace, check_names: list[str] | None = None, interval_s: float | None = None
) -> Any:
    """A Runner for the parsed flags: the chosen checks (default: `--check`, else all), with the
    per-check timeouts and intervals of the config file (`interval_s`, the exporter's
    `--interval`, overrides every interval). The node name is `--node`, else the config's `node`,
    else the host name. The caller closes it."""
    config = _config(args)
    context = context_from_args(args, config)
    checks = load_checks(check_names or getattr(args, "check", None), active=context.active)
    timeouts = {n: s["timeout_s"] for n, s in config.checks.items() if "timeout_s" in s}
    intervals = {c.name: config.interval_s for c in checks} if config.interval_s else {}
    intervals.update({n: s["interval_s"] for n, s in config.checks.items() if "interval_s" in s})
    if interval_s is not None:
        intervals = {c.name: interval_s for c in checks}
    node = _pick(getattr(args, "node", None), config.node)
    return Runner(checks, context, timeouts=timeouts, intervals=intervals, node=node)
