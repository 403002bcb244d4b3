"""Models exported from `transformers` with `torch.onnx.export`, against onnxruntime.

The fixtures in `models/` are tiny configs of real architectures with random weights
(see `models/make_models.py`): BERT, Llama, DeBERTa, CLIP's text tower, the T5 encoder,
ViT, Swin, wav2vec 2.0 and a GPT-2 decoding step with its key/value cache, from the
TorchScript exporter (opset 17) and, for three of them, the dynamo one.  Their batch and
sequence lengths are dynamic axes: each model is compiled once, with symbolic shapes,
and run at two or three sizes (and, compiled for cuda, once in the GPU emulator).  Four
models run in the default suite, all in the slow one.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import onnx
import pytest

import unity
from unity import relax
from unity.relax.frontend.onnx import from_onnx

from .onnx_helpers import run_ort

MODEL_DIR = os.path.join(os.path.dirname(__file__), "models")
VOCAB = 64

TEXT = ["bert", "bert_dynamo", "llama", "llama_dynamo", "deberta", "clip_text", "t5_encoder"]
IMAGE = ["vit", "swin"]
AUDIO = ["wav2vec2", "wav2vec2_dynamo"]
DECODER = ["gpt2_cache"]
FAST = {"bert", "llama_dynamo", "wav2vec2", "gpt2_cache"}


def _load(name: str) -> onnx.ModelProto:
    return onnx.load(os.path.join(MODEL_DIR, f"{name}.onnx"))


@functools.cache
def _vm(name: str) -> relax.VirtualMachine:
    """The model compiled once (opt level 3, as `unity bench` does) and loaded in a VM."""
    with unity.transform.PassContext(opt_level=3):
        ex = unity.compile(from_onnx(_load(name)), target="llvm")
    return relax.VirtualMachine(ex, unity.cpu())


def _cases(name: str, rng: np.random.Generator) -> list[dict[str, np.ndarray]]:
    """Inputs at a few sizes; row 0 of each attention mask pads its last two tokens."""
    if name in TEXT:
        cases = []
        for batch, seq in [(1, 5), (3, 11)]:
            mask = np.ones((batch, seq), np.int64)
            mask[0, -2:] = 0
            cases.append({"input_ids": rng.integers(0, VOCAB, (batch, seq)), "attention_mask": mask})
        return cases
    if name in IMAGE:
        return [{"pixel_values": rng.standard_normal((b, 3, 32, 32)).astype(np.float32)} for b in (1, 3)]
    if name in AUDIO:
        return [{"input_values": rng.standard_normal(shape).astype(np.float32)} for shape in [(1, 400), (2, 720)]]
    cases = []
    for batch, seq, past in [(1, 1, 4), (2, 3, 5)]:
        feeds = {"input_ids": rng.integers(0, VOCAB, (batch, seq)), "attention_mask": np.ones((batch, past + seq), np.int64)}
        for n in ("past_key_0", "past_value_0", "past_key_1", "past_value_1"):
            feeds[n] = rng.standard_normal((batch, 2, past, 8)).astype(np.float32)
        cases.append(feeds)
    return cases


def _params(names: list[str]) -> list[object]:
    return [pytest.param(n, marks=() if n in FAST else pytest.mark.slow) for n in names]


@pytest.mark.parametrize("name", _params(TEXT + IMAGE + AUDIO + DECODER))
def test_exported_model_matches_onnxruntime_at_each_size(name: str):
    proto, vm = _load(name), _vm(name)
    order = [i.name for i in proto.graph.input]
    for feeds in _cases(name, np.random.default_rng(0)):
        want = run_ort(proto, feeds)
        got = vm["main"](*[feeds[n] for n in order])
        got = [got] if isinstance(got, unity.runtime.Tensor) else list(got)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-5)


def test_exported_models_keep_batch_and_sequence_symbolic():
    mod = from_onnx(_load("bert"))
    assert [str(d) for d in mod["main"].params[0].struct_info.shape] == ["batch", "seq"]
    assert [str(d) for d in mod["main"].ret_struct_info.shape] == ["batch", "seq", "16"]
    step = from_onnx(_load("gpt2_cache"))
    assert [str(d) for d in step["main"].ret_struct_info.fields[1].shape] == ["batch", "2", "past + seq", "8"]


def test_greedy_generation_with_the_cache_fed_back_matches_onnxruntime():
    """GPT-2 generates 40 tokens after a 5-token prompt: one step over the prompt with an
    empty cache (past = 0), then one step per token, each taking the cache the last one
    returned (unity's output tensors go back in as they are).  The tokens, the last
    logits and the grown cache match onnxruntime's.  A step at position 64, past the
    position table's end, fails naming the table's axis, as onnxruntime refuses it."""
    import onnxruntime as ort

    proto = _load("gpt2_cache")
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in proto.graph.input]
    prompt = np.array([[5, 9, 3, 17, 2]], np.int64)
    runs = {}
    for runtime in ("unity", "onnxruntime"):
        ids, cache, total, tokens = prompt, [np.zeros((1, 2, 0, 8), np.float32)] * 4, 5, []
        for _ in range(40):
            mask = np.ones((1, total), np.int64)
            if runtime == "unity":
                logits, *cache = _vm("gpt2_cache")["main"](ids, mask, *cache)
                logits = logits.numpy()
            else:
                logits, *cache = session.run(None, dict(zip(names, [ids, mask, *cache], strict=True)))
            tokens.append(int(logits[0, -1].argmax()))
            ids, total = np.array([[tokens[-1]]], np.int64), total + 1
        runs[runtime] = tokens, logits, cache
    (ours, our_logits, our_cache), (theirs, their_logits, their_cache) = runs.values()
    assert ours == theirs
    np.testing.assert_allclose(our_logits, their_logits, rtol=1e-4, atol=1e-5)
    assert our_cache[0].shape == (1, 2, 44, 8)  # the prompt and 39 tokens fed back
    np.testing.assert_allclose(our_cache[-1].numpy(), their_cache[-1], rtol=1e-4, atol=1e-5)
    full = [np.zeros((1, 2, 64, 8), np.float32)] * 4  # 64 positions taken: the next is 64
    with pytest.raises(RuntimeError, match=r"outside \[0, 64\)"):
        _vm("gpt2_cache")["main"](np.array([[1]]), np.ones((1, 65), np.int64), *full)


def test_a_sequence_longer_than_the_position_table_fails_when_run_naming_the_slice():
    ids = np.zeros((1, 65), np.int64)  # the table holds 64 positions
    with pytest.raises(ValueError, match=r"embeddings_Slice.*dim 1 must be seq = 65"):
        _vm("bert")["main"](ids, np.ones_like(ids))


@pytest.mark.parametrize("name", _params(TEXT + IMAGE + AUDIO + DECODER))
def test_exported_model_compiled_for_cuda_matches_onnxruntime_in_the_gpu_emulator(name: str):
    from unity.runtime.cuda.device_api import use_driver
    from unity.runtime.cuda.emulated import EmulatedDriver

    proto = _load(name)
    ex = unity.compile(from_onnx(proto), target="cuda")
    feeds = _cases(name, np.random.default_rng(1))[0]  # the smaller size: emulation is slow
    with use_driver(EmulatedDriver()):
        vm = relax.VirtualMachine(ex, unity.cuda())
        got = vm["main"](*[feeds[i.name] for i in proto.graph.input])
        got = [got] if isinstance(got, unity.runtime.Tensor) else list(got)
        got = [g.numpy() for g in got]
    for g, w in zip(got, run_ort(proto, feeds), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
