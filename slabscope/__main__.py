"""`python -m slabscope`: the same as the `slabscope` command."""

import sys

from slabscope.app.cli import main

sys.exit(main())
