"""Development scripts of the checkout, not part of the wheel (pyproject packages `gpuslo*` only):
`readme_reference` regenerates the README's reference tables (`python -m tools.readme_reference`),
`make_nvml_nodes` the NVML replay's node files (`python -m tools.make_nvml_nodes`)."""
