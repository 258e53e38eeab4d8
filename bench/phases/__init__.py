"""The phases of `make bench`, one module each: `bench.py` runs them in its order and writes
what they return into the results."""
