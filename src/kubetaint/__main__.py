"""`python -m kubetaint` runs the CLI."""

from kubetaint.cli.main import main

if __name__ == "__main__":
    main()
