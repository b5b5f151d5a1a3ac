"""Fleet data sources for the SLO engine: each returns a `gpuslo.slo.frames.Frames`."""
