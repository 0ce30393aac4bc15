# PyTorch's own Gloo all_reduce, timed as a user would (not shipped): median of 20 calls per size,
# the slowest rank's; beside fb_all_reduce --backend gloo on the same machine.
import statistics, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
for size in [8, 128, 2048, 32768, 524288, 8388608, 67108864]:
    t = torch.ones(max(size // 4, 1), dtype=torch.float32)
    for _ in range(5):
        dist.all_reduce(t)
    times = []
    for _ in range(20):
        start = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    med = torch.tensor([statistics.median(times)], dtype=torch.float64)
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    if rank == 0:
        print(f"torch gloo all_reduce {size:>10} B  {med.item() * 1e6:10.2f} us")
dist.destroy_process_group()
