"""Greedy text generation with a key/value cache: unity next to onnxruntime, per token.

A decoder exported with its cache as inputs and outputs (``input_ids``,
``attention_mask``, ``past_key_K`` / ``past_value_K`` in; logits and the grown cache
out, batch and lengths dynamic, as `transformers` exports it) is compiled once with
symbolic shapes; then each runtime generates `--tokens` tokens greedily after a
`--prompt`-token prompt: one step over the prompt with an empty cache, then one step per
token, each feeding back the cache the last one returned (unity's output tensors as
they are, onnxruntime's arrays).  Printed: the prompt step and the median decoding step
(ms, over `--repeat` generations taken in turn, each after a pause that lets the other
runtime's threads stop spinning), their ratios (unity / onnxruntime), and
whether both generated the same tokens.

The default model is the tiny test fixture (hidden size 16: its timings are the VM's
and the kernels' overhead, not their arithmetic); the mid-size GPT-2 (hidden size 384, 4
layers) is made with ``python tests/relax/frontend/models/make_models.py --large DIR``
(needs torch and transformers) and timed with ``python bench/generate.py DIR/gpt2_cache.onnx``.

Run: ``python bench/generate.py [MODEL] [--prompt 16] [--tokens 32] [--repeat 5]``

Where it stood on 2026-12-05 (2-core AMD EPYC Zen 3, AVX2, shared; same-run ratios,
unity / onnxruntime; before: the commit before this session's fusion of kernels that
take shape symbols as scalars and its serial small parallel loops)::

    model                    prompt        per token       same tokens   before (per token)
    mid-size GPT-2 (32+64)   5.5 ms 1.01x  1.25 ms 0.97x   yes           1.80 ms 1.39x
    tiny fixture (16+32)     0.63 ms 0.72x 0.19 ms 0.88x   yes           0.37 ms 1.75x

On 2026-12-06 (2-core Zen 4, AVX-512), after stop 30's vector tails (the attention
scores' last column tile of ``past + seq`` columns ran lane by lane)::

    mid-size GPT-2 (16+32)   3.0 ms 0.77x  1.24 ms 0.68x   yes

On 2026-12-07 (stop 39, 2-core Sapphire Rapids, AVX-512): per token 0.90 ms 1.02x
(the stop-38 code in the same hour: 1.12 ms 1.25x; a decoding step's one row had run
every projection's 8-row tile clamped to it, rolled), prompt 3.2 ms 1.17x::

    mid-size GPT-2 (16+32)   3.2 ms 1.17x  0.86 ms 1.01x   yes

Stop 41, same machine, kernels called through one packed argument (the VM's time
without kernels 0.160 -> 0.089 ms per token)::

    mid-size GPT-2 (16+32)   2.8 ms 0.96x  0.86 ms 0.91x   yes

Stop 44, same machine (slower that day), a step's kernels called in native runs
(`unity.runtime.kernel_runs`; stop 43's code: per token 0.87x, prompt 0.95x)::

    mid-size GPT-2 (16+32)   2.8 ms 0.91x  0.78 ms 0.83x   yes
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

import unity
from unity import relax
from unity.cli.timing import SETTLE_S
from unity.relax.frontend.onnx import from_onnx

FIXTURE = Path(__file__).resolve().parent.parent / "tests/relax/frontend/models/gpt2_cache.onnx"

Step = Callable[[np.ndarray, np.ndarray, Sequence[object]], tuple[np.ndarray, list[object]]]
"""One decoding step: (ids, mask, cache) -> (logits of the last position, the new cache)."""


def empty_cache(model: onnx.ModelProto) -> list[np.ndarray]:
    """Zero-length ``past_*`` inputs (batch 1) of the shapes the model declares.

    Example:
        >>> [c.shape for c in empty_cache(onnx.load(str(FIXTURE)))][:1]  # doctest: +SKIP
        [(1, 2, 0, 8)]
    """
    cache = []
    for value in model.graph.input:
        if value.name.startswith("past_"):
            tensor = value.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else 0 for d in tensor.shape.dim]
            dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
            cache.append(np.zeros((1, dims[1], 0, dims[3]), dtype))
    return cache


def generate(step: Step, prompt: np.ndarray, tokens: int, cache: Sequence[object]) -> tuple[list[int], list[float]]:
    """Greedy tokens after `prompt` (1 x n ids) and the seconds of each step.

    Example:
        >>> generate(unity_step(vm), np.array([[1, 2]]), 3, empty)  # doctest: +SKIP
        ([5, 5, 9], [...])
    """
    ids, out, seconds = prompt, [], []
    total = prompt.shape[1]
    for _ in range(tokens):
        start = time.perf_counter()
        logits, cache = step(ids, np.ones((1, total), np.int64), cache)
        token = int(np.argmax(logits))
        seconds.append(time.perf_counter() - start)
        out.append(token)
        ids, total = np.array([[token]], np.int64), total + 1
    return out, seconds


def unity_step(vm: relax.VirtualMachine) -> Step:
    """The step of a compiled model: its output tensors go back in as they are.

    Example:
        >>> step = unity_step(vm)  # doctest: +SKIP
    """

    def step(ids: np.ndarray, mask: np.ndarray, cache: Sequence[object]) -> tuple[np.ndarray, list[object]]:
        logits, *new = vm["main"](ids, mask, *cache)
        return logits.numpy()[0, -1], new

    return step


def ort_step(session: ort.InferenceSession) -> Step:
    """The step of an onnxruntime session.

    Example:
        >>> step = ort_step(session)  # doctest: +SKIP
    """
    names = [i.name for i in session.get_inputs()]

    def step(ids: np.ndarray, mask: np.ndarray, cache: Sequence[object]) -> tuple[np.ndarray, list[object]]:
        logits, *new = session.run(None, dict(zip(names, [ids, mask, *cache], strict=True)))
        return logits[0, -1], new

    return step


def main() -> None:
    """Compile the model, generate with both runtimes in turn, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=str(FIXTURE))
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    model = onnx.load(args.model)
    start = time.perf_counter()
    with unity.transform.PassContext(opt_level=3):
        ex = unity.compile(from_onnx(model), target="llvm")
    print(f"{Path(args.model).name}: compiled in {time.perf_counter() - start:.1f} s")
    steps = {"unity": unity_step(relax.VirtualMachine(ex, unity.cpu())),
             "onnxruntime": ort_step(ort.InferenceSession(args.model, providers=["CPUExecutionProvider"]))}  # fmt: skip
    vocab = 64 if Path(args.model) == FIXTURE else 1000
    prompt = np.random.default_rng(0).integers(0, vocab, (1, args.prompt)).astype(np.int64)
    cache = empty_cache(model)
    runs: dict[str, list[list[float]]] = {name: [] for name in steps}
    tokens: dict[str, list[int]] = {}
    for _ in range(args.repeat + 1):  # the first generation of each warms up
        for name, step in steps.items():
            time.sleep(SETTLE_S)  # the other runtime's threads stop spinning first
            tokens[name], seconds = generate(step, prompt, args.tokens, cache)
            runs[name].append(seconds)
    figures = {}
    for name, seconds in runs.items():
        timed = np.array(seconds[1:]) * 1e3
        figures[name] = (float(np.median(timed[:, 0])), float(np.median(timed[:, 1:])))
    (up, ud), (op, od) = figures["unity"], figures["onnxruntime"]
    print(f"prompt of {args.prompt}: unity {up:.3f} ms, onnxruntime {op:.3f} ms ({up / op:.2f}x)")
    print(f"per token, context {args.prompt}..{args.prompt + args.tokens}: unity {ud:.3f} ms, "
          f"onnxruntime {od:.3f} ms ({ud / od:.2f}x)")  # fmt: skip
    same = tokens["unity"] == tokens["onnxruntime"]
    print(f"same {args.tokens} tokens: {same}" + ("" if same else f" {tokens}"))


if __name__ == "__main__":
    main()
