"""The benchmark suite: ``python -m benchmarks --help``."""
