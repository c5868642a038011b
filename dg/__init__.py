"""dg: compile quantized PyTorch models for the dg accelerator."""

__version__ = "0.15.0"
