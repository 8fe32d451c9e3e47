"""LoRA adapters: which linear layers a target list hits, and how many parameters they add.

An adapter on a linear layer of shape in × out adds A (r × in) and B (out × r): r·(in + out)
parameters (Hu et al. 2021). Targets are Hugging Face leaf module names, matched as PEFT matches
a plain string list: a module is adapted when its leaf name is in the list. ``all-linear`` adapts
every linear layer except the output layer (PEFT's rule). The default targets are the query and
value projections (the LoRA paper's choice): ``q_proj,v_proj`` for llama-style models, ``c_attn``
for gpt2, ``query,value`` for bert, ``query_key_value`` for fused gpt_neox / bloom / falcon.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.architecture import Architecture, LinearRole, LinearShape
from costsim.domain.workload import ALL_LINEAR, LoraConfig
from costsim.errors import InputError

# BERT's pooler is a Linear named "dense" (BertPooler.dense): PEFT adapts it with "dense" targets.
POOLER_LEAF_NAME = "dense"


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterCounts:
    """Adapter parameters of one configuration, per block and outside the blocks."""

    layer_params: int  # per transformer block
    pooler_params: int  # BERT pooler, when targeted
    layer_ranks: int  # Σ r over adapted linear instances of one block (adapter activations)
    layer_adafactor_elements: int  # factored Adafactor state of one block's adapters
    num_layers: int

    @property
    def total(self) -> int:
        """All adapter parameters of the model."""
        return self.num_layers * self.layer_params + self.pooler_params


def default_targets(arch: Architecture) -> tuple[str, ...]:
    """The family's query and value projections."""
    names = arch.linear_names
    if arch.fused_qkv:
        return (names[LinearRole.QKV],)
    return (names[LinearRole.Q], names[LinearRole.V])


def module_names(arch: Architecture) -> tuple[str, ...]:
    """Leaf names of the linear layers of one block, in order, without repeats."""
    seen: dict[str, None] = {}
    for layer in arch.linear_layers():
        seen.setdefault(layer.name, None)
    return tuple(seen)


def _check_rank(arch: Architecture, layer: LinearShape, rank: int) -> None:
    """A rank above min(in, out) adds parameters without adding expressiveness: the update
    B·A of an in x out layer has rank at most min(in, out) (Hu et al. 2021), so such a rank is
    a mistake, not a choice."""
    side = min(layer.in_features, layer.out_features)
    if rank > side:
        raise InputError("", "--lora-rank", f"must be at most {side}, the smaller side of "
                                            f"{arch.name}'s {layer.name} ({layer.in_features} x "
                                            f"{layer.out_features}) (got {rank})")


def adapter_counts(arch: Architecture, lora: LoraConfig, source: str = "--lora-targets"
                   ) -> AdapterCounts:
    """Count the adapter parameters ``lora`` adds to ``arch``.

    Raises:
        InputError: a named target matches no linear layer of the architecture.
    """
    linears = arch.linear_layers()
    every = ALL_LINEAR in lora.targets
    if every and len(lora.targets) > 1:
        raise InputError("", source, f"'{ALL_LINEAR}' cannot be combined with module names "
                                     f"(got {','.join(lora.targets)})")
    known = set(module_names(arch))
    if arch.pooler:
        known.add(POOLER_LEAF_NAME)
    missing = [t for t in lora.targets if not every and t not in known]
    if missing:
        raise InputError("", source, f"{arch.name} has no linear layer named "
                                     f"{', '.join(repr(m) for m in missing)} (its linear layers: "
                                     f"{', '.join(module_names(arch))}, or {ALL_LINEAR})")
    r = lora.rank
    params = ranks = factored = 0
    for layer in linears:
        if every or layer.name in lora.targets:
            # all-linear also adapts an MoE router (hidden x experts, PEFT's rule): the user did
            # not pick it, and recipes run ranks above its expert count, so only named layers
            # and the others are held to the rank rule.
            if not (every and layer.role is LinearRole.ROUTER):
                _check_rank(arch, layer, r)
            params += layer.copies * r * (layer.in_features + layer.out_features)
            ranks += layer.copies * r
            factored += layer.copies * (layer.in_features + layer.out_features + 2 * r)
    pooler = 0
    if arch.pooler and (every or POOLER_LEAF_NAME in lora.targets):
        pooler = r * 2 * arch.hidden_size
    return AdapterCounts(layer_params=params, pooler_params=pooler, layer_ranks=ranks,
                         layer_adafactor_elements=factored, num_layers=arch.num_layers)
