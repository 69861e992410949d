"""The model zoo: architectures nobody tuned Kiln for, each a small configuration with random weights.

Every entry builds a module (random weights from a fixed seed), example inputs and, where the family has them,
dynamic dimensions (batch for images, batch and sequence for text). `core_aten` marks the third of the zoo that
is exported in Core ATen form (ep.run_decompositions()). Sizes are small on purpose: the whole zoo must export,
compile for three targets and run within a few minutes on the GPU machine.
"""

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import torch
from torch import nn
from torch.export import Dim

VOCAB = 1000
# Set by use_tiny_configs(): the CI subset (tests/data/zoo) shrinks every transformers config further.
TINY = False
TINY_VOCAB = 128
# Config fields shrunk in tiny mode, and their tiny values.
TINY_FIELDS = {"hidden_size": 32, "d_model": 32, "n_embd": 32, "dim": 32, "word_embed_proj_dim": 32,
               "intermediate_size": 64, "ffn_dim": 64, "d_ff": 64, "hidden_dim": 64, "encoder_ffn_dim": 64,
               "decoder_ffn_dim": 64, "d_kv": 8, "head_dim": 8, "embedding_size": 16, "decoder_hidden_size": 32}


def use_tiny_configs() -> None:
    """Shrinks every transformers config built from now on (hidden 32, vocab 128): the CI subset's sizes."""
    global TINY
    TINY = True


def vocab() -> int:
    return TINY_VOCAB if TINY else VOCAB


@dataclass
class ZooModel:
    family: str
    build: Callable[[], nn.Module]
    inputs: Callable[[torch.Generator], Tuple[torch.Tensor, ...]]
    dynamic: Optional[Callable[[], object]] = None
    core_aten: bool = False
    needs: List[str] = field(default_factory=list)


class Select(nn.Module):
    """Returns one tensor of a model's structured output (ModelOutput field, dict key or tuple element), or a
    tuple of all values of a dict output (FPN backbones)."""

    def __init__(self, model: nn.Module, key=None, all_values: bool = False) -> None:
        super().__init__()
        self.model = model
        self.key = key
        self.all_values = all_values

    def forward(self, x):
        out = self.model(x)
        if self.all_values:
            return tuple(out.values())
        if self.key is None:
            return out
        if isinstance(out, (tuple, list)):
            return out[self.key]
        if isinstance(out, dict) or hasattr(out, "keys"):
            return out[self.key]
        return getattr(out, self.key)


class Keywords(nn.Module):
    """Calls a transformers model with keyword inputs (input_ids=..., attention_mask=...) from positional ones."""

    def __init__(self, model: nn.Module, names: Tuple[str, ...], key: str) -> None:
        super().__init__()
        self.model = model
        self.names = names
        self.key = key

    def forward(self, x, y=None):
        # Fixed parameters rather than *args: torch.export matches dynamic_shapes to them by name.
        args = (x,) if y is None else (x, y)
        out = self.model(**dict(zip(self.names, args)))
        return getattr(out, self.key)


# --- inputs ---------------------------------------------------------------------------------------------------


def image(batch: int, size: int, channels: int = 3):
    return lambda g: (torch.randn(batch, channels, size, size, generator=g),)


def video(batch: int, frames: int, size: int):
    return lambda g: (torch.randn(batch, 3, frames, size, size, generator=g),)


def tokens(batch: int, seq: int, mask: bool = True):
    def make(g):
        ids = torch.randint(0, vocab(), (batch, seq), generator=g)
        if not mask:
            return (ids,)
        m = torch.ones(batch, seq, dtype=torch.int64)
        m[0, seq - 2:] = 0  # some padding, so that the mask path is exercised
        return ids, m

    return make


def seq2seq(batch: int, seq: int, target: int):
    return lambda g: (torch.randint(0, vocab(), (batch, seq), generator=g),
                      torch.randint(0, vocab(), (batch, target), generator=g))


# Dynamic dimensions by forward parameter name: the zoo's modules take x (and y), torchvision's take x.
def batch_dim():
    return lambda: {"x": {0: Dim("batch", min=1, max=16)}}


def batch_seq(count: int):
    def make():
        b, s = Dim("batch", min=1, max=8), Dim("seq", min=4, max=64)
        return {name: {0: b, 1: s} for name in ("x", "y")[:count]}

    return make


# --- torchvision --------------------------------------------------------------------------------------------------


def tv(name: str, **kwargs) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import torchvision

        return getattr(torchvision.models, name)(weights=None, **kwargs)

    return build


def tv_segmentation(name: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import torchvision

        kwargs = {"weights_backbone": None, "num_classes": 8}
        if name != "lraspp_mobilenet_v3_large":
            kwargs["aux_loss"] = False
        return Select(getattr(torchvision.models.segmentation, name)(weights=None, **kwargs), "out")

    return build


def tv_video(name: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import torchvision

        return getattr(torchvision.models.video, name)(weights=None, num_classes=16)

    return build


def tv_fpn(kind: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from torchvision.models.detection import backbone_utils

        if kind == "resnet18":
            backbone = backbone_utils.resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5)
        else:
            backbone = backbone_utils.mobilenet_backbone(backbone_name=kind, weights=None, fpn=True,
                                                         trainable_layers=6)
        return Select(backbone, all_values=True)

    return build


# --- transformers -------------------------------------------------------------------------------------------------

SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)


def hf(config_name: str, model_name: str, config: dict, names: Tuple[str, ...], key: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers

        values = dict(config)
        if TINY:
            values.update({k: v for k, v in TINY_FIELDS.items() if k in values})
            if values.get("vocab_size", 0) > TINY_VOCAB:
                values["vocab_size"] = TINY_VOCAB
            if "hidden_sizes" in values:
                values["hidden_sizes"] = [8, 16, 24, 32]
        cfg = getattr(transformers, config_name)(**values)
        if hasattr(cfg, "use_cache"):
            cfg.use_cache = False
        model = getattr(transformers, model_name)(cfg)
        return Keywords(model, names, key)

    return build


def encoder(config_name: str, model_name: str, **extra) -> Callable[[], nn.Module]:
    config = dict(vocab_size=VOCAB, max_position_embeddings=128, **SMALL)
    config.update(extra)
    return hf(config_name, model_name, config, ("input_ids", "attention_mask"), "last_hidden_state")


def decoder(config_name: str, model_name: str, **extra) -> Callable[[], nn.Module]:
    config = dict(vocab_size=VOCAB, max_position_embeddings=128, **SMALL)
    config.update(extra)
    return hf(config_name, model_name, config, ("input_ids",), "logits")


def vision(config_name: str, model_name: str, **config) -> Callable[[], nn.Module]:
    return hf(config_name, model_name, config, ("pixel_values",), "last_hidden_state")


TV = ["torchvision"]
HF = ["transformers"]

ZOO: Dict[str, ZooModel] = {
    # torchvision classification
    "resnet18": ZooModel("tv-classification", tv("resnet18"), image(2, 64), batch_dim(), True, TV),
    "resnet50": ZooModel("tv-classification", tv("resnet50"), image(2, 64), batch_dim(), False, TV),
    "resnext50_32x4d": ZooModel("tv-classification", tv("resnext50_32x4d"), image(2, 64), batch_dim(), False, TV),
    "wide_resnet50_2": ZooModel("tv-classification", tv("wide_resnet50_2"), image(2, 64), batch_dim(), True, TV),
    "regnet_y_400mf": ZooModel("tv-classification", tv("regnet_y_400mf"), image(2, 64), batch_dim(), False, TV),
    "regnet_x_400mf": ZooModel("tv-classification", tv("regnet_x_400mf"), image(2, 64), batch_dim(), False, TV),
    "mobilenet_v2": ZooModel("tv-classification", tv("mobilenet_v2"), image(2, 64), batch_dim(), True, TV),
    "mobilenet_v3_small": ZooModel("tv-classification", tv("mobilenet_v3_small"), image(2, 64), batch_dim(), False, TV),
    "efficientnet_b0": ZooModel("tv-classification", tv("efficientnet_b0"), image(2, 64), batch_dim(), False, TV),
    "efficientnet_v2_s": ZooModel("tv-classification", tv("efficientnet_v2_s"), image(2, 64), batch_dim(), True, TV),
    "mnasnet0_5": ZooModel("tv-classification", tv("mnasnet0_5"), image(2, 64), batch_dim(), False, TV),
    "shufflenet_v2_x0_5": ZooModel("tv-classification", tv("shufflenet_v2_x0_5"), image(2, 64), batch_dim(), False,
                                   TV),
    "squeezenet1_1": ZooModel("tv-classification", tv("squeezenet1_1"), image(2, 64), batch_dim(), True, TV),
    "densenet121": ZooModel("tv-classification", tv("densenet121"), image(2, 64), batch_dim(), False, TV),
    "googlenet": ZooModel("tv-classification", tv("googlenet", aux_logits=False, init_weights=True), image(2, 64),
                          batch_dim(), False, TV),
    "inception_v3": ZooModel("tv-classification", tv("inception_v3", aux_logits=False, init_weights=True),
                             image(2, 96), batch_dim(), True, TV),
    "convnext_tiny": ZooModel("tv-classification", tv("convnext_tiny"), image(2, 64), batch_dim(), False, TV),
    "vit_b_16": ZooModel("tv-classification", tv("vit_b_16", image_size=64), image(2, 64), batch_dim(), False, TV),
    "swin_t": ZooModel("tv-classification", tv("swin_t"), image(1, 96), None, True, TV),
    "swin_v2_t": ZooModel("tv-classification", tv("swin_v2_t"), image(1, 96), None, False, TV),
    "maxvit_t": ZooModel("tv-classification", tv("maxvit_t"), image(1, 224), None, False, TV),
    # torchvision segmentation, detection backbones (FPN), video
    "fcn_resnet50": ZooModel("tv-segmentation", tv_segmentation("fcn_resnet50"), image(1, 64), batch_dim(), True, TV),
    "deeplabv3_mobilenet_v3_large": ZooModel("tv-segmentation", tv_segmentation("deeplabv3_mobilenet_v3_large"),
                                             image(2, 64), batch_dim(), False, TV),
    "lraspp_mobilenet_v3_large": ZooModel("tv-segmentation", tv_segmentation("lraspp_mobilenet_v3_large"),
                                          image(2, 64), batch_dim(), False, TV),
    "fpn_resnet18": ZooModel("tv-detection-backbone", tv_fpn("resnet18"), image(2, 64), batch_dim(), True, TV),
    "fpn_mobilenet_v3_large": ZooModel("tv-detection-backbone", tv_fpn("mobilenet_v3_large"), image(2, 64),
                                       batch_dim(), False, TV),
    "r3d_18": ZooModel("tv-video", tv_video("r3d_18"), video(1, 4, 32), None, False, TV),
    "r2plus1d_18": ZooModel("tv-video", tv_video("r2plus1d_18"), video(1, 4, 32), None, True, TV),
    # transformers encoders
    "bert": ZooModel("hf-encoder", encoder("BertConfig", "BertModel"), tokens(2, 16), batch_seq(2), False, HF),
    "roberta": ZooModel("hf-encoder", encoder("RobertaConfig", "RobertaModel", max_position_embeddings=130,
                                              pad_token_id=1), tokens(2, 16), batch_seq(2), True, HF),
    "distilbert": ZooModel("hf-encoder", hf("DistilBertConfig", "DistilBertModel",
                                            dict(vocab_size=VOCAB, dim=64, n_layers=2, n_heads=4, hidden_dim=128),
                                            ("input_ids", "attention_mask"), "last_hidden_state"),
                           tokens(2, 16), batch_seq(2), False, HF),
    "albert": ZooModel("hf-encoder", encoder("AlbertConfig", "AlbertModel", embedding_size=32), tokens(2, 16),
                       batch_seq(2), False, HF),
    "electra": ZooModel("hf-encoder", encoder("ElectraConfig", "ElectraModel", embedding_size=32), tokens(2, 16),
                        batch_seq(2), True, HF),
    "deberta_v2": ZooModel("hf-encoder", encoder("DebertaV2Config", "DebertaV2Model"), tokens(2, 16), None, False,
                           HF),
    "xlm_roberta": ZooModel("hf-encoder", encoder("XLMRobertaConfig", "XLMRobertaModel", max_position_embeddings=130,
                                                  pad_token_id=1), tokens(2, 16), batch_seq(2), False, HF),
    # transformers decoders (use_cache=False), logits
    # GPT-2 with the plain-matmul attention: transformers 5.17's sdpa path fails in eager PyTorch itself (Conv1D
    # views a non-contiguous attention output; the zoo's first run, 2026-11-25).
    "gpt2": ZooModel("hf-decoder", hf("GPT2Config", "GPT2LMHeadModel",
                                      dict(vocab_size=VOCAB, n_positions=128, n_embd=64, n_layer=2, n_head=4,
                                           attn_implementation="eager"),
                                      ("input_ids",), "logits"), tokens(2, 16, mask=False), None, True, HF),
    "gpt_neox": ZooModel("hf-decoder", decoder("GPTNeoXConfig", "GPTNeoXForCausalLM"), tokens(2, 16, mask=False),
                         batch_seq(1), False, HF),
    "opt": ZooModel("hf-decoder", hf("OPTConfig", "OPTForCausalLM",
                                     dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                          ffn_dim=128, max_position_embeddings=128, word_embed_proj_dim=64),
                                     ("input_ids",), "logits"), tokens(2, 16, mask=False), batch_seq(1), False, HF),
    "llama": ZooModel("hf-decoder", decoder("LlamaConfig", "LlamaForCausalLM", num_key_value_heads=2),
                      tokens(2, 16, mask=False), batch_seq(1), True, HF),
    "mistral": ZooModel("hf-decoder", decoder("MistralConfig", "MistralForCausalLM", num_key_value_heads=2,
                                              sliding_window=None), tokens(2, 16, mask=False), batch_seq(1), False,
                        HF),
    "qwen2": ZooModel("hf-decoder", decoder("Qwen2Config", "Qwen2ForCausalLM", num_key_value_heads=2),
                      tokens(2, 16, mask=False), batch_seq(1), False, HF),
    "phi": ZooModel("hf-decoder", decoder("PhiConfig", "PhiForCausalLM"), tokens(2, 16, mask=False), batch_seq(1),
                    True, HF),
    "gemma": ZooModel("hf-decoder", decoder("GemmaConfig", "GemmaForCausalLM", num_key_value_heads=2, head_dim=16),
                      tokens(2, 16, mask=False), batch_seq(1), False, HF),
    # encoder-decoders
    "t5": ZooModel("hf-encoder-decoder", hf("T5Config", "T5Model",
                                            dict(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                                                 num_heads=4), ("input_ids", "decoder_input_ids"),
                                            "last_hidden_state"), seq2seq(2, 16, 8), None, False, HF),
    "bart": ZooModel("hf-encoder-decoder", hf("BartConfig", "BartModel",
                                              dict(vocab_size=VOCAB, d_model=64, encoder_layers=2, decoder_layers=2,
                                                   encoder_attention_heads=4, decoder_attention_heads=4,
                                                   encoder_ffn_dim=128, decoder_ffn_dim=128,
                                                   max_position_embeddings=64), ("input_ids", "decoder_input_ids"),
                                              "last_hidden_state"), seq2seq(2, 16, 8), None, True, HF),
    # transformers vision / audio
    "hf_vit": ZooModel("hf-vision", vision("ViTConfig", "ViTModel", image_size=32, patch_size=8, **SMALL),
                       image(2, 32), batch_dim(), False, HF),
    "deit": ZooModel("hf-vision", vision("DeiTConfig", "DeiTModel", image_size=32, patch_size=8, **SMALL),
                     image(2, 32), batch_dim(), False, HF),
    "beit": ZooModel("hf-vision", vision("BeitConfig", "BeitModel", image_size=32, patch_size=8,
                                         use_relative_position_bias=True, **SMALL), image(2, 32), None, True, HF),
    "hf_swin": ZooModel("hf-vision", vision("SwinConfig", "SwinModel", image_size=32, patch_size=4, embed_dim=32,
                                            depths=[1, 1], num_heads=[2, 4], window_size=4), image(2, 32), None,
                        False, HF),
    "hf_convnext": ZooModel("hf-vision", vision("ConvNextConfig", "ConvNextModel", hidden_sizes=[16, 32, 64, 128],
                                                depths=[1, 1, 1, 1]), image(2, 64), batch_dim(), False, HF),
    "segformer": ZooModel("hf-vision", vision("SegformerConfig", "SegformerModel", hidden_sizes=[16, 32, 64, 128],
                                              depths=[1, 1, 1, 1], num_attention_heads=[1, 2, 4, 8],
                                              decoder_hidden_size=64), image(2, 64), None, True, HF),
    "clip_text": ZooModel("hf-vision", hf("CLIPTextConfig", "CLIPTextModel",
                                          dict(vocab_size=VOCAB, max_position_embeddings=32, **SMALL),
                                          ("input_ids", "attention_mask"), "last_hidden_state"), tokens(2, 16),
                          batch_seq(2), False, HF),
    "clip_vision": ZooModel("hf-vision", vision("CLIPVisionConfig", "CLIPVisionModel", image_size=32, patch_size=8,
                                                **SMALL), image(2, 32), batch_dim(), False, HF),
    "whisper_encoder": ZooModel("hf-audio", hf("WhisperConfig", "WhisperModel",
                                               dict(vocab_size=VOCAB, num_mel_bins=16, d_model=64, encoder_layers=2,
                                                    decoder_layers=1, encoder_attention_heads=4,
                                                    decoder_attention_heads=4, encoder_ffn_dim=128,
                                                    decoder_ffn_dim=128, max_source_positions=32,
                                                    max_target_positions=16, pad_token_id=0, bos_token_id=1,
                                                    eos_token_id=2, decoder_start_token_id=1),
                                               ("input_features",),
                                               "last_hidden_state"), lambda g: (torch.randn(2, 16, 64, generator=g),),
                                None, True, HF),
    "wav2vec2": ZooModel("hf-audio", hf("Wav2Vec2Config", "Wav2Vec2Model",
                                        dict(vocab_size=32, conv_dim=(32,) * 7, num_conv_pos_embeddings=16,
                                             num_conv_pos_embedding_groups=4, **SMALL), ("input_values",),
                                        "last_hidden_state"), lambda g: (torch.randn(2, 1600, generator=g),), None,
                         False, HF),
}


def build(name: str) -> nn.Module:
    """The zoo model `name`, in eval mode; WhisperModel is cut to its encoder."""
    model = ZOO[name].build()
    if name == "whisper_encoder":
        model = Keywords(model.model.get_encoder(), ("input_features",), "last_hidden_state")
    return model.eval()
