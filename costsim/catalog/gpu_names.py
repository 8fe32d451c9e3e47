"""How a GPU name a user pastes is read: the vendor's own spellings, not only costsim's.

``nvidia-smi --query-gpu=name`` (and NVML, ``torch.cuda.get_device_name``) prints names such as
``NVIDIA H100 80GB HBM3``, ``Tesla V100-SXM2-32GB``, ``NVIDIA A100 80GB PCIe`` or
``NVIDIA GeForce RTX 4090``; AMD's ``amd-smi`` prints ``AMD Instinct MI300X`` (market name) or
``AMD Instinct MI300X OAM`` (product name). Spellings verified in public logs are listed with
their sources in ``tests/data/gpu_names.csv``.

Such a name is split into tokens (on spaces, ``-`` and ``_``) and read as

* a leading brand (``NVIDIA``, ``Tesla``, ``GeForce``, ``AMD``, ``Instinct``), which names no
  particular card: it is dropped, but the vendor it names must be the card's;
* a memory size (``80GB``, ``80G``, ``80 GB``), a form factor (``SXM``, ``SXM2``…``SXM5``,
  ``PCIe``, ``OAM``) and a memory type (``HBM3``, ``GDDR6X``, …): the card's *variant*, which
  must agree with the catalog row it is matched to;
* everything else: the *model* (``h100``, ``rtx4090``, ``h100nvl``), compared as one key.

The matching itself (aliases first, then model + variant) is in :mod:`costsim.catalog.gpus`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from costsim.errors import name_key

# Brand words that precede the model in the vendors' product names; they never tell two cards
# apart (the Tesla brand was dropped by NVIDIA with Ampere, hence both "Tesla T4" and "NVIDIA A10").
BRAND_VENDORS = {"nvidia": "nvidia", "tesla": "nvidia", "geforce": "nvidia",
                 "amd": "amd", "instinct": "amd"}

_SIZE = re.compile(r"^(\d+)(?:gb|g)$")
# SXM2 (V100), SXM4 (A100), SXM5 (H100): the generation digit does not change the packaging.
_FORM = {"sxm": "sxm", "sxm2": "sxm", "sxm3": "sxm", "sxm4": "sxm", "sxm5": "sxm",
         "pcie": "pcie", "oam": "oam"}
_SPLIT = re.compile(r"[\s_\-]+")


@dataclass(frozen=True, slots=True)
class GpuNameParts:
    """A pasted GPU name, read as a model key plus the variant tokens it carries."""

    key: str  # the whole name without its brand, as a lookup key (aliases are matched on it)
    model: str  # the model tokens joined into one lookup key ("h100", "rtx4090")
    memory_label_gb: int | None = None
    form_factor: str | None = None  # a FormFactor value
    memory_type: str | None = None  # lower case, e.g. "hbm3"
    vendor: str | None = None  # the vendor the brand words name ("AMD Instinct": "amd")


def _tokens(name: str) -> tuple[list[str], str | None]:
    """The name's tokens after its brand words, and the vendor those words name."""
    tokens = [token for token in _SPLIT.split(name.strip().lower()) if token]
    merged: list[str] = []
    for token in tokens:  # "80 GB" -> "80gb"
        if token in ("gb", "g") and merged and merged[-1].isdigit():
            merged[-1] += token
        else:
            merged.append(token)
    vendor = None
    while merged and merged[0] in BRAND_VENDORS:
        vendor = BRAND_VENDORS[merged.pop(0)]
    return merged, vendor


def parse_gpu_name(name: str, memory_types: frozenset[str]) -> GpuNameParts:
    """Split ``name`` into model and variant tokens; ``memory_types`` are the catalog's, lower case.

    A token that repeats a variant already seen (``80GB … 80GB``) stays in the model, so that a
    name is never matched on less than it says.
    """
    tokens, vendor = _tokens(name)
    model: list[str] = []
    size: int | None = None
    form: str | None = None
    memory_type: str | None = None
    for index, token in enumerate(tokens):
        sized = _SIZE.match(token)
        if sized:
            tokens[index] = f"{sized.group(1)}gb"  # "80G" and "80GB" are one key
        if sized and size is None and model:
            size = int(sized.group(1))
        elif token in _FORM and form is None and model:
            form = _FORM[token]
        elif token in memory_types and memory_type is None and model:
            memory_type = token
        else:
            model.append(token)
    return GpuNameParts(key=name_key("".join(tokens)), model=name_key("".join(model)),
                        memory_label_gb=size, form_factor=form, memory_type=memory_type,
                        vendor=vendor)
