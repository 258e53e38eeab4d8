"""A small mutator of raw HTTP requests for fuzzing the running binary (radamsa is not in Debian 12).

Case `index` of run `seed` is a pure function of (seed, index, corpus): a failure is replayed
with `python Tests/e2e/http_mutator.py SEED INDEX`, which prints the exact bytes that were sent.

Each case takes one seed request from `http_corpus/` and applies one to four mutations:
byte-level ones (bit flips, insertions, deletions, duplications), token splicing between
seeds, header repetition, huge numbers and long runs, CR/LF games and hostile bytes.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent / "http_corpus"

# Bytes that matter to an HTTP parser; mutations favour them.
SPECIAL = [b"\r", b"\n", b"\r\n", b"\x00", b" ", b"\t", b":", b"/", b"?", b"%", b"%00", b"#", b";", b",",
           b"\xff", b"\x7f", b"\x80", b"\xc0\xaf", b"..", b"\\", b"\"", b"=", b"&", b"-", b"+"]
HUGE_NUMBERS = [b"0", b"-1", b"1", b"4294967295", b"4294967296", b"18446744073709551615", b"18446744073709551616",
                b"99999999999999999999999999999", b"0x10", b"1e9", b"+5", b" 5", b"5 ", b"00000000000000000005"]
HEADER_LINES = [b"Content-Length: 0", b"Content-Length: 5", b"Content-Length: 18446744073709551615",
                b"Transfer-Encoding: chunked", b"Transfer-Encoding: gzip, chunked", b"Transfer-Encoding: identity",
                b"Connection: close", b"Connection: keep-alive", b"Connection: Upgrade", b"Expect: 100-continue",
                b"Last-Event-ID: 18446744073709551616", b"Origin: https://dash.example", b"Origin: null",
                b"Access-Control-Request-Method: GET", b"Access-Control-Request-Headers: last-event-id",
                b"Accept: text/event-stream", b"Host: 127.0.0.1", b"Host:", b"Cache-Control: no-cache",
                b"Range: bytes=0-", b"Accept-Encoding: gzip", b"Cookie: " + b"a" * 100]


def window(rng: random.Random, data: bytearray, size: int = 2048) -> tuple[int, int]:
    """A random stretch of at most `size` bytes: structure-aware mutations of a request that
    an earlier mutation made huge look at part of it (the whole would cost milliseconds)."""
    if len(data) <= size:
        return 0, len(data)
    start = rng.randrange(len(data) - size)
    return start, start + size


def load_corpus(directory: Path = CORPUS_DIR) -> list[bytes]:
    """Every seed, in name order (the order is part of a case's identity)."""
    return [path.read_bytes() for path in sorted(directory.glob("*.http"))]


class Mutator:
    def __init__(self, corpus: list[bytes]):
        assert corpus, "empty corpus"
        self.corpus = corpus
        self.tokens = sorted({token for seed in corpus for token in re.split(rb"([ \r\n:/?&=])", seed) if token})

    def case(self, seed: int, index: int) -> bytes:
        """The request sent as case `index` of the run with `seed`."""
        rng = random.Random(f"{seed}:{index}")
        data = bytearray(rng.choice(self.corpus))
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
            operation = rng.choice(self.operations)
            data = operation(self, rng, data)
        return bytes(data[: 1 << 20])

    # ----------------------------------------------------------------- byte level

    def flip_bit(self, rng: random.Random, data: bytearray) -> bytearray:
        if data:
            position = rng.randrange(len(data))
            data[position] ^= 1 << rng.randrange(8)
        return data

    def set_byte(self, rng: random.Random, data: bytearray) -> bytearray:
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        return data

    def insert_bytes(self, rng: random.Random, data: bytearray) -> bytearray:
        position = rng.randrange(len(data) + 1)
        piece = rng.choice(SPECIAL) if rng.random() < 0.7 else bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        data[position:position] = piece
        return data

    def delete_range(self, rng: random.Random, data: bytearray) -> bytearray:
        if data:
            start = rng.randrange(len(data))
            del data[start: start + rng.choice((1, 1, 2, 4, 16, 64))]
        return data

    def duplicate_range(self, rng: random.Random, data: bytearray) -> bytearray:
        if data:
            start = rng.randrange(len(data))
            piece = data[start: start + rng.randint(1, 64)]
            data[start:start] = piece * rng.choice((1, 2, 8, 100))
        return data

    def swap_ranges(self, rng: random.Random, data: bytearray) -> bytearray:
        if len(data) > 4:
            a, b = sorted(rng.sample(range(len(data)), 2))
            length = rng.randint(1, min(16, b - a) or 1)
            data[a:a + length], data[b:b + length] = data[b:b + length], data[a:a + length]
        return data

    # ----------------------------------------------------------------- structure aware

    def splice_token(self, rng: random.Random, data: bytearray) -> bytearray:
        """Replace one token with a token from any seed (methods, paths, versions, header names)."""
        start, stop = window(rng, data)
        parts = re.split(rb"([ \r\n:/?&=])", bytes(data[start:stop]))
        candidates = [i for i, part in enumerate(parts) if part and part not in b" \r\n:/?&="]
        if candidates:
            parts[rng.choice(candidates)] = rng.choice(self.tokens)
        data[start:stop] = b"".join(parts)
        return data

    def splice_seeds(self, rng: random.Random, data: bytearray) -> bytearray:
        """The head of this request joined to the tail of another one."""
        other = rng.choice(self.corpus)
        return data[: rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]

    def repeat_header(self, rng: random.Random, data: bytearray) -> bytearray:
        lines = bytes(data).split(b"\r\n")
        if len(lines) > 2:
            index = rng.randrange(1, len(lines) - 1)
            lines[index:index + 1] = [lines[index]] * rng.choice((2, 10, 100, 1000))
        return bytearray(b"\r\n".join(lines))

    def add_header(self, rng: random.Random, data: bytearray) -> bytearray:
        end = data.find(b"\r\n")
        line = rng.choice(HEADER_LINES) + b"\r\n"
        position = end + 2 if end >= 0 else 0
        data[position:position] = line * rng.choice((1, 1, 2, 3))
        return data

    def huge_number(self, rng: random.Random, data: bytearray) -> bytearray:
        start, stop = window(rng, data)
        numbers = list(re.finditer(rb"\d+", bytes(data[start:stop])))
        if numbers:
            match = rng.choice(numbers)
            data[start + match.start():start + match.end()] = rng.choice(HUGE_NUMBERS)
        else:
            data += b"Content-Length: " + rng.choice(HUGE_NUMBERS) + b"\r\n\r\n"
        return data

    def long_run(self, rng: random.Random, data: bytearray) -> bytearray:
        """A long run inside the request: a path, a header value, or a line of its own."""
        position = rng.randrange(len(data) + 1)
        length = rng.choice((100, 1000, 3500, 4096, 8192, 65536, 300_000))
        data[position:position] = rng.choice((b"a", b"/", b"%41", b" ", b"\t", b"\r\n", b"\x00")) * (length // 2 + 1)
        return data

    def line_endings(self, rng: random.Random, data: bytearray) -> bytearray:
        """CR/LF games: bare LF or CR, doubled CR, LF-CR, endings dropped or added."""
        choice = rng.randrange(6)
        text = bytes(data)
        if choice == 0:
            return bytearray(text.replace(b"\r\n", rng.choice((b"\n", b"\r", b"\r\r\n", b"\n\r", b"\r\n\r\n"))))
        if choice == 1:
            start, stop = window(rng, data)
            occurrences = [start + m.start() for m in re.finditer(rb"\r\n", text[start:stop])]
            if occurrences:
                at = rng.choice(occurrences)
                return bytearray(text[:at] + rng.choice((b"\n", b"\r", b"", b"\r\n ", b"\r\n\t")) + text[at + 2:])
            return data
        if choice == 2:
            return bytearray(text.rstrip(b"\r\n"))
        if choice == 3:
            return bytearray(rng.choice((b"\r\n", b"\n", b"\r\n\r\n\r\n", b"\x00" * 8)) + text)
        if choice == 4:
            return bytearray(text + rng.choice((b"\r\n", b"\r\n\r\n", b"GET /", b"\x00")))
        return bytearray(text.replace(b": ", rng.choice((b":", b" : ", b":\t", b"::", b"\r\n: "))))

    operations = [flip_bit, set_byte, insert_bytes, delete_range, duplicate_range, swap_ranges, splice_token,
                  splice_token, splice_seeds, repeat_header, add_header, add_header, huge_number, huge_number,
                  long_run, line_endings, line_endings, line_endings]


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: http_mutator.py SEED INDEX   (prints the bytes of that case)")
    case = Mutator(load_corpus()).case(int(sys.argv[1]), int(sys.argv[2]))
    sys.stdout.write(repr(case) + "\n")
