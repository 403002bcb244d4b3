"""Make the exported-model fixtures: tiny Hugging Face models, random weights, ONNX files.

The files next to this script are what `torch.onnx.export` writes for models from
`transformers`, built from small configs (hidden size 16, 2 layers, a vocabulary of 64)
with seeded random weights: the graphs are those of the real architectures, with the
shape arithmetic (Shape -> Gather -> Concat -> Reshape), masks and position ids that
exporters emit.  Two exporters: the TorchScript one (opset 17, ``name.onnx``) and the
dynamo one (``name_dynamo.onnx``).  Batch and sequence lengths are dynamic axes.

The tests (`test_exported_models.py`) need only onnx and onnxruntime; this script needs
torch and transformers, which the project does not depend on (the fixtures were made with
torch 2.14, transformers 5.25 and onnxscript 0.7; `--images` needs torchvision)::

    pip install torch transformers onnxscript
    python tests/relax/frontend/models/make_models.py
    python tests/relax/frontend/models/make_models.py --large DIR   # for the benchmark
    python tests/relax/frontend/models/make_models.py --images DIR  # torchvision's CNNs
    python tests/relax/frontend/models/make_models.py --tasks DIR   # segmentation, detection

Example:
    >>> sorted(MODELS)[:3]  # doctest: +SKIP
    ['bert', 'clip_text', 'deberta']
"""

from __future__ import annotations

import os
import sys

VOCAB = 64
"""Token ids in the tests are drawn below this."""


def _text_models(T):  # noqa: N803 - the transformers module
    small = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                 vocab_size=VOCAB, max_position_embeddings=64)  # fmt: skip
    return {
        "bert": lambda: T.BertModel(T.BertConfig(**small)),
        "llama": lambda: T.LlamaModel(T.LlamaConfig(num_key_value_heads=1, **small)),
        "deberta": lambda: T.DebertaV2Model(T.DebertaV2Config(**small)),
        "clip_text": lambda: T.CLIPTextModel(T.CLIPTextConfig(**small)),
        "t5_encoder": lambda: T.T5EncoderModel(T.T5Config(d_model=16, num_layers=2, num_heads=2, d_ff=32,
                                                          d_kv=8, vocab_size=VOCAB)),  # fmt: skip
    }


def _other_models(T):  # noqa: N803
    return {
        "vit": lambda: T.ViTModel(T.ViTConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                              intermediate_size=32, image_size=32, patch_size=8)),  # fmt: skip
        "swin": lambda: T.SwinModel(T.SwinConfig(embed_dim=8, depths=[1, 1], num_heads=[2, 2], image_size=32,
                                                 patch_size=4, window_size=4)),  # fmt: skip
        "wav2vec2": lambda: T.Wav2Vec2Model(T.Wav2Vec2Config(
            hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, conv_dim=(8, 8),
            conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2)),
    }


MODELS = {"text": ["bert", "llama", "deberta", "clip_text", "t5_encoder"], "image": ["vit", "swin"],
          "audio": ["wav2vec2"], "decoder": ["gpt2_cache"]}  # fmt: skip
DYNAMO = ["bert", "llama", "wav2vec2"]


def main(out: str) -> None:
    import torch
    import transformers as T  # noqa: N812

    makers = {**_text_models(T), **_other_models(T)}
    for name in [n for kind in MODELS.values() for n in kind]:
        for dynamo in (False, True):
            if dynamo and name not in DYNAMO:
                continue
            torch.manual_seed(0)
            path = os.path.join(out, f"{name}{'_dynamo' if dynamo else ''}.onnx")
            if name == "gpt2_cache":
                _export_gpt2_cache(torch, T, path)
            else:
                kind = next(k for k, names in MODELS.items() if name in names)
                _export(torch, makers[name]().eval(), kind, path, dynamo)
            print(path, os.path.getsize(path))


def _export(torch, model, kind, path, dynamo, large=False):  # noqa: ANN001
    """Export `model` (a text, image or audio model) with dynamic batch/sequence axes."""
    key = {"text": "input_ids", "image": "pixel_values", "audio": "input_values"}[kind]

    class Wrap(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, *args):  # noqa: ANN002, ANN201
            if kind == "text":
                return self.m(input_ids=args[0], attention_mask=args[1]).last_hidden_state
            return self.m(**{key: args[0]}).last_hidden_state

    if kind == "text":
        names = ["input_ids", "attention_mask"]
        batch, seq, vocab = (1, 128, 1000) if large else (2, 7, VOCAB)
        args = (torch.randint(0, vocab, (batch, seq)), torch.ones(batch, seq, dtype=torch.int64))
        axes = {n: {0: "batch", 1: "seq"} for n in names}
    elif kind == "image":
        names, axes = [key], {key: {0: "batch"}}
        args = (torch.randn(1, 3, 224, 224) if large else torch.randn(2, 3, 32, 32),)
    else:
        names, axes = [key], {key: {0: "batch", 1: "seq"}}
        args = (torch.randn(1, 16000) if large else torch.randn(2, 400),)
    if not dynamo:
        torch.onnx.export(Wrap().eval(), args, path, input_names=names, output_names=["out"], dynamo=False,
                          opset_version=17, dynamic_axes={**axes, "out": {0: "batch"}})  # fmt: skip
        return
    dims = {"batch": torch.export.Dim("batch", max=64),
            "seq": torch.export.Dim("seq", min=400, max=4000) if kind == "audio" else torch.export.Dim("seq", min=2, max=60)}  # fmt: skip
    shapes = tuple({axis: dims[d] for axis, d in axes[n].items()} for n in names)
    torch.onnx.export(Wrap().eval(), args, path, input_names=names, output_names=["out"], dynamo=True,
                      dynamic_shapes=(shapes,), external_data=False)  # fmt: skip


def _export_gpt2_cache(torch, T, path, large=False):  # noqa: ANN001, N803
    """GPT-2 with its LM head and a key/value cache in and out (one decoding step); `large`:
    hidden size 384, 4 layers, 1024 positions (`bench/generate.py`)."""
    config = (dict(n_embd=384, n_layer=4, n_head=6, vocab_size=1000, n_positions=1024) if large
              else dict(n_embd=16, n_layer=2, n_head=2, vocab_size=VOCAB, n_positions=64))  # fmt: skip
    model = T.GPT2LMHeadModel(T.GPT2Config(**config))
    layers, heads = config["n_layer"], config["n_head"]

    class Step(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model.eval()

        def forward(self, input_ids, attention_mask, *kv):  # noqa: ANN001, ANN002, ANN201
            cache = T.DynamicCache()
            for k in range(layers):
                cache.update(kv[2 * k], kv[2 * k + 1], k)
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
            return out.logits, *[t for layer in out.past_key_values.layers for t in (layer.keys, layer.values)]

    b, s, p = 2, 3, 5
    head_dim = config["n_embd"] // heads
    args = (torch.randint(0, config["vocab_size"], (b, s)), torch.ones(b, p + s, dtype=torch.int64),
            *[torch.randn(b, heads, p, head_dim) for _ in range(2 * layers)])  # fmt: skip
    kv = [f"{kind}_{k}" for k in range(layers) for kind in ("key", "value")]
    names = ["input_ids", "attention_mask", *(f"past_{n}" for n in kv)]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
            **{n: {0: "batch", 2: "past"} for n in names[2:]}}  # fmt: skip
    torch.onnx.export(Step().eval(), args, path, input_names=names, dynamo=False, opset_version=17,
                      output_names=["logits", *kv], dynamic_axes=axes)  # fmt: skip


def _large_models(T):  # noqa: N803
    """Mid-size versions (hidden size 384, 4 layers; ResNet-18 and friends at 224 x 224) for
    `bench/exported_models.py`: batch and sequence dynamic, as exporters leave them."""
    text = dict(hidden_size=384, num_hidden_layers=4, num_attention_heads=6, intermediate_size=1536,
                vocab_size=1000, max_position_embeddings=512)  # fmt: skip
    return {
        "bert": ("text", lambda: T.BertModel(T.BertConfig(**text))),
        "gpt2": ("text", lambda: T.GPT2Model(T.GPT2Config(n_embd=384, n_layer=4, n_head=6, vocab_size=1000))),
        "llama": ("text", lambda: T.LlamaModel(T.LlamaConfig(**{**text, "intermediate_size": 1024},
                                                              num_key_value_heads=2))),  # fmt: skip
        "t5_encoder": ("text", lambda: T.T5EncoderModel(T.T5Config(d_model=384, num_layers=4, num_heads=6,
                                                                   d_ff=1536, d_kv=64, vocab_size=1000))),  # fmt: skip
        "vit": ("image", lambda: T.ViTModel(T.ViTConfig(**{k: v for k, v in text.items() if "vocab" not in k
                                                           and "position" not in k}, image_size=224, patch_size=16))),  # fmt: skip
        "convnext": ("image", lambda: T.ConvNextModel(T.ConvNextConfig(hidden_sizes=[48, 96, 192, 384],
                                                                       depths=[1, 1, 3, 1]))),  # fmt: skip
        "swin": ("image", lambda: T.SwinModel(T.SwinConfig(embed_dim=48, depths=[1, 1, 2, 1],
                                                           num_heads=[2, 3, 6, 12]))),  # fmt: skip
        "resnet18": ("image", lambda: T.ResNetModel(T.ResNetConfig(
            embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2], layer_type="basic"))),
        "segformer": ("image", lambda: T.SegformerModel(T.SegformerConfig())),
        "wav2vec2": ("audio", lambda: T.Wav2Vec2Model(T.Wav2Vec2Config(
            hidden_size=384, num_hidden_layers=4, num_attention_heads=6, intermediate_size=1536))),
    }


def main_large(out: str) -> None:
    """Export the mid-size models into `out` (TorchScript exporter, opset 17)."""
    import torch
    import transformers as T  # noqa: N812

    for name, (kind, make) in _large_models(T).items():
        torch.manual_seed(0)
        path = os.path.join(out, f"{name}.onnx")
        _export(torch, make().eval(), kind, path, dynamo=False, large=True)
        print(path, os.path.getsize(path))
    torch.manual_seed(0)
    path = os.path.join(out, "gpt2_cache.onnx")
    _export_gpt2_cache(torch, T, path, large=True)
    print(path, os.path.getsize(path))


TORCHVISION_CNNS = (
    "convnext_tiny", "densenet121", "efficientnet_b0", "googlenet", "mnasnet1_0", "mobilenet_v2",
    "mobilenet_v3_small", "regnet_y_400mf", "resnet50", "shufflenet_v2_x1_0", "squeezenet1_1",
)  # fmt: skip
"""torchvision's CNNs `main_images` exports (random weights)."""


def main_images(out: str) -> None:
    """Export torchvision's CNNs into `out` with a symbolic batch, height and width (input
    ``pixel_values [batch, 3, height, width]``), for ``bench/dynamic_image.py --folder``."""
    import torch
    import torchvision

    for name in TORCHVISION_CNNS:
        torch.manual_seed(0)
        path = os.path.join(out, f"{name}.onnx")
        axes = {"pixel_values": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}}
        model = _calibrated(torch, getattr(torchvision.models, name)(weights=None))
        torch.onnx.export(model, (torch.randn(1, 3, 224, 224),),
                          path, input_names=["pixel_values"], output_names=["logits"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)  # fmt: skip
        print(path, os.path.getsize(path))


def _calibrated(torch, model):  # noqa: ANN001, ANN202
    """`model` in eval mode with its batch norms' statistics those of random images: with
    the initial ones (mean 0, variance 1) activations shrink layer after layer, and
    GoogLeNet's pooled features came out below 1e-10, EfficientNet-B0's logits 3e-14, so
    the benches' differences against onnxruntime compared next to nothing."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a plain average over the batches below
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(4, 3, 224, 224))
    return model.eval()


def main_tasks(out: str) -> None:
    """Export torchvision's segmentation models (224 x 224, and ``*_dyn`` with a symbolic
    batch, height and width) and detectors (one 320 x 320 image; score thresholds low
    enough that random weights leave detections) into `out`, for ``bench/exported_models.py``."""
    import torch
    import torchvision

    seg, det = torchvision.models.segmentation, torchvision.models.detection

    class Logits(torch.nn.Module):
        def __init__(self, model) -> None:  # noqa: ANN001
            super().__init__()
            self.model = model

        def forward(self, x):  # noqa: ANN001, ANN201
            return self.model(x)["out"]

    image = (torch.randn(1, 3, 224, 224),)
    for name in ("lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large"):
        for dynamic in (False, True):
            torch.manual_seed(0)
            model = _calibrated(torch, Logits(getattr(seg, name)(weights=None, weights_backbone=None)))
            path = os.path.join(out, f"{name}{'_dyn' if dynamic else ''}.onnx")
            free = {0: "batch", 2: "height", 3: "width"}
            axes = {"pixel_values": free, "logits": free} if dynamic else None
            torch.onnx.export(model, image, path, input_names=["pixel_values"], output_names=["logits"],
                              dynamic_axes=axes, opset_version=17, dynamo=False)  # fmt: skip
            print(path, os.path.getsize(path))
    detectors = {
        "fasterrcnn_mobilenet_v3_large_320_fpn": {"box_score_thresh": 0.005},
        "ssdlite320_mobilenet_v3_large": {},
        "retinanet_resnet50_fpn": {"score_thresh": 0.005},
        "maskrcnn_resnet50_fpn": {},  # masks pasted and keypoints found in Loops over detections
        "keypointrcnn_resnet50_fpn": {},
    }
    for name, options in detectors.items():
        torch.manual_seed(0)
        model = getattr(det, name)(weights=None, weights_backbone=None, **options).eval()
        path = os.path.join(out, f"{name}.onnx")
        torch.onnx.export(model, ([torch.rand(3, 320, 320)],), path, input_names=["images"], opset_version=17,
                          dynamo=False)  # fmt: skip
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("--large", "--images", "--tasks"):
        run = {"--large": main_large, "--images": main_images, "--tasks": main_tasks}[sys.argv[1]]
        run(sys.argv[2] if len(sys.argv) > 2 else "exported_models")
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
