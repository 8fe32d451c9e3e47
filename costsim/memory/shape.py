"""The numbers of an architecture the memory equations need, computed once per model.

Everything here is an exact count derived from :class:`~costsim.domain.architecture.Architecture`
(parameters by place, quantization constants by layer, Adafactor's factored state). The memory
equations in :mod:`costsim.memory.core` then only multiply and add these numbers, so they can run
over numpy arrays of many configurations at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.architecture import Architecture
from costsim.domain.workload import Quant

# Quantization constants (bytes of scales / zero points per block of weights).
# int8: bitsandbytes LLM.int8() keeps one fp32 absmax per output row (Dettmers et al. 2022).
# int4: GPTQ / AWQ checkpoints: one fp16 scale + one packed 4-bit zero point per group of 128.
INT4_GROUP_SIZE = 128
INT4_BYTES_PER_GROUP = 2.5
# nf4: bitsandbytes blocks of 64 weights; QLoRA's double quantization stores each block's absmax
# as 8 bits plus one fp32 constant per 256 blocks: 8/64 + 32/(64·256) ≈ 0.127 bit per parameter
# (Dettmers et al. 2023, §3). costsim's nf4 always means NF4 + double quantization.
NF4_BLOCK_SIZE = 64
NF4_BYTES_PER_BLOCK = 1.0 + 4.0 / 256.0
# fp8 weights: one fp32 scale per tensor (Transformer Engine / vLLM per-tensor fp8).
FP8_BYTES_PER_TENSOR = 4.0

# Storage bytes of one quantized weight element, without constants.
QUANT_ELEMENT_BYTES: dict[Quant, float] = {
    Quant.INT8: 1.0,
    Quant.INT4: 0.5,
    Quant.NF4: 0.5,
    Quant.FP8: 1.0,
}

@dataclass(frozen=True, slots=True, kw_only=True)
class ModelShape:
    """Per-architecture constants of the memory equations (element and byte counts)."""

    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    q_size: int
    kv_size: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    num_experts: int  # 0 for a dense model
    experts_per_token: int  # 1 for a dense model: MLP activations are per routed expert
    gated_mlp: bool
    dropout: bool
    is_decoder: bool
    sliding_window: int  # 0 = full attention
    embedding_params: int
    layer_params: int
    layer_params_active: int  # one block, as one token sees it (k of E experts for MoE)
    layer_linear_params: int
    largest_linear_params: int
    final_norm_params: int
    lm_head_params: int
    pooler_params: int
    expert_layer_params: int  # all experts of one block (0 for a dense model)
    tied_embeddings: bool
    # Quantization constants of one block's linear layers, in bytes, per format.
    quant_constant_bytes_int8: float
    quant_constant_bytes_int4: float
    quant_constant_bytes_nf4: float
    quant_constant_bytes_fp8: float
    # Adafactor state elements: factored (rows + cols) for matrices, full for vectors.
    adafactor_layer_elements: int
    adafactor_embedding_elements: int
    adafactor_head_elements: int

    @property
    def _outside_blocks_params(self) -> int:
        return (self.embedding_params + self.final_norm_params + self.lm_head_params
                + self.pooler_params)

    @property
    def params_total(self) -> int:
        """All base-model parameters."""
        return self._outside_blocks_params + self.num_layers * self.layer_params

    @property
    def all_layers_params_active(self) -> int:
        """Parameters of all transformer blocks as one token sees them (no embedding, head)."""
        return self.num_layers * self.layer_params_active

    @property
    def params_active(self) -> int:
        """Parameters one token passes through (``params_total`` for a dense model)."""
        return self._outside_blocks_params + self.all_layers_params_active

    @property
    def expert_params(self) -> int:
        """All experts of all blocks (0 for a dense model)."""
        return self.num_layers * self.expert_layer_params

    def quant_constant_bytes(self, quant: Quant) -> float:
        """Bytes of quantization constants per block for ``quant`` (0 for none)."""
        match quant:
            case Quant.INT8:
                return self.quant_constant_bytes_int8
            case Quant.INT4:
                return self.quant_constant_bytes_int4
            case Quant.NF4:
                return self.quant_constant_bytes_nf4
            case Quant.FP8:
                return self.quant_constant_bytes_fp8
            case _:
                return 0.0


def model_shape(arch: Architecture) -> ModelShape:
    """Derive the memory equations' constants from ``arch``."""
    counts = arch.params()
    linears = arch.linear_layers()
    int8 = sum(4.0 * layer.out_features * layer.copies for layer in linears)
    int4 = sum(layer.copies * layer.in_features * layer.out_features for layer in linears)
    int4_bytes = int4 * INT4_BYTES_PER_GROUP / INT4_GROUP_SIZE
    nf4_bytes = int4 * NF4_BYTES_PER_BLOCK / NF4_BLOCK_SIZE
    fp8_bytes = sum(FP8_BYTES_PER_TENSOR * layer.copies for layer in linears)
    weight_elems = int4
    vector_elems = counts.per_layer - weight_elems  # biases and norms
    factored = sum(layer.copies * (layer.in_features + layer.out_features) for layer in linears)
    h = arch.hidden_size
    embed_matrix_rows = counts.embedding // h  # vocab + positions + token types (+ norm)
    return ModelShape(
        num_layers=arch.num_layers,
        hidden_size=h,
        num_heads=arch.num_heads,
        num_kv_heads=arch.num_kv_heads,
        head_dim=arch.head_dim,
        q_size=arch.q_size,
        kv_size=arch.kv_size,
        intermediate_size=arch.intermediate_size,
        vocab_size=arch.vocab_size,
        max_position_embeddings=arch.max_position_embeddings,
        num_experts=arch.num_experts,
        experts_per_token=arch.experts_per_token if arch.is_moe else 1,
        gated_mlp=arch.gated_mlp,
        dropout=arch.dropout,
        is_decoder=arch.is_decoder,
        sliding_window=arch.sliding_window or 0,
        embedding_params=counts.embedding,
        layer_params=counts.per_layer,
        layer_params_active=counts.per_layer_active,
        layer_linear_params=counts.per_layer_linear,
        largest_linear_params=max(layer.in_features * layer.out_features for layer in linears),
        final_norm_params=counts.final_norm,
        lm_head_params=counts.lm_head,
        pooler_params=counts.pooler,
        expert_layer_params=sum(layer.params for layer in linears if layer.expert),
        tied_embeddings=arch.tie_word_embeddings,
        quant_constant_bytes_int8=int8,
        quant_constant_bytes_int4=int4_bytes,
        quant_constant_bytes_nf4=nf4_bytes,
        quant_constant_bytes_fp8=fp8_bytes,
        adafactor_layer_elements=factored + vector_elems,
        adafactor_embedding_elements=embed_matrix_rows + h,
        adafactor_head_elements=(arch.vocab_size + h) if counts.lm_head else 0,
    )
