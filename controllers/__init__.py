"""The operators. Django-free: the engine drives them through controllers.base."""
