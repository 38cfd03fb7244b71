"""Environments: task families and their registry, every environment by id (the registered families and the
generated ones), seeded orders, training mixes and probes typed by a person."""
