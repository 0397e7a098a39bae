"""coordkit: Mesa models, widgets and notebooks for learning how groups of AI agents coordinate."""

__version__ = "0.1.0"
