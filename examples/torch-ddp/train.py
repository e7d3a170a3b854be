#!/usr/bin/env python3
"""A small PyTorch DDP job, written as a user would write it for torchrun.

It reads torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) through
init_process_group, so the same file runs under `torchrun` on one machine, under strata with the
workers started by strata itself, and under `torchrun` inside each strata pod (README "Training
with torch").

The model is a two-layer MLP fitting a fixed random teacher network on synthetic data. Every
batch is drawn from a generator seeded with (seed, step, rank), so a run's losses depend only on
the seed and the world size, not on when the job was restarted. Rank 0 saves the model, the
optimizer and the step with torch.save into the checkpoint directory ($STRATA_CHECKPOINT_DIR
under strata) every --checkpoint-every steps, writing to a temporary file and renaming it; on
start every rank loads the latest checkpoint there, if this run (TORCHELASTIC_RUN_ID, the same
across restarts of one job) wrote it, and continues from the step after it.

Rank 0 prints `step N loss L` every --log-every steps and `final step N loss L` at the end: the
loss averaged over all ranks, with 6 significant digits.
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

CHECKPOINT_NAME = "ddp-checkpoint.pt"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--checkpoint-every", type=int, default=20)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument(
        "--checkpoint-dir",
        default=os.environ.get("STRATA_CHECKPOINT_DIR", ""),
        help="where checkpoints go (default: $STRATA_CHECKPOINT_DIR; none when empty)")
    parser.add_argument(
        "--step-delay", type=float, default=0.0,
        help="seconds to sleep after each step, standing in for a larger model's compute")
    return parser.parse_args()


def make_model():
    return nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1))


def teacher(seed):
    generator = torch.Generator().manual_seed(seed + 1)
    return torch.randn(16, 1, generator=generator), torch.randn(1, generator=generator)


def batch(seed, step, rank, size, weights):
    generator = torch.Generator().manual_seed(seed * 1_000_003 + step * 1009 + rank)
    inputs = torch.randn(size, 16, generator=generator)
    targets = torch.tanh(0.25 * (inputs @ weights[0]) + weights[1])
    return inputs, targets


def load_checkpoint(path, run_id, model, optimizer):
    """Restores the state saved at `path` by this run; returns the step to start from.

    A checkpoint of another run (an earlier job of the same name) is not resumed: 0.
    """
    if not path or not os.path.exists(path):
        return 0
    state = torch.load(path, weights_only=True)
    if state.get("run_id") != run_id:
        return 0
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["step"] + 1


def save_checkpoint(path, run_id, model, optimizer, step):
    temporary = path + ".tmp"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                "run_id": run_id}, temporary)
    os.replace(temporary, path)


def main():
    args = parse_args()
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    model = DistributedDataParallel(make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    weights = teacher(args.seed)

    path = os.path.join(args.checkpoint_dir, CHECKPOINT_NAME) if args.checkpoint_dir else ""
    if path:
        os.makedirs(args.checkpoint_dir, exist_ok=True)
    # The same for every restart of one job; torchrun sets it, and so does strata.
    run_id = os.environ.get("TORCHELASTIC_RUN_ID", "")
    start = load_checkpoint(path, run_id, model.module, optimizer)
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    if rank == 0:
        print(f"world size {world_size}, restart {restart}: starting at step {start}"
              + (" (resumed from checkpoint)" if start > 0 else ""), flush=True)

    loss_fn = nn.MSELoss()
    # DDP lays out its gradient buckets again after a process's first backward pass, and the
    # layout decides the order in which the ranks' gradients are summed. One pass on a throwaway
    # batch, with no optimizer step, gives every training step the settled layout, so a run
    # resumed from a checkpoint logs the same losses as one that never stopped.
    loss_fn(model(torch.zeros(1, 16)), torch.zeros(1, 1)).backward()
    optimizer.zero_grad()
    for step in range(start, args.steps):
        inputs, targets = batch(args.seed, step, rank, args.batch_size, weights)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        if step % args.log_every == 0 or step == args.steps - 1:
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            if rank == 0:
                print(f"step {step} loss {mean.item() / world_size:.6g}", flush=True)
                if step == args.steps - 1:
                    print(f"final step {step} loss {mean.item() / world_size:.6g}", flush=True)
        # Not after the last step: a restart then always has a step left to report.
        last = step + 1 == args.steps
        if path and rank == 0 and (step + 1) % args.checkpoint_every == 0 and not last:
            save_checkpoint(path, run_id, model.module, optimizer, step)
        if args.step_delay > 0:
            time.sleep(args.step_delay)
    # Every rank is done before the group goes, and DDP, whose reducer holds the group's work,
    # goes before it: gloo may abort a process whose group outlives them at exit.
    dist.barrier()
    del model, optimizer
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # Done, and every rank said so. Leave without the interpreter's teardown: torch's gloo threads
    # can still be joinable when its static objects are destroyed, which aborts a finished run
    # ("terminate called without an active exception", seen once in ~20 runs on 2 cores).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
