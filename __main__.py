"""`python -m dowse`: the command line."""

from dowse.cli import main

main()
