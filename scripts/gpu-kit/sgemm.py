#!/usr/bin/env python3
"""The cuBLAS SGEMM ceiling on the GEMMs the built-in MLP runs (docs/gpu.md,
"Measurements"): fp32, TF32 off, through PyTorch's cuBLAS. A Linear layer of
hidden H on a batch of B rows runs three GEMMs per microbatch: the forward
(B x H by H x H), the input gradient (B x H by H x H) and the weight
gradient (H x B by B x H). The ceiling is their FLOPs over their summed
times, the rate the MLP would reach if it did nothing else.

    sgemm.py RESULTS --hidden H --batch B"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from result import main as append_result, typed  # noqa: E402


def time_gemm(torch, m, n, k, reps):
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    for _ in range(3):
        torch.mm(a, b)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        torch.mm(a, b)
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / 1e3 / reps


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results")
    parser.add_argument("--hidden", type=int, required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    h, b = args.hidden, args.batch
    shapes = {"forward": (b, h, h), "input_grad": (b, h, h), "weight_grad": (h, h, b)}
    record = {"kind": "measure", "name": "sgemm_ceiling", "hidden": h, "batch": b,
              "torch": torch.__version__, "device": torch.cuda.get_device_name()}
    flops = seconds = 0.0
    for name, (m, n, k) in shapes.items():
        t = time_gemm(torch, m, n, k, args.reps)
        record[f"{name}_tflops"] = typed(f"{2 * m * n * k / t / 1e12:.2f}")
        flops, seconds = flops + 2 * m * n * k, seconds + t
    record["tflops"] = typed(f"{flops / seconds / 1e12:.2f}")
    pairs = [f"{k}={v}" for k, v in record.items() if k not in ("kind", "name")]
    print(" ".join(pairs))
    append_result(["", args.results, "measure", "sgemm_ceiling", *pairs])


if __name__ == "__main__":
    main()
