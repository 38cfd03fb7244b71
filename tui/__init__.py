"""breadth-tui: choose a training mix, watch it train, probe the tool-using model token by token.

The UI process never imports torch: the engine runs in its own process (`tui.engine`).
"""
