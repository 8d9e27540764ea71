"""PyTorch reference for bench_gpt's generation table (developer-side; the project itself
never needs Python). Greedy generation at batch 1 from one token up to min(256, T)
tokens with the model of ../shared/tools/torch_gpt_bench.py: each token by a full
forward of the sequence so far (nanoGPT's generate), and with a key/value cache written
here. Prints tokens/s of each and whether both produced the same tokens.

Usage: /usr/bin/python3 scripts/torch_generate_bench.py tiny|small THREADS
"""
import math, os, sys, time
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "shared", "tools"))
from torch_gpt_bench import CONFIGS, GPT  # noqa: E402  the benchmark's model, not copied


def logits_full(model, idx):
    T = idx.shape[1]
    x = model.wte(idx) + model.wpe(torch.arange(T))
    for b in model.blocks:
        x = b(x)
    return model.lnf(x) @ model.wte.weight.t()


def logits_cached(model, token, pos, cache):
    """One new token at position pos; cache[l] = (K, V) of shape (1, H, pos, hd) or None."""
    x = model.wte(token) + model.wpe(torch.tensor([pos]))
    for l, b in enumerate(model.blocks):
        C = x.shape[-1]
        hd = C // b.H
        q, k, v = b.qkv(b.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(1, 1, b.H, hd).transpose(1, 2) for t in (q, k, v))
        if cache[l] is not None:
            k = torch.cat([cache[l][0], k], dim=2)
            v = torch.cat([cache[l][1], v], dim=2)
        cache[l] = (k, v)
        att = ((q @ k.transpose(-2, -1)) / math.sqrt(hd)).softmax(-1)  # the newest token sees every cached one
        x = x + b.proj((att @ v).transpose(1, 2).reshape(1, 1, C))
        x = x + b.fc2(F.gelu(b.fc(b.ln2(x)), approximate="tanh"))
    return model.lnf(x) @ model.wte.weight.t()


def generate(model, length, cached):
    ids = [10]
    cache = [None] * len(model.blocks)
    while len(ids) < length:
        if cached:
            logits = logits_cached(model, torch.tensor([[ids[-1]]]), len(ids) - 1, cache)
        else:
            logits = logits_full(model, torch.tensor([ids]))
        ids.append(int(logits[0, -1].argmax()))
    return ids


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "tiny"
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    c = CONFIGS[name]
    model = GPT(c["V"], c["L"], c["C"], c["H"], c["T"]).eval()
    length = min(256, c["T"])
    with torch.no_grad():
        generate(model, length, True)  # warm-up
        t0 = time.perf_counter()
        a = generate(model, length, True)
        cached_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        b = generate(model, length, False)
        full_s = time.perf_counter() - t0
    n = length - 1
    print(f"torch {torch.__version__} config={name} threads={threads} tokens={n} cached tok/s={n / cached_s:.0f} "
          f"full tok/s={n / full_s:.0f} same tokens={'yes' if a == b else 'NO'}")


if __name__ == "__main__":
    main()
