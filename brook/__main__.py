"""``python -m brook``: the same as ``brook-server``."""

from brook.cli import main

if __name__ == "__main__":
    main()
