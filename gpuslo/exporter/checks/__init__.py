"""Node checks: one module per check, each a `Check` (see `base`). `gpuslo.exporter.runner`
runs them isolated with a deadline and turns every failure to answer into `unknown`."""
