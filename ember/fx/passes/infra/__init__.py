from ember.fx.passes.infra import pass_base as pass_base

__all__ = ["pass_base"]
