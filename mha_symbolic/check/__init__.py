"""The document checker (see mha_symbolic.check.pipeline)."""
