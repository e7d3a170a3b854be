#!/usr/bin/env python3
"""A stand-in for a distributed training worker, using only Python's standard library.

Started once per rank with torchrun's environment (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK,
TORCHELASTIC_RESTART_COUNT, and STRATA_CHECKPOINT_DIR for checkpoints), it:

  1. meets its peers at MASTER_ADDR:MASTER_PORT over TCP (rank 0 listens, the others connect),
  2. sum-all-reduces a small rank-dependent vector for --steps steps (through rank 0) and adds
     each sum to its state,
  3. has rank 0 checkpoint the state every --checkpoint-every steps into
     $STRATA_CHECKPOINT_DIR/allreduce.json (write to a temporary file, fsync, rename), and
     report it with one POST to $STRATA_CHECKPOINT_URL when strata offers that endpoint,
  4. resumes from that checkpoint when it was written by this job (the same
     TORCHELASTIC_RUN_ID: after a group restart or a preemption): rank 0 reads it and hands the
     step and state to every peer during the rendezvous,
  5. checks the final state against the closed-form answer and exits 0 only if it is right.

Every socket operation has a deadline (--timeout), so a dead peer makes the others exit non-zero
instead of hanging. Messages are length-prefixed JSON. Exit codes: 0 right result, 1 wrong
result, 2 rendezvous or peer failure, 3 bad configuration, 143 stopped by SIGTERM (it says so).
"""

import argparse
import json
import os
import signal
import socket
import struct
import sys
import time
import urllib.request

CHECKPOINT_NAME = "allreduce.json"


class PeerError(Exception):
    """A peer went away, timed out, or said something unexpected."""


def log(rank, message):
    print(f"rank {rank}: {message}", flush=True)


def env_int(name):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"{name} is not set")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer") from None


def send(sock, message):
    payload = json.dumps(message).encode()
    sock.sendall(struct.pack("!I", len(payload)) + payload)


def receive_exactly(sock, size):
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise PeerError("connection closed by peer")
        data.extend(chunk)
    return bytes(data)


def receive(sock):
    (size,) = struct.unpack("!I", receive_exactly(sock, 4))
    return json.loads(receive_exactly(sock, size))


def contribution(rank, step, length):
    return [(rank + 1) * (i + 1) + step for i in range(length)]


def expected_state(world_size, steps, length):
    # Sum over steps s and ranks r of (r+1)(i+1) + s.
    return [steps * (i + 1) * world_size * (world_size + 1) // 2
            + world_size * steps * (steps - 1) // 2 for i in range(length)]


def load_checkpoint(directory, run_id, world_size, length):
    """The (step, state) to start from: this run's checkpoint, else the beginning."""
    path = os.path.join(directory, CHECKPOINT_NAME)
    try:
        with open(path) as f:
            checkpoint = json.load(f)
    except FileNotFoundError:
        return 0, [0] * length
    if checkpoint.get("run_id") != run_id:
        return 0, [0] * length  # an earlier job of the same name left it
    if checkpoint.get("world_size") != world_size or len(checkpoint.get("state", [])) != length:
        raise ValueError(f"{path} was written by a job of another shape")
    return int(checkpoint["step"]), [int(x) for x in checkpoint["state"]]


def save_checkpoint(directory, run_id, step, state, world_size):
    path = os.path.join(directory, CHECKPOINT_NAME)
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        json.dump({"run_id": run_id, "step": step, "state": state, "world_size": world_size}, f)
        f.flush()
        os.fsync(f.fileno())
    os.rename(temporary, path)


def report_checkpoint(rank):
    """Tells strata a checkpoint was just written (the agent also sees the file): best effort."""
    url = os.environ.get("STRATA_CHECKPOINT_URL", "")
    if not url:
        return
    try:
        urllib.request.urlopen(urllib.request.Request(url, data=b"", method="POST"), timeout=2)
    except OSError as error:
        log(rank, f"could not report the checkpoint to {url}: {error}")


def serve_rendezvous(args, world_size, restart_count, start):
    """Rank 0: accept every peer, then tell each where to start. Returns {rank: socket}."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.master_addr, args.master_port))
    listener.listen(world_size)
    listener.settimeout(args.timeout)
    peers = {}
    try:
        while len(peers) < world_size - 1:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                raise PeerError(f"only {len(peers) + 1} of {world_size} ranks arrived") from None
            conn.settimeout(args.timeout)
            hello = receive(conn)
            rank = hello.get("rank")
            if not isinstance(rank, int) or not 0 < rank < world_size or rank in peers:
                raise PeerError(f"unexpected hello {hello}")
            if hello.get("restart_count") != restart_count:
                raise PeerError(f"rank {rank} is at restart {hello.get('restart_count')}, "
                                f"rank 0 at {restart_count}")
            peers[rank] = conn
    finally:
        listener.close()
    step, state = start
    for conn in peers.values():
        send(conn, {"step": step, "state": state})
    return peers


def join_rendezvous(args, rank, restart_count):
    """Other ranks: connect to rank 0 (retrying until it listens). Returns (socket, step, state)."""
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            sock = socket.create_connection((args.master_addr, args.master_port), timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise PeerError(f"rank 0 at {args.master_addr}:{args.master_port} "
                                f"did not answer within {args.timeout}s") from None
            time.sleep(0.05)
    sock.settimeout(args.timeout)
    send(sock, {"rank": rank, "restart_count": restart_count})
    start = receive(sock)
    return sock, int(start["step"]), [int(x) for x in start["state"]]


def allreduce_as_root(peers, vector):
    total = list(vector)
    for conn in peers.values():
        part = receive(conn)
        if len(part) != len(total):
            raise PeerError("a peer sent a vector of the wrong length")
        total = [a + b for a, b in zip(total, part)]
    for conn in peers.values():
        send(conn, total)
    return total


def allreduce_as_peer(sock, vector):
    send(sock, vector)
    return receive(sock)


def run(args):
    try:
        world_size = env_int("WORLD_SIZE")
        rank = env_int("RANK")
        restart_count = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
        run_id = os.environ.get("TORCHELASTIC_RUN_ID", "")
        args.master_addr = os.environ["MASTER_ADDR"]
        args.master_port = env_int("MASTER_PORT")
    except (KeyError, ValueError) as error:
        print(f"allreduce: bad environment: {error}", file=sys.stderr, flush=True)
        return 3
    if not 0 <= rank < world_size:
        print(f"allreduce: RANK {rank} is not below WORLD_SIZE {world_size}", file=sys.stderr)
        return 3
    checkpoint_dir = os.environ.get("STRATA_CHECKPOINT_DIR", "")

    try:
        if rank == 0:
            start = (0, [0] * args.length)
            if checkpoint_dir:
                start = load_checkpoint(checkpoint_dir, run_id, world_size, args.length)
            log(rank, f"restart {restart_count}: starting at step {start[0]}"
                      + (f" (resumed from checkpoint)" if start[0] > 0 else ""))
            peers = serve_rendezvous(args, world_size, restart_count, start)
            step, state = start
            reduce = lambda vector: allreduce_as_root(peers, vector)
        else:
            sock, step, state = join_rendezvous(args, rank, restart_count)
            log(rank, f"restart {restart_count}: starting at step {step}")
            reduce = lambda vector: allreduce_as_peer(sock, vector)

        for current in range(step, args.steps):
            total = reduce(contribution(rank, current, args.length))
            state = [a + b for a, b in zip(state, total)]
            done = current + 1
            if rank == 0 and checkpoint_dir and done % args.checkpoint_every == 0:
                save_checkpoint(checkpoint_dir, run_id, done, state, world_size)
                report_checkpoint(rank)
                log(rank, f"checkpoint at step {done}")
            if args.step_sleep > 0:
                time.sleep(args.step_sleep)
    except (PeerError, OSError, ValueError, json.JSONDecodeError, struct.error) as error:
        print(f"rank {rank}: failed: {error}", file=sys.stderr, flush=True)
        return 2

    if state != expected_state(world_size, args.steps, args.length):
        log(rank, f"wrong result {state[:4]}...")
        return 1
    log(rank, "result ok")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--length", type=int, default=8, help="elements per vector")
    parser.add_argument("--step-sleep", type=float, default=0.01, help="seconds between steps")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for a peer before giving up")
    args = parser.parse_args()
    rank = os.environ.get("RANK", "?")

    def stop(signal_number, frame):
        log(rank, "SIGTERM received, stopping")
        os._exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    if args.steps < 1 or args.checkpoint_every < 1 or args.length < 1 or args.timeout <= 0:
        parser.error("--steps, --checkpoint-every, --length and --timeout must be positive")
    sys.exit(run(args))


if __name__ == "__main__":
    main()
