"""The `clamber` command."""

def main() -> None:
    raise SystemExit(0)
