"""Each model family's config keys, transformers defaults and module names.

Each reader follows the ``*Config`` class of the transformers library for its family and returns
the :class:`~costsim.domain.architecture.Architecture` fields (name and family aside).
"""

from __future__ import annotations

from typing import Any

from costsim.catalog.hf_keys import ConfigKeys, head_dim_of
from costsim.domain.architecture import (
    ArchFamily,
    LinearRole,
    NormKind,
    PositionKind,
)

MODEL_TYPE_ALIASES: dict[str, ArchFamily] = {
    **{family.value: family for family in ArchFamily},
    "gpt-neox": ArchFamily.GPT_NEOX,
    "refinedweb": ArchFamily.FALCON,
    "refinedwebmodel": ArchFamily.FALCON,
}

_LLAMA_NAMES = {
    LinearRole.Q: "q_proj",
    LinearRole.K: "k_proj",
    LinearRole.V: "v_proj",
    LinearRole.ATTN_OUT: "o_proj",
    LinearRole.MLP_GATE: "gate_proj",
    LinearRole.MLP_UP: "up_proj",
    LinearRole.MLP_DOWN: "down_proj",
}
_MIXTRAL_NAMES = {
    **_LLAMA_NAMES,
    LinearRole.MLP_GATE: "w1",
    LinearRole.MLP_DOWN: "w2",
    LinearRole.MLP_UP: "w3",
    LinearRole.ROUTER: "gate",
}
_GPT2_NAMES = {
    LinearRole.QKV: "c_attn",
    LinearRole.ATTN_OUT: "c_proj",
    LinearRole.MLP_UP: "c_fc",
    LinearRole.MLP_DOWN: "c_proj",
}
_BERT_NAMES = {
    LinearRole.Q: "query",
    LinearRole.K: "key",
    LinearRole.V: "value",
    LinearRole.ATTN_OUT: "dense",
    LinearRole.MLP_UP: "dense",
    LinearRole.MLP_DOWN: "dense",
}
_FUSED_NAMES = {  # gpt_neox, bloom, falcon
    LinearRole.QKV: "query_key_value",
    LinearRole.ATTN_OUT: "dense",
    LinearRole.MLP_UP: "dense_h_to_4h",
    LinearRole.MLP_DOWN: "dense_4h_to_h",
}


def _read_llama_like(keys: ConfigKeys, family: ArchFamily) -> dict[str, Any]:
    defaults = _LLAMA_LIKE_DEFAULTS[family]
    hidden = keys.get_int("hidden_size", default=defaults["hidden_size"])
    heads = keys.get_int("num_attention_heads", default=defaults["num_attention_heads"])
    kv_default = defaults["num_key_value_heads"] or heads
    attention_bias = keys.get_bool("attention_bias", default=False)
    # Qwen2 always has q/k/v biases and no o_proj bias (modeling_qwen2.py).
    qkv_bias = True if family is ArchFamily.QWEN2 else attention_bias
    attn_out_bias = False if family is ArchFamily.QWEN2 else attention_bias
    sliding_window = keys.optional_int("sliding_window")
    if family is ArchFamily.MISTRAL and "sliding_window" not in keys.config:
        sliding_window = 4096  # MistralConfig default; an explicit null means full attention
    if family in (ArchFamily.QWEN2, ArchFamily.QWEN3) and not keys.get_bool(
        "use_sliding_window", default=False
    ):
        sliding_window = None
    fields: dict[str, Any] = {
        "num_layers": keys.get_int("num_hidden_layers", default=defaults["num_hidden_layers"]),
        "hidden_size": hidden,
        "num_heads": heads,
        "num_kv_heads": keys.get_int("num_key_value_heads", default=kv_default),
        "head_dim": (
            keys.get_int("head_dim", default=defaults["head_dim"])
            if defaults["head_dim"]
            else head_dim_of(keys, hidden, heads, "num_attention_heads")
        ),
        "intermediate_size": keys.get_int(
            "intermediate_size", default=defaults["intermediate_size"]
        ),
        "vocab_size": keys.get_int("vocab_size", default=defaults["vocab_size"]),
        "max_position_embeddings": keys.get_int(
            "max_position_embeddings", default=defaults["max_position_embeddings"]
        ),
        "tie_word_embeddings": keys.get_bool("tie_word_embeddings", default=False),
        "norm": NormKind.RMSNORM,
        "position": PositionKind.ROTARY,
        "gated_mlp": True,
        "fused_qkv": False,
        "qkv_bias": qkv_bias,
        "attn_out_bias": attn_out_bias,
        "mlp_bias": keys.get_bool("mlp_bias", default=False),
        "qk_norm": family is ArchFamily.QWEN3,
        "sliding_window": sliding_window,
        # LlamaConfig & co.: attention_dropout 0.0 (the only dropout these models have).
        "dropout": keys.any_dropout("attention_dropout", default=0.0),
        "linear_names": _MIXTRAL_NAMES if family is ArchFamily.MIXTRAL else _LLAMA_NAMES,
    }
    if family is ArchFamily.MIXTRAL:
        fields["num_experts"] = keys.get_int("num_local_experts", default=8)
        fields["experts_per_token"] = keys.get_int("num_experts_per_tok", default=2)
    return fields


# Defaults of the transformers *Config classes (LlamaConfig, MistralConfig, MixtralConfig,
# Qwen2Config, Qwen3Config). num_key_value_heads 0 means "= heads"; head_dim 0 "hidden / heads".
_LLAMA_LIKE_DEFAULTS: dict[ArchFamily, dict[str, int]] = {
    ArchFamily.LLAMA: {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 0,
        "num_hidden_layers": 32,
        "intermediate_size": 11008,
        "vocab_size": 32000,
        "max_position_embeddings": 2048,
        "head_dim": 0,
    },
    ArchFamily.MISTRAL: {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 32,
        "intermediate_size": 14336,
        "vocab_size": 32000,
        "max_position_embeddings": 131072,
        "head_dim": 0,
    },
    ArchFamily.MIXTRAL: {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 32,
        "intermediate_size": 14336,
        "vocab_size": 32000,
        "max_position_embeddings": 131072,
        "head_dim": 0,
    },
    ArchFamily.QWEN2: {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "num_hidden_layers": 32,
        "intermediate_size": 22016,
        "vocab_size": 151936,
        "max_position_embeddings": 32768,
        "head_dim": 0,
    },
    ArchFamily.QWEN3: {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "num_hidden_layers": 32,
        "intermediate_size": 22016,
        "vocab_size": 151936,
        "max_position_embeddings": 32768,
        "head_dim": 128,
    },
}


def _mha_shape(keys: ConfigKeys, *, layers: tuple[str, ...], hidden: tuple[str, ...],
               heads: tuple[str, ...], defaults: tuple[int, int, int]) -> dict[str, Any]:
    """Layers, hidden size, heads, KV heads (= heads: multi-head attention) and head_dim, read
    under the family's key names with its transformers defaults (layers, hidden, heads)."""
    hidden_size = keys.get_int(*hidden, default=defaults[1])
    num_heads = keys.get_int(*heads, default=defaults[2])
    return {
        "num_layers": keys.get_int(*layers, default=defaults[0]),
        "hidden_size": hidden_size,
        "num_heads": num_heads,
        "num_kv_heads": num_heads,
        "head_dim": head_dim_of(keys, hidden_size, num_heads, heads[0]),
    }


def _read_gpt2(keys: ConfigKeys) -> dict[str, Any]:
    shape = _mha_shape(keys, layers=("n_layer", "num_hidden_layers"),
                       hidden=("n_embd", "hidden_size"), heads=("n_head", "num_attention_heads"),
                       defaults=(12, 768, 12))
    return {
        **shape,
        "intermediate_size": keys.get_int("n_inner", default=4 * shape["hidden_size"]),
        "vocab_size": keys.get_int("vocab_size", default=50257),
        "max_position_embeddings": keys.get_int(
            "n_positions", "max_position_embeddings", default=1024
        ),
        "tie_word_embeddings": keys.get_bool("tie_word_embeddings", default=True),
        "norm": NormKind.LAYERNORM,
        "position": PositionKind.LEARNED,
        "gated_mlp": False,
        "fused_qkv": True,
        "qkv_bias": True,
        "attn_out_bias": True,
        "mlp_bias": True,
        "dropout": keys.any_dropout("resid_pdrop", "embd_pdrop", "attn_pdrop", default=0.1),
        "linear_names": _GPT2_NAMES,
    }


def _read_bert(keys: ConfigKeys) -> dict[str, Any]:
    return {
        **_mha_shape(keys, layers=("num_hidden_layers",), hidden=("hidden_size",),
                     heads=("num_attention_heads",), defaults=(12, 768, 12)),
        "intermediate_size": keys.get_int("intermediate_size", default=3072),
        "vocab_size": keys.get_int("vocab_size", default=30522),
        "max_position_embeddings": keys.get_int("max_position_embeddings", default=512),
        "tie_word_embeddings": True,
        "norm": NormKind.LAYERNORM,
        "position": PositionKind.LEARNED,
        "gated_mlp": False,
        "fused_qkv": False,
        "qkv_bias": True,
        "attn_out_bias": True,
        "mlp_bias": True,
        "embedding_norm": True,
        "final_norm": False,  # post-LN: each block ends with its own LayerNorm
        "type_vocab_size": keys.get_int("type_vocab_size", default=2, minimum=0),
        "pooler": True,  # BertModel(add_pooling_layer=True), as counted by transformers
        "dropout": keys.any_dropout("hidden_dropout_prob", "attention_probs_dropout_prob",
                                    default=0.1),
        "linear_names": _BERT_NAMES,
    }


def _read_gpt_neox(keys: ConfigKeys) -> dict[str, Any]:
    shape = _mha_shape(keys, layers=("num_hidden_layers",), hidden=("hidden_size",),
                       heads=("num_attention_heads",), defaults=(44, 6144, 64))
    bias = keys.get_bool("attention_bias", default=True)
    return {
        **shape,
        "intermediate_size": keys.get_int("intermediate_size", default=24576),
        "vocab_size": keys.get_int("vocab_size", default=50432),
        "max_position_embeddings": keys.get_int("max_position_embeddings", default=2048),
        "tie_word_embeddings": keys.get_bool("tie_word_embeddings", default=False),
        "norm": NormKind.LAYERNORM,
        "position": PositionKind.ROTARY,
        "gated_mlp": False,
        "fused_qkv": True,
        "qkv_bias": bias,
        "attn_out_bias": bias,
        "mlp_bias": True,
        "dropout": keys.any_dropout("attention_dropout", "hidden_dropout", default=0.0),
        "linear_names": _FUSED_NAMES,
    }


def _read_bloom(keys: ConfigKeys) -> dict[str, Any]:
    shape = _mha_shape(keys, layers=("n_layer", "num_hidden_layers"),
                       hidden=("hidden_size", "n_embed"), heads=("n_head", "num_attention_heads"),
                       defaults=(2, 64, 8))
    return {
        **shape,
        "intermediate_size": 4 * shape["hidden_size"],  # BloomMLP is fixed at 4h
        "vocab_size": keys.get_int("vocab_size", default=250880),
        # ALiBi has no position limit; seq_length is the trained context (2048 for BLOOM).
        "max_position_embeddings": keys.get_int(
            "seq_length", "max_position_embeddings", default=2048
        ),
        "tie_word_embeddings": keys.get_bool("tie_word_embeddings", default=True),
        "norm": NormKind.LAYERNORM,
        "position": PositionKind.ALIBI,
        "gated_mlp": False,
        "fused_qkv": True,
        "qkv_bias": True,
        "attn_out_bias": True,
        "mlp_bias": True,
        "embedding_norm": True,  # word_embeddings_layernorm
        "dropout": keys.any_dropout("attention_dropout", "hidden_dropout", default=0.0),
        "linear_names": _FUSED_NAMES,
    }


def _read_falcon(keys: ConfigKeys) -> dict[str, Any]:
    shape = _mha_shape(keys, layers=("num_hidden_layers", "n_layer"), hidden=("hidden_size",),
                       heads=("num_attention_heads", "n_head"), defaults=(32, 4544, 71))
    hidden, heads = shape["hidden_size"], shape["num_heads"]
    new_arch = keys.get_bool("new_decoder_architecture", default=False)
    parallel = keys.get_bool("parallel_attn", default=True)
    if new_arch:
        kv_heads = keys.get_int("num_kv_heads", "n_head_kv", default=heads)
        # ln_attn + ln_mlp unless num_ln_in_parallel_attn says 1 (modeling_falcon.py).
        norms = keys.get_int("num_ln_in_parallel_attn", default=2)
    else:
        kv_heads = 1 if keys.get_bool("multi_query", default=True) else heads
        norms = 1 if parallel else 2
    bias = keys.get_bool("bias", default=False)
    return {
        **shape,
        "num_kv_heads": kv_heads,
        "intermediate_size": keys.get_int("ffn_hidden_size", default=4 * hidden),
        "vocab_size": keys.get_int("vocab_size", default=65024),
        "max_position_embeddings": keys.get_int("max_position_embeddings", default=2048),
        "tie_word_embeddings": keys.get_bool("tie_word_embeddings", default=True),
        "norm": NormKind.LAYERNORM,
        "position": PositionKind.ALIBI
        if keys.get_bool("alibi", default=False)
        else PositionKind.ROTARY,
        "gated_mlp": False,
        "fused_qkv": True,
        "qkv_bias": bias,
        "attn_out_bias": bias,
        "mlp_bias": bias,
        "norms_per_layer": norms,
        "dropout": keys.any_dropout("attention_dropout", "hidden_dropout", default=0.0),
        "linear_names": _FUSED_NAMES,
    }


FAMILY_READERS = {
    ArchFamily.LLAMA: lambda keys: _read_llama_like(keys, ArchFamily.LLAMA),
    ArchFamily.MISTRAL: lambda keys: _read_llama_like(keys, ArchFamily.MISTRAL),
    ArchFamily.MIXTRAL: lambda keys: _read_llama_like(keys, ArchFamily.MIXTRAL),
    ArchFamily.QWEN2: lambda keys: _read_llama_like(keys, ArchFamily.QWEN2),
    ArchFamily.QWEN3: lambda keys: _read_llama_like(keys, ArchFamily.QWEN3),
    ArchFamily.GPT2: _read_gpt2,
    ArchFamily.BERT: _read_bert,
    ArchFamily.GPT_NEOX: _read_gpt_neox,
    ArchFamily.BLOOM: _read_bloom,
    ArchFamily.FALCON: _read_falcon,
}
