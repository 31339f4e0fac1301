"""kopt: find out why a Triton kernel is slow, and make it faster."""

__version__ = "0.1.0"
