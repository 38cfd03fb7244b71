"""The shipped checkpoints, installed as package data: the pre-trained base and the plate's three seed-0 models."""
