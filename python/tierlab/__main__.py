"""``python -m tierlab``: the ``tierlab`` command."""

import sys

from tierlab.cli import main

sys.exit(main())
