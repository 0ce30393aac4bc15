#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small real training job whose communication fabricbench records and replays (docs/replay.md).

Eight Linear(4096, 4096) layers trained with SGD on random data, wrapped in DDP (25 MB gradient
buckets, all_reduce overlapped with the backward pass) or FSDP (fully_shard per layer: all_gather
of the parameters forward and backward, reduce_scatter of the gradients); `--mode moe` is the DDP
job with a mixture-of-experts' token exchange added to each step: four all_to_all_single of skewed,
unequal splits (PyTorch issues them as one NCCL group of Send/Recv each). Launched by torchrun:

    torchrun --standalone --nproc_per_node 2 examples/replay/train_job.py --mode ddp --steps 40

With NCCL_PROFILER_PLUGIN=<build>/lib/libfabricbench_nccl_profiler.so and FABRICBENCH_TRACE_DIR set,
the job's communication is recorded, one trace.rank<R>.jsonl per rank. Rank 0 prints the median
step time over the steps after --warmup (each step timed with the GPU synchronised at its ends),
and writes it to --json. With --flight-recorder DIR (and TORCH_NCCL_TRACE_BUFFER_SIZE set, so
PyTorch keeps one), each rank writes PyTorch's Flight Recorder record of the job at its end, as the
JSON dump (fr.rank<R>.json, what `fb_import --flight-recorder` reads) and the pickle a hang's dump
writes (fr.rank<R>.pkl).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist


def wrap(model, mode):
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model, bucket_cap_mb=25)
    try:  # FSDP2 (PyTorch 2.6 and later)
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        from torch.distributed.fsdp import FullyShardedDataParallel

        return FullyShardedDataParallel(model, use_orig_params=True)
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    return model


def exchange_tokens(step, width=1024, rows=512):
    """A mixture-of-experts' dispatch and combine: all_to_all_single with unequal splits that
    differ from peer to peer and from call to call, the same on every rank (no exchange of sizes)."""
    rank, ranks = dist.get_rank(), dist.get_world_size()

    def rows_between(sender, receiver, call):
        return rows * (1 + (sender + 2 * receiver + call) % 3)

    with torch.no_grad():
        for call in range(4):
            sent = [rows_between(rank, peer, call) for peer in range(ranks)]
            received = [rows_between(peer, rank, call) for peer in range(ranks)]
            tokens = torch.full((sum(sent), width), float(step % 7), device="cuda")
            out = torch.empty((sum(received), width), device="cuda")
            dist.all_to_all_single(out, tokens, output_split_sizes=received, input_split_sizes=sent)


def dump_flight_recorder(folder):
    """PyTorch's own record of this rank's collectives (TORCH_NCCL_TRACE_BUFFER_SIZE entries kept)."""
    torch.cuda.synchronize()
    c10d = torch._C._distributed_c10d
    os.makedirs(folder, exist_ok=True)
    rank = dist.get_rank()
    dumps = (("json", lambda: c10d._dump_nccl_trace_json(includeCollectives=True, onlyActive=False)),
             ("pkl", lambda: c10d._dump_nccl_trace(includeCollectives=True, includeStackTraces=False,
                                                         onlyActive=False)))
    for suffix, dump in dumps:
        try:
            text = dump()
        except Exception as error:  # a PyTorch without this dump: say so, the job goes on
            print(f"train_job.py: rank {rank}: no Flight Recorder {suffix} dump: {error}", file=sys.stderr)
            continue
        with open(os.path.join(folder, f"fr.rank{rank}.{suffix}"), "wb") as out:
            out.write(text.encode() if isinstance(text, str) else text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("ddp", "fsdp", "moe"), default="ddp")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=10, help="steps left out of the median")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--json", help="write rank 0's step times here")
    parser.add_argument("--flight-recorder", metavar="DIR", help="write each rank's Flight Recorder dump here")
    args = parser.parse_args()
    if args.steps <= args.warmup:
        sys.exit("train_job.py: --steps must be larger than --warmup")

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    torch.manual_seed(1234 + dist.get_rank())

    layers = [torch.nn.Linear(4096, 4096) for _ in range(args.layers)]
    model = wrap(torch.nn.Sequential(*layers).cuda(), "ddp" if args.mode == "moe" else args.mode)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    batch = torch.randn(64, 4096, device="cuda")

    seconds = []
    for step in range(args.steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = model(batch).square().mean()
        if args.mode == "moe":
            exchange_tokens(step)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)

    if args.flight_recorder:
        dump_flight_recorder(args.flight_recorder)
    timed = seconds[args.warmup:]
    if dist.get_rank() == 0:
        result = {
            "mode": args.mode,
            "ranks": dist.get_world_size(),
            "steps": args.steps,
            "warmup": args.warmup,
            "median_step_s": statistics.median(timed),
            "step_s": seconds,
            "recording": bool(os.environ.get("FABRICBENCH_TRACE_DIR")),
            "profiler_plugin": os.environ.get("NCCL_PROFILER_PLUGIN", ""),
            "torch": torch.__version__,
            "nccl": ".".join(str(v) for v in torch.cuda.nccl.version()),
        }
        print(f"{args.mode}: median step {result['median_step_s'] * 1e3:.1f} ms over {len(timed)} steps "
              f"(recording {'on' if result['recording'] else 'off'})", flush=True)
        if args.json:
            with open(args.json, "w") as out:
                json.dump(result, out, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
