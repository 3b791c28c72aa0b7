"""CLI subcommands, one module each. A module defines ``add_parser(subparsers)`` that adds its
subparser and sets ``func``; ``tierlab.cli`` loads every module here."""
