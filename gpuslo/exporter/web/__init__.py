"""The exporter's HTTP(S) server (`server.MetricsServer`), its web config (`config`), who gets
in (`admission`) and what it answers (`handlers`); see `server`'s docstring."""
