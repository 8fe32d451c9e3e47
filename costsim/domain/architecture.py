"""What a model is: the exact shape of a transformer, and its exact parameter count.

Parameter counting follows the module structure of the Hugging Face implementation of
each family, so that ``sum(p.numel() for p in model.parameters())`` is reproduced exactly:
embeddings, tied or untied LM head, learned position and token-type embeddings, biases, norms
(LayerNorm has a weight and a bias, RMSNorm a weight only), GQA, gated MLPs, MoE experts and
routers, BERT's pooler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class ArchFamily(StrEnum):
    """The Hugging Face ``model_type`` families costsim understands."""

    LLAMA = "llama"
    MISTRAL = "mistral"
    MIXTRAL = "mixtral"
    QWEN2 = "qwen2"
    QWEN3 = "qwen3"
    GPT2 = "gpt2"
    BERT = "bert"
    GPT_NEOX = "gpt_neox"
    BLOOM = "bloom"
    FALCON = "falcon"


class NormKind(StrEnum):
    """LayerNorm carries a weight and a bias per channel; RMSNorm only a weight."""

    LAYERNORM = "layernorm"
    RMSNORM = "rmsnorm"

    @property
    def params_per_channel(self) -> int:
        """Learned values per normalized channel."""
        return 2 if self is NormKind.LAYERNORM else 1


class PositionKind(StrEnum):
    """How positions enter the model; only learned positions add parameters."""

    LEARNED = "learned"
    ROTARY = "rotary"
    ALIBI = "alibi"


class LinearRole(StrEnum):
    """What a linear layer does; the engines shard and count FLOPs by role."""

    QKV = "qkv"  # fused query/key/value projection
    Q = "q"
    K = "k"
    V = "v"
    ATTN_OUT = "attn_out"
    MLP_GATE = "mlp_gate"
    MLP_UP = "mlp_up"
    MLP_DOWN = "mlp_down"
    ROUTER = "router"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinearShape:
    """One linear layer of a transformer block, named as in the Hugging Face module tree.

    ``copies`` counts identical instances in one block (the experts of an MoE layer).
    """

    name: str
    role: LinearRole
    in_features: int
    out_features: int
    bias: bool
    copies: int = 1
    expert: bool = False

    @property
    def params_per_copy(self) -> int:
        """Weights plus bias of one instance."""
        return self.in_features * self.out_features + (self.out_features if self.bias else 0)

    @property
    def params(self) -> int:
        """Weights plus bias of all instances in one block."""
        return self.copies * self.params_per_copy


@dataclass(frozen=True, slots=True, kw_only=True)
class Architecture:
    """The shape of a transformer model, as read from a Hugging Face ``config.json``.

    Sizes are element counts. ``num_experts`` is 0 for a dense model. ``norms_per_layer`` counts
    the per-block norms over the hidden size (two in most families, one in Falcon-7B's parallel
    block). ``sliding_window`` caps the attended (and cached) tokens; None means full attention.
    ``dropout`` is True when the config trains with dropout (a hidden or attention dropout
    probability above 0): training then saves the dropout masks for backward.
    """

    name: str
    family: ArchFamily
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    norm: NormKind
    position: PositionKind
    gated_mlp: bool
    fused_qkv: bool
    qkv_bias: bool
    attn_out_bias: bool
    mlp_bias: bool
    qk_norm: bool = False
    norms_per_layer: int = 2
    embedding_norm: bool = False
    final_norm: bool = True
    type_vocab_size: int = 0
    pooler: bool = False
    num_experts: int = 0
    experts_per_token: int = 0
    sliding_window: int | None = None
    dropout: bool = False
    linear_names: Mapping[LinearRole, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        positive = {
            "num_layers": self.num_layers,
            "hidden_size": self.hidden_size,
            "num_heads": self.num_heads,
            "num_kv_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate_size,
            "vocab_size": self.vocab_size,
            "max_position_embeddings": self.max_position_embeddings,
        }
        for key, value in positive.items():
            if value <= 0:
                raise ValueError(f"{key} must be > 0 (got {value})")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(
                f"num_key_value_heads must divide num_attention_heads "
                f"(got {self.num_kv_heads} and {self.num_heads})"
            )
        if self.num_experts and not 0 < self.experts_per_token <= self.num_experts:
            raise ValueError(
                f"experts per token must be in 1..{self.num_experts} (got {self.experts_per_token})"
            )

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model."""
        return self.num_experts > 0

    @property
    def q_size(self) -> int:
        """Width of the query projection output (heads × head_dim)."""
        return self.num_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        """Width of one of the key / value projection outputs (KV heads × head_dim)."""
        return self.num_kv_heads * self.head_dim

    @property
    def is_decoder(self) -> bool:
        """True for causal language models (everything but BERT)."""
        return self.family is not ArchFamily.BERT

    def linear_layers(self) -> tuple[LinearShape, ...]:
        """The linear layers of one transformer block, with their Hugging Face leaf names."""
        h, i = self.hidden_size, self.intermediate_size
        names = self.linear_names
        # MLP projections repeat once per expert in an MoE block.
        copies = self.num_experts or 1

        def linear(role: LinearRole, in_features: int, out_features: int, bias: bool,
                   mlp: bool = False) -> LinearShape:
            # A role without a family-specific module name keeps the role's own name.
            return LinearShape(name=names.get(role, role.value), role=role,
                               in_features=in_features, out_features=out_features, bias=bias,
                               copies=copies if mlp else 1, expert=mlp and self.is_moe)

        if self.fused_qkv:
            layers = [linear(LinearRole.QKV, h, self.q_size + 2 * self.kv_size, self.qkv_bias)]
        else:
            layers = [linear(LinearRole.Q, h, self.q_size, self.qkv_bias),
                      linear(LinearRole.K, h, self.kv_size, self.qkv_bias),
                      linear(LinearRole.V, h, self.kv_size, self.qkv_bias)]
        layers.append(linear(LinearRole.ATTN_OUT, self.q_size, h, self.attn_out_bias))
        if self.gated_mlp:
            layers.append(linear(LinearRole.MLP_GATE, h, i, self.mlp_bias, mlp=True))
        layers.append(linear(LinearRole.MLP_UP, h, i, self.mlp_bias, mlp=True))
        layers.append(linear(LinearRole.MLP_DOWN, i, h, self.mlp_bias, mlp=True))
        if self.is_moe:
            layers.append(linear(LinearRole.ROUTER, h, self.num_experts, bias=False))
        return tuple(layers)

    def params(self) -> ParamCounts:
        """Exact parameter counts (see :class:`ParamCounts`)."""
        return count_params(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class ParamCounts:
    """Exact parameter counts of an architecture, by place in the model.

    ``active`` counts what one token passes through: for MoE, ``experts_per_token`` experts
    per layer instead of all of them. ``lm_head`` is 0 when the head is tied to the embedding.
    """

    embedding: int
    per_layer: int
    per_layer_active: int
    per_layer_linear: int
    num_layers: int
    final_norm: int
    lm_head: int
    pooler: int

    @property
    def total(self) -> int:
        """All parameters, each shared tensor counted once."""
        return (
            self.embedding
            + self.num_layers * self.per_layer
            + self.final_norm
            + self.lm_head
            + self.pooler
        )

    @property
    def active(self) -> int:
        """Parameters one token passes through (equal to ``total`` for dense models)."""
        return (
            self.embedding
            + self.num_layers * self.per_layer_active
            + self.final_norm
            + self.lm_head
            + self.pooler
        )


def count_params(arch: Architecture) -> ParamCounts:
    """Count the parameters of ``arch`` exactly, as the Hugging Face implementation holds them."""
    h = arch.hidden_size
    norm = arch.norm.params_per_channel * h
    embedding = arch.vocab_size * h
    if arch.position is PositionKind.LEARNED:
        embedding += arch.max_position_embeddings * h
    embedding += arch.type_vocab_size * h
    if arch.embedding_norm:
        embedding += norm

    linears = arch.linear_layers()
    linear_total = sum(layer.params for layer in linears)
    linear_active = sum(
        layer.params_per_copy * arch.experts_per_token if layer.expert else layer.params
        for layer in linears
    )
    # Qwen3 normalizes queries and keys per head with an RMSNorm over head_dim (one each).
    block_norms = arch.norms_per_layer * norm + (2 * arch.head_dim if arch.qk_norm else 0)
    return ParamCounts(
        embedding=embedding,
        per_layer=linear_total + block_norms,
        per_layer_active=linear_active + block_norms,
        per_layer_linear=linear_total,
        num_layers=arch.num_layers,
        final_norm=norm if arch.final_norm else 0,
        lm_head=0 if arch.tie_word_embeddings or not arch.is_decoder else arch.vocab_size * h,
        pooler=(h * h + h) if arch.pooler else 0,
    )
