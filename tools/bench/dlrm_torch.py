#!/usr/bin/env python3
"""The PyTorch side of issue 21's comparison: train_bench's DLRM step in PyTorch.

The same model as tools/bench/train_bench.cpp's (docs/gpu.md, "PyTorch
beside train_bench"): the Criteo Kaggle shape at `--row-scale` of its table
sizes (26 tables, at least 2 rows each), embedding dim 16, one id per table
and sample, sum pooling (EmbeddingBag), bottom MLP 13-512-256-64-16 with a
ReLU after every layer, DLRM's dot interaction ([z, <F_a, F_b> for a > b],
the strictly lower triangle row by row), top MLP 367-512-256-1 (ReLU but
after the last), BCE with logits averaged over the batch, plain SGD at
lr 0.1 on the dense and the embedding parameters (sparse gradients, as the
DLRM reference). FP32 throughout, TF32 off (actorrec's cuBLAS is pedantic
FP32).

It times forward + backward + optimizer step per iteration on random
batches made beforehand on the device (untimed), after warm-up iterations,
and prints one machine-readable line:

  dlrm_torch device=cuda batch=2048 iters=20 samples_per_s=123456.7 ms_per_iter=16.59 torch=2.11.0 ...

Without PyTorch it says so on stderr and exits 77 (the "skipped" code of
meson and tools/gpu/check.sh). tools/install-deps.sh installs Debian's
python3-torch (for /usr/bin/python3: a python3 without PyTorch runs the
script again there); the GPU machine's image has its own.
"""
import argparse
import os
import sys
import time

# train_bench's model (tools/bench/train_bench.cpp ConfigText) and the
# Criteo Kaggle table sizes (data/gen/generator_options.cpp CriteoKaggleRows).
CRITEO_KAGGLE_ROWS = [
    1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
    27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572]
DENSE = 13
DIM = 16
BOTTOM = [512, 256, 64, DIM]
TOP = [512, 256, 1]
LR = 0.1
SKIP = 77


def table_rows(row_scale):
    # GeneratorOptions' rule: max(2, llround(rows * row_scale)).
    return [max(2, int(rows * row_scale + 0.5)) for rows in CRITEO_KAGGLE_ROWS]


def build(torch, rows, device):
    nn = torch.nn

    def mlp(widths, inp, relu_last):
        layers = []
        for i, w in enumerate(widths):
            layers.append(nn.Linear(inp, w))
            if i + 1 < len(widths) or relu_last:
                layers.append(nn.ReLU())
            inp = w
        return nn.Sequential(*layers)

    tables = len(rows)
    vectors = tables + 1
    inter = DIM + vectors * (vectors - 1) // 2

    class Dlrm(nn.Module):
        def __init__(self):
            super().__init__()
            self.bottom = mlp(BOTTOM, DENSE, True)
            self.top = mlp(TOP, inter, False)
            self.embeddings = nn.ModuleList(
                nn.EmbeddingBag(r, DIM, mode="sum", sparse=True) for r in rows)
            li, lj = torch.tril_indices(vectors, vectors, offset=-1)
            self.register_buffer("li", li)
            self.register_buffer("lj", lj)

        def forward(self, dense, ids, offsets):
            z = self.bottom(dense)
            pooled = [e(ids[t], offsets) for t, e in enumerate(self.embeddings)]
            f = torch.stack([z] + pooled, dim=1)               # n × (T + 1) × d
            products = torch.bmm(f, f.transpose(1, 2))          # n × (T + 1) × (T + 1)
            pairs = products[:, self.li, self.lj]               # row by row, a > b
            return self.top(torch.cat([z, pairs], dim=1)).squeeze(1)

    return Dlrm().to(device), inter


def reexec_under_debian_python():
    """Debian's python3-torch (tools/install-deps.sh) lives in Debian's own
    interpreter, which another python3 first on PATH (pyenv, a venv, the
    one meson found) does not see: run this script again there, once."""
    debian = "/usr/bin/python3"
    if os.environ.get("DLRM_TORCH_REEXEC") or not os.path.exists(debian):
        return
    if os.path.realpath(debian) == os.path.realpath(sys.executable):
        return
    os.environ["DLRM_TORCH_REEXEC"] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(debian, [debian, os.path.abspath(__file__)] + sys.argv[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="auto", help="cuda, cpu or auto (cuda when available; default)")
    parser.add_argument("--batch", type=int, default=2048, help="samples per iteration (default 2048)")
    parser.add_argument("--iters", type=int, default=20, help="timed iterations (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed iterations first (default 3)")
    parser.add_argument("--row-scale", type=float, default=0.05,
                        help="share of the Criteo Kaggle table sizes, as train_bench's (default 0.05)")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads for torch (default: torch's own)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.batch < 1 or args.iters < 1 or args.warmup < 0 or not (0 < args.row_scale <= 1):
        parser.error("--batch and --iters must be positive, --warmup not negative, --row-scale in (0, 1]")
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install
        reexec_under_debian_python()
        print(f"dlrm_torch: skipped: PyTorch is not importable ({type(e).__name__}: {e})", file=sys.stderr)
        return SKIP
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        print("dlrm_torch: skipped: --device cuda but torch sees no usable CUDA device", file=sys.stderr)
        return SKIP
    if device not in ("cuda", "cpu"):
        parser.error(f"--device {device}: expected cuda, cpu or auto")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(args.seed)

    rows = table_rows(args.row_scale)
    model, inter = build(torch, rows, device)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    dense_params = sum(p.numel() for name, p in model.named_parameters() if not name.startswith("embeddings."))
    loss_fn = torch.nn.BCEWithLogitsLoss()

    # A few batches made beforehand (untimed), used in turn.
    n = args.batch
    batches = []
    for _ in range(4):
        dense = torch.randn(n, DENSE, device=device)
        ids = [torch.randint(0, r, (n,), device=device) for r in rows]
        labels = torch.randint(0, 2, (n,), device=device).float()
        batches.append((dense, ids, labels))
    offsets = torch.arange(n, device=device)  # one id per bag

    def step(b):
        dense, ids, labels = batches[b % len(batches)]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(dense, ids, offsets), labels)
        loss.backward()
        opt.step()
        return loss

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    for b in range(args.warmup):
        step(b)
    sync()
    start = time.perf_counter()
    for b in range(args.iters):
        loss = step(b)
    sync()
    seconds = time.perf_counter() - start
    name = torch.cuda.get_device_name(0).replace(" ", "_") if device == "cuda" else "cpu"
    print(f"dlrm_torch device={device} name={name} batch={n} iters={args.iters} "
          f"samples_per_s={n * args.iters / seconds:.1f} ms_per_iter={seconds / args.iters * 1e3:.2f} "
          f"loss={float(loss):.4f} tables={len(rows)} embedding_rows={sum(rows)} interaction={inter} "
          f"dense_params={dense_params} "
          f"threads={torch.get_num_threads()} torch={torch.__version__}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
