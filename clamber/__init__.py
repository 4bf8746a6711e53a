"""clamber: design, optimize and control climbing robots."""

__version__ = "0.1.0"
