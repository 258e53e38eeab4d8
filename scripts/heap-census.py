#!/usr/bin/env python3
"""Which Swift types hold a running reachd's glibc heap: a census of the chunks in use.

    sudo python3 scripts/heap-census.py PID [BINARY]

BINARY is the reachd the process runs (default: /proc/PID/exe); it must keep its symbol table
(`nm` reads it). Reads /proc/PID/maps and /proc/PID/mem only: the process is not stopped, so a
busy one may show a chunk torn; run it at rest.

Why: heaptrack and valgrind's massif both replace malloc, and both fail once libcurl, c-ares and
mimalloc are loaded (issue 28's notes); AddressSanitizer finds nothing wrong. This needs no
preload: it walks the chunks of glibc's arenas ([heap] and each 64 MiB-aligned arena heap) by
their size headers, counts a chunk as in use when the next one's PREV_INUSE bit says so (chunks
in the tcache and fastbins count as in use), and names each by its first word — a Swift object's
metadata pointer, symbolised against BINARY (`$ss23_ContiguousArrayStorageCys6UInt32VGMf` is an
`[UInt32]`'s storage). Generic metadata made at run time lies in the heap itself: such a chunk is
named by the nominal type its metadata describes (`ptr->…Mn`). Anything else is `data` (C
structs, strings' bytes). Arrays are also listed by count and capacity (`SHAPE`), which tells
which field a block of a given size belongs to. Chunks of 128 KiB or more are mapped on their own
(`LargeDocuments.applyAllocatorPolicy`), not in an arena: each is listed as `MAPPED`, named the same way, with what of it
is resident (at 10,000 targets: the books, the document's entries, the metric series, the
document's bytes; an array's element size is its mapping ÷ its capacity).
"""
import bisect
import collections
import os
import struct
import subprocess
import sys


def main() -> None:
    pid = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else os.readlink(f"/proc/{pid}/exe")
    mem = open(f"/proc/{pid}/mem", "rb")
    maps = []
    for line in open(f"/proc/{pid}/maps"):
        parts = line.split()
        start, end = (int(x, 16) for x in parts[0].split("-"))
        maps.append((start, end, parts[1], parts[5] if len(parts) > 5 else "", int(parts[2], 16)))
    name = os.path.basename(binary)
    base = min(s for s, e, p, n, off in maps if os.path.basename(n) == name and off == 0)
    in_binary = [(s, e) for s, e, p, n, off in maps if os.path.basename(n) == name]
    symbols = []
    for line in subprocess.run(["nm", "-n", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 3:
            symbols.append((int(fields[0], 16), fields[2]))
    addresses = [s[0] for s in symbols]

    def word(address: int) -> int | None:
        try:
            mem.seek(address)
            return struct.unpack("<Q", mem.read(8))[0]
        except (OSError, struct.error, ValueError):
            return None

    def symbol(pointer: int) -> str | None:
        if not any(s <= pointer < e for s, e in in_binary):
            return None
        index = bisect.bisect_right(addresses, pointer - base) - 1
        return symbols[index][1] if index >= 0 else None

    def mapped(pointer: int) -> bool:
        return any(s <= pointer < e for s, e, *_ in maps)

    def name(first: int) -> str:
        """What a chunk whose first word is `first` holds: a type's symbol, the nominal type of
        metadata made at run time, or `data`."""
        label = symbol(first)
        if label is None and mapped(first):
            described = word(first + 40)  # a class's nominal type descriptor, without ObjC interop
            label = "ptr->" + ((described and symbol(described)) or "?")
        return label or "data"

    def walk(data: bytes, start: int, offset: int) -> list[list]:
        """The chunks of `data` (read from `start`) from `offset` on, as [address, size, in use]."""
        chunks = []
        while offset + 16 <= len(data):
            size = struct.unpack_from("<Q", data, offset + 8)[0] & ~7
            if size < 32 or offset + size > len(data):
                break
            chunks.append([start + offset, size, True])
            offset += size
        for chunk, following in zip(chunks, chunks[1:]):
            chunk[2] = bool(struct.unpack_from("<Q", data, following[0] - start + 8)[0] & 1)
        return chunks

    regions = [(s, e, "main") for s, e, p, n, off in maps if n == "[heap]"]
    regions += [(s, e, "arena") for s, e, p, n, off in maps if n == "" and p == "rw-p" and s % (64 << 20) == 0]
    count, size_of, shapes, free_by_class = (collections.Counter() for _ in range(4))
    used = free = 0
    for start, end, kind in regions:
        # The first chunk follows the arena's own header (heap_info and malloc_state: about 2 KiB
        # for an arena, nothing for [heap]): the start that walks the most chunks is it.
        mem.seek(start)
        data = mem.read(end - start)
        chunks = max((walk(data, start, offset) for offset in range(0, 2600, 16)), key=len)
        if len(chunks) < 2:
            continue  # not glibc's: mimalloc's segments (libcurl's and c-ares' memory) are 64 MiB-aligned too
        print(f"{kind} {start:x}-{end:x}: {(end - start) >> 10} KiB, {len(chunks)} chunks", file=sys.stderr)
        for address, size, in_use in chunks[:-1]:  # the last is the top chunk
            if not in_use:
                free += size
                free_by_class[min(size.bit_length(), 20)] += size
                continue
            used += size
            label = name(word(address + 16) or 0)
            count[label] += 1
            size_of[label] += size
            if "ContiguousArrayStorage" in label:
                mem.seek(address + 32)
                elements, capacity = struct.unpack("<2Q", mem.read(16))
                shapes[(label, elements, capacity >> 1, size)] += 1
    print(f"in use {used >> 10} KiB, free {free >> 10} KiB")
    print("free by size (2^k bytes: KiB):", ", ".join(f"{k}: {v >> 10}" for k, v in sorted(free_by_class.items())))
    for label, total in size_of.most_common(30):
        print(f"{total >> 10:8d} KiB {count[label]:8d} x {total / count[label]:7.1f} B  {label}")
    for (label, elements, capacity, size), n in shapes.most_common(15):
        print(f"SHAPE {n:8d} x {size} B: count {elements} capacity {capacity}  {label}")
    # Blocks of 128 KiB or more are mapped on their own (LargeDocuments.applyAllocatorPolicy): each mapping is one chunk,
    # its header at the start. Named the same way, with what of it is resident.
    resident = {}
    current = None
    for line in open(f"/proc/{pid}/smaps"):
        if line[0] in "0123456789abcdef" and "-" in line.split()[0]:
            current = int(line.split("-")[0], 16)
        elif line.startswith("Rss:") and current is not None:
            resident[current] = int(line.split()[1])
    arenas = {start for start, _, _ in regions}
    for start, end, perms, path, _ in maps:
        if path or perms != "rw-p" or start in arenas or end - start < (128 << 10):
            continue
        if (word(start + 8) or 0) & ~7 != end - start or not (word(start + 8) or 0) & 2:
            continue  # not an mmapped chunk (IS_MMAPPED): a thread's stack, mimalloc's segments
        label = name(word(start + 16) or 0)
        shape = ""
        if "ContiguousArrayStorage" in label:
            mem.seek(start + 32)
            elements, capacity = struct.unpack("<2Q", mem.read(16))
            shape = f" count {elements} capacity {capacity >> 1}"
        print(f"MAPPED {(end - start) >> 10:8d} KiB, {resident.get(start, 0):8d} KiB resident{shape}  {label}")


if __name__ == "__main__":
    main()
