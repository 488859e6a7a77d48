"""The architectures the Inductor corpus is collected from.

Each model is built from its library's config class with random weights (no
downloads): torchvision's CNNs and ViT, and transformers' Llama, BERT, GPT-2
and T5. `build(name, device, small)` returns (module, example inputs); small
sizes are for a CPU run that only generates code.
"""

import torch

VISION = ("resnet50", "mobilenet_v3_small", "vit_b_16", "convnext_tiny")
TEXT = ("llama", "bert", "gpt2", "t5")
ALL = VISION + TEXT


def _vision(name, device, small):
    import torchvision.models as tvm

    model = getattr(tvm, name)(weights=None)
    batch, side = (2, 224) if not small else (1, 224 if name == "vit_b_16" else 64)
    return model, (torch.randn(batch, 3, side, side, device=device),)


def _text(name, device, small):
    import transformers as tf

    batch, seq = (8, 256) if not small else (1, 32)
    layers = 4 if not small else 1
    if name == "llama":
        config = tf.LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816,
                                num_hidden_layers=layers, num_attention_heads=16,
                                num_key_value_heads=8, max_position_embeddings=2048)
        model = tf.LlamaForCausalLM(config)
    elif name == "bert":
        config = tf.BertConfig(hidden_size=768, num_hidden_layers=layers, num_attention_heads=12,
                               intermediate_size=3072)
        model = tf.BertModel(config)
    elif name == "gpt2":
        config = tf.GPT2Config(n_embd=768, n_layer=layers, n_head=12)
        model = tf.GPT2LMHeadModel(config)
    elif name == "t5":
        config = tf.T5Config(d_model=512, d_ff=2048, num_layers=layers, num_decoder_layers=layers,
                             num_heads=8, decoder_start_token_id=0)
        model = tf.T5ForConditionalGeneration(config)
    else:
        raise ValueError(f"unknown model {name!r}")
    model.config.use_cache = False
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device=device)
    if name == "t5":
        return model, (ids, None, ids)  # input_ids, attention_mask, decoder_input_ids
    return model, (ids,)


def build(name, device="cuda", small=False, dropout=True):
    """(model on `device`, example inputs) for one architecture of ALL.
    dropout=False sets every dropout probability to 0, so that a training
    step's output compares with eager's (whose random numbers differ)."""
    torch.manual_seed(0)
    maker = _vision if name in VISION else _text
    model, inputs = maker(name, device, small)
    if not dropout:
        for module in model.modules():
            if isinstance(module, torch.nn.modules.dropout._DropoutNd):
                module.p = 0.0
            for attr in ("attention_dropout", "dropout", "dropout_rate"):
                if isinstance(getattr(module, attr, None), float):
                    setattr(module, attr, 0.0)
        config = getattr(model, "config", None)
        for attr in dir(config) if config is not None else ():
            if "dropout" in attr or attr.endswith("_pdrop"):
                if isinstance(getattr(config, attr, None), float):
                    setattr(config, attr, 0.0)
    return model.to(device), inputs


def output_tensor(out):
    """The first tensor of a model's output (a tensor, a tuple or a
    transformers ModelOutput), to take a loss from or compare."""
    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    for item in out:
        if isinstance(item, torch.Tensor):
            return item
    raise TypeError(f"no tensor in the model's output {type(out).__name__}")
