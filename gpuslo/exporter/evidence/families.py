"""GPU family (architecture) of a GPU model name, for the per-family Xid policy and the
`gpuslo_gpu_info{family}` label.

Source: NVIDIA product names and their architectures (nvidia-smi's "Product Architecture" field
gives the same answer where the driver reports it; prefer it when present).
"""

from __future__ import annotations

import re

from gpuslo import names

# Ordered: the first pattern that matches the model name wins. Patterns match whole tokens.
_MODEL_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\b(GB\d{3}|B\d{3}A?|RTX PRO \d{4} Blackwell|RTX 50\d0)\b", "blackwell"),
    (r"\b(GH\d{3}|H\d{3}|H800|H20)\b", "hopper"),
    (r"\b(L\d{1,2}S?|L40S?|RTX \d{4} Ada|RTX 40\d0)\b", "ada"),
    (r"\b(A\d{1,3}|A800|A\d{2}X|RTX A\d{4}|RTX 30\d0)\b", "ampere"),
    (r"\b(T4|RTX 20\d0|Quadro RTX \d{4})\b", "turing"),
    (r"\b(V100|V100S|TITAN V)\b", "volta"),
    (r"\b(P100|P40|P4|P6)\b", "pascal"),
    (r"\b(M40|M60|M10|M4)\b", "maxwell"),
    (r"\b(K\d{2}X?|K80|GTX TITAN(?! X)( Black| Z)?|GTX 7\d0)\b", "kepler"),
)


def family_of(model: str, architecture: str | None = None) -> str:
    """Return the GPU family (`names.GPU_FAMILIES`) of `model` ("NVIDIA H200",
    "Tesla V100-SXM2-16GB"), or "unknown" when it cannot be told. `architecture` (nvidia-smi's
    "Product Architecture", e.g. "Hopper") wins when it names a known family."""
    if architecture:
        arch = architecture.strip().lower()
        if arch in names.GPU_FAMILIES:
            return arch
        if arch.startswith("ada"):
            return "ada"
    text = re.sub(r"[-_]", " ", model or "")
    for pattern, family in _MODEL_PATTERNS:
        if re.search(pattern, text, flags=re.IGNORECASE):
            return family
    return "unknown"
