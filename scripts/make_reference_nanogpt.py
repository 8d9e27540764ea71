#!/usr/bin/python3
"""Writes a tiny GPT of nanoGPT's architecture and its logits, for tests/train/test_nanogpt_names.cpp:
    tests/reference/nanogpt_tiny.safetensors   its weights under nanoGPT's state_dict names
    tests/reference/nanogpt.txt                its logits for fixed ids (format: tests/reference/README.md)

The model is written here from nanoGPT's architecture (karpathy/nanoGPT, model.py), not
taken from it: token + position embeddings, pre-norm blocks x + attn(ln_1(x)),
x + mlp(ln_2(x)), LayerNorm eps 1e-5 with weight and bias, c_attn's output split into
q, k, v in that order with heads contiguous in each, causal softmax attention scaled by
1/sqrt(head size), an MLP of width 4C, a final ln_f and a head tied to wte. Sizes:
vocab 256, n_layer 2, n_head 2, n_embd 16, block_size 8, bias=True.

The weights are drawn as float32 (so the file holds them exactly), larger than nanoGPT's
initialisation so that the logits spread over a few units; the forward runs in float64
and the logits are rounded once to float32. Two cases: `tanh_gelu` with the tanh GELU
that normlab has (the converted model must reproduce it to float32 rounding), and
`erf_gelu` with nanoGPT's own exact nn.GELU() (what normlab's tanh form departs from).
The file also holds the causal-mask buffers (transformer.h.I.attn.bias, (1, 1, 8, 8))
that nanoGPT's state_dict has on PyTorch < 2, which the converter skips. No lm_head.weight:
safetensors' save_file refuses tensors that share memory, so the documented recipe drops it.

The safetensors file is written by hand (8-byte header length, JSON header, raw
little-endian data), so no safetensors package is needed. For the developers only:
    /usr/bin/python3 scripts/make_reference_nanogpt.py     (Debian's python3-torch, torch 1.13)
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_reference import OUT_DIR, ROOT, RefFile  # noqa: E402

F64 = torch.float64
VOCAB, LAYERS, HEADS, DIM, BLOCK = 256, 2, 2, 16, 8
BATCH, T = 2, 6  # shorter than block_size: the position table's first T rows


def draw_weights(gen):
    def normal(*shape, std, mean=0.0):
        return (torch.randn(shape, generator=gen, dtype=torch.float32) * std + mean).to(torch.float32)

    C = DIM
    sd = {"transformer.wte.weight": normal(VOCAB, C, std=0.5), "transformer.wpe.weight": normal(BLOCK, C, std=0.5)}
    for i in range(LAYERS):
        p = "transformer.h.%d." % i
        for ln in ("ln_1", "ln_2"):
            sd[p + ln + ".weight"] = normal(C, std=0.2, mean=1.0)
            sd[p + ln + ".bias"] = normal(C, std=0.1)
        for name, rows, cols in (("attn.c_attn", 3 * C, C), ("attn.c_proj", C, C),
                                 ("mlp.c_fc", 4 * C, C), ("mlp.c_proj", C, 4 * C)):
            sd[p + name + ".weight"] = normal(rows, cols, std=1.0 / math.sqrt(cols))
            sd[p + name + ".bias"] = normal(rows, std=0.1)
    sd["transformer.ln_f.weight"] = normal(C, std=0.2, mean=1.0)
    sd["transformer.ln_f.bias"] = normal(C, std=0.1)
    return sd


def forward(sd, ids, gelu):
    w = {k: v.to(F64) for k, v in sd.items()}
    B, T_ = ids.shape
    C, H = DIM, HEADS

    def ln(x, name):
        return F.layer_norm(x, (C,), w[name + ".weight"], w[name + ".bias"], 1e-5)

    def linear(x, name):
        return F.linear(x, w[name + ".weight"], w[name + ".bias"])

    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:T_]
    causal = torch.ones(T_, T_, dtype=torch.bool).tril()
    for i in range(LAYERS):
        p = "transformer.h.%d." % i
        q, k, v = linear(ln(x, p + "ln_1"), p + "attn.c_attn").split(C, dim=2)
        q, k, v = (t.reshape(B, T_, H, C // H).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // H)
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        x = x + linear((att @ v).transpose(1, 2).reshape(B, T_, C), p + "attn.c_proj")
        x = x + linear(gelu(linear(ln(x, p + "ln_2"), p + "mlp.c_fc")), p + "mlp.c_proj")
    return ln(x, "transformer.ln_f") @ w["transformer.wte.weight"].t()


def write_safetensors(path, tensors):
    header, data = {}, b""
    for name in sorted(tensors):
        raw = tensors[name].contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":"))
    text += " " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode() + data)
    print("%-40s %7d bytes" % (os.path.relpath(path, ROOT), os.path.getsize(path)))


def main():
    gen = torch.Generator().manual_seed(2024)
    sd = draw_weights(gen)
    ids = torch.randint(0, VOCAB, (BATCH, T), generator=gen, dtype=torch.int64)
    stored = dict(sd)
    for i in range(LAYERS):
        stored["transformer.h.%d.attn.bias" % i] = torch.ones(BLOCK, BLOCK).tril().view(1, 1, BLOCK, BLOCK)
    write_safetensors(os.path.join(OUT_DIR, "nanogpt_tiny.safetensors"), stored)

    f = RefFile("nanogpt.txt", 0, "logits of the GPT in nanogpt_tiny.safetensors (scripts/make_reference_nanogpt.py)")
    f.lines[2] = f.lines[2].replace("make_reference.py", "make_reference_nanogpt.py")
    gelus = {"tanh_gelu": lambda a: F.gelu(a, approximate="tanh"), "erf_gelu": F.gelu}
    for name, gelu in gelus.items():
        f.lines += ["case " + name, "attr op nanogpt_forward", "attr heads %d" % HEADS]
        f.tensor("ids", ids)
        f.tensor("out", forward(sd, ids, gelu))
        f.lines.append("end")
        f.count += 1
    f.write()


if __name__ == "__main__":
    main()
