"""The weekly report: one call from sources to files (`pipeline.build_report`), its steps
(`inputs`), the model built from the engine's result (`build`, `figures`, `sections`, `model`)
and its renderings (`markdown`, `html`, `plots`)."""
