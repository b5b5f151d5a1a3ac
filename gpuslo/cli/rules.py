"""`gpuslo rules [--slo FILE] [--split per-cluster,global] --out DIR`: write the Prometheus
recording and alerting rules and their promtool tests for an SLO spec; prints one line per file.

Without `--split`: the files for one Prometheus (`gpuslo.alerts.generate`). With it, the parts
for many clusters and one SLO (`gpuslo.alerts.split`): `per-cluster` (every cluster's
Prometheus) and/or `global` (the global store's ruler: Thanos, Mimir or vmalert)."""

from __future__ import annotations

import argparse

from gpuslo.alerts import render, split
from gpuslo.alerts.generate import generate_rules
from gpuslo.cli.terminal import directory
from gpuslo.slo_spec import load_spec, spec_fields_text


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo rules`; the epilog lists every SLO spec field (`spec_fields_text`)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("SLO spec (--slo FILE, YAML; every field optional, the values shown are the "
                     "defaults\nexcept where a comment says `no default`):\n\n"
                     + spec_fields_text())
    parser.add_argument("--slo", metavar="FILE",
                        help="SLO spec YAML (default: built-in defaults; fields below)")
    parser.add_argument("--out", metavar="DIR", required=True, help="directory to write into")
    parser.add_argument("--split", metavar="PARTS",
                        help="rules for many clusters, comma-separated: per-cluster (each "
                             "cluster's Prometheus, external_labels cluster + remote write) "
                             "and/or global (Thanos/Mimir ruler or vmalert over the global store)")


def run(args: argparse.Namespace) -> int:
    """Write the files; prints one line per file. Raises ConfigError/InputError/UsageError."""
    parts = split.parse_parts(args.split)
    spec = load_spec(args.slo)
    out = directory(args.out, "--out")
    if parts:
        paths = render.write_atomically(out, split.build_split_files(spec, parts))
    else:
        paths = generate_rules(spec, out)
    for path in paths:
        print(path)
    return 0
