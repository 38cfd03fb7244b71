"""Environments and their registry, every environment by id (the registered environments and the
generated ones), seeded orders, training mixes and probes typed by a person."""
