"""The `clamber` command line: the only package that parses arguments."""

from clamber.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
