"""Benchmarks: measured numbers for the README, never run as unit tests (the machines are shared and noisy)."""
