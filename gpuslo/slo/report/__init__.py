"""The weekly report: model, build, sections, markdown, html, plots, and its inputs."""
