"""No models."""
