"""Allow `python -m dbstand`."""

from dbstand.cli.app import main

main()
