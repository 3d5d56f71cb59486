"""ember-toy-device: a third-party ember device type ("toy") of serial C loops over host
memory, proving that a new device needs no change in ember's core."""
__version__ = "0.1.0"
