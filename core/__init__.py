"""breadth's engine: vocabulary, model, calculator, environments, training and evaluation.

Nothing in this package imports Textual; the UI drives it through plain callbacks and dataclasses.
"""
