"""The front ends over the engine: the engine session and its JSON protocol, and the `breadth` command line."""
