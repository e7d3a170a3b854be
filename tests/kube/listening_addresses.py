#!/usr/bin/env python3
"""Prints `ADDRESS:PORT PID` for every TCP socket in LISTEN state that the given pids hold.

Reads /proc only (no ss or netstat needed): a process's socket inodes from /proc/PID/fd, their
addresses from /proc/net/tcp and /proc/net/tcp6.

Usage: listening_addresses.py PID...
"""

import ipaddress
import os
import sys

LISTEN = "0A"


def socket_inodes(pid):
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def decode_address(hex_address):
    """/proc/net/tcp* hold addresses as host-order 32-bit words in hex."""
    raw = bytes.fromhex(hex_address)
    words = [raw[i:i + 4][::-1] for i in range(0, len(raw), 4)]
    return ipaddress.ip_address(b"".join(words))


def listening_sockets():
    """inode -> (address, port) for every listening TCP socket."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state != LISTEN:
                continue
            address, port = local.split(":")
            found[inode] = (decode_address(address), int(port, 16))
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sockets = listening_sockets()
    for pid in sys.argv[1:]:
        for inode in sorted(socket_inodes(pid)):
            if inode in sockets:
                address, port = sockets[inode]
                print(f"{address}:{port} {pid}")


if __name__ == "__main__":
    main()
