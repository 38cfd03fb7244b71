"""The arithmetic of the task: operations, the calculator and how a call is written, problems and their
demonstrations, and coordinates (where an environment sits and the arithmetic of its space)."""
